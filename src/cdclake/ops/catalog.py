"""Tables by name: every Delta table under a target registered in the Spark session's catalog.

With ``--catalog-database NAME`` (``ApplyConfig.catalog_database``) each table cdclake writes is
also an external Delta table ``NAME.<table>`` at its path, so notebooks, ``spark-sql`` and BI
tools through Spark's Thrift server query it by name. The catalog holds only the name and the
location; Delta reads the schema from the table's log, so a schema change shows by name at once.

Names (:func:`table_name`) come from the table's folder under the target:

- the source identifier (after ``--map-table``), lower-cased, every run of characters outside
  ``[a-z0-9_]`` replaced by one ``_``: ``shop.public.Order Items`` -> ``shop_public_order_items``;
  a name that would start with a digit gets ``t_`` in front; Hive's metastore takes at most 128
  characters, so a longer name keeps 119 and ends in ``_`` and 8 hex digits of the folder's SHA-1;
- cdclake's own tables keep theirs (``_cdc_sources``, ``_cdc_batches``, ``_cdc_quarantine`` …),
  per-table ones join with ``__``: ``_cdc_tombstones__shop_public_orders``;
- two folders with the same name (``a.b_c`` and ``a_b.c``; ``Orders`` and ``orders``, since the
  catalog ignores case): the one registered first keeps it, the other ends in ``_`` and 8 hex
  digits of its folder's SHA-1. A table keeps the name it was registered under.

Registration follows the target (:func:`register_tables`): a table that appears is registered,
one that a RENAME TABLE moved is registered under its new name and its old name dropped, one
that a DROP TABLE deleted is dropped from the catalog. Only names whose location lies under the
target are ever dropped, and only from the catalog (an external table's files stay): other
tables of the database are left alone. Dropping a name is not atomic with the rename, so a
reader may miss the table for a moment.

Which catalog: the session's. Sessions cdclake builds with a catalog database use Spark's Hive
catalog (``spark.sql.catalogImplementation=hive``); with nothing configured that is an embedded
Derby metastore in ``metastore_db/`` of the working directory (and databases' default folders
in ``spark-warehouse/``), Spark's own default, which one process may open at a time. A shared
metastore (e.g. PostgreSQL) is configured as for any Spark application: ``hive-site.xml`` or
``spark.hadoop.javax.jdo.option.*`` in ``$SPARK_CONF_DIR``, or ``--conf`` (see README, "Query
tables by name"). A session the caller built is used as it is, with whatever catalog it has.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from cdclake.jvm import jclass
from cdclake.target_layout import HISTORY_LOG, TOMBSTONES, TargetPaths

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdclake.apply.results import BatchResult

_log = logging.getLogger(__name__)

MAX_NAME = 128  # Hive metastore's limit on a table name
_HASH = 8
_NOT_NAME = re.compile(r"[^a-z0-9_]+")
VALID_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,127}$")
VALID_DATABASE = re.compile(r"^[A-Za-z0-9_]+$")


def _digest(folder: str) -> str:
    return hashlib.sha1(folder.encode("utf-8")).hexdigest()[:_HASH]


def _clean(text: str) -> str:
    return _NOT_NAME.sub("_", text.lower())


def table_name(folder: str) -> str:
    """The catalog name of the table in ``folder`` (relative to the target, as on disk).

    >>> table_name("shop.public.Order%20Items")
    'shop_public_order_items'
    >>> table_name("_cdc_tombstones/shop.public.orders")
    '_cdc_tombstones__shop_public_orders'
    >>> table_name("2024.sales")
    't_2024_sales'
    """
    parts = [unquote(p) for p in folder.strip("/").split("/")]
    if parts[0] in (TOMBSTONES, HISTORY_LOG) and len(parts) == 2:
        name = f"{parts[0]}__{_clean(parts[1])}"
    else:
        name = _clean(unquote(folder.strip("/")))
    if not name or name[0].isdigit():
        name = "t_" + name
    if len(name) > MAX_NAME:
        name = f"{name[: MAX_NAME - _HASH - 1]}_{_digest(folder)}"
    return name


def _suffixed(folder: str) -> str:
    """The name of a folder whose :func:`table_name` another table holds."""
    return f"{table_name(folder)[: MAX_NAME - _HASH - 1]}_{_digest(folder)}"


def _norm(location: str) -> str:
    """``file:/x`` for the forms a local location takes (``/x``, ``file:///x``, ``file:/x/``)."""
    u = location.rstrip("/") or "/"
    if u.startswith("/"):
        return "file:" + u
    if u.startswith("file:///"):
        return "file:" + u[len("file://") :]
    return u


def same_location(a: str, b: str) -> bool:
    """Locations equal up to the forms of a local path (``/x``, ``file:///x/``, ``file:/x``)."""
    return _norm(a) == _norm(b)


def under(location: str, root: str) -> bool:
    """Whether ``location`` is ``root`` or lies in it."""
    loc, top = _norm(location), _norm(root)
    return loc == top or loc.startswith(top.rstrip("/") + "/")


@dataclass
class Plan:
    """What :func:`register_tables` changes in the catalog: names to register at a location,
    names to drop (their table left the target)."""

    create: list[tuple[str, str]] = field(default_factory=list)  # (name, location)
    drop: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.create or self.drop)


def plan(tables: Iterable[tuple[str, str]], registered: dict[str, str], root: str) -> Plan:
    """How the catalog gets in step with the target.

    ``tables``: (folder, location) of every Delta table under ``root`` now; ``registered``:
    the database's tables (name -> location). A location already registered keeps its name; a
    new one gets :func:`table_name`, or :func:`_suffixed` when that name is taken; a registered
    name whose location is under ``root`` but holds no table any more is dropped.
    """
    wanted = sorted(tables)
    out = Plan()
    taken = dict(registered)
    for folder, location in wanted:
        if any(same_location(loc, location) for loc in registered.values()):
            continue
        name = table_name(folder)
        if name in taken:
            name = _suffixed(folder)
        taken[name] = location
        out.create.append((name, location))
    for name, location in sorted(registered.items()):
        if under(location, root) and not any(same_location(location, loc) for _, loc in wanted):
            out.drop.append(name)
    return out


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def registered_tables(spark: SparkSession, database: str) -> dict[str, str]:
    """Name -> location of every table of ``database`` (none: it does not exist yet), read from
    the catalog's metadata without loading any table."""
    jvm: Any = spark._jvm
    catalog = spark._jsparkSession.sessionState().catalog()
    if not catalog.databaseExists(database):
        return {}
    out: dict[str, str] = {}
    seq = catalog.listTables(database)
    for i in range(seq.size()):
        ident = seq.apply(i)
        meta = catalog.getTableMetadata(
            jclass(jvm, "org.apache.spark.sql.catalyst.TableIdentifier").apply(
                ident.table(), jclass(jvm, "scala.Some")(database)
            )
        )
        location = meta.storage().locationUri()
        if location.isDefined():
            out[str(ident.table())] = str(location.get().toString())
    return out


@dataclass
class SyncResult:
    database: str
    created: list[tuple[str, str]] = field(default_factory=list)  # (name, location)
    dropped: list[str] = field(default_factory=list)
    tables: dict[str, str] = field(
        default_factory=dict
    )  # every table of the target: name -> location


def register_tables(spark: SparkSession, target: str, database: str) -> SyncResult:
    """Register every Delta table under ``target`` in ``database`` (created if missing) and drop
    the names of tables that left it; see the module's text for the names."""
    from cdclake import paths
    from cdclake.ops.maintain import delta_tables

    root = paths.to_uri(target)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {_quote(database)}")
    registered = registered_tables(spark, database)
    tables = [(folder, paths.join(root, folder)) for folder, _ in delta_tables(spark, root)]
    todo = plan(tables, registered, root)
    for name in todo.drop:
        spark.sql(f"DROP TABLE IF EXISTS {_quote(database)}.{_quote(name)}")
    for name, location in todo.create:
        where = location.replace("'", "\\'")
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {_quote(database)}.{_quote(name)} "
            f"USING DELTA LOCATION '{where}'"
        )
    now = {n: loc for n, loc in registered.items() if n not in todo.drop}
    now.update(dict(todo.create))
    mine = {n: loc for n, loc in now.items() if under(loc, root)}
    return SyncResult(database, todo.create, todo.drop, mine)


class Registrar:
    """Keeps a run's catalog in step with its target after each batch, cheaply: a full
    :func:`register_tables` (a listing of the target and one catalog read per table) runs after
    the first batch and after a batch that may have added, moved or removed a table (a table not
    seen before, DDL, the first deletes of a table, the first quarantined record); other batches
    cost nothing. A failure (a metastore that does not answer) is logged and retried after the next
    batch: registration never stops a run."""

    def __init__(self, spark: SparkSession, target: str, database: str, table_map: dict[str, str]):
        self.spark = spark
        self.target = target
        self.database = database
        self.paths = TargetPaths(target, dict(table_map))
        self.seen: set[str] = set()  # source tables of earlier batches
        self.deleted: set[str] = set()  # tables whose deletes a sync has followed
        self.quarantined = False
        self.synced = False

    def needed(self, result: BatchResult) -> bool:
        new_tables = set(result.tables) - self.seen
        first_deletes = {n for n, t in result.tables.items() if t.deleted} - self.deleted
        return (
            not self.synced
            or bool(new_tables)
            or bool(first_deletes)
            or result.control_by_op.get("ddl", 0) > 0
            or (result.quarantined > 0 and not self.quarantined)
        )

    def after(self, result: BatchResult) -> SyncResult | None:
        if not self.needed(result):
            return None
        try:
            done = register_tables(self.spark, self.target, self.database)
        except Exception as e:  # the metastore, the store: the next batch tries again
            _log.warning(
                "registering the tables of %s in %s failed: %s", self.target, self.database, e
            )
            self.synced = False
            return None
        self.synced = True
        self.seen |= set(result.tables)
        self.deleted |= {n for n, t in result.tables.items() if t.deleted}
        self.quarantined = self.quarantined or result.quarantined > 0
        return done
