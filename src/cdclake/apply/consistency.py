"""Transaction-consistent batches (``--consistent``): a batch applies only complete source
transactions, and records the cut it produced.

A source transaction often changes several tables at once; applied table by table, a reader
that joins them can see one side of it and not the other. In consistent mode a batch's changes
pass a gate first:

- **Debezium** (``provide.transaction.metadata=true``): every change names its transaction
  (``transaction.id``), and the transaction-metadata topic's END record says how many events it
  made (``event_count``). A transaction is complete when its END has been seen and that many
  distinct events of it (by table and position: a re-delivery counts once). Transactions are
  released in the order of their END records (the metadata topic's order, which is commit
  order): a complete transaction behind an incomplete one waits for it, so the tables always
  hold the state after a prefix of the source's transactions. The connector's initial snapshot
  counts as one transaction before all others (``cdclake.model.SNAPSHOT_TRANSACTION``, closed
  by its last read). A change without a transaction (a connector without transaction
  metadata) passes at once. The END of an applied transaction
  is remembered for a while (:data:`DONE_FOR`), so that a connector sending a transaction again
  in part does not hold it back.
- **DataWorks**: TRANSACTION_BEGIN/END records frame the changes of one transaction in the
  topic's order; everything up to the last END passes, what follows waits.

What waits goes to ``<target>/_cdc_pending`` (the changes as decoded, with the cut they arrived
in) and is applied with the batch that completes its transaction. A transaction still incomplete
once the source has moved on by ``timeout`` (source time: the newest change seen, against the
transaction's newest event) is applied as it stands, and the cut names it: a lost END record
cannot hold a table back forever.

Every batch appends its **cut** to ``<target>/_cdc_cuts``: the Delta version of every table after
the batch, the source time and position the released changes reach, what was held and what was
released by the timeout. :func:`snapshot` reads every table at the versions of one cut, by Delta
time travel. Order of the writes, for exactly once across a crash: the tables, then the cut,
then the pending table, each an idempotent write of the batch; a batch run again before the
pending table was rewritten finds the same pending rows, so it decides the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdclake._spark.detach import detached
from cdclake.apply import tables as tbl
from cdclake.apply.results import BatchResult, Txn
from cdclake.errors import ConfigError
from cdclake.model import (
    CHANGE_SCHEMA,
    DATA_OPS,
    EVENT_COUNT_KEY,
    POSITION_TYPE,
    SNAPSHOT_TRANSACTION,
    TRANSACTION_END_KEY,
    TRANSACTION_KEY,
    TRANSACTION_MARKERS,
    Op,
)
from cdclake.target_layout import CUTS, PENDING

ARRIVED = "_cdc_arrived"  # the cut a pending change arrived in: its place in input order
DONE = "_cdc_done"  # a pending table's row that is the END of a transaction already applied
DONE_FOR = timedelta(minutes=10)
"""How long (source time) the END of an applied transaction is remembered: a connector that
restarts inside a transaction sends its END again with only the events it had not sent, and the
transaction, applied already, must not wait for the rest."""
_RELEASE, _TIMED_OUT = "_release", "_timed_out"
MAX_NAMED = 100  # transactions a cut names as released by the timeout, at most

CUT_SCHEMA = StructType(
    [
        StructField("cut", LongType()),
        StructField("batch_id", LongType()),
        StructField("tables", MapType(StringType(), LongType())),
        StructField("source_ts", TimestampType()),
        StructField("position", POSITION_TYPE),
        StructField("released", LongType()),
        StructField("held", LongType()),
        StructField("timed_out", ArrayType(StringType())),
    ]
)
"""``<target>/_cdc_cuts``: ``tables`` maps every target table (by its name in the target)
to its Delta version at the cut; ``source_ts``/``position``: the newest source time and position
of the changes the cut applied (the cut before's when it applied none); ``released``: changes
applied by this batch that had waited; ``held``: changes waiting after it; ``timed_out``: the
transactions it applied incomplete (``--consistent-timeout``). A ``cut_at`` column holds when."""


def rule_for(fmt: str) -> str:
    """How ``fmt`` marks its transactions (:attr:`cdclake.formats.base.Format.transactions`);
    one line naming the formats that can, for one that cannot."""
    from cdclake import formats

    marked = {n: formats.get(n).transactions for n in formats.names()}
    rule = marked.get(fmt)
    if rule is None:
        able = [n for n, r in marked.items() if r]
        unable = [n for n, r in marked.items() if not r]
        raise ConfigError(
            f"--consistent needs transaction boundaries in the input: --format "
            f"{' or '.join(able)} (got {fmt!r}; {' and '.join(unable)} messages carry none)"
        )
    return rule


def _txn() -> Column:
    """A change's transaction (the format's id, or :data:`SNAPSHOT_TRANSACTION`)."""
    return F.col("meta")[TRANSACTION_KEY]


def _end() -> Column:
    """A record that closes its transaction: an END, or the snapshot's last read."""
    return F.col("meta")[TRANSACTION_END_KEY] == "true"


def _order() -> Column:
    """A change's place in input order across batches: the cut it arrived in, then its input
    position (for the metadata topic's END records: their order, which is commit order)."""
    return F.struct(
        F.col(ARRIVED), F.col("seq.source"), F.col("seq.partition"), F.col("seq.offset")
    )


def _age_over(newest: datetime | None, ts: Column, limit: timedelta | None) -> Column:
    """Whether the source has moved on past ``ts`` by more than ``limit``: ``newest`` is the
    newest source time among the candidates (computed once, by the job that caches them)."""
    if limit is None or newest is None:
        return F.lit(False)
    # an instant (a naive time from collect() is the driver's local time, as PySpark made it)
    return ts < F.lit(newest.astimezone() - limit)


def decide(
    candidates: DataFrame, rule: str, timeout: timedelta | None, newest: datetime | None
) -> DataFrame:
    """``candidates`` (this batch's changes and the pending table's rows, with :data:`ARRIVED`
    and :data:`DONE`) with ``_release`` (applied now) and ``_timed_out`` (applied incomplete);
    ``newest``: the newest source time among them."""
    good = F.col("error").isNull() & ~F.col(DONE)
    if rule == TRANSACTION_MARKERS:
        last_end = candidates.filter(good & (F.col("op") == Op.COMMIT)).agg(
            F.max(_order()).alias("_last_end")
        )
        framed = candidates.crossJoin(F.broadcast(last_end))
        late = _age_over(newest, F.col("source_ts"), timeout)
        inside = F.col("_last_end").isNotNull() & (_order() <= F.col("_last_end"))
        return framed.select(
            *candidates.columns,
            (F.col("error").isNotNull() | inside | late).alias(_RELEASE),
            (good & ~inside & late).alias(_TIMED_OUT),
        )
    tid = _txn()
    data = good & F.col("op").isin(*DATA_OPS, Op.TRUNCATE)
    event = F.when(
        data & F.col("table").isNotNull() & F.col("position").isNotNull(),
        F.struct("table", "position"),
    )
    end = F.col("error").isNull() & _end()
    # one pass per transaction: its distinct events, and its END (the first place of an END
    # delivered again; a remembered END of a transaction already applied is "done")
    txns = (
        candidates.filter(tid.isNotNull() & (data | end))
        .groupBy(tid.alias("_t"))
        .agg(
            F.count_distinct(event).alias("_seen"),
            F.max(F.when(data, F.col("source_ts"))).alias("_last_ts"),
            F.max(F.when(end, F.col("meta")[EVENT_COUNT_KEY].try_cast("bigint"))).alias("_count"),
            F.min(F.when(end, _order())).alias("_order"),
            F.max(F.when(end, F.col("source_ts"))).alias("_end_ts"),
            F.bool_or(F.when(end, F.col(DONE))).alias("_done"),
        )
    )
    snapshot = F.col("_t") == SNAPSHOT_TRANSACTION
    first = F.struct(
        F.lit(-1).cast("bigint"), *[F.lit(None).cast(t) for t in ("string", "int", "bigint")]
    )
    complete = F.when(snapshot, F.col("_order").isNotNull()).otherwise(  # its last read has arrived
        F.col("_order").isNotNull() & (F.col("_seen") >= F.col("_count"))
    )
    late = _age_over(newest, F.greatest("_last_ts", "_end_ts"), timeout)
    done = F.coalesce(F.col("_done"), F.lit(False))
    txns = txns.withColumns({"_ok": done | complete | late, "_late": ~done & ~complete & late})
    # the snapshot comes before every streamed transaction, whether its end has arrived or not
    order_type = txns.schema["_order"].dataType
    txns = txns.withColumn(
        "_order", F.when(snapshot, first.cast(order_type)).otherwise(F.col("_order"))
    )
    blocker = txns.filter(F.col("_order").isNotNull() & ~F.col("_ok")).agg(
        F.min("_order").alias("_blocker")
    )
    released = (
        txns.crossJoin(F.broadcast(blocker))
        .filter(
            F.col("_ok")
            & (
                F.col("_order").isNull()  # no END, timed out: applied as it stands
                | F.col("_blocker").isNull()
                | (F.col("_order") < F.col("_blocker"))
            )
        )
        .select(F.col("_t"), F.col("_late"))
    )
    joined = candidates.join(released, tid == F.col("_t"), "left")
    return joined.select(
        *candidates.columns,
        (F.col("error").isNotNull() | tid.isNull() | F.col("_t").isNotNull()).alias(_RELEASE),
        (good & F.coalesce(F.col("_late"), F.lit(False))).alias(_TIMED_OUT),
    )


def remembered(decided: DataFrame, newest: datetime | None) -> DataFrame:
    """The ENDs to remember after the batch (see :data:`DONE_FOR`): the applied transactions'
    ENDs, one per transaction, while the source has not moved on past :data:`DONE_FOR`."""
    ends = decided.filter(F.col(_RELEASE) & F.col("error").isNull() & _end())
    columns = [*CHANGE_SCHEMA.fieldNames(), ARRIVED]
    kept = ends.filter(~_age_over(newest, F.col("source_ts"), DONE_FOR))
    first = kept.groupBy(_txn().alias("_t")).agg(
        F.min_by(F.struct(*columns), _order()).alias("_end")
    )
    return first.select("_end.*").withColumn(DONE, F.lit(True))


@dataclass
class Gate:
    """One batch's pass through the gate: :attr:`released` goes to the tables, the rest waits.
    :meth:`close` records the cut and rewrites the pending table, once the tables are written."""

    spark: SparkSession
    target: tbl.Target
    cut: int
    tables_before: dict[str, int]
    newest: datetime | None  # the newest source time among the batch's and pending changes
    decided: DataFrame
    caches: list[DataFrame]
    stats: dict[str, Any] = field(default_factory=dict)

    def release(self) -> None:
        for df in self.caches:
            df.unpersist()

    @property
    def released(self) -> DataFrame:
        now = F.col(_RELEASE) & ~F.col(DONE)
        return self.decided.filter(now).select(*CHANGE_SCHEMA.fieldNames())

    def close(self, result: BatchResult, txn: Txn, batch_id: int | None) -> None:
        """Record the cut (every table's version now) and keep what waits; counts into
        ``result`` (``pending``: waiting now, ``released_from_pending``: applied after waiting)."""
        spark, target = self.spark, self.target
        versions = dict(self.tables_before)
        for name in result.tables:
            versions[target.name(name)] = tbl.newest_version(spark, target.table_path(name))
        s = self.stats
        result.pending = s["held"]
        result.released_from_pending = s["released_pending"]
        result.timed_out = list(s["timed_out"] or [])
        row = {
            "cut": self.cut,
            "batch_id": batch_id,
            "tables": versions,
            "source_ts": s["source_ts"],
            "position": None if s["position"] is None else list(s["position"]),
            "released": s["released_pending"],
            "held": s["held"],
            "timed_out": result.timed_out[:MAX_NAMED],
        }
        cut = spark.createDataFrame([row], CUT_SCHEMA).withColumn("cut_at", F.current_timestamp())
        txn.append(cut.coalesce(1), target.system_path(CUTS), "cut")
        _LAST[target.system_path(CUTS)] = row
        self.keep_waiting(txn)

    def keep_waiting(self, txn: Txn) -> None:
        """Rewrite the pending table: what waits, and the ENDs to remember."""
        columns = [*CHANGE_SCHEMA.fieldNames(), ARRIVED, DONE]
        held = self.decided.filter(~F.col(_RELEASE)).select(*columns)
        kept = held.unionByName(remembered(self.decided, self.newest).select(*columns))
        path = self.target.system_path(PENDING)
        with txn("pending"):
            kept.coalesce(1).write.format("delta").mode("overwrite").save(path)


def open_gate(
    changes: DataFrame,
    target: tbl.Target,
    rule: str,
    timeout: timedelta | None,
    batch_id: int | None = None,
) -> Gate:
    """The batch's ``changes`` and the pending ones, decided (see the module doc). A stream's
    batch run again after a crash that came between its cut and its pending table keeps the
    cut's number."""
    spark = changes.sparkSession
    memo = _LAST.get(target.system_path(CUTS))
    follows = (
        memo is not None and batch_id is not None and memo["batch_id"] in (batch_id - 1, batch_id)
    )
    last = memo if follows else last_cut(spark, target.root)
    again = last is not None and batch_id is not None and last["batch_id"] == batch_id
    cut = 0 if last is None else last["cut"] if again else last["cut"] + 1
    ts, pos = (None, None) if last is None else (last["source_ts"], last["position"])
    batch = changes.select(*CHANGE_SCHEMA.fieldNames()).withColumns(
        {ARRIVED: F.lit(cut).cast("bigint"), DONE: F.lit(False)}
    )
    path = target.system_path(PENDING)
    candidates = batch
    if DeltaTable.isDeltaTable(spark, path):
        candidates = batch.unionByName(spark.read.format("delta").load(path))
    # the decision reads the candidates four times: each copy of the decode's plan would be
    # analysed again (a one-pass batch's ran the driver out of memory), so they are cached and
    # the decision plans against the cache alone (see cdclake._spark.detach)
    cached = candidates.persist(StorageLevel.MEMORY_AND_DISK)
    newest = cached.agg(F.max("source_ts")).first()[0]  # type: ignore[index]
    decided = decide(detached(cached), rule, timeout, newest)
    decided = decided.persist(StorageLevel.MEMORY_AND_DISK)
    now = F.col(_RELEASE) & ~F.col(DONE)
    data = F.col("op").isin(*DATA_OPS, Op.TRUNCATE) & now & F.col("error").isNull()
    first = decided.agg(
        F.count_if(~F.col(_RELEASE)).alias("held"),
        F.count_if(now & (F.col(ARRIVED) < cut)).alias("released_pending"),
        F.max(F.when(data, F.col("source_ts"))).alias("source_ts"),
        F.max(F.when(data, F.col("position"))).alias("position"),
        F.array_sort(F.collect_set(F.when(F.col(_TIMED_OUT), _txn()))).alias("timed_out"),
    ).first()
    assert first is not None
    stats = first.asDict()
    stats["source_ts"] = stats["source_ts"] or ts
    stats["position"] = stats["position"] if stats["position"] is not None else pos
    before = {} if last is None else dict(last["tables"] or {})
    return Gate(spark, target, cut, before, newest, detached(decided), [decided, cached], stats)


_LAST: dict[str, dict[str, Any]] = {}
"""The newest cut this process recorded, per target: the stream's next batch (or the same one,
run again) starts from it without reading ``_cdc_cuts`` (only the stream writes its target)."""


def cuts(spark: SparkSession, target: str) -> DataFrame | None:
    """``<target>/_cdc_cuts`` (see :data:`CUT_SCHEMA`), or None when no consistent batch ran."""
    path = tbl.Target(target).system_path(CUTS)
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    return spark.read.format("delta").load(path)


def last_cut(spark: SparkSession, target: str) -> dict[str, Any] | None:
    df = cuts(spark, target)
    row = None if df is None else df.orderBy(F.desc("cut")).first()
    return None if row is None else row.asDict()


At = int | datetime | list[int] | None


def parse_at(text: str | None) -> At:
    """``--at``: a cut number (``12``), a source time (ISO 8601, ``2026-11-27T10:00:00``; UTC
    unless it names its zone) or a source position (``[5, 120]`` or ``5,120``).

    >>> parse_at("12"), parse_at("[5, 120]"), parse_at("2026-11-27 10:00").isoformat()
    (12, [5, 120], '2026-11-27T10:00:00+00:00')
    """
    if text is None:
        return None
    t = text.strip()
    if t.isdigit():
        return int(t)
    if t.startswith("[") or "," in t:
        try:
            return [int(p) for p in t.strip("[]").split(",")]
        except ValueError:
            pass
    try:
        when = datetime.fromisoformat(t)
    except ValueError:
        raise ConfigError(
            f"--at {text!r}: expected a cut number (12), a source time (2026-11-27T10:00:00) "
            "or a source position ([5, 120])"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def choose_cut(records: list[dict[str, Any]], at: At, target: str) -> dict[str, Any]:
    """The cut ``at`` names among ``records`` (rows of ``_cdc_cuts``): the latest (None), cut
    number ``at``, or the latest whose source time or position is at or before ``at``."""
    if not records:
        raise ConfigError(f"no cut at {target!r}: its tables were not written with --consistent")

    def fits(r: dict[str, Any]) -> bool:
        if isinstance(at, int):
            return bool(r["cut"] == at)
        if isinstance(at, datetime):
            ts = r["source_ts"]
            return ts is not None and (ts if ts.tzinfo else ts.replace(tzinfo=UTC)) <= at
        if at is not None:
            return r["position"] is not None and list(r["position"]) <= at
        return True

    found = [r for r in records if fits(r)]
    if not found:
        raise ConfigError(f"no cut of {target!r} at or before {at!r}")
    return max(found, key=lambda r: r["cut"])


def find_cut(spark: SparkSession, target: str, at: At = None) -> dict[str, Any]:
    """The cut ``at`` names (see :func:`choose_cut`); the cuts are one small row per batch."""
    df = cuts(spark, target)
    rows = [] if df is None else [r.asDict() for r in df.drop("cut_at").collect()]
    return choose_cut(rows, at, target)


def snapshot(spark: SparkSession, target: str, at: At = None) -> dict[str, DataFrame]:
    """Every table of ``target`` as of one cut (see :func:`find_cut` for ``at``), by Delta time
    travel: table name -> its live rows at the cut's version. No table holds half of a source
    transaction that another holds the rest of.

    >>> tables = cdclake.snapshot(spark, "/lake")  # doctest: +SKIP
    >>> orders = tables["shop.public.orders"]  # doctest: +SKIP
    >>> lines = tables["shop.public.order_lines"]  # doctest: +SKIP
    >>> orders.join(lines, "order_id")  # doctest: +SKIP
    """
    from cdclake.model import META_PREFIX

    root = tbl.Target(target).root
    cut = find_cut(spark, root, at)
    paths = tbl.Target(root)
    out = {}
    for name, version in sorted((cut["tables"] or {}).items()):
        df = spark.read.format("delta").option("versionAsOf", version).load(paths.table_path(name))
        out[name] = df.select(*[c for c in df.columns if not c.startswith(META_PREFIX)])
    return out
