"""Catalog names of a target's tables and how the catalog follows the target: pure logic, no
Spark (:mod:`cdclake.ops.catalog`), checked against a small model with hypothesis."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cdclake.apply.results import BatchResult, TableResult
from cdclake.ops.catalog import VALID_NAME, Registrar, plan, same_location, table_name, under
from cdclake.target_layout import TOMBSTONES, escape_identifier

ROOT = "file:///lake"


def test_names_follow_the_documented_rule() -> None:
    assert table_name("shop.public.orders") == "shop_public_orders"
    assert table_name(escape_identifier("Shop.public.Order Items")) == "shop_public_order_items"
    assert table_name(escape_identifier("db.dbo.$weird--name")) == "db_dbo_weird_name"
    assert table_name(escape_identifier("2024.sales")) == "t_2024_sales"
    assert table_name(escape_identifier("商店.订单")) == "_"  # no character kept
    assert table_name("_cdc_sources") == "_cdc_sources"
    assert table_name(f"{TOMBSTONES}/shop.public.orders") == "_cdc_tombstones__shop_public_orders"
    long = table_name("x" * 300)
    assert len(long) == 128 and VALID_NAME.match(long) and long != table_name("x" * 301)


def test_locations_compare_in_both_uri_forms() -> None:
    assert same_location("file:///lake/a/", "file:/lake/a") and same_location(
        "/lake/a", ROOT + "/a"
    )
    assert under("file:/lake/a.b", ROOT) and under("file:///lake/_cdc_tombstones/x", ROOT)
    assert not under("file:/lakehouse/a", ROOT) and not under("s3a://b/lake/a", ROOT)


def test_a_colliding_table_gets_a_suffix_and_the_first_keeps_its_name() -> None:
    first = plan([("shop.a_b", f"{ROOT}/shop.a_b")], {}, ROOT)
    assert first.create == [("shop_a_b", f"{ROOT}/shop.a_b")]
    registered = dict(first.create)
    both = [("shop.a_b", f"{ROOT}/shop.a_b"), ("shop_a.b", f"{ROOT}/shop_a.b")]
    second = plan(both, registered, ROOT)
    [(name, location)] = second.create
    assert location == f"{ROOT}/shop_a.b" and name.startswith("shop_a_b_") and len(name) == 17
    assert second.drop == []


def test_a_run_syncs_only_when_a_table_may_have_come_or_gone() -> None:
    r = Registrar.__new__(Registrar)
    r.seen, r.deleted, r.quarantined, r.synced = {"a"}, {"a"}, False, True

    def result(**kw: object) -> BatchResult:
        b = BatchResult()
        for name, deleted in dict(kw.get("tables", {"a": 0})).items():  # type: ignore[arg-type]
            b.tables[name] = TableResult(name, deleted=deleted)
        b.control_by_op = dict(kw.get("control", {}))  # type: ignore[arg-type]
        b.quarantined = int(kw.get("quarantined", 0))  # type: ignore[arg-type]
        return b

    assert not r.needed(result())
    assert not r.needed(result(control={"heartbeat": 3}))
    assert r.needed(result(tables={"a": 0, "b": 0}))  # a new table
    assert r.needed(result(control={"ddl": 1}))  # a rename or a drop may have moved one
    assert r.needed(result(quarantined=1))  # the quarantine table may be new
    r.deleted = set()
    assert r.needed(result(tables={"a": 2}))  # its tombstone table may be new
    r.deleted, r.synced = {"a"}, False
    assert r.needed(result())  # the last sync failed


IDENTIFIERS = st.text(alphabet="abAB_.1 $é-", min_size=1, max_size=8)
KINDS = st.sampled_from(["", f"{TOMBSTONES}/"])  # a target table or a per-table one of cdclake's
FOREIGN = {"their_table": "file:/elsewhere/t", "shop_a_b": "s3a://other/x"}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sets(st.tuples(st.sampled_from(["", TOMBSTONES + "/"]), IDENTIFIERS)), max_size=6)
)
def test_the_catalog_follows_the_target_like_the_model(steps: list[set[tuple[str, str]]]) -> None:
    """Each step is the target's set of tables (tables come, go, are renamed); the catalog after
    each plan holds every table under exactly one valid name, keeps the name a table had, drops
    only its own names of tables that are gone, and a second plan changes nothing."""
    registered = dict(FOREIGN)
    names_of: dict[str, str] = {}  # location -> the name it was first given
    for step in steps:
        tables = [(p + escape_identifier(i), f"{ROOT}/{p}{escape_identifier(i)}") for p, i in step]
        todo = plan(tables, registered, ROOT)
        for name in todo.drop:
            del registered[name]
        for name, location in todo.create:
            assert name not in registered
            registered[name] = location
        mine = {n: loc for n, loc in registered.items() if under(loc, ROOT)}
        assert sorted(mine.values()) == sorted(loc for _, loc in tables)
        assert all(VALID_NAME.match(n) for n in mine)
        assert {n: registered[n] for n in FOREIGN} == FOREIGN
        for name, location in mine.items():
            assert names_of.setdefault(location, name) == name
        again = plan(tables, registered, ROOT)
        assert not again
        names_of = {loc: n for loc, n in names_of.items() if loc in mine.values()}
