"""A reader of a ``--consistent`` target in a process of its own, with no JVM: it polls the
latest cut (:func:`cdclake.ops.cuts.read_cut`), reads every table at the version the cut names
(delta-rs), checks the invariants of ``test_consistent``'s workload, and writes one JSON line per
new cut it saw: ``{"cut": n, "violations": [...]}``. It stops when the stop file appears.

    python tests/e2e/cut_reader.py TARGET OUT STOP
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

SCHEMA = "txn"
ACCOUNTS, ORDERS, LINES = (f"cdclake.{SCHEMA}.{t}" for t in ("accounts", "orders", "order_lines"))
OPENING = 1000  # each of the four accounts

Rows = dict[str, list[dict[str, Any]]]


def violations(tables: Rows) -> list[str]:
    """What breaks the invariants in one reading of the three tables (rows by table name)."""
    accounts, orders, lines = (tables.get(t, []) for t in (ACCOUNTS, ORDERS, LINES))
    out = []
    balances = sum(r["balance"] for r in accounts)
    if accounts and balances != 4 * OPENING:
        out.append(f"balances sum to {balances}, not {4 * OPENING}")
    totals = {r["id"]: r["total"] for r in orders}
    added: Counter[int] = Counter()
    for r in lines:
        if r["order_id"] not in totals:
            out.append(f"line {r['id']} without its order {r['order_id']}")
        added[r["order_id"]] += r["amount"]
    out += [
        f"order {o}: lines add up to {added[o]}, not {t}"
        for o, t in totals.items()
        if added[o] != t
    ]
    return out


def read_at_cut(target: str, cut: dict[str, Any]) -> Rows:
    """Every table of ``cut`` at its version, as a reader in another engine would."""
    from deltalake import DeltaTable

    from cdclake.target_layout import TargetPaths

    paths = TargetPaths(target)
    return {
        name: DeltaTable(paths.table_path(name), version=version).to_pyarrow_table().to_pylist()
        for name, version in cut["tables"].items()
    }


def main(target: str, out: str, stop: str) -> None:
    from cdclake.errors import ConfigError
    from cdclake.ops.cuts import read_cut

    seen: set[int] = set()
    with open(out, "a", encoding="utf-8") as f:
        while not Path(stop).exists():
            try:
                cut = read_cut(target)
                if cut["cut"] not in seen:
                    seen.add(cut["cut"])
                    found = violations(read_at_cut(target, cut))
                    f.write(json.dumps({"cut": cut["cut"], "violations": found}) + "\n")
            except ConfigError:  # no cut yet
                pass
            except Exception as e:  # reported; the next poll goes on
                f.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
            f.flush()
            time.sleep(0.3)


if __name__ == "__main__":
    main(*sys.argv[1:4])
