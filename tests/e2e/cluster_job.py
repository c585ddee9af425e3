"""A driver of its own for tests/e2e/test_cluster.py: a session the *user* built, cdclake's API.

    python cluster_job.py '{"master": "spark://…", "jobs": [{"format": …, "input": …, …}]}'

Prints one JSON line: each job's counts, then the session's master and settings after cdclake
ran (they must be what the user set).
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

from cdclake import ApplyConfig, _spark, run_batch

USER = {
    "spark.driver.memory": "1g",
    "spark.executor.memory": "900m",
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.delta.logStore.s3a.impl": _spark.S3_LOG_STORE,
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    # as the README advises for small batches: Delta's default of 50 tasks per snapshot load
    "spark.databricks.delta.snapshotPartitions": "2",
}


def main() -> None:
    spec = json.loads(sys.argv[1])
    b = SparkSession.builder.master(spec["master"]).appName("a-users-app")
    b = b.config("spark.jars", ",".join(_spark.jars()))
    for key, value in {**USER, **_spark.s3a_options()}.items():
        b = b.config(key, value)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    for job in spec["jobs"]:
        config = ApplyConfig(
            format=job["format"],
            inputs=(job["input"],),
            target=job["target"],
            keys={t: tuple(c) for t, c in job.get("keys", {}).items()},
        )
        r = run_batch(spark, config)
        results.append(
            {
                "format": job["format"],
                "messages": r.messages,
                "changes": r.changes,
                "quarantined": r.quarantined,
            }
        )
    same = _spark.get_or_create() is spark
    conf = spark.sparkContext.getConf()
    print(
        "RESULT="
        + json.dumps(
            {
                "jobs": results,
                "same_session": same,
                "master": spark.sparkContext.master,
                "settings": {k: conf.get(k, None) for k in USER},
                "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
            }
        ),
        flush=True,
    )
    spark.stop()


if __name__ == "__main__":
    main()
