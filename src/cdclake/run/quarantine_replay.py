"""Replay quarantined records (``<target>/_cdc_quarantine``, selected as in
:mod:`cdclake.ops.quarantine`).

A replay runs the selected quarantined records through decode and apply again, with the options
given now (``--primary-key``, ``--format``, ...): those that now apply leave the quarantine,
those that still fail stay with their new reason. Position rules hold as for any late event: a
replayed change not newer than what the table holds is ignored.

Exactly once, also when killed midway: a replay first records a marker in
``<target>/_cdc_replays`` (its id, the quarantine's Delta version it selects from, the filters
and the options). Every Delta write of the replay carries Delta's idempotent-write identifiers
(``txnAppId`` = ``cdclake-replay-<id>/<step>``, ``txnVersion`` = 0), the originals are removed by
a MERGE that matches exactly the selected rows, and a ``finished`` marker closes it. A replay
that finds an unfinished one resumes it (same selection, same options) instead of starting anew.

>>> summary = replay(spark, "/lake", Selection(table="shop.*"), ApplyConfig(...))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake.apply import tables as tbl
from cdclake.apply.results import Txn
from cdclake.config import ApplyConfig
from cdclake.ops.quarantine import Selection

REPLAYS = "_cdc_replays"
_REPLAYS_SCHEMA = (
    "replay_id STRING, state STRING, quarantine_version BIGINT, selection STRING, "
    "config STRING, selected BIGINT, applied BIGINT, requarantined BIGINT, at TIMESTAMP"
)
# the columns that identify one quarantined row (a row has no id of its own)
_IDENTITY = ("lineage", "reason", "batch_id", "quarantined_at", "raw")


@dataclass
class ReplaySummary:
    replay_id: str
    resumed: bool
    selected: int
    applied: int  # selected records that now apply (changes, control records)
    requarantined: int  # changes that still fail, kept with their new reason
    reasons: dict[str, int]


def replay(
    spark: SparkSession, target: str, selection: Selection, config: ApplyConfig
) -> ReplaySummary:
    """Replay the selected quarantined records with ``config`` (its target is ``target``)."""
    from cdclake.run.runner import apply_raw
    from cdclake.sources import raw_from_kept

    tgt = tbl.Target(target)
    path = tgt.system_path(tbl.QUARANTINE)
    pending = _pending(spark, tgt)
    resumed = pending is not None
    if pending is None:
        version = DeltaTable.forPath(spark, path).history(1).first()
        assert version is not None
        pending = {
            "replay_id": uuid.uuid4().hex[:16],
            "quarantine_version": version["version"],
            "selection": json.dumps(asdict(selection)),
            "config": config.model_dump_json(),
        }
        _mark(spark, tgt, pending, "started")
    selection = Selection(**json.loads(pending["selection"]))
    config = ApplyConfig.model_validate_json(pending["config"])
    chosen = (
        spark.read.format("delta")
        .option("versionAsOf", pending["quarantine_version"])
        .load(path)
        .filter(selection.predicate())
    )
    n = chosen.count()
    app_id = f"cdclake-replay-{pending['replay_id']}"
    raw = raw_from_kept(chosen)  # a Kafka record with its key and headers
    result = apply_raw(raw, config, app_id, 0, messages=n)  # one record per row kept
    _remove(spark, path, chosen, Txn(spark, app_id, 0))
    summary = ReplaySummary(
        pending["replay_id"],
        resumed,
        n,
        n - result.quarantined,
        result.quarantined,
        result.quarantine_reasons,
    )
    _mark(spark, tgt, pending, "finished", summary)
    return summary


def _remove(spark: SparkSession, path: str, chosen: DataFrame, txn: Txn) -> None:
    """Delete exactly the selected rows (a second run finds none left: a no-op)."""
    cond = " AND ".join(f"q.{c} <=> s.{c}" for c in _IDENTITY)
    source = chosen.select(*_IDENTITY).dropDuplicates()
    with txn("unquarantine"):
        (
            DeltaTable.forPath(spark, path)
            .alias("q")
            .merge(source.alias("s"), cond)
            .whenMatchedDelete()
            .execute()
        )


def _pending(spark: SparkSession, tgt: tbl.Target) -> dict[str, Any] | None:
    path = tgt.system_path(REPLAYS)
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    rows = spark.read.format("delta").load(path).collect()  # one or two rows per replay
    finished = {r["replay_id"] for r in rows if r["state"] == "finished"}
    started = [r for r in rows if r["state"] == "started" and r["replay_id"] not in finished]
    return started[0].asDict() if started else None


def _mark(
    spark: SparkSession,
    tgt: tbl.Target,
    replay_row: dict[str, Any],
    state: str,
    summary: ReplaySummary | None = None,
) -> None:
    row = {
        **{k: replay_row[k] for k in ("replay_id", "quarantine_version", "selection", "config")},
        "state": state,
        "selected": summary.selected if summary else None,
        "applied": summary.applied if summary else None,
        "requarantined": summary.requarantined if summary else None,
        "at": None,
    }
    df = spark.createDataFrame([row], _REPLAYS_SCHEMA).withColumn("at", F.current_timestamp())
    txn = Txn(spark, f"cdclake-replay-{replay_row['replay_id']}", 0)
    with txn(f"marker-{state}"):
        df.write.format("delta").mode("append").save(tgt.system_path(REPLAYS))
