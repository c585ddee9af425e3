"""Talk to the conformance databases through their command-line clients (no Python driver needed).

`psql` and `mariadb` come with Debian's server packages (scripts/postgres.sh, scripts/mariadb.sh);
connection settings follow those scripts' environment variables and defaults.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Literal

Dialect = Literal["pg", "mariadb"]


@dataclass(frozen=True)
class Connection:
    """Where a workload database listens (127.0.0.1 only) and who to log in as."""

    dialect: Dialect
    port: int
    user: str = "cdclake"
    password: str = "cdclake"
    database: str = "cdclake"
    host: str = "127.0.0.1"

    @classmethod
    def from_env(cls, dialect: Dialect) -> Connection:
        """The connection scripts/postgres.sh / mariadb.sh set up, from the same variables."""
        if dialect == "pg":
            return cls(
                "pg",
                int(os.environ.get("PG_PORT", "15432")),
                os.environ.get("PG_USER", "cdclake"),
                os.environ.get("PG_PASSWORD", "cdclake"),
                os.environ.get("PG_DB", "cdclake"),
            )
        if dialect == "mariadb":
            return cls(
                "mariadb",
                int(os.environ.get("MARIADB_PORT", "13306")),
                os.environ.get("MARIADB_USER", "cdclake"),
                os.environ.get("MARIADB_PASSWORD", "cdclake"),
                os.environ.get("MARIADB_DB", "cdclake"),
            )
        raise ValueError(f"unknown dialect {dialect!r}; expected 'pg' or 'mariadb'")


def run_sql(conn: Connection, sql: str, *, tuples_only: bool = False) -> str:
    """Run a script through the dialect's client and return its standard output.

    With ``tuples_only`` the output is one line per row, columns tab-separated, no headers and
    (MariaDB) no escaping. Any SQL error stops the script and raises ``RuntimeError`` with the
    client's message.
    """
    env = dict(os.environ)
    if conn.dialect == "pg":
        env["PGPASSWORD"] = conn.password
        env["PGOPTIONS"] = "-c intervalstyle=iso_8601 -c datestyle=ISO -c timezone=UTC"
        cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", conn.host, "-p", str(conn.port)]
        cmd += ["-U", conn.user, "-d", conn.database]
        if tuples_only:
            cmd += ["-A", "-t", "-F", "\t"]
    else:
        env["MYSQL_PWD"] = conn.password
        cmd = ["mariadb", "--no-defaults", "--default-character-set=utf8mb4", "-h", conn.host]
        cmd += ["-P", str(conn.port), "-u", conn.user, "--init-command=SET time_zone='+00:00'"]
        cmd += [conn.database]
        if tuples_only:
            cmd += ["-N", "-B", "-r"]
    done = subprocess.run(cmd, input=sql, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{cmd[0]} on 127.0.0.1:{conn.port} failed with exit code {done.returncode}: "
            f"{done.stderr.strip()[:2000]}"
        )
    return done.stdout


def quote_text(dialect: Dialect, value: str) -> str:
    """A string literal: quotes doubled; MariaDB also doubles backslashes (its default escape)."""
    if dialect == "mariadb":
        value = value.replace("\\", "\\\\")
    return "'" + value.replace("'", "''") + "'"


def quote_bytes(dialect: Dialect, value: bytes) -> str:
    """A binary literal: PostgreSQL ``'\\x…'::bytea``, MariaDB ``X'…'``."""
    if dialect == "pg":
        return "'\\x" + value.hex() + "'::bytea"
    return "X'" + value.hex() + "'"
