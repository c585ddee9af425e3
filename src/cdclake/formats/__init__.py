"""The format registry: one module per format, registered here by name, explicitly."""

from __future__ import annotations

from cdclake.errors import ConfigError
from cdclake.formats.base import Format
from cdclake.formats.canal import CanalFormat
from cdclake.formats.ckafka import CKafkaFormat
from cdclake.formats.dataworks import DataWorksFormat
from cdclake.formats.debezium import DebeziumFormat

_REGISTRY: dict[str, type[Format]] = {
    DebeziumFormat.name: DebeziumFormat,
    CanalFormat.name: CanalFormat,
    CKafkaFormat.name: CKafkaFormat,
    DataWorksFormat.name: DataWorksFormat,
}

AUTO = "auto"


def names() -> list[str]:
    """Names of the registered formats, in detection order."""
    return list(_REGISTRY)


def get(name: str) -> Format:
    """The format registered as ``name``.

    >>> get("debezium").name
    'debezium'
    """
    try:
        return _REGISTRY[name]()
    except KeyError:
        supported = ", ".join([*_REGISTRY, AUTO])
        raise ConfigError(f"unknown format {name!r}; supported: {supported}") from None


def all_formats() -> list[Format]:
    return [cls() for cls in _REGISTRY.values()]
