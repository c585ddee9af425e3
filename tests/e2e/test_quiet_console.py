"""A CLI run prints cdclake's own output only: no Ivy resolution, no Spark start-up lines.

Regression test for issue 11 ("a quiet console"): every run printed some 40 lines of Ivy
(``found io.delta#… in central``) and Spark's warnings before its summary.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "src" / "cdclake" / "samples"
NOISE = re.compile(
    r"found io\.delta|:: resolving|:: loading settings|ivy|WARN|log4j|Setting default log level"
    r"|Using Spark's default|incubator modules|NativeCodeLoader",
    re.IGNORECASE,
)


def _cdclake(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "CDCLAKE_DRIVER_MEMORY": "1g",
        "CDCLAKE_SPARK_MASTER": "local[1]",
    }
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.run(
        [sys.executable, "-c", "from cdclake.cli import main; main()", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )


@pytest.mark.e2e
@pytest.mark.timeout(1800)  # one Spark driver; a busy machine needs the margin
def test_apply_on_the_demo_inputs_prints_only_cdclakes_output(tmp_path: Path) -> None:
    logs = Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake")) / "logs"
    before = set(logs.glob("spark-*.log"))
    done = _cdclake(
        "apply",
        "--format",
        "auto",
        "--input",
        str(SAMPLES),
        "--target",
        str(tmp_path / "lake"),
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "messages" in done.stdout  # the summary is there
    noisy = [line for line in output.splitlines() if NOISE.search(line)]
    assert noisy == [], "\n".join(noisy)
    # Spark's lines went to a new log file under the cache instead
    new = set(logs.glob("spark-*.log")) - before
    assert len(new) == 1
    assert "Spark" in next(iter(new)).read_text(encoding="utf-8", errors="replace")
