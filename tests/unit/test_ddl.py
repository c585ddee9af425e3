"""DDL text -> typed actions (cdclake.ddl). No Spark needed.

The seed document 001 (Tencent CKafka, canal-format DDL messages) gives six DDL examples; each is
read from the document itself and must give the actions written here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdclake.ddl import (
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
from cdclake.errors import ConfigError, DecodeError
from cdclake.mysql_types import spark_type

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
        ("ALTER TABLE t ADD COLUMN (a int, b int)", "may change the table"),
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
