"""``cdclake status`` and ``quarantine list`` on a target in S3 (issue 38, item 1): tables written
by Spark through S3A to a real S3-compatible server (s3proxy, ``scripts/s3.sh``), read back with
delta-rs from ``s3a://`` with the settings cdclake's Spark sessions use (``CDCLAKE_S3_ENDPOINT``,
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``): the same answer as Spark's, from a process
without a JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from builders.dbz import event
from ports import free_port
from pyspark.sql import SparkSession

from tests import spark_status

REPO = Path(__file__).resolve().parents[2]

# a bucket of its own: the shared test session caches an S3A filesystem per bucket, with the
# endpoint of the first test that used it (the cluster cases use "lake")
KEY, SECRET, BUCKET = "cdclake", "cdclake-secret", "status-lake"
pytestmark = pytest.mark.e2e


def _s3(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "s3.sh"), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"scripts/s3.sh {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh s3proxy with the bucket ``status-lake``, for this module."""
    port = str(free_port())
    env = {
        **os.environ,
        "S3_DATA": str(tmp_path_factory.mktemp("s3")),
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }
    _s3("start", "--port", port, "--bucket", BUCKET, env=env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        _s3("stop", "--port", port, env=env)


def test_status_of_an_s3a_target(
    spark: SparkSession, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdclake import _spark
    from cdclake.config import ApplyConfig
    from cdclake.ops.quarantine import Selection, counts
    from cdclake.ops.status import target_status
    from cdclake.run.runner import apply_raw
    from cdclake.sources import raw_from_lines

    for key, value in {
        **_spark.s3a_options(),  # empty: the test session was built without an endpoint
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.access.key": KEY,
        "fs.s3a.secret.key": SECRET,
    }.items():
        spark.sparkContext._jsc.hadoopConfiguration().set(key, value)  # type: ignore[union-attr]
    target = f"s3a://{BUCKET}/status"
    ts = int(datetime.now(UTC).timestamp() * 1000) - 60_000
    batches = [
        [event("c", after={"id": i, "name": "a"}, lsn=i, ts_ms=ts + i) for i in (1, 2, 3)],
        [
            event("d", before={"id": 2, "name": "a"}, lsn=4, ts_ms=ts + 4),
            event("c", after={"id": 1, "name": "o"}, lsn=5, ts_ms=ts + 5, table="orders"),
            "not json",
        ],
    ]
    for i, lines in enumerate(batches):
        config = ApplyConfig(format="debezium", inputs=(f"b{i}.jsonl",), target=target)
        apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config)

    for key, value in {
        "CDCLAKE_S3_ENDPOINT": endpoint,
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }.items():
        monkeypatch.setenv(key, value)
    now = datetime.now(UTC)
    new = target_status(target, now=now)
    old = spark_status.target_status(spark, target, now=now)
    assert new.to_json() == old.to_json()
    assert [(t.table, t.rows) for t in new.tables] == [
        ("shop.public.items", 2),
        ("shop.public.orders", 1),
    ]
    assert counts(target, Selection()) == spark_status.counts(spark, target, Selection())

    # the command, in a process without Spark
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    code = (
        "import sys\nfrom cdclake.cli import main\nsys.argv = ['cdclake', *sys.argv[1:]]\n"
        "try:\n    main()\nfinally:\n    print('pyspark' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "status", "--target", target, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"
    doc = json.loads(done.stdout)
    assert [(t["table"], t["rows"], t["last_position"]) for t in doc["tables"]] == [
        ("shop.public.items", 2, [4]),
        ("shop.public.orders", 1, [5]),
    ]
    assert doc["quarantine"] == {"not valid JSON": 1}

    # a wrong secret: one line naming the target, no traceback
    done = subprocess.run(
        [sys.executable, "-c", code, "status", "--target", target],
        capture_output=True,
        text=True,
        env={**env, "AWS_SECRET_ACCESS_KEY": "wrong"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and target in lines[0], done.stderr
    assert "Traceback" not in done.stderr
