"""Typed configuration. Option names follow what Spark/Delta AUTO CDC and Flink users know."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cdclake.errors import ConfigError
from cdclake.formats.base import DecodeOptions


def parse_primary_key(spec: str) -> tuple[str, tuple[str, ...]]:
    """``TABLE=COL[,COL]`` -> (table, columns).

    >>> parse_primary_key("inventory.customers=id")
    ('inventory.customers', ('id',))
    """
    table, sep, cols = spec.partition("=")
    columns = tuple(c.strip() for c in cols.split(",") if c.strip())
    if not sep or not table.strip() or not columns:
        raise ConfigError(
            f"--primary-key {spec!r}: expected TABLE=COL[,COL], e.g. inventory.customers=id"
        )
    return table.strip(), columns


class ApplyConfig(BaseModel):
    """Everything ``cdclake apply`` needs; the CLI only fills this in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = "debezium"
    inputs: tuple[str, ...] = ()
    target: str
    keys: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    stored_as_scd_type: Literal[1] = 1
    fail_on_bad_input: bool = False
    stream: bool = False
    checkpoint: str | None = None
    available_now: bool = False
    trigger_interval: str = "10 seconds"
    tinyint1_as_boolean: bool = False
    source_timezone: str = "UTC"

    @field_validator("target")
    @classmethod
    def _absolute(cls, v: str) -> str:
        return str(Path(v).absolute())

    def decode_options(self) -> DecodeOptions:
        return DecodeOptions(
            primary_keys=dict(self.keys),
            tinyint1_as_boolean=self.tinyint1_as_boolean,
            source_timezone=self.source_timezone,
        )

    def check(self) -> ApplyConfig:
        if not self.inputs:
            raise ConfigError("no input: give --input PATH (a JSON-lines file or a directory)")
        if self.stream and not self.checkpoint:
            raise ConfigError("--stream needs --checkpoint DIR (where the query keeps its offsets)")
        return self
