"""The benchmark harness runs end to end at its smoke size (no thresholds: timings vary)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEYS = (
    "floor_parse_eps",
    "floor_write_eps",
    "decode_eps",
    "apply_eps",
    "apply_scd2_eps",
    "apply_scd2_existing_eps",
    "recipe_eps",
    "autocdc_eps",
    "merge_scaling_ratio",
)


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_bench_smoke_writes_reports_and_headline(tmp_path: Path) -> None:
    out = tmp_path / "bench-out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--smoke", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    assert proc.returncode == 0, f"bench --smoke failed:\n{proc.stderr[-4000:]}"
    for name in ("report.md", "report.json", "report.png"):
        assert (out / name).is_file(), f"{name} missing in {sorted(p.name for p in out.iterdir())}"
    last = proc.stdout.strip().splitlines()[-1]
    headline = json.loads(last)
    missing = [k for k in KEYS if k not in headline]
    assert not missing, f"headline lacks {missing}: {last}"
    if headline["autocdc_eps"] is None:
        assert headline["autocdc_reason"], f"autocdc_eps is null without a reason: {last}"
    report = json.loads((out / "report.json").read_text())
    contenders = {r["contender"] for r in report["results"]}
    assert {"floor-parse", "floor-write", "decode", "apply-empty", "recipe-empty"} <= contenders
    assert {"apply-scd2-empty", "apply-scd2-existing"} <= contenders
    assert headline["apply_scd2_eps"] and headline["apply_scd2_existing_eps"], last
