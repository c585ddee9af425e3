"""Throughput of a Spark standalone cluster against local mode on the same input and machine.

    python -m bench.cluster --master spark://127.0.0.1:7077 [--n 100000] [--format debezium]

Runs ``cdclake``'s batch apply of the same generated file (bench/data.py) twice in a fresh
driver each: once with ``local[2]``, once on the cluster (start one with
``scripts/spark-cluster.sh start``: 2 workers of 1 core). Each run is timed from the first read
to the last commit (session start-up excluded) and the ratio is printed. On one machine the
cluster adds executor processes and shuffles over the loopback; the ratio is a measurement of
that machine, not a promise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(master: str, path: str, fmt: str, target: str) -> None:
    """In the child: build the session, apply, print the seconds as JSON."""
    from bench import data
    from cdclake import ApplyConfig, _spark, run_batch

    spark = _spark.get_or_create("cdclake-bench-cluster", master=master)
    keys = {k: v for k, v in (data.primary_keys(fmt) or {}).items()}
    config = ApplyConfig(format=fmt, inputs=(path,), target=target, keys=keys)
    t0 = time.perf_counter()
    result = run_batch(spark, config)
    seconds = time.perf_counter() - t0
    print("RESULT=" + json.dumps({"seconds": seconds, "messages": result.messages}), flush=True)
    spark.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--master", required=True, help="the cluster, spark://HOST:PORT")
    p.add_argument("--n", type=int, default=100_000, help="events (default 10^5)")
    p.add_argument("--format", default="debezium")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cdclake-bench-cl")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        one_run(args.child[0], args.child[1], args.format, args.child[2])
        return 0

    from bench import data

    path = args.work / f"{args.format}-{args.n}.jsonl"
    data.write_events(path, args.format, args.n, max(args.n // 10, 1), 1)
    seconds = {}
    for master in ("local[2]", args.master):
        target = args.work / f"lake-{master.replace('/', '_').replace(':', '_')}"
        subprocess.run(["rm", "-rf", str(target)], check=True)
        done = subprocess.run(
            [sys.executable, "-m", "bench.cluster", "--master", args.master,
             "--format", args.format, "--child", master, str(path), str(target)],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT=")]
        if done.returncode != 0 or not lines:
            print(done.stdout + done.stderr[-3000:], file=sys.stderr)
            return 1
        r = json.loads(lines[0][7:])
        seconds[master] = r["seconds"]
        print(f"{master}: {r['messages']:,} messages in {r['seconds']:.1f} s "
              f"({r['messages'] / r['seconds']:,.0f}/s)")  # fmt: skip
    ratio = seconds["local[2]"] / seconds[args.master]
    print(f"cluster throughput / local[2] throughput = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
