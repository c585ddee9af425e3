"""The key columns are ``keys`` everywhere (issue 35); ``primary_keys``, their earlier name in
the Python API, still works. Pure logic: no Spark."""

from __future__ import annotations

import inspect

from cdclake.formats.base import DecodeOptions
from cdclake.run.runner import read_changes


def test_decode_options_take_keys_and_their_earlier_name_alike() -> None:
    keys = {"shop.items": ("id",)}
    by_new, by_old = DecodeOptions(keys=keys), DecodeOptions(primary_keys=keys)
    assert by_new == by_old and by_old.keys == keys
    assert repr(by_new) == repr(by_old)  # the decode plans' cache key: the same plan
    both = DecodeOptions(keys={"a": ("k",)}, primary_keys={"a": ("old",), "b": ("id",)})
    assert both.keys == {"a": ("k",), "b": ("id",)}  # the new name wins where both name a table


def test_read_changes_names_the_keys_keys() -> None:
    params = inspect.signature(read_changes).parameters
    assert params["keys"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "primary_keys" in params  # scripts written against the earlier name keep working
