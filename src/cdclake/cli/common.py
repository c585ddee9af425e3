"""What every command module of the CLI shares: the ``app`` they register on, the consoles,
the Spark session of a run, the one-line failure, the options of several commands.

A leaf: command modules import it, :mod:`cdclake.cli` imports them, nothing imports back.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from cdclake.errors import CdclakeError, one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Land database change streams in Delta Lake tables with Apache Spark.",
    # help as click writes it: option names whole, their texts wrapped, at any width (rich's
    # panels cut a long name such as --track-history-except-columns short at 80 columns)
    rich_markup_mode=None,
)
# Piped output (CI logs, files) gets wide tables instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, soft_wrap=True)

DEBUG_ENV = "CDCLAKE_DEBUG"
_debug = {"on": os.environ.get(DEBUG_ENV, "") not in ("", "0")}


@app.callback()
def _options(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Show Python tracebacks, and cdclake's debug log on stderr (librdkafka's log "
            f"included) (also {DEBUG_ENV}=1)",
        ),
    ] = False,
) -> None:
    """Land database change streams in Delta Lake tables with Apache Spark."""
    _debug["on"] = debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    if _debug["on"]:
        _debug_log()


def _debug_log() -> None:
    """cdclake's loggers at DEBUG on stderr (the Kafka client's log among them, see
    :class:`cdclake.run.kafka_tools.LibrdkafkaLog`); other libraries' at WARNING, as without."""
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    logging.getLogger("cdclake").setLevel(logging.DEBUG)


def _failed(e: Exception, where: str) -> typer.Exit:
    """A failure that is not the data's (disk, permissions, broker, a table cdclake cannot
    write): one line naming it and where, exit status 2; the traceback with ``--debug``."""
    if _debug["on"]:
        raise e
    err.print(f"[red]error:[/red] {escape(f'{where}: {one_line(e)}')}", highlight=False)
    return typer.Exit(2)


@contextmanager
def one_line_errors(where: str) -> Iterator[None]:
    """Every command's failures, one way: a mistake in the user's input or options
    (:class:`~cdclake.errors.CdclakeError`, a config value out of range) as its own line, anything
    else (disk, permissions, broker, Spark) as one line naming it and ``where`` (:func:`_failed`);
    exit status 2 for both, the traceback only with ``--debug``. A command's own exit (status 1
    for stale tables, for nothing written) passes through."""
    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException):
        raise
    except ValidationError as e:
        err.print(f"[red]error:[/red] {escape(validation_message(e))}", highlight=False)
        raise typer.Exit(2) from None
    except CdclakeError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None
    except Exception as e:
        raise _failed(e, where) from None


def kafka_options(pairs: list[str] | None) -> dict[str, str]:
    """``--kafka-option KEY=VALUE``… as the options a Kafka source or sink is given."""
    from cdclake.config import parse_kafka_option

    return dict(parse_kafka_option(o) for o in pairs or [])


def validation_message(e: ValidationError) -> str:
    """A config value out of range, named as its option: ``--keep-batches: …``."""
    from cdclake.config import PARTS

    models = {model.__name__: part for part, (model, _) in PARTS.items()}

    def option(loc: tuple[Any, ...]) -> str:
        if e.title in models:  # a part's fields by their options' names
            loc = (models[e.title], *loc)
        if len(loc) == 2 and loc[0] in PARTS and loc[1] in PARTS[loc[0]][1]:
            loc = (PARTS[loc[0]][1][loc[1]],)
        return "--" + ".".join(map(str, loc)).replace("_", "-")

    return "; ".join(f"{option(x['loc'])}: {x['msg']} (got {x['input']!r})" for x in e.errors())


def _spark(
    master: str | None = None,
    verbose: bool = False,
    *,
    hive: bool = False,
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """The session of a CLI run; the JVM's console output (Ivy, start-up warnings, logs) goes to
    a file under the cache unless ``verbose``. ``hive``: Spark's Hive catalog; ``conf``: the
    user's ``--conf`` settings (both only for a session the CLI builds; see
    :func:`cdclake._spark.builder`)."""
    from cdclake import _spark as s

    log_file = None if verbose else s.new_log_file()
    return s.get_or_create(master=master, log_file=log_file, hive=hive, conf=conf)


def duration(text: str | None, option: str) -> timedelta | None:
    """A duration option's value (``90s``, ``12h``, ``30d``); its error names ``option``."""
    from cdclake.ops.status import parse_duration

    return None if text is None else timedelta(seconds=parse_duration(text, option))


MasterOption = Annotated[
    str | None,
    typer.Option(
        envvar="CDCLAKE_SPARK_MASTER",
        help="Spark master URL, e.g. spark://HOST:7077 (default local[2])",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option(help="Show Spark's own output (else in $CDCLAKE_CACHE/logs)")
]
# Options of several commands, declared once so that they read and behave alike
Inputs = Annotated[
    list[str] | None, typer.Option("--input", help="JSON-lines file or dir (repeatable)")
]
MoreInputs = Annotated[list[str] | None, typer.Argument(help="More input paths")]
PrimaryKeys = Annotated[
    list[str] | None, typer.Option("--primary-key", help="TABLE=COL[,COL] (repeatable)")
]
Tinyint1AsBoolean = Annotated[bool, typer.Option(help="MySQL tinyint(1) as BOOLEAN")]
SourceTimezone = Annotated[
    str, typer.Option(help="Zone of source times written without one (text times, TIME)")
]
Checkpoint = Annotated[str | None, typer.Option(help="Streaming checkpoint folder")]
AvailableNow = Annotated[bool, typer.Option(help="Streams: process what is there, then exit")]
KafkaOptions = Annotated[
    list[str] | None,
    typer.Option("--kafka-option", help="KEY=VALUE for Spark's Kafka source or sink (repeatable)"),
]
# What maintenance keeps of cdclake's own records: `cdclake maintain`, and `cdclake apply` for a
# stream's own maintenance (--maintain-every)
TombstoneRetention = Annotated[
    str | None,
    typer.Option(
        help="Drop tombstones older than this (30d, 12h; default: kept; a stale event for a key "
        "whose tombstone is gone brings the row back)"
    ),
]
BatchesRetention = Annotated[
    str | None,
    typer.Option(help="Drop Kafka batches' records older than this (default: kept)"),
]
QuarantineRetention = Annotated[
    str | None, typer.Option(help="Drop _cdc_quarantine rows older than this (default: kept)")
]
KeepBatches = Annotated[
    int, typer.Option(min=11, help="_cdc_sources: batches kept row by row; older rolled up")
]
