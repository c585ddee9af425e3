"""DDL statements -> typed actions on tables, parsed with sqlglot (never with regular expressions).

Canal and CKafka carry DDL as SQL text (``"sql"`` of a message with ``isDdl: true``), DataWorks in
``payload.ddl.text``. :func:`parse_ddl` turns one such text into the actions the applier performs::

    >>> parse_ddl("ALTER TABLE `user` ADD `createtime` datetime NULL", default_database="test")
    [AddColumn(table=TableName(database='test', name='user'), column=ColumnDef(name='createtime',
     type_sql='datetime', nullable=True, comment=None, default=None), after=None, first=False,
     if_not_exists=False)]

- One statement may yield several actions (``ALTER TABLE t DROP a, ADD b int``; ``DROP TABLE a,
  b``; ``RENAME TABLE a TO b, c TO d``) and yields at least one: statements that change no table
  (CREATE/DROP DATABASE, indexes, constraints, views, users, grants, table options, comments
  only) become :class:`NoOp` with the reason.
- ``ColumnDef.type_sql`` is the column type as MySQL text (``varchar(255)``, ``bigint unsigned``,
  ``decimal(10,2)``, ``enum('a','b')``) that
  :func:`cdclake.formats.mysql_types.spark_type` reads. Integer
  display widths are dropped except ``tinyint(1)``; ``bool`` becomes ``tinyint(1)``, ``serial``
  ``bigint unsigned``, ``real`` ``double`` and the geometry subtypes ``geometry``.
- ``CHANGE old new type`` is :class:`RenameColumn` with the new definition, or
  :class:`ModifyColumn` when the name stays the same.
- Primary keys: CREATE TABLE collects them (their columns become NOT NULL, as in MySQL);
  ``ALTER TABLE ... ADD PRIMARY KEY``/``DROP PRIMARY KEY`` is :class:`SetPrimaryKey` (CKafka's DML
  carries no key: it comes from DDL).
- An ALTER TABLE that sqlglot cannot parse whole (``ADD (a int, b int)`` among other clauses) is
  read clause by clause: the text is split at commas outside parentheses (quotes and backquotes
  are single tokens) and each clause parsed as its own ``ALTER TABLE t <clause>``; the actions
  keep the order of the clauses.
- Statements that change tables in ways the lake cannot follow (``CREATE TABLE ... AS SELECT``,
  partition maintenance, syntax sqlglot only keeps as an opaque command) raise
  :class:`DdlParseError`, like unparseable text: the caller quarantines them. For an ALTER TABLE
  the reason quotes the clause that failed.
- ``DROP DATABASE`` is a :class:`NoOp`: its tables are not dropped from the lake.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, TypeAlias

from sqlglot import Token, TokenType, exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import ParseError, SqlglotError

from cdclake.errors import ConfigError, DecodeError


class DdlParseError(DecodeError):
    """A DDL statement that cannot be parsed, or whose effect on tables cannot be followed."""

    def __init__(self, statement: str, reason: str) -> None:
        super().__init__(f"cannot parse DDL statement {statement!r}: {reason}")
        self.statement = statement
        self.reason = reason


@dataclass(frozen=True)
class TableName:
    """A table; ``database`` is None only when the statement and the caller named none."""

    database: str | None
    name: str

    def __str__(self) -> str:
        return self.name if self.database is None else f"{self.database}.{self.name}"


@dataclass(frozen=True)
class ColumnDef:
    """A column definition. ``default`` is the DEFAULT expression as MySQL text (``'a'``,
    ``CURRENT_TIMESTAMP``, ``NULL``), None when the statement gives none."""

    name: str
    type_sql: str
    nullable: bool = True
    comment: str | None = None
    default: str | None = None


@dataclass(frozen=True)
class CreateTable:
    table: TableName
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...]
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateTableLike:
    """``CREATE TABLE t LIKE source``: same columns and key as ``like``."""

    table: TableName
    like: TableName
    if_not_exists: bool = False


@dataclass(frozen=True)
class AddColumn:
    table: TableName
    column: ColumnDef
    after: str | None = None
    first: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropColumn:
    table: TableName
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ModifyColumn:
    table: TableName
    column: ColumnDef
    after: str | None = None
    first: bool = False


@dataclass(frozen=True)
class RenameColumn:
    """``RENAME COLUMN old TO new`` (``column`` None) or ``CHANGE old new <definition>``."""

    table: TableName
    old: str
    new: str
    column: ColumnDef | None = None
    after: str | None = None
    first: bool = False


@dataclass(frozen=True)
class RenameTable:
    old: TableName
    new: TableName


@dataclass(frozen=True)
class DropTable:
    table: TableName
    if_exists: bool = False


@dataclass(frozen=True)
class TruncateTable:
    table: TableName


@dataclass(frozen=True)
class SetPrimaryKey:
    """``ALTER TABLE ... ADD PRIMARY KEY (a, b)``; ``DROP PRIMARY KEY`` gives ``columns=()``."""

    table: TableName
    columns: tuple[str, ...]


@dataclass(frozen=True)
class NoOp:
    """A statement (or ALTER clause) that changes no table's columns, name or rows."""

    statement_kind: str
    reason: str


DdlAction: TypeAlias = (
    CreateTable
    | CreateTableLike
    | AddColumn
    | DropColumn
    | ModifyColumn
    | RenameColumn
    | RenameTable
    | DropTable
    | TruncateTable
    | SetPrimaryKey
    | NoOp
)


_GEOMETRY_SUBTYPES = (
    *("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON"),
    *("GEOMETRYCOLLECTION", "GEOMCOLLECTION"),
)


class _CdclakeMySQL(MySQL):
    """MySQL as sqlglot reads it, plus the geometry subtypes and REAL = DOUBLE (MySQL's default)."""

    class Tokenizer(MySQL.Tokenizer):
        KEYWORDS: ClassVar[dict[str, TokenType]] = {
            **MySQL.Tokenizer.KEYWORDS,
            **{name: TokenType.GEOMETRY for name in _GEOMETRY_SUBTYPES},
            "REAL": TokenType.DOUBLE,
        }


def _dialect(name: str) -> Dialect:
    if name.lower() == "mysql":
        return _CdclakeMySQL()
    try:
        return Dialect.get_or_raise(name)
    except ValueError as e:
        raise ConfigError(f"unknown SQL dialect {name!r}: {e}") from None


def parse_ddl(
    sql: str, *, default_database: str | None = None, dialect: str = "mysql"
) -> list[DdlAction]:
    """Parse DDL text (one or more statements) into the actions it performs on tables.

    Tables named without a database get ``default_database`` (canal: the message's
    ``database``). Raises :class:`DdlParseError` naming the statement and sqlglot's message.

    >>> parse_ddl("rename table test to t_test", default_database="testDB")
    [RenameTable(old=TableName(database='testDB', name='test'),
                 new=TableName(database='testDB', name='t_test'))]
    """
    d = _dialect(dialect)
    actions: list[DdlAction] = []
    for statement in _statements(sql, d):
        actions.extend(_Statement(statement, d, default_database).actions())
    return actions or [NoOp("EMPTY", "no statement: only whitespace or comments")]


def _tokenize(text: str, d: Dialect, statement: str) -> list[Token]:
    try:
        return d.tokenize(text)
    except SqlglotError as e:
        raise DdlParseError(statement, str(e)) from None


def _statements(sql: str, d: Dialect) -> list[str]:
    """Split at top-level semicolons (the tokenizer knows quotes and comments)."""
    out: list[str] = []
    start = 0
    for token in _tokenize(sql, d, sql):
        if token.token_type == TokenType.SEMICOLON:
            out.append(sql[start : token.start])
            start = token.end + 1
    out.append(sql[start:])
    return [text.strip() for text in out if _tokenize(text, d, text)]


def _parse_error(statement: str, error: ParseError) -> DdlParseError:
    at = "{description} (line {line}, column {col})"
    return DdlParseError(statement, "; ".join(at.format(**e) for e in error.errors) or str(error))


def _position(node: exp.Expression) -> tuple[str | None, bool]:
    """The ``(after, first)`` of a column definition's FIRST / AFTER clause."""
    position = node.args.get("position")
    if not isinstance(position, exp.ColumnPosition):
        return None, False
    if str(position.args.get("position", "")).upper() == "FIRST":
        return None, True
    return position.this.name if position.this is not None else None, False


def _column_names(node: exp.Expression) -> tuple[str, ...]:
    """Column names of a key definition: ``(a, b(10))`` -> ("a", "b")."""
    wrapped = (exp.ColumnPrefix, exp.Ordered)
    return tuple((p.this if isinstance(p, wrapped) else p).name for p in node.expressions)


@dataclass
class _Statement:
    text: str
    dialect: Dialect
    default_database: str | None

    def actions(self) -> list[DdlAction]:
        tokens = _tokenize(self.text, self.dialect, self.text)
        if tokens[0].token_type == TokenType.RENAME:
            return self._rename(self.text[tokens[0].end + 1 :])
        try:
            parsed = [e for e in self.dialect.parse(self.text) if isinstance(e, exp.Expression)]
        except ParseError as e:
            if (name := _alter_table_name(tokens)) is not None:
                return self._by_clause(tokens, name)
            raise _parse_error(self.text, e) from None
        except SqlglotError as e:
            raise DdlParseError(self.text, str(e)) from None
        if not parsed:  # e.g. only a /*!40101 ... */ comment, which MySQL would execute
            return [NoOp("EMPTY", "no statement: only comments (/*!...*/ ones are not read)")]
        node = parsed[0]
        kind = _statement_kind(node, tokens)
        if isinstance(node, exp.Create):
            return self._create(node, kind)
        if isinstance(node, exp.Drop):
            return self._drop(node, kind)
        if isinstance(node, exp.Alter):
            return self._alter(node, kind)
        if isinstance(node, exp.TruncateTable) and not node.args.get("is_database"):
            return [TruncateTable(self._table(t)) for t in node.expressions]
        if isinstance(node, exp.Command):
            return self._command(tokens, kind)
        return [NoOp(kind, "not a statement that changes a table")]

    def fail(self, reason: str) -> DdlParseError:
        return DdlParseError(self.text, reason)

    def _table(self, node: exp.Expression) -> TableName:
        if not isinstance(node, exp.Table) or not node.name:
            raise self.fail(f"expected a table name, got {node.sql()!r}")
        return TableName(node.db or self.default_database, node.name)

    def _column(self, node: exp.ColumnDef) -> tuple[ColumnDef, bool]:
        """The column, and whether it is declared PRIMARY KEY inline."""
        data_type = node.args.get("kind")
        if not isinstance(data_type, exp.DataType):
            raise self.fail(f"column {node.name!r} has no type")
        nullable, comment, default, primary = True, None, None, False
        for constraint in node.constraints:
            kind = constraint.kind
            if isinstance(kind, exp.NotNullColumnConstraint):
                nullable = bool(kind.args.get("allow_null"))
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                nullable, primary = False, True
            elif isinstance(kind, exp.CommentColumnConstraint):
                comment = kind.this.name
            elif isinstance(kind, exp.DefaultColumnConstraint):
                now = isinstance(kind.this, exp.CurrentTimestamp) and kind.this.this is None
                default = "CURRENT_TIMESTAMP" if now else kind.this.sql(dialect=self.dialect)
        column = ColumnDef(node.name, type_sql(data_type), nullable, comment, default)
        return column, primary

    def _create(self, node: exp.Create, kind: str) -> list[DdlAction]:
        if str(node.args.get("kind", "")).upper() != "TABLE":
            return [NoOp(kind, "creates no table")]
        properties = node.args.get("properties")
        if properties is not None and properties.find(exp.TemporaryProperty):
            return [NoOp(kind, "a temporary table is not replicated")]
        exists = bool(node.args.get("exists"))
        like = properties.find(exp.LikeProperty) if properties is not None else None
        if like is not None:
            return [CreateTableLike(self._table(node.this), self._table(like.this), exists)]
        if node.args.get("expression") is not None:
            raise self.fail("CREATE TABLE ... AS SELECT: the statement does not give the columns")
        schema = node.this
        if not isinstance(schema, exp.Schema):
            raise self.fail("CREATE TABLE without a column list")
        columns: list[ColumnDef] = []
        key: tuple[str, ...] = ()
        for element in schema.expressions:
            if isinstance(element, exp.ColumnDef):
                column, primary = self._column(element)
                columns.append(column)
                key = (*key, column.name) if primary else key
            elif (pk := element.find(exp.PrimaryKey)) is not None:
                key = _column_names(pk)
        in_key = {name.lower() for name in key}
        columns = [replace(c, nullable=False) if c.name.lower() in in_key else c for c in columns]
        return [CreateTable(self._table(schema.this), tuple(columns), key, exists)]

    def _drop(self, node: exp.Drop, kind: str) -> list[DdlAction]:
        if str(node.args.get("kind", "")).upper() != "TABLE":
            reason = "drops no table"
            if kind in ("DROP DATABASE", "DROP SCHEMA"):
                reason = "dropping a database does not drop its tables from the lake"
            return [NoOp(kind, reason)]
        if node.args.get("temporary"):
            return [NoOp(kind, "a temporary table is not replicated")]
        exists = bool(node.args.get("exists"))
        return [DropTable(self._table(t), exists) for t in node.args.get("tables") or []]

    def _alter(self, node: exp.Alter, kind: str) -> list[DdlAction]:
        if str(node.args.get("kind", "")).upper() != "TABLE":
            return [NoOp(kind, "alters no table")]
        return self._alter_actions(node) or [NoOp(kind, "table options only")]

    def _alter_actions(self, node: exp.Alter) -> list[DdlAction]:
        """One or more actions per clause, in clause order; none for table options
        (ENGINE=, COMMENT=, ALGORITHM=, LOCK=), which sqlglot keeps apart from the clauses."""
        table = self._table(node.this)
        return [a for clause in node.args.get("actions") or [] for a in self._clause(table, clause)]

    def _clause(self, table: TableName, clause: exp.Expression) -> list[DdlAction]:
        if isinstance(clause, exp.ColumnDef):
            column, _ = self._column(clause)
            after, first = _position(clause)
            exists = bool(clause.args.get("exists"))
            return [AddColumn(table, column, after, first, exists)]
        if isinstance(clause, exp.ModifyColumn):
            column, _ = self._column(clause.this)
            after, first = _position(clause.this)
            old = clause.args.get("rename_from")
            if old is not None and old.name != column.name:
                return [RenameColumn(table, old.name, column.name, column, after, first)]
            return [ModifyColumn(table, column, after, first)]
        if isinstance(clause, exp.RenameColumn):
            return [RenameColumn(table, clause.this.name, clause.args["to"].name)]
        if isinstance(clause, exp.AlterRename):
            return [RenameTable(table, self._table(clause.this))]
        if isinstance(clause, exp.Drop):
            return self._drop_clause(table, clause)
        if isinstance(clause, exp.DropPrimaryKey):
            return [SetPrimaryKey(table, ())]
        if isinstance(clause, exp.AddConstraint):
            pk = clause.find(exp.PrimaryKey)
            if pk is not None:
                return [SetPrimaryKey(table, _column_names(pk))]
            index = clause.find(exp.IndexColumnConstraint, exp.UniqueColumnConstraint)
            what = "INDEX" if index is not None else "CONSTRAINT"
            return [NoOp(f"ALTER TABLE ADD {what}", "an index or constraint changes no column")]
        if isinstance(clause, exp.AlterColumn):
            data_type = clause.args.get("dtype")
            if isinstance(data_type, exp.DataType):  # dialects with ALTER COLUMN ... TYPE
                return [ModifyColumn(table, ColumnDef(clause.this.name, type_sql(data_type)))]
            return [NoOp("ALTER TABLE ALTER COLUMN", "a default changes no stored value")]
        if type(clause) in _NO_CHANGE_CLAUSES:
            return [NoOp(*_NO_CHANGE_CLAUSES[type(clause)])]
        raise self.fail(f"unsupported ALTER TABLE clause {clause.sql(dialect=self.dialect)!r}")

    def _drop_clause(self, table: TableName, clause: exp.Drop) -> list[DdlAction]:
        what = str(clause.args.get("kind", "")).upper()
        if what == "COLUMN":
            exists = bool(clause.args.get("exists"))
            columns = clause.args.get("tables") or []
            return [DropColumn(table, column.name, exists) for column in columns]
        if what in ("INDEX", "KEY", "FOREIGN KEY", "CHECK", "CONSTRAINT"):
            return [NoOp(f"ALTER TABLE DROP {what}", "an index or constraint changes no column")]
        raise self.fail(f"unsupported ALTER TABLE clause {clause.sql(dialect=self.dialect)!r}")

    def _command(self, tokens: list[Token], kind: str) -> list[DdlAction]:
        """A statement sqlglot keeps as an opaque command (GRANT, CREATE USER, some ALTER TABLE)."""
        name = _alter_table_name(tokens)
        if name is not None:
            return self._by_clause(tokens, name)
        return [NoOp(kind, "changes no table")]

    def _by_clause(self, tokens: list[Token], name: tuple[int, int]) -> list[DdlAction]:
        """An ALTER TABLE that sqlglot cannot parse whole, as one ``ALTER TABLE t <clause>`` per
        clause (``name``: where the table name's tokens start and end): ``ALTER TABLE t ADD (a
        int, b int), DROP c`` is read as ``ALTER TABLE t ADD (a int, b int)``, ``ALTER TABLE t
        DROP c``."""
        start, end = name
        prefix = f"ALTER TABLE {self.text[tokens[start].start : tokens[end - 1].end + 1]} "
        actions: list[DdlAction] = []
        for clause in _split_at_commas(tokens[end:]):
            if clause:  # sqlglot, too, reads "DROP a,, DROP b" as two clauses
                actions.extend(self._alter_clause(prefix, clause))
        return actions or [NoOp("ALTER TABLE", "changes no table")]

    def _alter_clause(self, prefix: str, clause: list[Token]) -> list[DdlAction]:
        """The actions of one clause (``prefix`` is ``ALTER TABLE <name> ``); an opaque clause
        that may change the table raises naming the clause."""
        text = self.text[clause[0].start : clause[-1].end + 1]
        node, why = self._parse_alter(prefix + text)
        if isinstance(node, exp.Alter):
            return self._alter_actions(node)
        elements = _add_list(clause)
        if elements is not None:  # ADD [COLUMN] (a int, b int): one ADD per element
            return [a for e in elements for a in self._add_element(prefix, text, e)]
        if node is not None and not _may_change_table(clause):
            return []  # e.g. CONVERT TO CHARACTER SET: changes no column the lake keeps
        raise self.fail(f"sqlglot cannot parse the ALTER TABLE clause {text!r}: {why}")

    def _add_element(self, prefix: str, clause: str, element: list[Token]) -> list[DdlAction]:
        """One element of ``ADD (a int, INDEX (a))`` read as ``ALTER TABLE <name> ADD a int``."""
        text = self.text[element[0].start : element[-1].end + 1]
        node, why = self._parse_alter(f"{prefix}ADD {text}")
        if isinstance(node, exp.Alter):
            return self._alter_actions(node)
        where = f"the ALTER TABLE clause {clause!r} at {text!r}"
        raise self.fail(f"sqlglot cannot parse {where}: {why}")

    def _parse_alter(self, statement: str) -> tuple[exp.Expr | None, str]:
        """sqlglot's reading of a one-clause ALTER TABLE (an Alter, or an opaque Command), or
        None; and why it is no Alter."""
        try:
            return self.dialect.parse(statement)[0], "it may change the table"
        except SqlglotError as e:
            return None, _describe(e)

    def _rename(self, body: str) -> list[DdlAction]:
        """``RENAME TABLE a TO b[, c TO d]`` (sqlglot keeps RENAME as an opaque command)."""
        tokens = _tokenize(body, self.dialect, self.text)
        if not tokens or tokens[0].text.upper() not in ("TABLE", "TABLES"):
            word = tokens[0].text.upper() if tokens else ""
            return [NoOp(f"RENAME {word}".strip(), "renames no table")]
        actions: list[DdlAction] = []
        for pair in _split_at_commas(tokens[1:]):
            to = [i for i, t in enumerate(pair) if _is_keyword(t, "TO")]
            if len(to) != 1 or to[0] in (0, len(pair) - 1):
                raise self.fail("expected RENAME TABLE <old> TO <new>[, <old> TO <new>]")
            old, new = pair[: to[0]], pair[to[0] + 1 :]
            actions.append(RenameTable(self._name(body, old), self._name(body, new)))
        return actions

    def _name(self, body: str, tokens: list[Token]) -> TableName:
        text = body[tokens[0].start : tokens[-1].end + 1]
        try:
            return self._table(exp.to_table(text, dialect=self.dialect))
        except ParseError as e:
            raise _parse_error(self.text, e) from None


_CHANGING_ALTER_WORDS = frozenset(
    {"ADD", "DROP", "MODIFY", "CHANGE", "RENAME", "EXCHANGE", "TRUNCATE", "REORGANIZE"}
    | {"COALESCE", "REMOVE", "DISCARD", "IMPORT", "PARTITION"}
)


_NO_CHANGE_CLAUSES: dict[type[exp.Expression], tuple[str, str]] = {
    exp.RenameIndex: ("ALTER TABLE RENAME INDEX", "an index changes no column"),
    exp.AlterIndex: ("ALTER TABLE ALTER INDEX", "an index changes no column"),
    exp.ForceProperty: ("ALTER TABLE FORCE", "rebuilding a table changes no column"),
}
_QUOTED = (TokenType.IDENTIFIER, TokenType.STRING)
_DEPTH = {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}


def _is_keyword(token: Token, word: str) -> bool:
    return token.token_type not in _QUOTED and token.text.upper() == word


def _may_change_table(tokens: list[Token]) -> bool:
    """Whether an ALTER TABLE text sqlglot keeps opaque has a word that may change the table."""
    words = {t.text.upper() for t in tokens if t.token_type not in _QUOTED}
    return bool(words & _CHANGING_ALTER_WORDS)


def _describe(error: SqlglotError) -> str:
    """sqlglot's message without a line and column (they count in a statement made up here)."""
    descriptions = [e["description"] for e in error.errors] if isinstance(error, ParseError) else []
    return "; ".join(d for d in descriptions if d) or str(error)


def _alter_table_name(tokens: list[Token]) -> tuple[int, int] | None:
    """Where the table name of ``ALTER [ONLINE] [IGNORE] TABLE [db.]name ...`` starts and ends
    (token indexes); None for any other statement."""
    i = 1
    while i < len(tokens) and any(_is_keyword(tokens[i], w) for w in ("ONLINE", "IGNORE")):
        i += 1
    if tokens[0].token_type != TokenType.ALTER or i + 1 >= len(tokens):
        return None
    if not _is_keyword(tokens[i], "TABLE"):
        return None
    dotted = i + 3 < len(tokens) and tokens[i + 2].token_type == TokenType.DOT
    return i + 1, i + (4 if dotted else 2)


def _split_at_commas(tokens: list[Token]) -> list[list[Token]]:
    """Split at commas outside parentheses: ``decimal(10,2)``, ``'x,y'`` and a backquoted name
    with a comma stay whole (a quoted text is one token)."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.COMMA and depth == 0:
            parts.append([])
            continue
        depth += _DEPTH.get(token.token_type, 0)
        parts[-1].append(token)
    return parts


def _add_list(clause: list[Token]) -> list[list[Token]] | None:
    """The elements of ``ADD [COLUMN] (a int, b int, INDEX (a))``; None for any other clause."""
    i = 2 if len(clause) > 2 and _is_keyword(clause[1], "COLUMN") else 1
    if len(clause) <= i or not _is_keyword(clause[0], "ADD"):
        return None
    depth = 0
    for token in clause[i:-1]:
        depth += _DEPTH.get(token.token_type, 0)
        if depth <= 0:  # "ADD a int" or "ADD (a int) FIRST": not one parenthesized list
            return None
    if depth != 1 or clause[-1].token_type != TokenType.R_PAREN:
        return None
    elements = [e for e in _split_at_commas(clause[i + 1 : -1]) if e]
    return elements or None


def _statement_kind(node: exp.Expression, tokens: list[Token]) -> str:
    """``CREATE DATABASE``, ``DROP INDEX``, ``ALTER TABLE``, ``GRANT``, ``FLUSH``..."""
    if isinstance(node, exp.Create | exp.Drop | exp.Alter) and node.args.get("kind"):
        verb = {exp.Create: "CREATE", exp.Drop: "DROP", exp.Alter: "ALTER"}[type(node)]
        return f"{verb} {str(node.args['kind']).upper()}"
    words = [t.text.upper() for t in tokens[:2]]
    if words[0] in ("CREATE", "DROP", "ALTER") and len(words) > 1:
        return " ".join(words)
    return words[0]


# ---- column types as MySQL text -------------------------------------------------------------

_T = exp.DataType.Type
_INTEGER_NAMES = {
    _T.TINYINT: "tinyint",
    _T.SMALLINT: "smallint",
    _T.MEDIUMINT: "mediumint",
    _T.INT: "int",
    _T.BIGINT: "bigint",
}
_UNSIGNED = {
    _T.UTINYINT: "tinyint",
    _T.USMALLINT: "smallint",
    _T.UMEDIUMINT: "mediumint",
    _T.UINT: "int",
    _T.UBIGINT: "bigint",
    _T.UDECIMAL: "decimal",
    _T.UDOUBLE: "double",
}
_NAMES = {
    _T.NCHAR: "char",
    _T.NVARCHAR: "varchar",
    _T.TIMESTAMPTZ: "timestamp",
    _T.TIMESTAMPLTZ: "timestamp",
}


def type_sql(data_type: exp.DataType) -> str:
    """A sqlglot column type as MySQL text that :func:`~cdclake.formats.mysql_types.spark_type`
    reads.

    >>> type_sql(exp.DataType.build("BIGINT(20) UNSIGNED", dialect="mysql"))
    'bigint unsigned'
    """
    t = data_type.this
    params = [p.sql(dialect="mysql") for p in data_type.expressions]
    if t in (_T.ENUM, _T.SET):
        labels = ",".join("'" + p.name.replace("'", "''") + "'" for p in data_type.expressions)
        return f"{t.value.lower()}({labels})"
    if t == _T.BOOLEAN:
        return "tinyint(1)"
    if t == _T.SERIAL:
        return "bigint unsigned"
    if t in _INTEGER_NAMES:
        return "tinyint(1)" if t == _T.TINYINT and params == ["1"] else _INTEGER_NAMES[t]
    if t in _UNSIGNED:
        name = _UNSIGNED[t]
        keep = name in ("decimal", "double") or (name == "tinyint" and params == ["1"])
        args = f"({','.join(params)})" if params and keep else ""
        return f"{name}{args} unsigned"
    name = _NAMES.get(t, t.value.lower())
    return f"{name}({','.join(params)})" if params else name


def constant_value(default: str, dialect: str = "mysql") -> str | int | bool | None:
    """A DEFAULT expression's value when it is a constant literal; None for NULL, for an
    expression (``CURRENT_TIMESTAMP``, ``uuid()``) and for text that does not parse.

    >>> constant_value("'dflt'"), constant_value("-5"), constant_value("1.50")
    ('dflt', -5, '1.50')
    >>> constant_value("CURRENT_TIMESTAMP") is None, constant_value("NULL") is None
    (True, True)
    """
    try:
        node = _parse_one(default, dialect)
    except SqlglotError:
        return None
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, exp.Boolean) and not negative:
        return bool(node.this)
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return None if negative else node.this
    number = node.this  # a non-integer stays text, so that a DECIMAL column keeps every digit
    if number.lstrip("+").isdigit():
        return -int(number) if negative else int(number)
    return f"-{number}" if negative else number


def _parse_one(text: str, dialect: str) -> exp.Expr:
    from sqlglot import parse_one

    return parse_one(text, read=_dialect(dialect))
