"""Where every table of a target stands: rows, key, position, freshness, quarantine, the stream.

Read from the metadata tables cdclake keeps next to the tables (``_cdc_sources``, with a Kafka
stream's batch records, ``_cdc_quarantine``) and the target tables' Delta logs.

**Freshness** of a table is how many seconds it is behind its source at time ``now``::

    freshness = now - max(source time of the newest change applied to the table,
                          source time of the newest record of the table's source)

where the table's source is its connector's logical name (a Debezium ``topic.prefix``), else
its Kafka topic, else the input files (:func:`cdclake.apply.liveness.source_id`), and a record
of the source is any good record: a change of any of its tables, a heartbeat, a transaction
marker. So a quiet table of a live source (heartbeats still arriving) stays fresh, and a table
whose source went silent grows stale. A table with no source time at all has no freshness
(``None``) and counts as stale for ``--max-staleness``.

Everything is read with delta-rs (:mod:`cdclake.delta_rs`), no JVM: cdclake's own small tables
in full, and of each target table only its log. Its **rows** come from the log's file
statistics (``numRecords``, less what deletion vectors delete); a table with a file written
without statistics has ``rows = None`` (``null`` in ``--json``, ``?`` in the table) rather than
a scan.

>>> s = target_status("/lake")  # doctest: +SKIP
>>> s.tables[0].freshness_seconds  # doctest: +SKIP
4.0
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cdclake import delta_rs
from cdclake.errors import ConfigError
from cdclake.target_layout import (
    BATCH,
    BATCHES,
    CUTS,
    DDL_TABLE,
    HISTORY_LOG,
    ORDERING_PROPERTY,
    PENDING,
    QUARANTINE,
    REPLAYS,
    SCD_TYPE_PROPERTY,
    SOURCES,
    TOMBSTONES,
    TargetPaths,
)

if TYPE_CHECKING:
    import pyarrow as pa

RECENT_BATCHES = 10
ROWS_UNKNOWN = "a file of the table has no row count in the Delta log (written without statistics)"
SOURCE_COLUMNS = [
    "kind", "source_id", "table", "recorded_at", "last_message_ts", "last_position",
    "last_position_ts", "key_columns", "key_source", "last_ddl", "applied", "ignored",
]  # fmt: skip


@dataclass
class TableStatus:
    """One table: what it holds now and how far behind its source it is."""

    table: str
    rows: int | None  # None: a file of the table has no row count in the log (see the module)
    key_columns: list[str]
    key_source: str | None
    scd_type: int
    source_id: str | None
    last_position: list[int] | None
    last_source_ts: datetime | None
    freshness_seconds: float | None
    quarantined: int
    recent_applied: int = 0  # in the last RECENT_BATCHES batches of the target
    recent_ignored: int = 0
    recent_quarantined: int = 0
    last_ddl: str | None = None
    ordering: str = "source"  # "input": its source gives no position (cdclake.ordering)


@dataclass
class Status:
    """The whole target: its tables, the stream, the quarantine by reason."""

    now: datetime
    tables: list[TableStatus] = field(default_factory=list)
    stream: dict[str, Any] = field(default_factory=dict)
    quarantine: dict[str, int] = field(default_factory=dict)
    # --consistent: the newest cut (cut, batch_id, source_ts, held, timed_out, cut_at)
    consistency: dict[str, Any] = field(default_factory=dict)

    def stale(self, max_seconds: float) -> list[TableStatus]:
        """Tables behind their source by more than ``max_seconds`` (or of unknown freshness)."""
        return [
            t
            for t in self.tables
            if t.freshness_seconds is None or t.freshness_seconds > max_seconds
        ]

    def to_json(self) -> dict[str, Any]:
        """``{"tables": [...], "stream": {...}, "quarantine": {reason: count}}``."""
        keys = (
            "table",
            "rows",
            "key_columns",
            "scd_type",
            "last_position",
            "last_source_ts",
            "freshness_seconds",
            "quarantined",
            "ordering",
        )
        tables = [{k: _plain(asdict(t)[k]) for k in keys} for t in self.tables]
        out = {
            "tables": tables,
            "stream": {k: _plain(v) for k, v in self.stream.items()},
            "quarantine": dict(self.quarantine),
        }
        if self.consistency:
            out["consistency"] = {k: _plain(v) for k, v in self.consistency.items()}
        return out


def _plain(value: Any) -> Any:
    return utc(value).isoformat() if isinstance(value, datetime) else value


def utc(moment: datetime) -> datetime:
    """PySpark hands timestamps back as naive local times: make them aware, in UTC."""
    return moment.astimezone(UTC)


def parse_duration(text: str, option: str = "--max-staleness") -> float:
    """``15m`` -> 900.0; units s, m, h, d (plain numbers are seconds).

    >>> parse_duration("1h30m")
    5400.0
    """
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text.strip().lower())
    if not parts or re.sub(r"[\d.\s smhd]", "", text.lower()):
        raise ConfigError(f"{option} {text!r}: expected a duration such as 90s, 15m, 2h, 1d")
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return float(sum(float(n) * unit[u] for n, u in parts))


def target_status(target: str, now: datetime | None = None, recent: int = RECENT_BATCHES) -> Status:
    """The status of every table cdclake applied to under ``target`` (see the module doc).

    Raises :class:`~cdclake.errors.ConfigError` when ``target`` holds none of cdclake's tables.
    """
    paths = TargetPaths(target)
    status = Status(now=now or datetime.now(UTC))
    sources = delta_rs.read(paths.system_path(SOURCES), SOURCE_COLUMNS)
    quarantine = delta_rs.read(paths.system_path(QUARANTINE), ["reason", "table", "quarantined_at"])
    metrics = batch_records(paths, ["batch_id", "finished_at", "offsets_behind", "seconds_behind"])
    if sources is None and quarantine is None and metrics is None:
        raise ConfigError(
            f"no cdclake target at {target!r}: none of {SOURCES}, {QUARANTINE}, {BATCHES} is a "
            "Delta table there"
        )
    status.consistency = _newest_cut(paths)
    if quarantine is not None:
        by_reason = _count_by(quarantine, "reason")
        status.quarantine = dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0] or "")))
    if sources is None:
        return status
    records = delta_rs.records(sources)
    batches = newest_batches(records, recent + 1)
    cutoff = batches[recent] if len(batches) > recent else None
    live: dict[str | None, datetime | None] = {}
    for r in records:
        if r["kind"] == "source":
            live[r["source_id"]] = _max(live.get(r["source_id"]), r["last_message_ts"])
    per_table: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["kind"] == "table" and r["table"] is not None:
            per_table.setdefault(r["table"], []).append(r)
    q_by_table = _quarantine_by_table(quarantine, cutoff)
    aggregates = [_aggregate(name, per_table[name], cutoff) for name in sorted(per_table)]
    status.tables = _parallel(
        lambda a: _table_status(paths, a, live, q_by_table, status.now), aggregates
    )
    status.stream = _stream(batches, status.tables, metrics)
    return status


def batch_records(paths: TargetPaths, columns: list[str]) -> list[dict[str, Any]] | None:
    """``columns`` of every record of a Kafka stream's batches (the ``batch`` rows of
    ``_cdc_sources``, and the rows of ``_cdc_batches`` where an earlier cdclake kept them);
    None when there is neither."""
    rows = delta_rs.read_struct(paths.system_path(SOURCES), BATCH, columns)
    earlier = delta_rs.read(paths.system_path(BATCHES), columns)
    if rows is None and earlier is None:
        return None
    records = [] if rows is None else [r for r in delta_rs.records(rows) if r.pop("kind") == BATCH]
    return records + ([] if earlier is None else delta_rs.records(earlier))


def _newest_cut(paths: TargetPaths) -> dict[str, Any]:
    """The newest cut of a --consistent target (:mod:`cdclake.apply.consistency`), or {}."""
    from cdclake.ops.cuts import cut_records

    columns = ("cut", "batch_id", "source_ts", "held", "timed_out", "cut_at")
    records = cut_records(paths.root, columns)
    return max(records, key=lambda r: r["cut"]) if records else {}


OWN_TABLES = (SOURCES, BATCHES, QUARANTINE, DDL_TABLE, REPLAYS, PENDING, CUTS)
"""cdclake's own tables of a target, one each; tombstones and history logs are one per table."""


def bookkeeping_sizes(target: str, tables: list[str]) -> dict[str, dict[str, int | None]]:
    """Rows, files and bytes of each of cdclake's own tables under ``target`` (tombstones and
    history logs summed over ``tables``), from their Delta logs: what ``cdclake maintain``
    bounds. Tables that are not there are left out."""
    paths = TargetPaths(target)
    locations = {name: [paths.system_path(name)] for name in OWN_TABLES}
    locations[TOMBSTONES] = [paths.tombstone_path(t) for t in tables]
    locations[HISTORY_LOG] = [paths.history_log_path(t) for t in tables]
    sizes = _parallel(_size, [loc for locs in locations.values() for loc in locs])
    found = dict(zip([loc for locs in locations.values() for loc in locs], sizes, strict=True))
    out: dict[str, dict[str, int | None]] = {}
    for name, locs in locations.items():
        parts = [found[loc] for loc in locs if found[loc] is not None]
        if parts:
            rows = [p["rows"] for p in parts]
            out[name] = {
                "rows": None if None in rows else sum(r or 0 for r in rows),
                "files": sum(p["files"] or 0 for p in parts),
                "bytes": sum(p["bytes"] or 0 for p in parts),
            }
    return out


def _size(location: str) -> dict[str, int | None] | None:
    table = delta_rs.open_table(location)
    if table is None:
        return None
    files, size = delta_rs.files_and_bytes(table)
    return {"rows": delta_rs.row_count(table), "files": files, "bytes": size}


def newest_batches(records: list[dict[str, Any]], n: int) -> list[datetime]:
    """When the newest ``n`` batches were applied (``recorded_at`` of ``_cdc_sources``), newest
    first."""
    return sorted({r["recorded_at"] for r in records if r["recorded_at"] is not None})[::-1][:n]


def _max(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else max(a, b)


def _position_key(position: list[int | None]) -> list[tuple[int, int]]:
    """Positions compare as Spark compares arrays: element by element, a null element first."""
    return [(0, 0) if p is None else (1, p) for p in position]


def _max_by(rows: list[dict[str, Any]], value: str, order: str, key: Any = None) -> Any:
    """Spark's ``max_by(value, order)``: ``value`` of the row with the greatest non-null
    ``order``."""
    ranked = [r for r in rows if r[order] is not None]
    if not ranked:
        return None
    return max(ranked, key=lambda r: key(r[order]) if key else r[order])[value]


def _aggregate(table: str, rows: list[dict[str, Any]], cutoff: datetime | None) -> dict[str, Any]:
    """One table's ``table`` rows of ``_cdc_sources``, as the status needs them."""
    recent = [
        r
        for r in rows
        if cutoff is None or (r["recorded_at"] is not None and r["recorded_at"] > cutoff)
    ]
    positions = [r["last_position"] for r in rows if r["last_position"] is not None]
    with_ddl = [r for r in rows if r["last_ddl"] is not None]
    return {
        "table": table,
        "source_id": _max_by(rows, "source_id", "recorded_at"),
        "last_position": max(positions, key=_position_key) if positions else None,
        "last_position_ts": _max_by(rows, "last_position_ts", "last_position", _position_key),
        "last_message_ts": max(
            (r["last_message_ts"] for r in rows if r["last_message_ts"]), default=None
        ),
        "key_columns": _max_by(rows, "key_columns", "recorded_at"),
        "key_source": _max_by(rows, "key_source", "recorded_at"),
        "last_ddl": _max_by(with_ddl, "last_ddl", "recorded_at"),
        "recent_applied": sum(r["applied"] or 0 for r in recent),
        "recent_ignored": sum(r["ignored"] or 0 for r in recent),
    }


def _count_by(table: pa.Table, column: str) -> dict[Any, int]:
    return {k: n for (k,), n in delta_rs.count_rows(table, column).items()}


def _quarantine_by_table(
    quarantine: pa.Table | None, cutoff: datetime | None
) -> dict[str, tuple[int, int]]:
    """Per table: quarantined records in all, and since ``cutoff`` (all when None)."""
    if quarantine is None:
        return {}
    n: dict[str, int] = {}
    later: dict[str, int] = {}
    for (table, at), k in delta_rs.count_rows(quarantine, "table", "quarantined_at").items():
        if table is not None:
            n[table] = n.get(table, 0) + k
            if cutoff is None or (at is not None and at > cutoff):
                later[table] = later.get(table, 0) + k
    return {t: (k, later.get(t, 0)) for t, k in n.items()}


def _parallel(work: Any, items: list[Any]) -> list[Any]:
    """``work`` over ``items`` in order, a few at a time: each target table's log is a round
    trip or more to the store (object storage answers in tens of milliseconds)."""
    if len(items) <= 1:
        return [work(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(items))) as pool:
        return list(pool.map(work, items))


def _table_status(
    paths: TargetPaths,
    r: dict[str, Any],
    live: dict[str | None, datetime | None],
    quarantined: dict[str, tuple[int, int]],
    now: datetime,
) -> TableStatus:
    table = delta_rs.open_table(paths.table_path(r["table"]))
    rows = 0 if table is None else delta_rs.row_count(table)
    props = {} if table is None else delta_rs.properties(table)
    times = [
        t for t in (r["last_position_ts"], r["last_message_ts"], live.get(r["source_id"])) if t
    ]
    newest = max(times) if times else None
    n_q, recent_q = quarantined.get(r["table"], (0, 0))
    return TableStatus(
        table=r["table"],
        rows=rows,
        key_columns=list(r["key_columns"] or []),
        key_source=r["key_source"],
        scd_type=int(props.get(SCD_TYPE_PROPERTY, "1")),
        source_id=r["source_id"],
        last_position=None if r["last_position"] is None else list(r["last_position"]),
        last_source_ts=r["last_position_ts"],
        freshness_seconds=None if newest is None else _seconds(now, newest),
        quarantined=n_q,
        recent_applied=int(r["recent_applied"]),
        recent_ignored=int(r["recent_ignored"]),
        recent_quarantined=recent_q,
        last_ddl=r["last_ddl"],
        ordering=props.get(ORDERING_PROPERTY, "source"),
    )


def _seconds(now: datetime, then: datetime) -> float:
    return round((utc(now) - utc(then)).total_seconds(), 3)


def _stream(
    batches: list[datetime], tables: list[TableStatus], records: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """The stream as a whole: the newest batch and its lag (its ``batch`` record when streaming
    from Kafka), else when the newest batch over files was applied."""
    stream: dict[str, Any] = {
        "last_batch_id": None,
        "last_batch_at": batches[0] if batches else None,
        "offsets_behind": None,
        "seconds_behind": None,
        "max_freshness_seconds": max(
            (t.freshness_seconds for t in tables if t.freshness_seconds is not None),
            default=None,
        ),
    }
    if records:
        finished = [r for r in records if r["finished_at"] is not None]
        last = max(finished, key=lambda r: r["finished_at"]) if finished else records[0]
        stream.update(
            last_batch_id=last["batch_id"],
            last_batch_at=last["finished_at"],
            offsets_behind=last["offsets_behind"],
            seconds_behind=last["seconds_behind"],
        )
    return stream
