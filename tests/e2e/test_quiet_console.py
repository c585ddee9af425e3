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


def _cdclake(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """The CLI's run and its process id (which names its Spark log file)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "CDCLAKE_DRIVER_MEMORY": "1g",
        "CDCLAKE_SPARK_MASTER": "local[1]",
    }
    env.pop("PYSPARK_GATEWAY_PORT", None)
    argv = [sys.executable, "-c", "from cdclake.cli import main; main()", *args]
    with subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        out, err = proc.communicate(timeout=1500)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), proc.pid


@pytest.mark.e2e
@pytest.mark.timeout(1800)  # one Spark driver; a busy machine needs the margin
def test_apply_on_the_demo_inputs_prints_only_cdclakes_output(tmp_path: Path) -> None:
    logs = Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake")) / "logs"
    done, pid = _cdclake(
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
    # Spark's lines went to a new log file under the cache instead (named by the driver's process
    # id: other tests' drivers write theirs beside it at the same time)
    new = list(logs.glob(f"spark-*-{pid}.log"))
    assert len(new) == 1, sorted(p.name for p in logs.glob("spark-*.log"))
    assert "Spark" in new[0].read_text(encoding="utf-8", errors="replace")
