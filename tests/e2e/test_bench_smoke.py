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
    "recipe_typed_eps",
    "autocdc_eps",
    "merge_scaling_ratio",
)


def run_bench(out: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    # the tests' tiny-data settings, as every driver the tests start: alone, Spark's and the
    # JVM's defaults ran it in 324 s against 344 s, but in a full run, beside the other worker,
    # it took 566 s against 436 s (the C2 compiler's threads compete for the two cores)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", *args, "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"bench {' '.join(args)} failed:\n{proc.stderr[-4000:]}"
    return proc


# over 120 s (333 s in a full run), because: one bench run covers every contender (floor, decode,
# apply, recipe, AUTO CDC, SCD2, MERGE scaling, many tables, a broker of its own and 10 s of
# steady stream) at its smoke size, with the untimed warm-up it reports
@pytest.fixture(scope="module")
def smoke(
    tmp_path_factory: pytest.TempPathFactory, kafka_broker: str
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One bench run at its smoke size for every case: the single-table contenders, 2,000 events
    over 5 tables in one input, and the same count through the tests' broker (topics of the
    bench's own), then 10 s at a steady rate (one driver for all: its start and warm-up are paid
    once)."""
    out = tmp_path_factory.mktemp("bench-smoke") / "bench-out"
    proc = run_bench(
        out,
        *("--smoke", "--many-tables", "--tables", "5", "--streaming", "--stream-seconds", "10"),
        *("--kafka-bootstrap", kafka_broker),
        timeout=1800,  # 677 s on a busy CI machine
    )
    return out, proc


@pytest.mark.e2e
@pytest.mark.timeout(1860)  # the first case runs the whole bench at its smoke size
def test_bench_smoke_writes_reports_and_headline(
    smoke: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, proc = smoke
    for name in ("report.md", "report.json", "report.png"):
        assert (out / name).is_file(), f"{name} missing in {sorted(p.name for p in out.iterdir())}"
    last = proc.stdout.strip().splitlines()[-1]
    headline = json.loads(last)
    missing = [k for k in KEYS if k not in headline]
    assert not missing, f"headline lacks {missing}: {last}"
    if headline["autocdc_eps"] is None:
        assert headline["autocdc_reason"], f"autocdc_eps is null without a reason: {last}"
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["warmup"], "the contenders ran without their untimed warm-up"
    contenders = {r["contender"] for r in report["results"]}
    assert {"floor-parse", "floor-write", "decode", "apply-empty", "recipe-empty"} <= contenders
    assert {"apply-scd2-empty", "apply-scd2-existing"} <= contenders
    assert headline["apply_scd2_eps"] and headline["apply_scd2_existing_eps"], last


@pytest.mark.e2e
@pytest.mark.timeout(1860)  # the first case runs the whole bench at its smoke size
def test_bench_many_tables_compares_both_lakes(
    smoke: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    """Both contenders of the many-tables case run and their lakes agree."""
    out, proc = smoke
    last = proc.stdout.strip().splitlines()[-1]
    headline = json.loads(last)
    assert headline["many_tables"] == 5, last
    assert headline["many_apply_eps"] > 0 and headline["many_recipe_eps"] > 0, last
    assert headline["many_ratio"] == pytest.approx(
        headline["many_apply_eps"] / headline["many_recipe_eps"], rel=0.01
    )
    assert headline["many_lakes_agree"] is True, headline["many_check"]
    report = json.loads((out / "report.json").read_text())
    many = {r["contender"]: r for r in report["results"] if r["contender"].endswith("-many")}
    assert set(many) == {"apply-many", "recipe-many"}, sorted(many)
    assert many["apply-many"]["tables"] == 5 and many["apply-many"]["recipe_tables"] == 5
    assert many["apply-many"]["rows"] == many["apply-many"]["expected_rows"] > 0
    assert many["apply-many"]["profile"]["jobs"] > 0 and many["recipe-many"]["profile"]["jobs"] > 0
    assert "recipe-many" in (out / "report.md").read_text()


@pytest.mark.e2e
@pytest.mark.timeout(1860)  # the first case runs the whole bench at its smoke size
def test_bench_streaming_reports_throughput_and_latency(
    smoke: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    """The Kafka keys are there, every produced event reached the table, and p50 <= p95."""
    out, proc = smoke
    last = proc.stdout.strip().splitlines()[-1]
    headline = json.loads(last)
    recipes = {
        "stream-recipe": headline["stream_recipe_eps"],
        "stream-recipe-typed": headline["stream_recipe_typed_eps"],
    }
    assert headline["stream_eps"] > 0 and min(recipes.values()) > 0, last
    faster = max(recipes, key=lambda c: recipes[c])
    assert headline["stream_ratio_against"] == faster, last  # the faster recipe
    assert headline["stream_ratio"] == pytest.approx(
        headline["stream_eps"] / recipes[faster], rel=0.01
    )
    p50, p95 = headline["stream_latency_p50_s"], headline["stream_latency_p95_s"]
    p99 = headline["stream_latency_p99_s"]
    assert 0 < p50 <= p95 <= p99 <= headline["stream_latency_max_s"], last
    # one batch of the latency run, step by step: its steps add up to its time, and it ran
    # jobs and committed to the target and to cdclake's record at least
    b = headline["stream_steady_batch"]
    assert {"decode", "tables", "record"} <= set(b["steps"]), b
    assert sum(b["steps"].values()) == pytest.approx(b["seconds"], abs=0.01), b
    assert b["table_steps"]["write"] <= b["steps"]["tables"], b
    assert b["jobs"] > 0 and b["commits"] >= 2 and b["messages"] > 0, b
    md = (out / "report.md").read_text()
    assert f"{b['jobs']} Spark jobs, {b['commits']} Delta commits, {b['line']}" in md
    assert headline["stream_latency_batches"] >= 1 and headline["stream_latency_rows_ok"], last
    report = json.loads((out / "report.json").read_text())
    rows = {r["contender"]: r for r in report["results"] if r["contender"].startswith("stream-")}
    assert set(rows) == {
        "stream-apply", "stream-recipe", "stream-recipe-typed", "stream-latency"
    }, sorted(rows)  # fmt: skip
    apply, recipe, latency = rows["stream-apply"], rows["stream-recipe"], rows["stream-latency"]
    typed = rows["stream-recipe-typed"]
    assert apply["messages"] == 2000 and apply["batches"] >= 1, apply
    assert apply["rows"] == apply["expected_rows"] == recipe["rows"] == typed["rows"] > 0, (
        apply,
        recipe,
        typed,
    )
    assert latency["messages"] == latency["produced"] == headline["stream_latency_events"]
    assert latency["rows"] == latency["expected_rows"] > 0, latency
    assert latency["visible_from"] == "delta commit", latency
