"""Where tables live under the target folder: names and paths only, nothing that needs Spark.

Layout of ``<target>``::

    <target>/<identifier>/            one Delta table per source table: the live rows
    <target>/_cdc_tombstones/<identifier>/   deleted keys with their delete position
    <target>/_cdc_history_log/<identifier>/  a history table's accepted events (SCD type 2)
    <target>/_cdc_quarantine/         bad input, with its lineage and the reason
    <target>/_cdc_sources/            per batch: each source's and table's progress (liveness),
                                      and a Kafka batch's record (counts, times, lag)
    <target>/_cdc_batches/            an earlier cdclake's Kafka batch records (still read)
    <target>/_cdc_replays/            quarantine replays: started and finished markers
    <target>/_cdc_ddl/                the DDL statements applied
    <target>/_cdc_pending/            --consistent: changes of source transactions not complete yet
    <target>/_cdc_cuts/               --consistent: per batch, the Delta version of every table

``identifier`` is the source identifier with every character outside ``[A-Za-z0-9_.$-]``
percent-escaped (and a leading dot too), so no identifier can leave ``<target>``. The readers
that must answer without a JVM (``cdclake status``, ``quarantine list``, ``report``) import
this module, not :mod:`cdclake.apply.tables`.

>>> TargetPaths("s3a://bucket/lake").table_path("shop.public.my items")
's3a://bucket/lake/shop.public.my%20items'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cdclake.paths import join

KEEP_BATCHES = 100
"""Batches of ``_cdc_sources`` kept row by row (``cdclake report`` charts the last 60, status
sums the last 10); older rows are rolled up by maintenance (:mod:`cdclake.ops.maintain`)."""

SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.$-")
# cdclake's own tables under a target (every ``_cdc_*`` folder), defined here only
QUARANTINE = "_cdc_quarantine"  # bad input with its reason and lineage
TOMBSTONES = "_cdc_tombstones"  # per table: (key, position) of deletes, so late events stay out
HISTORY_LOG = "_cdc_history_log"  # per SCD2 table: the events its history was built from
BATCHES = "_cdc_batches"  # written before: one row per Kafka micro-batch (now BATCH rows)
SOURCES = "_cdc_sources"  # per batch and table/source: positions and source times (freshness)
BATCH = "batch"
"""The ``kind`` and the column of a Kafka micro-batch's record in ``_cdc_sources``: its counts,
times and lag (see :mod:`cdclake.apply.liveness`)."""
DDL_TABLE = "_cdc_ddl"  # the DDL statements applied, with their positions
REPLAYS = "_cdc_replays"  # quarantine replays: what each replay selected and applied
PENDING = "_cdc_pending"  # --consistent: the changes of transactions that are not complete yet
CUTS = "_cdc_cuts"  # --consistent: per batch, its cut (every table's Delta version)
SYSTEM_TABLES = (
    QUARANTINE, TOMBSTONES, HISTORY_LOG, BATCHES, SOURCES, DDL_TABLE, REPLAYS, PENDING, CUTS,
)  # fmt: skip

DELETED_AT = "_cdc_deleted_at"
"""A tombstone's write time (when its delete was applied): what ``--tombstone-retention`` ages."""

# cdclake's table properties (every ``cdclake.*`` key), defined here only
TRUNCATE_PROPERTY = "cdclake.truncatePosition"
KEY_PROPERTY = "cdclake.keyColumns"
SCD_TYPE_PROPERTY = "cdclake.scdType"
BACKFILL_PROPERTY = "cdclake.pendingBackfill"
ORDERING_PROPERTY = "cdclake.ordering"
"""``input`` on a table whose source gives no position: its changes are ordered by input order
only (:data:`cdclake.model.INPUT_ORDER_DOC`)."""


def escape_identifier(identifier: str) -> str:
    """A folder name for a source identifier that cannot escape the target folder.

    >>> escape_identifier("db.dbo.my table/../x")
    'db.dbo.my%20table%2F..%2Fx'
    >>> escape_identifier("..")
    '%2E.'
    """
    out = []
    for i, ch in enumerate(identifier):
        if ch in SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
    return "".join(out) or "%00"


@dataclass(frozen=True)
class TargetPaths:
    """The target folder: paths of every table cdclake writes there."""

    root: str
    table_map: dict[str, str] = field(default_factory=dict)  # source identifier -> target name

    def name(self, identifier: str) -> str:
        return self.table_map.get(identifier, identifier)

    def table_path(self, identifier: str) -> str:
        return join(self.root, escape_identifier(self.name(identifier)))

    def tombstone_path(self, identifier: str) -> str:
        return join(self.root, TOMBSTONES, escape_identifier(self.name(identifier)))

    def history_log_path(self, identifier: str) -> str:
        return join(self.root, HISTORY_LOG, escape_identifier(self.name(identifier)))

    def system_path(self, name: str) -> str:
        return join(self.root, name)
