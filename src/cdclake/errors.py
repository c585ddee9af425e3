"""Typed errors. Every message names the offending value and what was expected."""

from __future__ import annotations


class CdclakeError(Exception):
    """Base of every error cdclake raises on purpose."""


class ConfigError(CdclakeError, ValueError):
    """A bad argument or option (CLI or API)."""


class DecodeError(CdclakeError):
    """A message or schema that a format cannot decode."""


class TableError(CdclakeError):
    """A target table cdclake cannot write (created by something else with other types)."""


class BadInputError(CdclakeError):
    """Raised with ``fail_on_bad_input``: names where the bad record is and why it is bad."""


def one_line(e: BaseException, limit: int = 400) -> str:
    """An unexpected failure (Spark, Delta, the file system, the broker) as one line: the
    first line of its message, without the JVM stack trace that Spark appends."""
    java = getattr(e, "java_exception", None)
    text = str(java.toString()) if java is not None else str(e)
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
    first = lines[0] if lines else type(e).__name__
    if not isinstance(e, CdclakeError) and type(e).__name__ not in first:
        first = f"{type(e).__name__}: {first}"
    return first if len(first) <= limit else first[: limit - 1] + "…"


def is_write_conflict(e: BaseException) -> bool:
    """Whether ``e`` is Delta's answer to a concurrent commit (``ConcurrentAppendException``,
    ``ConcurrentDeleteReadException`` …, ``DELTA_CONCURRENT_*``, ``ProtocolChangedException``):
    the write changed nothing and can be tried again on the new version."""
    text = f"{type(e).__name__}: {e}"
    return any(k in text for k in ("Concurrent", "DELTA_CONCURRENT", "ProtocolChanged"))
