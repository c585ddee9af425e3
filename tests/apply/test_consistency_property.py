"""--consistent against a plain-Python model: every cut is the state after a prefix of the
source's transactions, whatever the interleaving, the batch boundaries and the re-deliveries.

A generated source commits transactions over two tables (inserts, updates, deletes; each with
its BEGIN and END on the transaction-metadata topic). Each table's events and the metadata
topic are delivered in their own order, but cut into batches at independent points, as three
Kafka topics read by one query are; a batch may also deliver an applied transaction again (its
END and some of its events, as a restarted connector does). After every batch the tables, and
``cdclake.snapshot``, hold exactly the state after the longest prefix of transactions whose END
and every event have arrived.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from builders.dbz import event, transaction_marker
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cdclake.apply.consistency import snapshot
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines

TABLES = ("accounts", "ledger")
KEYS = (1, 2, 3)


@dataclass(frozen=True)
class Write:
    table: str
    key: int
    value: int | None  # None: a delete
    lsn: int


@dataclass(frozen=True)
class Transaction:
    txid: str
    writes: tuple[Write, ...]


def state_after(transactions: list[Transaction]) -> dict[str, dict[int, int]]:
    """The model: the tables after ``transactions``, applied in commit order."""
    state: dict[str, dict[int, int]] = {t: {} for t in TABLES}
    for tx in transactions:
        for w in tx.writes:
            if w.value is None:
                state[w.table].pop(w.key, None)
            else:
                state[w.table][w.key] = w.value
    return state


def complete_prefix(transactions: list[Transaction], arrived: set[tuple[str, int]]) -> int:
    """How many transactions, in commit order, have arrived whole (END and every event): the
    ``arrived`` items are ("end", i) and (table, lsn)."""
    n = 0
    for i, tx in enumerate(transactions):
        if ("end", i) not in arrived or any((w.table, w.lsn) not in arrived for w in tx.writes):
            break
        n += 1
    return n


@st.composite
def histories(draw: Any) -> list[Transaction]:
    """Transactions in commit order; each writes 1-3 rows of either table (one write per row)."""
    live: dict[str, set[int]] = {t: set() for t in TABLES}
    out, lsn = [], 100
    for i in range(draw(st.integers(3, 6))):
        rows = draw(
            st.lists(
                st.tuples(st.sampled_from(TABLES), st.sampled_from(KEYS)),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        writes = []
        for table, key in rows:
            delete = key in live[table] and draw(st.booleans()) and draw(st.booleans())
            value = None if delete else draw(st.integers(0, 999))
            (live[table].discard if delete else live[table].add)(key)
            lsn += 10
            writes.append(Write(table, key, value, lsn))
        out.append(Transaction(f"tx{i}", tuple(writes)))
    return out


def render(w: Write, tx: Transaction, order: int, values: dict[tuple[str, int], int]) -> str:
    row = {"id": w.key, "name": f"{w.table}{w.key}", "qty": w.value}
    common = {"lsn": w.lsn, "table": w.table, "transaction": tx.txid, "order": order}
    if w.value is None:
        before = {"id": w.key, "name": f"{w.table}{w.key}", "qty": values[(w.table, w.key)]}
        return event("d", before=before, **common)
    return event("u" if (w.table, w.key) in values else "c", after=row, **common)


def streams(transactions: list[Transaction]) -> dict[str, list[tuple[Any, str]]]:
    """Per topic (each table, and the metadata topic), its records in order: (item, line)."""
    topics: dict[str, list[tuple[Any, str]]] = {t: [] for t in (*TABLES, "meta")}
    values: dict[tuple[str, int], int] = {}
    for i, tx in enumerate(transactions):
        topics["meta"].append((("begin", i), transaction_marker("BEGIN", tx.txid)))
        for order, w in enumerate(tx.writes, 1):
            topics[w.table].append(((w.table, w.lsn), render(w, tx, order, values)))
            if w.value is None:
                values.pop((w.table, w.key), None)
            else:
                values[(w.table, w.key)] = w.value
        counts = {t: sum(w.table == t for w in tx.writes) for t in TABLES}
        end = transaction_marker("END", tx.txid, {t: n for t, n in counts.items() if n})
        topics["meta"].append((("end", i), end))
    return topics


@pytest.mark.timeout(1800)
@settings(
    max_examples=int(os.environ.get("CDCLAKE_CONSISTENT_EXAMPLES", "4")),
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],  # no shrinking: a failure prints its history and batches as drawn
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_cut_is_the_state_after_a_prefix_of_whole_transactions(
    spark: Any, tmp_path: Path, data: Any
) -> None:
    transactions = data.draw(histories())
    topics = streams(transactions)
    n_batches = data.draw(st.integers(2, 4))
    # each topic cut at its own points: batch b takes its records [cuts[b], cuts[b + 1])
    cuts = {
        t: sorted(
            data.draw(
                st.lists(st.integers(0, len(rs)), min_size=n_batches - 1, max_size=n_batches - 1)
            )
        )
        for t, rs in topics.items()
    }
    root = tmp_path / "lake"
    shutil.rmtree(root, ignore_errors=True)
    config = ApplyConfig(format="debezium", inputs=("in.jsonl",), target=str(root), consistent=True)
    known = KnownGroups()
    arrived: set[Any] = set()
    applied: list[int] = []
    for b in range(n_batches):
        lines: list[str] = []
        for t, records in topics.items():
            bounds = [0, *cuts[t], len(records)]
            for item, line in records[bounds[b] : bounds[b + 1]]:
                arrived.add(item)
                lines.append(line)
        done = complete_prefix(transactions, arrived)
        if applied and applied[-1] and data.draw(st.booleans()):  # an applied one, again
            i = data.draw(st.integers(0, applied[-1] - 1))
            tx = transactions[i]
            again = [line for item, line in topics["meta"] if item == ("end", i)]
            again += [
                line
                for t in TABLES
                for item, line in topics[t]
                if item in {(w.table, w.lsn) for w in tx.writes[:1]}
            ]
            lines += again
        raw = raw_from_lines(spark, lines, f"b{b}.jsonl", epoch=b)
        result = apply_raw(raw, config, "prop", b, len(lines), False, known)
        assert result.quarantined == 0, result.quarantine_reasons
        applied.append(done)
        expected = state_after(transactions[:done])
        tables = snapshot(spark, str(root))
        for t in TABLES:
            name = f"shop.public.{t}"
            got = {r["id"]: r["qty"] for r in tables[name].collect()} if name in tables else {}
            assert got == expected[t], (b, t, done, transactions, cuts)
            path = root / name
            live = (
                {r["id"]: r["qty"] for r in spark.read.format("delta").load(str(path)).collect()}
                if path.exists()
                else {}
            )
            assert live == expected[t], (b, t, done)
