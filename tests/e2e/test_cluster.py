"""cdclake on a real Spark standalone cluster (a master and 2 workers from scripts/spark-cluster.sh)
with tables, checkpoints and inputs on a real S3-compatible server (s3proxy, scripts/s3.sh).

Each way of running gets its own driver process: the Python API in a session the user built,
``cdclake apply --master``, spark-submit with ``cdclake submit-args``. Tables are read back with
delta-rs over S3 and with Spark, and compared with the state computed here in plain Python from
the seeded workload (bench/data.py, the same logical stream in each of the four formats).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jvm_archive
import pytest
from ports import free_port
from pyspark.sql import SparkSession
from test_streaming_crash import Cli

from cdclake import formats
from cdclake.run.kafka_tools import create_topic, produce

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # the benchmark's workload generator (bench/data.py)

from bench import data  # noqa: E402

FORMATS = tuple(formats.names())
KEY, SECRET, BUCKET = "cdclake", "cdclake-secret", "lake"
COLUMNS = ("id", "first_name", "last_name", "email")
Rows = set[tuple[str, ...]]

pytestmark = pytest.mark.e2e


def _script(name: str, *args: str, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / name), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"scripts/{name} {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


@dataclass
class Stack:
    """The cluster and the object store, and the environment that points a driver at them."""

    master: str
    cluster_dir: Path
    endpoint: str
    env: dict[str, str]

    def storage_options(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("cluster")
    s3_port, master_port = str(free_port()), str(free_port())
    env = {
        **os.environ,
        "S3_DATA": str(base / "s3"),
        "SPARK_CLUSTER_DIR": str(base / "spark"),
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }
    _script("s3.sh", "start", "--port", s3_port, "--bucket", BUCKET, env=env)
    try:
        _script("spark-cluster.sh", "start", "--port", master_port, "--workers", "2", env=env)
        endpoint = f"http://127.0.0.1:{s3_port}"
        driver_env = {
            **env,
            "CDCLAKE_S3_ENDPOINT": endpoint,
            "CDCLAKE_DRIVER_MEMORY": "1g",
            "SPARK_LOCAL_IP": "127.0.0.1",  # the driver too: loopback only
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests" / "e2e")]),
        }
        driver_env.pop("PYSPARK_GATEWAY_PORT", None)
        yield Stack(
            f"spark://127.0.0.1:{master_port}",
            base / "spark",
            endpoint,
            driver_env,
        )
    finally:
        subprocess.run(
            ["bash", str(REPO / "scripts" / "spark-cluster.sh"), "stop", "--port", master_port],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        subprocess.run(
            ["bash", str(REPO / "scripts" / "s3.sh"), "stop", "--port", s3_port],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )


# --- the workload and its expected state ------------------------------------------------------


def workload(fmt: str, n: int, seed: int) -> tuple[list[str], Rows]:
    """``n`` seeded changes of 40 keys in ``fmt``, in a database of their own (``<fmt>_db``), and
    the live rows they leave."""
    saved = data.DB
    data.DB = f"{fmt}_db"
    try:
        events = list(data.events(n, keys=40, stride=1, seed=seed))
        lines = [data.WIRE_FORMATS[fmt].line(e, n) for e in events]
    finally:
        data.DB = saved
    return lines, expected_rows(events)


def expected_rows(events: list[data.Event]) -> Rows:
    live: dict[object, dict[str, object]] = {}
    for e in events:
        if e.op == "d":
            assert e.before is not None
            live.pop(e.before["id"], None)
        else:
            assert e.after is not None
            live[e.after["id"]] = e.after
    return {tuple(str(r[c]) for c in COLUMNS) for r in live.values()}


def primary_keys(fmt: str) -> dict[str, list[str]]:
    return {f"{fmt}_db.{data.TABLE}": ["id"]} if fmt == "ckafka" else {}


def table_folders(spark: SparkSession, stack: Stack, prefix: str) -> dict[str, str]:
    """Source table -> its s3a:// location, listed from the store (not taken from cdclake)."""
    jvm = s3a_session(spark, stack).sparkContext._jvm
    assert jvm is not None
    root = jvm.org.apache.hadoop.fs.Path(f"s3a://{BUCKET}/{prefix}")
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    out = {}
    for status in fs.listStatus(root):
        name = status.getPath().getName()
        log = jvm.org.apache.hadoop.fs.Path(f"s3a://{BUCKET}/{prefix}/{name}/_delta_log")
        if status.isDirectory() and not name.startswith("_") and fs.exists(log):
            out[name] = f"s3a://{BUCKET}/{prefix}/{name}"
    return out


def table_of(fmt: str, folders: dict[str, str]) -> str:
    (name,) = [n for n in folders if n.startswith(f"{fmt}_db")]
    return folders[name]


def rows_delta_rs(stack: Stack, uri: str) -> Rows:
    from deltalake import DeltaTable

    table = DeltaTable(uri.replace("s3a://", "s3://"), storage_options=stack.storage_options())
    return {tuple(str(r[c]) for c in COLUMNS) for r in table.to_pyarrow_table().to_pylist()}


def s3a_session(spark: SparkSession, stack: Stack) -> SparkSession:
    """The test session with S3A settings for the test bucket only."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in {
        "endpoint": stack.endpoint,
        "access.key": KEY,
        "secret.key": SECRET,
        "path.style.access": "true",
        "connection.ssl.enabled": "false",
        "endpoint.region": "us-east-1",
    }.items():
        conf.set(f"fs.s3a.bucket.{BUCKET}.{key}", value)
    return spark


def rows_spark(spark: SparkSession, stack: Stack, uri: str) -> Rows:
    df = s3a_session(spark, stack).read.format("delta").load(uri).select(*COLUMNS)
    return {tuple(str(v) for v in r) for r in df.collect()}


def put_inputs(
    spark: SparkSession, stack: Stack, prefix: str, lines_by_format: dict[str, list[str]]
) -> None:
    """Input files uploaded as objects of the bucket, through S3A: one file per format.

    One file, because canal messages carry no binlog coordinates: their position is
    ``[es (second precision), input offset, row]``, and line numbers of two files do not compare
    (a change on line 5 of a second file would lose to one on line 110 of the first in the same
    second)."""
    jvm = s3a_session(spark, stack).sparkContext._jvm
    assert jvm is not None
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    local = Path(tempfile.mkdtemp())
    for fmt, lines in lines_by_format.items():
        name = f"{fmt}.jsonl"
        (local / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        dst = jvm.org.apache.hadoop.fs.Path(f"s3a://{BUCKET}/{prefix}/{name}")
        src = jvm.org.apache.hadoop.fs.Path((local / name).as_uri())
        dst.getFileSystem(conf).copyFromLocalFile(src, dst)


def run_driver(stack: Stack, args: list[str], timeout: float = 1500) -> str:
    done = subprocess.run(
        args,
        env=stack.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, f"{args[:3]}… failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    return done.stdout


# --- batch: the three ways ---------------------------------------------------------------------


@pytest.mark.timeout(1800)  # a driver of its own; on a busy machine each Spark job waits for CPU
# over 120 s (130 s in a full run), because: a user's own driver and its executors on two
# standalone workers start, and each of the four formats is applied and read back over S3
def test_batch_of_each_format_in_a_users_session_on_the_cluster(
    stack: Stack, spark: SparkSession
) -> None:
    """The Python API in a session the user built (master, jars, memory, partitions): all four
    formats (``auto``, per message) from s3a:// inputs into s3a:// tables; cdclake changes
    nothing of the session."""
    workloads = {fmt: workload(fmt, 240, seed=11 + i) for i, fmt in enumerate(FORMATS)}
    put_inputs(spark, stack, "in", {fmt: w[0] for fmt, w in workloads.items()})
    spec = {
        "master": stack.master,
        "jobs": [
            {
                "format": "auto",
                "input": f"s3a://{BUCKET}/in",
                "target": f"s3a://{BUCKET}/api",
                "keys": primary_keys("ckafka"),
            }
        ],
    }
    out = run_driver(stack, [sys.executable, "tests/e2e/cluster_job.py", json.dumps(spec)])
    (line,) = [ln for ln in out.splitlines() if ln.startswith("RESULT=")]
    result = json.loads(line.removeprefix("RESULT="))
    assert [(j["messages"], j["quarantined"]) for j in result["jobs"]] == [(4 * 240, 0)]
    assert result["same_session"] is True
    assert result["master"] == stack.master
    assert result["settings"]["spark.driver.memory"] == "1g"
    assert result["settings"]["spark.executor.memory"] == "900m"
    assert result["shuffle_partitions"] == "3"

    folders = table_folders(spark, stack, "api")
    for fmt, (_, expected) in workloads.items():
        uri = table_of(fmt, folders)
        assert rows_delta_rs(stack, uri) == expected, fmt
        assert rows_spark(spark, stack, uri) == expected, fmt
    # lineage names the object where each change came from
    lineage = {
        r[0]
        for r in spark.read.format("delta")
        .load(table_of("canal", folders))
        .select("_cdc_lineage.source")
        .collect()
    }
    assert lineage == {f"s3a://{BUCKET}/in/canal.jsonl"}


@pytest.mark.timeout(2400)
# over 120 s (145 s), because: two more drivers (the CLI with --master, spark-submit), each
# starting executors on the cluster, are the two ways of running this case checks
def test_cli_with_master_and_spark_submit_on_the_cluster(stack: Stack, spark: SparkSession) -> None:
    """``cdclake apply --master spark://…`` and ``spark-submit $(cdclake submit-args) apply``."""
    lines, expected = workload("dataworks", 200, seed=5)
    put_inputs(spark, stack, "in-cli", {"dataworks": lines})
    src = f"s3a://{BUCKET}/in-cli"
    cli = [sys.executable, "-c", "from cdclake.cli import main; main()"]
    out = run_driver(
        stack,
        [
            *cli,
            "apply",
            "--master",
            stack.master,
            "--format",
            "dataworks",
            "--input",
            src,
            "--target",
            f"s3a://{BUCKET}/cli",
        ],
    )
    assert "messages 200;" in out, out
    assert (
        rows_delta_rs(stack, table_of("dataworks", table_folders(spark, stack, "cli"))) == expected
    )

    args = run_driver(stack, [*cli, "submit-args", "--master", stack.master]).split()
    assert args[-1].endswith("spark_submit/main.py")
    import pyspark

    submit = str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
    out = run_driver(
        stack,
        [
            submit,
            # the tests' settings, which spark-submit reads from SPARK_CONF_DIR unless the
            # class-data archive's (tests/jvm_archive.py) are in use
            *("--properties-file", str(jvm_archive.properties_file())),
            *args,
            "apply",
            "--format",
            "dataworks",
            "--input",
            src,
            "--target",
            f"s3a://{BUCKET}/submit",
        ],
    )
    assert "messages 200;" in out, out
    uri = table_of("dataworks", table_folders(spark, stack, "submit"))
    assert rows_delta_rs(stack, uri) == expected
    assert rows_spark(spark, stack, uri) == expected


# --- streaming from Kafka, a worker and then the driver killed ----------------------------------


def _executor_pids(worker_pid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == worker_pid:
            pids.append(int(stat.parent.name))
    return pids


def kill_worker(stack: Stack, i: int) -> None:
    """SIGKILL a worker and its executor, like a machine going down."""
    pid = int((stack.cluster_dir / f"worker-{i}.pid").read_text())
    for p in [*_executor_pids(pid), pid]:
        os.kill(p, signal.SIGKILL)


def produce_lines(bootstrap: str, topic: str, lines: list[str], tmp: Path) -> int:
    path = tmp / f"p-{uuid.uuid4().hex[:6]}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return produce(path, topic, bootstrap)


@pytest.mark.timeout(2400)
# over 120 s (317 s), because: a stream must outlive a killed worker (its executors restart) and
# a killed driver (a second driver resumes from the checkpoint on S3), each recovery waited out
def test_stream_from_kafka_survives_a_worker_and_the_driver_killed(
    stack: Stack,
    kafka_broker: str,
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """All four formats in one topic (``--format auto``), checkpoint and tables on s3a://.
    A worker is SIGKILLed mid-stream (the query goes on: Spark reruns its tasks on the other),
    then the driver (the restart continues from the checkpoint on object storage): exact."""
    topic = f"cluster-{uuid.uuid4().hex[:8]}"
    # one partition: canal, CKafka and DataWorks lines are produced without a key, and offsets
    # of two partitions do not order one table's changes (see put_inputs)
    create_topic(kafka_broker, topic, partitions=1)
    n = 120
    parts: dict[str, list[list[str]]] = {}
    expected: dict[str, Rows] = {}
    for i, fmt in enumerate(FORMATS):
        lines, expected[fmt] = workload(fmt, n, seed=30 + i)
        parts[fmt] = [lines[: n // 3], lines[n // 3 : 2 * n // 3], lines[2 * n // 3 :]]

    def produce_part(k: int) -> int:
        return sum(produce_lines(kafka_broker, topic, parts[f][k], tmp_path) for f in FORMATS)

    args = [
        "--master",
        stack.master,
        "--format",
        "auto",
        "--kafka-bootstrap",
        kafka_broker,
        "--topic",
        topic,
        "--checkpoint",
        f"s3a://{BUCKET}/chk",
        "--target",
        f"s3a://{BUCKET}/stream",
        "--trigger-interval",
        "2 seconds",
        *[a for f in FORMATS for t in primary_keys(f) for a in ("--primary-key", f"{t}=id")],
    ]
    for k, v in stack.env.items():
        if k.startswith(("CDCLAKE", "AWS", "SPARK_LOCAL_IP")):
            monkeypatch.setenv(k, v)
    produced = produce_part(0)
    cli = Cli(args, tmp_path / "driver-1.log")
    cli.wait_for(r"^batch \d+: messages [1-9]", timeout=900)
    kill_worker(stack, 1)
    produced += produce_part(1)
    deadline = time.monotonic() + 900
    while cli.messages_seen() < produced:
        assert cli.proc.poll() is None, cli.output()
        assert time.monotonic() < deadline, cli.output()
        time.sleep(1)
    cli.kill()  # the driver, SIGKILL
    produced += produce_part(2)
    again = Cli([*args, "--available-now"], tmp_path / "driver-2.log")
    assert again.finish(timeout=900) == 0, again.output()

    folders = table_folders(spark, stack, "stream")
    for fmt in FORMATS:
        uri = table_of(fmt, folders)
        assert rows_delta_rs(stack, uri) == expected[fmt], fmt
        assert rows_spark(spark, stack, uri) == expected[fmt], fmt
    assert produced == 4 * n
