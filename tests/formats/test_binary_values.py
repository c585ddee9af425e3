"""Binary columns of canal and CKafka: ISO-8859-1 text by default (one character per byte, as
canal writes them; issue 11: CKafka's were read as base64 and quarantined), base64 or hex with
``binary_encoding``. Every byte value 0x00-0xFF round-trips."""

from __future__ import annotations

import base64
import json

import pytest
from builders import msgs
from pyspark.sql import SparkSession
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from cdclake.decode import decode
from cdclake.formats.base import DecodeOptions
from cdclake.sources import raw_from_lines

ALL_BYTES = bytes(range(256))
ENCODED = {
    "latin1": ALL_BYTES.decode("latin-1"),
    "base64": base64.b64encode(ALL_BYTES).decode(),
    "hex": ALL_BYTES.hex().upper(),
}
TABLE = StructType([StructField("id", IntegerType()), StructField("avatar", BinaryType())])


def _decoded(spark: SparkSession, fmt: str, text: str, encoding: str | None) -> tuple:
    row = {"id": 1, "avatar": text}
    if fmt == "canal":
        line = msgs.canal(1, row, mysql={"id": "int(11)", "avatar": "blob"})
    else:
        line = msgs.ckafka(1, row)
    options = DecodeOptions(**({"binary_encoding": encoding} if encoding else {}))
    [r] = decode(raw_from_lines(spark, [line]), fmt, options, lambda _: TABLE).collect()
    if r["error"] is not None:
        return r["error"], None
    return None, bytes(r["after"].toPython()["avatar"])


@pytest.mark.parametrize("fmt", ["canal", "ckafka"])
@pytest.mark.parametrize("encoding", ["latin1", "base64", "hex"])
def test_every_byte_round_trips(spark: SparkSession, fmt: str, encoding: str) -> None:
    default = None if encoding == "latin1" else encoding
    assert _decoded(spark, fmt, ENCODED[encoding], default) == (None, ALL_BYTES)


@pytest.mark.parametrize("fmt", ["canal", "ckafka"])
def test_text_that_is_not_in_the_encoding_is_quarantined(spark: SparkSession, fmt: str) -> None:
    error, value = _decoded(spark, fmt, "zz-not-hex", "hex")
    assert value is None
    assert error.startswith("column avatar: value 'zz-not-hex' does not fit ")
    error, _ = _decoded(spark, fmt, "snow \u2603 man", None)  # U+2603 is not one byte
    assert error.startswith("column avatar: value 'snow \u2603 man' does not fit ")


def test_the_json_text_of_all_bytes_is_what_canal_writes() -> None:
    """The golden input: canal escapes control characters, the rest are Latin-1 letters."""
    text = json.dumps(ENCODED["latin1"])
    assert text.startswith('"\\u0000\\u0001') and json.loads(text).encode("latin-1") == ALL_BYTES


@pytest.mark.parametrize("fmt", ["canal", "ckafka"])
def test_batches_decoded_with_other_encodings_keep_their_own(spark: SparkSession, fmt: str) -> None:
    """A session replays a decode's plan for later batches of the same schema
    (:mod:`cdclake._spark.plan_cache`): the encoding is part of what it is keyed on, so a batch
    read as hex after one read as base64 (same table, same column types) is not read as base64
    again."""
    for encoding in ("base64", "hex", "latin1", "hex", "base64"):
        default = None if encoding == "latin1" else encoding
        assert _decoded(spark, fmt, ENCODED[encoding], default) == (None, ALL_BYTES), encoding
