"""The format registry: one module per format, registered here by name, explicitly.

A format's module is imported when the format is first asked for, so the names (for help texts
and config validation) cost no import of Spark.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from cdclake.errors import ConfigError

if TYPE_CHECKING:
    from cdclake.formats.base import Format

_REGISTRY: dict[str, tuple[str, str]] = {  # name -> (module, class), in detection order
    "debezium": ("cdclake.formats.debezium", "DebeziumFormat"),
    "canal": ("cdclake.formats.canal", "CanalFormat"),
    "ckafka": ("cdclake.formats.ckafka", "CKafkaFormat"),
    "dataworks": ("cdclake.formats.dataworks", "DataWorksFormat"),
}

AUTO = "auto"


def names() -> list[str]:
    """Names of the registered formats, in detection order.

    >>> names()
    ['debezium', 'canal', 'ckafka', 'dataworks']
    """
    return list(_REGISTRY)


def choices(auto: bool = True) -> str:
    """The names as a help text says them: ``debezium, canal, ckafka, dataworks or auto``."""
    listed = [*names(), AUTO] if auto else names()
    return ", ".join(listed[:-1]) + " or " + listed[-1]


def get(name: str) -> Format:
    """The format registered as ``name``.

    >>> get("debezium").name
    'debezium'
    """
    try:
        module, cls = _REGISTRY[name]
    except KeyError:
        supported = ", ".join([*_REGISTRY, AUTO])
        raise ConfigError(f"unknown format {name!r}; supported: {supported}") from None
    fmt: Format = getattr(import_module(module), cls)()
    return fmt


def all_formats() -> list[Format]:
    return [get(name) for name in _REGISTRY]
