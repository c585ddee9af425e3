"""``cdclake status`` on a 100-table lake, cold process each run: Spark before, delta-rs after.

Not a test: a timing for issue 38. The lake is built once with Spark (two batches of the bench
workload spread over ``--tables`` tables, plus a few bad lines for the quarantine) and kept in
``--lake``; each run is a new Python process, p50 of ``--runs``.

- after: ``python -m cdclake.cli status --target LAKE --json`` (delta-rs, no JVM);
- before: the Spark implementation ``status`` used until issue 38, kept as the tests' reference
  (``tests/spark_status.py``), in a process that starts its session as the CLI did.

    python -m bench.status                      # builds /tmp/cdclake-status-bench once, then times
    python -m bench.status --runs 5 --skip-before

The last stdout line is JSON: ``tables``, ``after_p50_s``, ``before_p50_s`` (wall), their CPU
time (``*_cpu_p50_s``, user + system of the process and its JVM) and each run's time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import data

REPO = Path(__file__).resolve().parents[1]
EVENTS_PER_TABLE = 20
BEFORE = (
    "import sys, json\n"
    "from cdclake import _spark\n"
    "from tests.spark_status import target_status\n"
    "spark = _spark.get_or_create(log_file=_spark.new_log_file())\n"
    "print(json.dumps(target_status(spark, sys.argv[1]).to_json()))\n"
)


def build(lake: Path, tables: int) -> None:
    """Two batches over ``tables`` tables (every table in each), and two bad lines."""
    from cdclake import _spark
    from cdclake.config import ApplyConfig
    from cdclake.run.runner import apply_raw
    from cdclake.sources import raw_from_lines

    spark = _spark.get_or_create(log_file=_spark.new_log_file())
    n = EVENTS_PER_TABLE * tables
    lines = [data.debezium_line(e, n) for e in data.events(n, keys=4 * tables, stride=1,
                                                           tables=tables)]  # fmt: skip
    half = len(lines) // 2
    for i, batch in enumerate((lines[:half], [*lines[half:], "not json", "{truncated"])):
        config = ApplyConfig(format="debezium", inputs=(f"b{i}.jsonl",), target=str(lake))
        apply_raw(raw_from_lines(spark, batch, f"b{i}.jsonl"), config)
    spark.stop()


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system, the process and its children: the JVM too) and
    stdout of one run. On a busy machine the CPU time says what the wall time cannot."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, cwd=REPO)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return took, cpu, done.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--lake", type=Path, default=Path("/tmp/cdclake-status-bench"))
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--skip-before", action="store_true", help="only the delta-rs path")
    a = p.parse_args()
    if not (a.lake / "_cdc_sources").is_dir():
        print(f"building {a.tables} tables in {a.lake} ...", flush=True)
        build(a.lake, a.tables)
    after_cmd = [sys.executable, "-m", "cdclake.cli", "status", "--target", str(a.lake), "--json"]
    before_cmd = [sys.executable, "-c", BEFORE, str(a.lake)]
    result: dict[str, object] = {}
    for name, cmd in (("after", after_cmd), ("before", before_cmd)):
        if name == "before" and a.skip_before:
            continue
        runs, cpus, out = [], [], ""
        for _ in range(a.runs):
            took, cpu, out = timed(cmd)
            runs.append(round(took, 3))
            cpus.append(round(cpu, 3))
        result[f"{name}_p50_s"] = statistics.median(runs)
        result[f"{name}_cpu_p50_s"] = statistics.median(cpus)
        result[f"{name}_runs_s"] = runs
        result["tables"] = len(json.loads(out.strip().splitlines()[-1])["tables"])
        print(f"{name}: p50 {result[f'{name}_p50_s']} s (CPU {result[f'{name}_cpu_p50_s']} s) "
              f"over {runs}; load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
