"""The format registry: one module per format, registered here by name, explicitly."""

from __future__ import annotations

from cdclake.errors import ConfigError
from cdclake.formats.base import Format
from cdclake.formats.debezium import DebeziumFormat

_REGISTRY: dict[str, type[Format]] = {
    DebeziumFormat.name: DebeziumFormat,
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
