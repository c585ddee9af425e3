"""DDL text -> typed actions (cdclake.formats.ddl). No Spark needed.

The seed document 001 (Tencent CKafka, canal-format DDL messages) gives six DDL examples; each is
read from the document itself and must give the actions written here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdclake.errors import ConfigError, DecodeError
from cdclake.formats.ddl import (
    AddColumn,
    ColumnDef,
    CreateTable,
    CreateTableLike,
    DdlParseError,
    DropColumn,
    DropTable,
    ModifyColumn,
    NoOp,
    RenameColumn,
    RenameTable,
    SetPrimaryKey,
    TableName,
    TruncateTable,
    parse_ddl,
)
from cdclake.formats.mysql_types import spark_type

# seed 001 as published (../shared/seeds/001_*.txt), copied so the repository stands alone
SEED = Path(__file__).resolve().parents[1] / "data" / "seeds" / "001_document.txt"
T = TableName("db", "t")


def seed_ddl_messages() -> dict[str, dict[str, Any]]:
    """The canal DDL messages of seed 001, by their ``type`` (the document prints the JSON with
    raw newlines inside the ``sql`` string, hence ``strict=False``)."""
    text = SEED.read_text(encoding="utf-8")
    decoder = json.JSONDecoder(strict=False)
    found: dict[str, dict[str, Any]] = {}
    pos = text.find("{")
    while pos != -1:
        try:
            message, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(message, dict) and message.get("isDdl") is True:
            key = message["type"]
            if key == "QUERY":  # two QUERY examples: create and drop database
                key += "/" + message["sql"].split()[0].upper()
            found[key] = message
        pos = text.find("{", end)
    return found


SEED_EXPECTED: dict[str, list[Any]] = {
    "QUERY/CREATE": [NoOp("CREATE DATABASE", "creates no table")],
    "QUERY/DROP": [
        NoOp("DROP DATABASE", "dropping a database does not drop its tables from the lake")
    ],
    "CREATE": [
        CreateTable(
            TableName("dip_test", "customers"),
            (
                ColumnDef("id", "int", nullable=False),
                ColumnDef("first_name", "varchar(255)", nullable=False),
                ColumnDef("last_name", "varchar(255)", nullable=False),
                ColumnDef("email", "varchar(255)", nullable=False),
            ),
            primary_key=("id",),
            if_not_exists=False,
        )
    ],
    "ALTER": [
        AddColumn(
            TableName("test", "user"),
            ColumnDef("createtime", "datetime", nullable=True, default="CURRENT_TIMESTAMP"),
        )
    ],
    "ERASE": [DropTable(TableName("dip_test", "customers"), if_exists=True)],
    "RENAME": [RenameTable(TableName("testDB", "test"), TableName("testDB", "t_test"))],
}


def test_seed_has_the_six_ddl_examples() -> None:
    assert sorted(seed_ddl_messages()) == sorted(SEED_EXPECTED)


@pytest.mark.parametrize("kind", sorted(SEED_EXPECTED))
def test_seed_ddl_example(kind: str) -> None:
    message = seed_ddl_messages()[kind]
    actions = parse_ddl(message["sql"], default_database=message["database"])
    assert actions == SEED_EXPECTED[kind]


def test_create_table_keys_options_and_comments() -> None:
    sql = """/* from a tool */ CREATE TABLE IF NOT EXISTS `shop`.`orders` (
      `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT COMMENT 'order id',
      `no` varchar(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
      `code` char(4) NULL,
      `price` decimal(10,2) unsigned DEFAULT '0.00',
      `state` enum('new','it''s paid') DEFAULT 'new',
      CONSTRAINT pk PRIMARY KEY (`id`, `code`),
      UNIQUE KEY `uk_no` (`no`),
      KEY `ix_state` (`state`),
      FULLTEXT KEY ft (`no`)
    ) ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COMMENT='orders'"""
    [action] = parse_ddl(sql, default_database="other")
    assert action == CreateTable(
        TableName("shop", "orders"),
        (
            ColumnDef("id", "bigint unsigned", nullable=False, comment="order id"),
            ColumnDef("no", "varchar(32)", nullable=False, default="''"),
            ColumnDef("code", "char(4)", nullable=False),  # in the primary key: NOT NULL
            ColumnDef("price", "decimal(10,2) unsigned", default="'0.00'"),
            ColumnDef("state", "enum('new','it''s paid')", default="'new'"),
        ),
        primary_key=("id", "code"),
        if_not_exists=True,
    )


def test_inline_primary_key_and_prefix_key() -> None:
    [inline] = parse_ddl("CREATE TABLE t (id int PRIMARY KEY, v text)", default_database="db")
    assert inline == CreateTable(
        T, (ColumnDef("id", "int", nullable=False), ColumnDef("v", "text")), ("id",)
    )
    [prefix] = parse_ddl("CREATE TABLE t (v text, PRIMARY KEY (v(10)))")
    assert prefix == CreateTable(TableName(None, "t"), (ColumnDef("v", "text", False),), ("v",))


def test_modify_column() -> None:
    sql = "ALTER TABLE db.t MODIFY COLUMN c bigint(20) unsigned NOT NULL FIRST"
    assert parse_ddl(sql) == [
        ModifyColumn(T, ColumnDef("c", "bigint unsigned", nullable=False), first=True)
    ]


def test_change_column_renames_and_redefines() -> None:
    sql = "ALTER TABLE t CHANGE COLUMN old_name new_name varchar(20) DEFAULT NULL AFTER id"
    assert parse_ddl(sql, default_database="db") == [
        RenameColumn(
            T, "old_name", "new_name", ColumnDef("new_name", "varchar(20)", default="NULL"), "id"
        )
    ]


def test_change_column_keeping_its_name_is_a_modify() -> None:
    sql = "ALTER TABLE t CHANGE c c int(11) NOT NULL"
    assert parse_ddl(sql, default_database="db") == [
        ModifyColumn(T, ColumnDef("c", "int", nullable=False))
    ]


def test_rename_column() -> None:
    assert parse_ddl("ALTER TABLE t RENAME COLUMN a TO b", default_database="db") == [
        RenameColumn(T, "a", "b", None)
    ]


def test_drop_column() -> None:
    assert parse_ddl("ALTER TABLE `db`.`t` DROP COLUMN `c`") == [DropColumn(T, "c")]


def test_multi_clause_alter_gives_one_action_per_clause() -> None:
    sql = (
        "ALTER TABLE t ALGORITHM=INPLACE, DROP a, ADD d int FIRST, "
        "ADD COLUMN e text NOT NULL COMMENT 'e' AFTER d, ADD INDEX ix_d (d), RENAME TO t2"
    )
    assert parse_ddl(sql, default_database="db") == [
        DropColumn(T, "a"),
        AddColumn(T, ColumnDef("d", "int"), first=True),
        AddColumn(T, ColumnDef("e", "text", nullable=False, comment="e"), after="d"),
        NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column"),
        RenameTable(T, TableName("db", "t2")),
    ]


# One clause of each kind, and the actions it gives on db.t (none for table options).
CLAUSES: list[tuple[str, list[Any]]] = [
    ("ADD COLUMN c int FIRST", [AddColumn(T, ColumnDef("c", "int"), first=True)]),
    (
        "ADD c decimal(10,2) NOT NULL DEFAULT '1,5' AFTER a",
        [AddColumn(T, ColumnDef("c", "decimal(10,2)", False, default="'1,5'"), after="a")],
    ),
    (
        "ADD (c int, `d,e` enum('x,y','z'))",
        [AddColumn(T, ColumnDef("c", "int")), AddColumn(T, ColumnDef("d,e", "enum('x,y','z')"))],
    ),
    (
        "ADD COLUMN (c int NOT NULL, INDEX ix_c (c), PRIMARY KEY (c))",
        [
            AddColumn(T, ColumnDef("c", "int", nullable=False)),
            NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column"),
            SetPrimaryKey(T, ("c",)),
        ],
    ),
    (
        "MODIFY c bigint(20) unsigned NOT NULL",
        [ModifyColumn(T, ColumnDef("c", "bigint unsigned", False))],
    ),
    (
        "MODIFY COLUMN c set('a,b','c') DEFAULT 'a,b' AFTER a",
        [ModifyColumn(T, ColumnDef("c", "set('a,b','c')", default="'a,b'"), after="a")],
    ),
    ("CHANGE c d int", [RenameColumn(T, "c", "d", ColumnDef("d", "int"))]),
    (
        "CHANGE COLUMN `c,1` `d,2` varchar(8) COMMENT 'x, y' FIRST",
        [RenameColumn(T, "c,1", "d,2", ColumnDef("d,2", "varchar(8)", comment="x, y"), first=True)],
    ),
    ("DROP c", [DropColumn(T, "c")]),
    ("DROP COLUMN `c,d`", [DropColumn(T, "c,d")]),
    ("RENAME COLUMN c TO d", [RenameColumn(T, "c", "d")]),
    (
        "ADD INDEX ix (a, b)",
        [NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column")],
    ),
    ("ADD KEY ix (a)", [NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column")]),
    (
        "ADD UNIQUE KEY uk (a)",
        [NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column")],
    ),
    ("ADD PRIMARY KEY (a, b)", [SetPrimaryKey(T, ("a", "b"))]),
    ("DROP PRIMARY KEY", [SetPrimaryKey(T, ())]),
    ("DROP INDEX ix", [NoOp("ALTER TABLE DROP INDEX", "an index or constraint changes no column")]),
    (
        "ALTER COLUMN c SET DEFAULT 'x,y'",
        [NoOp("ALTER TABLE ALTER COLUMN", "a default changes no stored value")],
    ),
    (
        "ALTER c DROP DEFAULT",
        [NoOp("ALTER TABLE ALTER COLUMN", "a default changes no stored value")],
    ),
    ("RENAME INDEX a TO b", [NoOp("ALTER TABLE RENAME INDEX", "an index changes no column")]),
    ("ALTER INDEX ix INVISIBLE", [NoOp("ALTER TABLE ALTER INDEX", "an index changes no column")]),
    ("FORCE", [NoOp("ALTER TABLE FORCE", "rebuilding a table changes no column")]),
    ("RENAME TO u", [RenameTable(T, TableName("db", "u"))]),
    ("ENGINE=InnoDB", []),
    ("COMMENT='a, b'", []),
    ("DEFAULT CHARSET=utf8mb4", []),
    ("ALGORITHM=INPLACE", []),
    ("LOCK=NONE", []),
    ("CONVERT TO CHARACTER SET utf8mb4", []),
]


@pytest.mark.parametrize("first", ["ADD x int", "ADD (x int)"], ids=["sqlglot", "by-clause"])
@pytest.mark.parametrize(("clause", "expected"), CLAUSES, ids=[c for c, _ in CLAUSES])
def test_multi_clause_alter_clause_kind(first: str, clause: str, expected: list[Any]) -> None:
    """Each clause kind between two others gives its actions in clause order, whether sqlglot
    parses the statement whole or only clause by clause (it cannot parse ``ADD (x int)``)."""
    sql = f"ALTER TABLE t {first}, {clause}, DROP z"
    assert parse_ddl(sql, default_database="db") == [
        AddColumn(T, ColumnDef("x", "int")),
        *expected,
        DropColumn(T, "z"),
    ]


@settings(max_examples=60, deadline=None)
@given(clauses=st.lists(st.sampled_from(CLAUSES), min_size=1, max_size=6))
def test_multi_clause_alter_is_its_clauses_in_order(clauses: list[tuple[str, list[Any]]]) -> None:
    """The rule: a multi-clause ALTER TABLE does what its clauses do, one after the other; only
    table options, and nothing else, give the one NoOp of a statement that changes nothing."""
    sql = "ALTER TABLE t " + ", ".join(clause for clause, _ in clauses)
    expected = [action for _, actions in clauses for action in actions]
    actions = parse_ddl(sql, default_database="db")
    if expected:
        assert actions == expected
    else:
        [noop] = actions
        assert isinstance(noop, NoOp) and noop.statement_kind == "ALTER TABLE"


def test_multi_clause_alter_golden_from_canal() -> None:
    """A canal ``sql`` field as a DBeaver user's ALTER reaches the binlog: the tool's comment,
    backquoted names, commas inside types, defaults and comments, and ADD COLUMN (...), which
    sqlglot cannot parse, so that the statement is read clause by clause."""
    message = {
        "data": None,
        "database": "shop",
        "es": 1718000000000,
        "id": 0,
        "isDdl": True,
        "mysqlType": None,
        "old": None,
        "pkNames": None,
        "sql": "/* ApplicationName=DBeaver 23.0.1 - SQLEditor <Script-7.sql> */ "
        "ALTER TABLE `orders`\n"
        "  ADD COLUMN `discount` decimal(10,2) NOT NULL DEFAULT '0.00' COMMENT 'discount, in yuan'"
        " AFTER `price`,\n"
        "  ADD COLUMN (`coupon_code` varchar(32) NULL, `coupon_note` varchar(255)"
        " DEFAULT 'none, yet'),\n"
        "  MODIFY COLUMN `state` enum('new','paid','shipped, partly') NOT NULL DEFAULT 'new',\n"
        "  CHANGE COLUMN `addr` `address` varchar(512) NULL DEFAULT NULL AFTER `state`,\n"
        "  DROP COLUMN `legacy_flag`,\n"
        "  RENAME COLUMN `ts` TO `created_at`,\n"
        "  ADD INDEX `idx_coupon` (`coupon_code`) USING BTREE,\n"
        "  DROP PRIMARY KEY,\n"
        "  ADD PRIMARY KEY (`id`, `shop_id`),\n"
        "  ALTER COLUMN `note` SET DEFAULT '',\n"
        "  COMMENT = 'orders, v2',\n"
        "  ALGORITHM = INPLACE, LOCK = NONE",
        "sqlType": None,
        "table": "orders",
        "ts": 1718000000000,
        "type": "ALTER",
    }
    orders = TableName("shop", "orders")
    index = NoOp("ALTER TABLE ADD INDEX", "an index or constraint changes no column")
    default = NoOp("ALTER TABLE ALTER COLUMN", "a default changes no stored value")
    assert parse_ddl(str(message["sql"]), default_database=str(message["database"])) == [
        AddColumn(
            orders,
            ColumnDef("discount", "decimal(10,2)", False, "discount, in yuan", "'0.00'"),
            after="price",
        ),
        AddColumn(orders, ColumnDef("coupon_code", "varchar(32)")),
        AddColumn(orders, ColumnDef("coupon_note", "varchar(255)", default="'none, yet'")),
        ModifyColumn(
            orders,
            ColumnDef("state", "enum('new','paid','shipped, partly')", False, default="'new'"),
        ),
        RenameColumn(
            orders, "addr", "address", ColumnDef("address", "varchar(512)", default="NULL"), "state"
        ),
        DropColumn(orders, "legacy_flag"),
        RenameColumn(orders, "ts", "created_at"),
        index,
        SetPrimaryKey(orders, ()),
        SetPrimaryKey(orders, ("id", "shop_id")),
        default,
    ]


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        (
            "ALTER TABLE t ADD a int, TRUNCATE PARTITION p0, DROP b",
            "sqlglot cannot parse the ALTER TABLE clause 'TRUNCATE PARTITION p0': "
            "it may change the table",
        ),
        (
            "ALTER TABLE t ADD (a int, b int), ADD c int DEFAULT 1 +, DROP d",
            "sqlglot cannot parse the ALTER TABLE clause 'ADD c int DEFAULT 1 +': "
            "Required keyword: 'expression' missing",  # then sqlglot's class name
        ),
        (
            "ALTER TABLE t DROP d, ADD COLUMN (a int, b nosuchtype(1))",
            "sqlglot cannot parse the ALTER TABLE clause 'ADD COLUMN (a int, b nosuchtype(1))' "
            "at 'b nosuchtype(1)': it may change the table",
        ),
    ],
)
def test_multi_clause_alter_names_the_clause_it_cannot_parse(sql: str, reason: str) -> None:
    with pytest.raises(DdlParseError) as caught:
        parse_ddl(sql)
    assert caught.value.reason.startswith(reason)
    assert caught.value.statement == sql


def test_alter_ignore_table_is_read() -> None:
    """Regression: ``ALTER IGNORE TABLE`` (MySQL 5.6, MariaDB; sqlglot keeps it opaque) was a
    NoOp "changes no table", so the column it added never reached the lake."""
    assert parse_ddl("ALTER IGNORE TABLE t ADD a int, DROP b", default_database="db") == [
        AddColumn(T, ColumnDef("a", "int")),
        DropColumn(T, "b"),
    ]


def test_rename_tables() -> None:
    sql = "RENAME TABLE `a`.`b c` TO x.y, `to` TO z"
    assert parse_ddl(sql, default_database="db") == [
        RenameTable(TableName("a", "b c"), TableName("x", "y")),
        RenameTable(TableName("db", "to"), TableName("db", "z")),
    ]
    assert parse_ddl("RENAME USER a TO b") == [NoOp("RENAME USER", "renames no table")]


def test_truncate_and_drop_several_tables() -> None:
    assert parse_ddl("TRUNCATE TABLE t", default_database="db") == [TruncateTable(T)]
    assert parse_ddl("truncate db.t") == [TruncateTable(T)]
    assert parse_ddl("DROP TABLE t, other.u", default_database="db") == [
        DropTable(T),
        DropTable(TableName("other", "u")),
    ]


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("CREATE INDEX ix ON t (a)", "CREATE INDEX"),
        ("CREATE UNIQUE INDEX ix ON t (a, b)", "CREATE INDEX"),
        ("DROP INDEX ix ON t", "DROP INDEX"),
        ("ALTER TABLE t ADD KEY ix (a)", "ALTER TABLE ADD INDEX"),
        (
            "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES u (b)",
            "ALTER TABLE ADD CONSTRAINT",
        ),
        ("ALTER TABLE t DROP INDEX ix", "ALTER TABLE DROP INDEX"),
        ("ALTER TABLE t ENGINE=InnoDB", "ALTER TABLE"),
        ("ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4", "ALTER TABLE"),
        ("ALTER TABLE t ALTER COLUMN c SET DEFAULT 1", "ALTER TABLE ALTER COLUMN"),
        ("ALTER TABLE t ALGORITHM=INPLACE, LOCK=NONE", "ALTER TABLE"),
        ("ALTER TABLE t FORCE", "ALTER TABLE FORCE"),
        ("ALTER TABLE t ALTER INDEX ix INVISIBLE", "ALTER TABLE ALTER INDEX"),
        ("ALTER TABLESPACE ts ADD DATAFILE 'ts.ibd'", "ALTER TABLESPACE"),
        ("CREATE DATABASE IF NOT EXISTS x", "CREATE DATABASE"),
        ("CREATE VIEW v AS SELECT 1", "CREATE VIEW"),
        ("CREATE TEMPORARY TABLE tmp (a int)", "CREATE TABLE"),
        ("GRANT SELECT ON db.* TO 'u'@'%'", "GRANT"),
        ("CREATE USER 'u'@'%' IDENTIFIED BY 'p'", "CREATE USER"),
        ("flush privileges", "FLUSH"),
        ("/*!40101 SET character_set_client = utf8 */", "EMPTY"),
        ("   ", "EMPTY"),
    ],
)
def test_statements_that_change_no_table(sql: str, kind: str) -> None:
    [action] = parse_ddl(sql, default_database="db")
    assert isinstance(action, NoOp)
    assert action.statement_kind == kind
    assert action.reason


def test_primary_key_changes() -> None:
    assert parse_ddl("ALTER TABLE t ADD PRIMARY KEY (a, b(10))", default_database="db") == [
        SetPrimaryKey(T, ("a", "b"))
    ]
    assert parse_ddl("ALTER TABLE db.t DROP PRIMARY KEY") == [SetPrimaryKey(T, ())]


def test_create_table_like_and_several_statements() -> None:
    sql = "CREATE TABLE IF NOT EXISTS t2 LIKE t; DROP TABLE `x;y`"
    assert parse_ddl(sql, default_database="db") == [
        CreateTableLike(TableName("db", "t2"), T, if_not_exists=True),
        DropTable(TableName("db", "x;y")),
    ]


def test_unparseable_statement_names_it_and_sqlglots_message() -> None:
    with pytest.raises(DdlParseError) as caught:
        parse_ddl("CREATE TABLE t (id int; DROP TABLE u")
    assert str(caught.value) == (
        "cannot parse DDL statement 'CREATE TABLE t (id int': Expecting ) (line 1, column 22)"
    )
    assert isinstance(caught.value, DecodeError)
    assert caught.value.statement == "CREATE TABLE t (id int"


def test_unterminated_quote_is_a_parse_error() -> None:
    with pytest.raises(DdlParseError, match=r"cannot parse DDL statement .*Error tokenizing"):
        parse_ddl("CREATE TABLE t (c enum('unterminated))")


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("CREATE TABLE t2 AS SELECT * FROM t", "does not give the columns"),
        ("ALTER TABLE t TRUNCATE PARTITION p0", "may change the table"),
        ("ALTER TABLE t ADD (a int, b int) FIRST", "may change the table"),
        ("RENAME TABLE a", "expected RENAME TABLE <old> TO <new>"),
    ],
)
def test_table_changes_that_cannot_be_followed_raise(sql: str, reason: str) -> None:
    with pytest.raises(DdlParseError, match=reason) as caught:
        parse_ddl(sql)
    assert repr(sql) in str(caught.value)


def test_unknown_dialect() -> None:
    with pytest.raises(ConfigError, match="unknown SQL dialect 'nosuchsql'"):
        parse_ddl("DROP TABLE t", dialect="nosuchsql")


def test_other_dialect() -> None:
    sql = "CREATE TABLE s.t (id integer PRIMARY KEY, name text)"
    assert parse_ddl(sql, dialect="postgres") == [
        CreateTable(
            TableName("s", "t"), (ColumnDef("id", "int", False), ColumnDef("name", "text")), ("id",)
        )
    ]


# Every MySQL type mysql_types maps: type_sql from a CREATE TABLE must map to the same Spark type.
ROUND_TRIP = [
    ("int(11)", "int"),
    ("bigint(20) unsigned", "bigint unsigned"),
    ("int unsigned", "int unsigned"),
    ("int(10) unsigned zerofill", "int unsigned"),
    ("tinyint(1)", "tinyint(1)"),
    ("tinyint(4)", "tinyint"),
    ("tinyint unsigned", "tinyint unsigned"),
    ("smallint", "smallint"),
    ("smallint unsigned", "smallint unsigned"),
    ("mediumint", "mediumint"),
    ("mediumint unsigned", "mediumint unsigned"),
    ("bigint", "bigint"),
    ("bool", "tinyint(1)"),
    ("serial", "bigint unsigned"),
    ("decimal(10,2)", "decimal(10,2)"),
    ("numeric(5)", "decimal(5)"),
    ("decimal(65,30)", "decimal(65,30)"),
    ("decimal(20,4) unsigned", "decimal(20,4) unsigned"),
    ("float", "float"),
    ("float(7,3)", "float(7,3)"),
    ("float(30)", "float(30)"),
    ("double", "double"),
    ("double precision", "double"),
    ("real", "double"),
    ("char(3)", "char(3)"),
    ("varchar(255)", "varchar(255)"),
    ("text", "text"),
    ("tinytext", "tinytext"),
    ("mediumtext", "mediumtext"),
    ("longtext", "longtext"),
    ("date", "date"),
    ("datetime", "datetime"),
    ("datetime(6)", "datetime(6)"),
    ("timestamp(3)", "timestamp(3)"),
    ("time", "time"),
    ("time(3)", "time(3)"),
    ("year", "year"),
    ("binary(16)", "binary(16)"),
    ("varbinary(8)", "varbinary(8)"),
    ("blob", "blob"),
    ("tinyblob", "tinyblob"),
    ("mediumblob", "mediumblob"),
    ("longblob", "longblob"),
    ("bit(1)", "bit(1)"),
    ("bit(64)", "bit(64)"),
    ("json", "json"),
    ("enum('a','b c','it''s')", "enum('a','b c','it''s')"),
    ("set('x','y')", "set('x','y')"),
    ("geometry", "geometry"),
    ("point", "geometry"),
    ("multipolygon", "geometry"),
]


@pytest.mark.parametrize(("mysql_type", "expected_sql"), ROUND_TRIP)
def test_type_sql_round_trips_through_spark_type(mysql_type: str, expected_sql: str) -> None:
    [action] = parse_ddl(f"CREATE TABLE t (c {mysql_type})")
    assert isinstance(action, CreateTable)
    type_sql = action.columns[0].type_sql
    assert type_sql == expected_sql
    for as_boolean in (False, True):
        assert spark_type(type_sql, tinyint1_as_boolean=as_boolean) == spark_type(
            mysql_type, tinyint1_as_boolean=as_boolean
        )


def test_table_name_text() -> None:
    assert str(TableName("db", "t")) == "db.t"
    assert str(TableName(None, "t")) == "t"
