"""Typed errors. Every message names the offending value and what was expected."""

from __future__ import annotations


class CdclakeError(Exception):
    """Base of every error cdclake raises on purpose."""


class ConfigError(CdclakeError, ValueError):
    """A bad argument or option (CLI or API)."""


class DecodeError(CdclakeError):
    """A message or schema that a format cannot decode."""


class BadInputError(CdclakeError):
    """Raised with ``fail_on_bad_input``: names where the bad record is and why it is bad."""
