"""Spark Declarative Pipelines AUTO CDC (``pyspark.pipelines.create_auto_cdc_flow``), in-process.

Pipelines run on Spark Connect. To keep one process and the same Spark settings, the Connect
service is started inside the benchmark's own JVM (``SparkConnectService.start(sc)``) and a
Connect client in this Python process registers the graph and starts the run, as
``spark-pipelines run`` does. The client needs ``grpcio`` & co. (the ``pyspark[pipelines]``
extra); ``bench/run.sh`` installs them into ``$CDCLAKE_CACHE/bench-pipelines`` so the project's
venv is left as it is.

With Delta Lake 4.4 this cannot run: the AUTO CDC writer checks that the target table is a
DataSource V2 ``SupportsRowLevelOperations`` table, and Delta's ``DeltaTableV2`` is not (Delta
implements MERGE with its own commands). The error Spark raises is reported verbatim.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench import PIPELINES_SITE as EXTRA_SITE
from bench.data import WIRE_FORMATS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AutoCdc:
    """One Connect client on the benchmark's JVM; :meth:`run` applies one input file."""

    def __init__(self, spark: SparkSession, storage: Path) -> None:
        """``spark`` must have been built with the ``spark.connect.grpc.binding.*`` settings of
        :mod:`bench.run`."""
        self.spark, self.storage = spark, storage
        self.connect: Any = None
        self.error: str | None = None
        try:
            import grpc  # noqa: F401
        except ImportError as e:
            self.error = (
                f"grpcio is not installed ({e}); Spark Declarative Pipelines need the "
                f"pyspark[pipelines] extra: bench/run.sh installs it into {EXTRA_SITE}"
            )
            return
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        package = jvm.org.apache.spark.sql.connect.service
        package.SparkConnectService.start(spark._jsc.sc())
        # the Scala object's accessor (no static forwarder): the port the service did bind
        port = getattr(getattr(package, "SparkConnectService$"), "MODULE$").localPort()
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        self.connect = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").create()

    def run(self, data_dir: Path, name: str) -> float:
        """Run the pipeline once over every file of ``data_dir``; returns the wall time."""
        if self.error is not None:
            raise RuntimeError(self.error)
        from pyspark import pipelines as dp
        from pyspark.pipelines.add_pipeline_analysis_context import (
            add_pipeline_analysis_context,
        )
        from pyspark.pipelines.graph_element_registry import graph_element_registration_context
        from pyspark.pipelines.spark_connect_graph_element_registry import (
            SparkConnectGraphElementRegistry,
        )
        from pyspark.pipelines.spark_connect_pipeline import (
            create_dataflow_graph,
            handle_pipeline_events,
            start_run,
        )
        from pyspark.sql.connect import functions as CF

        cs = self.connect
        schema = WIRE_FORMATS["debezium"].exact_schema
        t0 = time.perf_counter()
        graph = create_dataflow_graph(
            cs,
            default_catalog=None,
            default_database="default",
            sql_conf={"spark.sql.pipelines.maxFlowRetryAttempts": "0"},
        )
        registry = SparkConnectGraphElementRegistry(cs, graph)
        with (
            graph_element_registration_context(registry),
            add_pipeline_analysis_context(spark=cs, dataflow_graph_id=graph, flow_name=None),
        ):

            @dp.temporary_view(name=f"{name}_changes")
            def changes() -> Any:
                p = CF.from_json(CF.col("value"), schema)["value"]["payload"]
                row = CF.coalesce(p["after"], p["before"])
                src = p["source"]
                return (
                    cs.readStream.format("text")
                    .load(str(data_dir))
                    .select(
                        row["id"].alias("id"),
                        row["first_name"].alias("first_name"),
                        row["last_name"].alias("last_name"),
                        row["email"].alias("email"),
                        p["op"].alias("op"),
                        CF.struct(
                            src["commit_lsn"], src["change_lsn"], src["event_serial_no"]
                        ).alias("seq"),
                    )
                )

            dp.create_streaming_table(name, format="delta")
            dp.create_auto_cdc_flow(
                target=name,
                source=f"{name}_changes",
                keys=["id"],
                sequence_by="seq",
                apply_as_deletes="op = 'd'",
                except_column_list=["op", "seq"],
                stored_as_scd_type=1,
            )
        events = start_run(
            cs,
            graph,
            full_refresh=[],
            full_refresh_all=True,
            refresh=[],
            dry=False,
            storage=(self.storage / name).absolute().as_uri(),
        )
        handle_pipeline_events(events)
        return time.perf_counter() - t0

    def close(self) -> None:
        if self.connect is not None:
            try:
                self.connect.stop()
            finally:
                jvm = self.spark.sparkContext._jvm
                assert jvm is not None
                jvm.org.apache.spark.sql.connect.service.SparkConnectService.stop(
                    jvm.scala.Option.empty(), jvm.scala.Option.empty()
                )


def first_line(e: BaseException) -> str:
    """The error as Spark states it, without the JVM stack trace."""
    text = str(e).strip()
    head = text.split("\n\nJVM stacktrace:")[0].split("\n")[0]  # drops the query plan
    return " ".join(head.split())[:600]
