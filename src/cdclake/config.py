"""Typed configuration. Option names follow what Spark/Delta AUTO CDC and Flink users know."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cdclake.errors import ConfigError
from cdclake.formats.base import DecodeOptions
from cdclake.target_layout import KEEP_BATCHES

if TYPE_CHECKING:
    from cdclake.apply.schema_changes import DdlPolicy

DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
DEFAULT_MAINTAIN_BUDGET = timedelta(minutes=1)
"""How long one maintenance inside a stream may hold the stream up (it stops after the table
that takes it past this; the next maintenance goes on from there)."""


def parse_primary_key(spec: str, option: str = "--primary-key") -> tuple[str, tuple[str, ...]]:
    """``TABLE=COL[,COL]`` -> (table, columns).

    >>> parse_primary_key("inventory.customers=id")
    ('inventory.customers', ('id',))
    """
    table, sep, cols = spec.partition("=")
    columns = tuple(c.strip() for c in cols.split(",") if c.strip())
    if not sep or not table.strip() or not columns:
        raise ConfigError(
            f"{option} {spec!r}: expected TABLE=COL[,COL], e.g. inventory.customers=id"
        )
    return table.strip(), columns


def parse_scd_type(specs: list[str]) -> int | dict[str, int]:
    """``--scd-type 2`` (every table) or ``TABLE=N`` (a table or glob), repeatable.

    >>> parse_scd_type(["shop.orders=2", "shop.audit_*=2"])
    {'shop.orders': 2, 'shop.audit_*': 2}
    """
    if not specs:
        return 1
    if len(specs) == 1 and "=" not in specs[0]:
        return _scd_number(specs[0], specs[0])
    out: dict[str, int] = {}
    for spec in specs:
        table, sep, n = spec.partition("=")
        if not sep or not table.strip():
            raise ConfigError(
                f"--scd-type {spec!r}: expected 1, 2 or TABLE=1|2 (a glob is allowed: shop.*=2)"
            )
        out[table.strip()] = _scd_number(n, spec)
    return out


def _scd_number(text: str, spec: str) -> int:
    if text.strip() not in ("1", "2"):
        raise ConfigError(f"--scd-type {spec!r}: the SCD type is 1 or 2, got {text.strip()!r}")
    return int(text)


def parse_kafka_option(spec: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value) for the Kafka source.

    >>> parse_kafka_option("kafka.security.protocol=SASL_SSL")
    ('kafka.security.protocol', 'SASL_SSL')
    """
    return parse_setting(spec, "--kafka-option", "kafka.security.protocol=SASL_SSL")


def parse_setting(
    spec: str, option: str = "--conf", example: str = "spark.a.b=c"
) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value), the error naming ``option`` and an ``example``.

    >>> parse_setting("spark.sql.shuffle.partitions=8")
    ('spark.sql.shuffle.partitions', '8')
    """
    key, sep, value = spec.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{option} {spec!r}: expected KEY=VALUE, e.g. {example}")
    return key.strip(), value


def parse_mapping(spec: str) -> tuple[str, str]:
    """``SOURCE=TARGET`` -> (source, target).

    >>> parse_mapping("shop.public.orders=orders")
    ('shop.public.orders', 'orders')
    """
    source, sep, target = spec.partition("=")
    if not sep or not source.strip() or not target.strip():
        raise ConfigError(f"--map-table {spec!r}: expected SOURCE=TARGET, e.g. shop.public.t=t")
    return source.strip(), target.strip()


DropPolicy = Literal["keep", "drop"]
"""What a DROP COLUMN / DROP TABLE does to the Delta table."""
RenamePolicy = Literal["follow", "keep"]
BinaryEncoding = Literal["latin1", "base64", "hex"]
"""How canal and CKafka producers write binary values as text (canal's own: ``latin1``)."""
"""What a RENAME TABLE does: follow it (rename the Delta table) or keep the old name."""


class Maintenance(BaseModel):
    """How a stream maintains its own target between batches (:mod:`cdclake.ops.maintain`):
    after every ``every`` batches, or after the first batch that ends ``interval`` after the last
    maintenance (or the start); one maintenance begins no table once ``budget`` has gone (the
    next goes on from there; None: every table each time); what it keeps of cdclake's own
    records (None: kept)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    every: int | None = Field(default=None, ge=1)
    interval: timedelta | None = None
    budget: timedelta | None = DEFAULT_MAINTAIN_BUDGET
    tombstone_retention: timedelta | None = None
    batches_retention: timedelta | None = None
    quarantine_retention: timedelta | None = None
    keep_batches: int = Field(default=KEEP_BATCHES, ge=11)  # of _cdc_sources, row by row

    @property
    def on(self) -> bool:
        return self.every is not None or self.interval is not None


class KafkaSource(BaseModel):
    """A Kafka input: Structured Streaming's Kafka source (:mod:`cdclake.run.streaming`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap: str | None = None
    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    starting_offsets: str = "earliest"
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: int | None = Field(default=None, ge=1)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=1)
    options: dict[str, str] = Field(default_factory=dict)  # passed to the source as they are

    @property
    def subscription(self) -> str:
        """What the query reads, as a person says it."""
        if self.topic_pattern:
            return f"topic pattern {self.topic_pattern!r}"
        return f"topics {', '.join(self.topics)}"


KAFKA_OPTIONS = {
    "bootstrap": "kafka_bootstrap",
    "topics": "topics",
    "topic_pattern": "topic_pattern",
    "starting_offsets": "starting_offsets",
    "fail_on_data_loss": "fail_on_data_loss",
    "max_offsets_per_trigger": "max_offsets_per_trigger",
    "max_message_bytes": "max_message_bytes",
    "options": "kafka_options",
}
""":class:`KafkaSource`'s fields by the flat names ``ApplyConfig`` also takes."""
_KAFKA_INPUT = ("bootstrap", "topics", "topic_pattern")

MAINTENANCE_OPTIONS = {
    "every": "maintain_every",
    "interval": "maintain_interval",
    "budget": "maintain_budget",
    "tombstone_retention": "tombstone_retention",
    "batches_retention": "batches_retention",
    "quarantine_retention": "quarantine_retention",
    "keep_batches": "keep_batches",
}
""":class:`Maintenance`'s fields by the flat names ``ApplyConfig`` also takes (the CLI's
options: ``maintain_every`` is ``--maintain-every``)."""
PARTS: dict[str, tuple[type[BaseModel], dict[str, str]]] = {
    "maintenance": (Maintenance, MAINTENANCE_OPTIONS),
    "kafka": (KafkaSource, KAFKA_OPTIONS),
}
"""The parts of :class:`ApplyConfig`: each field's model and its fields' flat names."""


class ApplyConfig(BaseModel):
    """Everything ``cdclake apply`` needs; the CLI only fills this in. The stream's maintenance
    is :class:`Maintenance` (``maintenance=``), or its fields by their flat names
    (:data:`MAINTENANCE_OPTIONS`: ``maintain_every=10, tombstone_retention=...``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = "debezium"
    inputs: tuple[str, ...] = ()
    target: str
    keys: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    stored_as_scd_type: Literal[1, 2] | dict[str, Literal[1, 2]] = 1
    track_history_column_list: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    track_history_except_column_list: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    fail_on_bad_input: bool = False
    parallel_tables: int = Field(default=4, ge=1)
    stream: bool = False
    checkpoint: str | None = None
    available_now: bool = False
    trigger_interval: str = "10 seconds"
    tinyint1_as_boolean: bool = False
    source_timezone: str = "UTC"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    table_map: dict[str, str] = Field(default_factory=dict)
    drop_column: DropPolicy = "keep"
    drop_table: DropPolicy = "keep"
    rename_table: RenamePolicy = "follow"
    kafka: KafkaSource | None = None  # the input is a Kafka stream (cdclake.run.streaming)
    binary_encoding: BinaryEncoding = "latin1"
    # Prometheus' /metrics while the run lasts (see cdclake.ops.metrics); None: not served
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"
    maintenance: Maintenance = Field(default_factory=Maintenance)
    # register every table in this database of the session's catalog (cdclake.ops.catalog)
    catalog_database: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]+$")
    # apply only complete source transactions (cdclake.apply.consistency); None: no timeout
    consistent: bool = False
    consistent_timeout: timedelta | None = None

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        """The flat names as their parts: ``maintain_every=10`` as
        ``maintenance=Maintenance(every=10)``, ``kafka_bootstrap=...`` as
        ``kafka=KafkaSource(bootstrap=...)``."""
        if not isinstance(data, dict):
            return data
        for part, (model, names) in PARTS.items():
            flat = {f: o for f, o in names.items() if o in data}
            if flat:
                data = dict(data)
                given = data.pop(part, None)
                nested = given.model_dump() if isinstance(given, model) else dict(given or {})
                nested.update({f: data.pop(o) for f, o in flat.items()})
                data[part] = nested
        kafka = data.get("kafka")
        if isinstance(kafka, KafkaSource):
            kafka = kafka.model_dump()
        if isinstance(kafka, dict) and not any(kafka.get(f) for f in _KAFKA_INPUT):
            data = {**data, "kafka": None}  # settings without a broker or topic: no Kafka input
        return data

    @field_validator("target")
    @classmethod
    def _absolute(cls, v: str) -> str:
        from cdclake.paths import to_uri

        return to_uri(v)

    def decode_options(self) -> DecodeOptions:
        return DecodeOptions(
            keys=dict(self.keys),
            tinyint1_as_boolean=self.tinyint1_as_boolean,
            source_timezone=self.source_timezone,
            binary_encoding=self.binary_encoding,
        )

    def ddl_policy(self) -> DdlPolicy:
        from cdclake.apply.schema_changes import DdlPolicy

        return DdlPolicy(
            drop_column=self.drop_column,
            drop_table=self.drop_table,
            rename_table=self.rename_table,
            tinyint1_as_boolean=self.tinyint1_as_boolean,
        )

    def check(self) -> ApplyConfig:
        if self.consistent:
            from cdclake.apply.consistency import rule_for

            rule_for(self.format)
        elif self.consistent_timeout is not None:
            raise ConfigError("--consistent-timeout applies with --consistent: give it too")
        m = self.maintenance
        retained = [
            n
            for n in ("tombstone_retention", "batches_retention", "quarantine_retention")
            if getattr(m, n) is not None
        ] + (["keep_batches"] if m.keep_batches != KEEP_BATCHES else [])
        if retained and not m.on:
            flag = "--" + retained[0].replace("_", "-")
            raise ConfigError(
                f"{flag} is applied by the stream's maintenance: give --maintain-every N too "
                "(or run cdclake maintain with it)"
            )
        if self.kafka is not None and self.kafka.bootstrap is not None:
            return self._check_kafka(self.kafka)
        if self.kafka is not None and (self.kafka.topics or self.kafka.topic_pattern):
            raise ConfigError("--topic/--topic-pattern need --kafka-bootstrap HOST:PORT")
        if not self.inputs:
            raise ConfigError("no input: give --input PATH (a JSON-lines file or a directory)")
        if self.stream and not self.checkpoint:
            raise ConfigError("--stream needs --checkpoint DIR (where the query keeps its offsets)")
        return self

    def _check_kafka(self, kafka: KafkaSource) -> ApplyConfig:
        if self.inputs:
            raise ConfigError(
                "give either --kafka-bootstrap or input paths, not both "
                f"(inputs: {list(self.inputs)})"
            )
        if bool(kafka.topics) == bool(kafka.topic_pattern):
            raise ConfigError(
                "--kafka-bootstrap needs --topic T (one or more) or --topic-pattern REGEX, "
                f"exactly one of them (got topics {list(kafka.topics)}, "
                f"pattern {kafka.topic_pattern!r})"
            )
        if not self.checkpoint:
            raise ConfigError(
                "--kafka-bootstrap needs --checkpoint DIR (where the query keeps its offsets)"
            )
        return self
