"""A seeded SQL workload for conformance runs against real Debezium producers.

Two phases, run through the ``psql`` / ``mariadb`` clients (see ``_sql.py``):

1. ``setup``: drop and create the tables, insert the initial rows. Run it *before* the connector
   starts: the connector's initial snapshot reads these rows (op ``r``).
2. ``stream``: once the connector is streaming, N random transactions: inserts, updates, deletes,
   primary-key updates, delete + re-insert of one key in one transaction, multi-statement
   transactions over several tables, one ``TRUNCATE``, one ``ALTER TABLE … ADD COLUMN`` half-way,
   and (PostgreSQL) updates that leave a TOASTed ``text`` column unchanged. The first transactions
   go through every kind once, so even a short run covers them all.

Tables (PostgreSQL / MariaDB): ``all_types`` (every column type in ``types.py``, primary key
``id``), ``order_lines`` (composite key ``order_id, line_no``; PostgreSQL REPLICA IDENTITY FULL),
``truncated`` (emptied by the TRUNCATE), and PostgreSQL only ``toasty`` (``big`` text stored
EXTERNAL, ~3 KB, REPLICA IDENTITY DEFAULT).

Same seed, dialect and sizes: the same SQL, byte for byte. Example::

    PYTHONPATH=tests python -m conformance.workload setup --db pg --seed 7
    PYTHONPATH=tests python -m conformance.workload stream --db pg --seed 7 --size small
    PYTHONPATH=tests python -m conformance.workload dump --db pg --table all_types

``dump_table`` (re-exported from ``dump.py``) reads a table back as normalised Python values.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from conformance._sql import Connection, Dialect, quote_text, run_sql
from conformance.dump import dump_table
from conformance.types import ADDED_COLUMN, COLUMNS, ENUM_DDL, ColumnType

__all__ = ["SIZES", "Workload", "dump_table", "main"]

SIZES: dict[str, int] = {"small": 200, "medium": 2_000, "large": 20_000}
"""Transactions per size name."""

TX_KINDS: tuple[str, ...] = (
    "insert",
    "update",
    "delete",
    "pk_update",
    "delete_reinsert",
    "multi",
    "order_lines",
    "toast",
)
TX_WEIGHTS: tuple[int, ...] = (30, 30, 10, 5, 5, 8, 10, 8)


@dataclass
class Workload:
    """The SQL of one seeded run; keeps track of which keys exist so every statement hits a row."""

    dialect: Dialect
    seed: int = 42
    initial_rows: int = 20
    rng: random.Random = field(init=False)
    ids: list[int] = field(init=False, default_factory=list)
    line_keys: list[tuple[int, int]] = field(init=False, default_factory=list)
    toasty_ids: list[int] = field(init=False, default_factory=list)
    truncated_ids: list[int] = field(init=False, default_factory=list)
    next_id: int = field(init=False, default=1)
    altered: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        if self.dialect not in ("pg", "mariadb"):
            raise ValueError(f"unknown dialect {self.dialect!r}; expected 'pg' or 'mariadb'")
        self.rng = random.Random(f"{self.dialect}:{self.seed}")

    # ---- helpers ---------------------------------------------------------------------------
    @property
    def columns(self) -> list[ColumnType]:
        """The value columns of ``all_types`` right now (the added column once altered)."""
        cols = list(COLUMNS[self.dialect])
        if self.altered:
            cols.append(ADDED_COLUMN[self.dialect])
        return cols

    def _text(self, value: str) -> str:
        return quote_text(self.dialect, value)

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _row_literals(self, row_id: int) -> tuple[list[str], list[str]]:
        names, values = ["id"], [str(row_id)]
        for col in self.columns:
            names.append(col.name)
            values.append(col.literal(self.rng, self.dialect))
        return names, values

    def _insert_all_types(self, row_id: int) -> str:
        names, values = self._row_literals(row_id)
        self.ids.append(row_id)
        return f"INSERT INTO all_types ({', '.join(names)}) VALUES ({', '.join(values)});"

    def _big_text(self) -> str:
        # Incompressible-looking text over the 2 kB TOAST threshold (storage EXTERNAL anyway).
        return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(3000))

    def _insert_line(self) -> str:
        order_id = self.rng.randint(1, 6)
        taken = {ln for o, ln in self.line_keys if o == order_id}
        line_no = min(set(range(1, len(taken) + 2)) - taken)
        self.line_keys.append((order_id, line_no))
        sku = self._text(f"SKU-{self.rng.randint(100, 999)}")
        qty = self.rng.randint(1, 50)
        return (
            "INSERT INTO order_lines (order_id, line_no, sku, qty) "
            f"VALUES ({order_id}, {line_no}, {sku}, {qty});"
        )

    def _insert_toasty(self) -> str:
        row_id = self._new_id()
        self.toasty_ids.append(row_id)
        label = self._text(f"label {row_id}")
        big = self._text(self._big_text())
        return f"INSERT INTO toasty (id, label, big) VALUES ({row_id}, {label}, {big});"

    # ---- phase 1 -----------------------------------------------------------------------------
    def setup_sql(self) -> str:
        """DROP/CREATE every table, then the initial rows (read by the connector's snapshot)."""
        d = self.dialect
        cols = ",\n  ".join(f"{c.name} {c.sql_type}" for c in COLUMNS[d])
        out: list[str] = []
        if d == "pg":
            out.append("DROP TABLE IF EXISTS all_types, order_lines, truncated, toasty CASCADE;")
            out.append("DROP TYPE IF EXISTS mood;")
            out.append(ENUM_DDL)
        else:
            out.append("DROP TABLE IF EXISTS all_types, order_lines, truncated;")
        out.append(f"CREATE TABLE all_types (\n  id integer PRIMARY KEY,\n  {cols}\n);")
        out.append(
            "CREATE TABLE order_lines (order_id integer NOT NULL, line_no smallint NOT NULL, "
            "sku varchar(20), "
            "qty integer, PRIMARY KEY (order_id, line_no));"
        )
        out.append("CREATE TABLE truncated (id integer PRIMARY KEY, note varchar(40));")
        if d == "pg":
            out.append("ALTER TABLE order_lines REPLICA IDENTITY FULL;")
            out.append("CREATE TABLE toasty (id bigint PRIMARY KEY, label text, big text);")
            out.append("ALTER TABLE toasty ALTER COLUMN big SET STORAGE EXTERNAL;")
        for _ in range(self.initial_rows):
            out.append(self._insert_all_types(self._new_id()))
        for _ in range(max(3, self.initial_rows // 3)):
            out.append(self._insert_line())
        for _ in range(3):
            row_id = self._new_id()
            self.truncated_ids.append(row_id)
            out.append(f"INSERT INTO truncated (id, note) VALUES ({row_id}, 'before truncate');")
        if d == "pg":
            for _ in range(3):
                out.append(self._insert_toasty())
        return "\n".join(out) + "\n"

    # ---- phase 2 -----------------------------------------------------------------------------
    def stream_sql(self, transactions: int) -> str:
        """``transactions`` transactions, each ``BEGIN; …; COMMIT;`` (DDL on its own)."""
        kinds = [k for k in TX_KINDS if k != "toast" or self.dialect == "pg"]
        weights = [w for k, w in zip(TX_KINDS, TX_WEIGHTS, strict=True) if k in kinds]
        truncate_at, alter_at = transactions // 3, transactions // 2
        out: list[str] = []
        for i in range(transactions):
            if i == truncate_at:
                out.append(self._truncate())
            if i == alter_at:
                out.append(self._alter())
            kind = kinds[i] if i < len(kinds) else self.rng.choices(kinds, weights)[0]
            # First round: every kind once; its TOAST one leaves the TOASTed column alone.
            body = (
                self._toast_label_update()
                if i < len(kinds) and kind == "toast"
                else self._transaction(kind)
            )
            out.append(f"-- tx {i}: {kind}\nBEGIN;\n" + "\n".join(body) + "\nCOMMIT;")
        if transactions <= truncate_at:
            out.append(self._truncate())
        return "\n".join(out) + "\n"

    def _truncate(self) -> str:
        self.truncated_ids.clear()
        row_id = self._new_id()
        self.truncated_ids.append(row_id)
        return (
            "-- truncate, then one new row\nTRUNCATE TABLE truncated;\n"
            f"INSERT INTO truncated (id, note) VALUES ({row_id}, 'after truncate');"
        )

    def _alter(self) -> str:
        self.altered = True
        col = ADDED_COLUMN[self.dialect]
        return (
            "-- schema change mid-stream\n"
            f"ALTER TABLE all_types ADD COLUMN {col.name} {col.sql_type};"
        )

    def _transaction(self, kind: str) -> list[str]:
        makers: dict[str, Callable[[], list[str]]] = {
            "insert": self._tx_insert,
            "update": self._tx_update,
            "delete": self._tx_delete,
            "pk_update": self._tx_pk_update,
            "delete_reinsert": self._tx_delete_reinsert,
            "multi": self._tx_multi,
            "order_lines": self._tx_lines,
            "toast": self._tx_toast,
        }
        return makers[kind]()

    def _tx_insert(self) -> list[str]:
        return [self._insert_all_types(self._new_id()) for _ in range(self.rng.randint(1, 3))]

    def _tx_update(self) -> list[str]:
        if not self.ids:
            return self._tx_insert()
        row_id = self.rng.choice(self.ids)
        cols = self.rng.sample(self.columns, self.rng.randint(1, 4))
        sets = ", ".join(f"{c.name} = {c.literal(self.rng, self.dialect)}" for c in cols)
        return [f"UPDATE all_types SET {sets} WHERE id = {row_id};"]

    def _tx_delete(self) -> list[str]:
        if len(self.ids) < 5:
            return self._tx_insert()
        row_id = self.rng.choice(self.ids)
        self.ids.remove(row_id)
        return [f"DELETE FROM all_types WHERE id = {row_id};"]

    def _tx_pk_update(self) -> list[str]:
        if not self.ids:
            return self._tx_insert()
        old = self.rng.choice(self.ids)
        new = self._new_id()
        self.ids[self.ids.index(old)] = new
        col = self.rng.choice(self.columns)
        value = col.literal(self.rng, self.dialect)
        return [f"UPDATE all_types SET id = {new}, {col.name} = {value} WHERE id = {old};"]

    def _tx_delete_reinsert(self) -> list[str]:
        if not self.ids:
            return self._tx_insert()
        row_id = self.rng.choice(self.ids)
        self.ids.remove(row_id)
        return [f"DELETE FROM all_types WHERE id = {row_id};", self._insert_all_types(row_id)]

    def _tx_multi(self) -> list[str]:
        out = self._tx_insert() + self._tx_update() + self._tx_lines()
        if self.truncated_ids:
            row_id = self.rng.choice(self.truncated_ids)
            out.append(
                f"UPDATE truncated SET note = {self._text(f'touched {row_id}')} "
                f"WHERE id = {row_id};"
            )
        return out

    def _tx_lines(self) -> list[str]:
        roll = self.rng.random()
        if roll < 0.4 or len(self.line_keys) < 3:
            return [self._insert_line()]
        order_id, line_no = self.rng.choice(self.line_keys)
        where = f"WHERE order_id = {order_id} AND line_no = {line_no}"
        if roll < 0.8:
            return [f"UPDATE order_lines SET qty = {self.rng.randint(1, 50)} {where};"]
        self.line_keys.remove((order_id, line_no))
        return [f"DELETE FROM order_lines {where};"]

    def _tx_toast(self) -> list[str]:
        if self.dialect != "pg":
            return self._tx_update()
        roll = self.rng.random()
        if roll < 0.15 or not self.toasty_ids:
            return [self._insert_toasty()]
        row_id = self.rng.choice(self.toasty_ids)
        if roll < 0.3:
            return [f"UPDATE toasty SET big = {self._text(self._big_text())} WHERE id = {row_id};"]
        if roll < 0.38 and len(self.toasty_ids) > 2:
            self.toasty_ids.remove(row_id)
            return [f"DELETE FROM toasty WHERE id = {row_id};"]
        return self._toast_label_update(row_id)

    def _toast_label_update(self, row_id: int | None = None) -> list[str]:
        if row_id is None:
            row_id = self.rng.choice(self.toasty_ids)
        label = self._text(f"label {row_id} v{self.rng.randint(1, 10**6)}")
        # `big` unchanged and stored out of line: pgoutput does not send it.
        return [f"UPDATE toasty SET label = {label} WHERE id = {row_id};"]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``setup``, ``stream``, ``sql`` (print without running) and ``dump``."""
    parser = argparse.ArgumentParser(
        prog="python -m conformance.workload", description=__doc__.split("\n")[0]
    )
    parser.add_argument("action", choices=["setup", "stream", "sql", "dump"])
    parser.add_argument("--db", choices=["pg", "mariadb"], required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--initial-rows", type=int, default=20)
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--transactions", type=int, help="overrides --size")
    parser.add_argument("--table", default="all_types", help="for dump")
    parser.add_argument("--save-sql", help="also write the SQL that was run to this file")
    args = parser.parse_args(argv)
    conn = Connection.from_env(args.db)
    if args.action == "dump":
        for row in dump_table(conn, args.table):
            print(
                json.dumps(
                    row,
                    default=lambda b: b.hex() if isinstance(b, bytes) else str(b),
                    ensure_ascii=False,
                )
            )
        return 0
    work = Workload(args.db, seed=args.seed, initial_rows=args.initial_rows)
    setup = work.setup_sql()  # always generated: the stream's state starts from the setup's rows
    n = args.transactions if args.transactions is not None else SIZES[args.size]
    sql = setup if args.action == "setup" else work.stream_sql(n)
    if args.action == "sql":
        sys.stdout.write(setup + sql)
        return 0
    if args.save_sql:
        with open(args.save_sql, "w", encoding="utf-8") as fh:
            fh.write(sql)
    run_sql(conn, sql)
    print(f"{args.action}: ran {sql.count(chr(10))} lines of SQL on {args.db}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
