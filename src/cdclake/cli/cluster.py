"""``cdclake submit-args``: what to pass to spark-submit to run cdclake on a cluster."""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from cdclake.cli.common import app, console


def submit_args(packages: bool = False, master: str | None = None, app: bool = True) -> list[str]:
    """spark-submit's arguments before the application's own: the jars (local paths from the
    cache, or Maven coordinates with ``packages``), Delta's settings, and (with ``app``) the
    main file.

    >>> submit_args(master="yarn")[:2]  # doctest: +SKIP
    ['--master', 'yarn']
    """
    from cdclake import _spark
    from cdclake.spark_submit import main

    args = ["--master", master] if master else []
    if packages:
        args += [
            "--packages",
            ",".join(_spark.PACKAGES),
            "--exclude-packages",
            ",".join(_spark.EXCLUDES),
            "--jars",
            _spark.TOKEN_PROVIDER_URL,
        ]
    else:
        args += ["--jars", ",".join(_spark.jars())]
    settings = _spark.session_settings()
    for key in (
        "spark.sql.extensions",
        "spark.sql.catalog.spark_catalog",
        "spark.delta.logStore.s3a.impl",
        "spark.sql.session.timeZone",
    ):
        args += ["--conf", f"{key}={settings[key]}"]
    assert main.__file__ is not None
    return [*args, main.__file__] if app else args


@app.command("submit-args")
def submit_args_command(
    packages: Annotated[
        bool,
        typer.Option(help="Maven coordinates (resolved where the job starts), not local jars"),
    ] = False,
    master: Annotated[
        str | None, typer.Option(help="Add --master URL (spark://, yarn, k8s://)")
    ] = None,
    app: Annotated[
        bool,
        typer.Option(
            help="End with cdclake's main file; --no-app: only jars and Delta's settings, for "
            "spark-sql, Spark's Thrift server or a job of your own"
        ),
    ] = True,
) -> None:
    """Print spark-submit's arguments for cdclake, to run it as:
    spark-submit $(cdclake submit-args) apply --target … --input …"""
    line = shlex.join(submit_args(packages, master, app))
    console.print(line, soft_wrap=True, highlight=False)
