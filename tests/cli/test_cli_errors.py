"""Failures that are not the data's stop with one line ``error: …`` naming what and where, exit
status 2, no traceback unless ``--debug``; once the cause is gone, a new run continues."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders.dbz import event
from typer.testing import CliRunner

from cdclake.cli import app

T = "shop.public.items"


def _input(tmp_path: Path, *ids: int) -> Path:
    path = tmp_path / f"in{ids[0]}.jsonl"
    lines = [event("c", after={"id": i, "name": f"n{i}", "qty": i}, lsn=i) for i in ids]
    path.write_text("\n".join(lines) + "\n")
    return path


def _apply(source: Path, target: Path, *options: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(
        app, [*options, "apply", "--input", str(source), "--target", str(target)]
    )


def _one_error_line(res) -> str:  # type: ignore[no-untyped-def]
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    # progress lines ("[   0.3 s] reading") may come before it; the error is one line, the last
    lines = [x for x in res.output.splitlines() if x.strip() and not x.startswith("[")]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("error: ")
    assert res.output.rstrip().endswith(lines[0]), res.output
    return lines[0]


def test_a_file_where_the_table_folder_should_be(spark, tmp_path: Path) -> None:
    """Root ignores file modes, so the unwritable place is a file in the way of a folder."""
    target = tmp_path / "lake"
    target.mkdir()
    (target / T).write_text("not a folder")
    line = _one_error_line(_apply(_input(tmp_path, 1, 2), target))
    assert str(target) in line
    (target / T).unlink()  # the cause is gone: the same input lands
    res = _apply(_input(tmp_path, 1, 2), target)
    assert res.exit_code == 0, res.output
    rows = spark.read.format("delta").load(str(target / T)).select("id").collect()
    assert sorted(r["id"] for r in rows) == [1, 2]


def test_a_table_written_by_something_else_with_other_types(spark, tmp_path: Path) -> None:
    target = tmp_path / "lake"
    other = spark.createDataFrame([((1,), "x", 2)], "id struct<a:int>, name string, qty bigint")
    other.write.format("delta").save(str(target / T))
    line = _one_error_line(_apply(_input(tmp_path, 1), target))
    assert line.startswith(f"error: table {T}: column id: the message's type int cannot become ")
    assert "not written by cdclake" in line


def test_debug_shows_the_traceback(spark, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "lake"
    target.mkdir()
    (target / T).write_text("not a folder")
    res = _apply(_input(tmp_path, 1), target, "--debug")
    assert res.exit_code != 0 and res.exception is not None
    assert not isinstance(res.exception, SystemExit)
    monkeypatch.setenv("CDCLAKE_DEBUG", "1")
    res = _apply(_input(tmp_path, 1), target)
    assert res.exception is not None and not isinstance(res.exception, SystemExit)


@pytest.mark.parametrize("encoding", ["latin1", "base64", "hex"])
def test_binary_encoding_option_is_checked(tmp_path: Path, encoding: str) -> None:
    res = CliRunner().invoke(
        app, ["apply", "--target", str(tmp_path), "--binary-encoding", encoding + "x"]
    )
    assert res.exit_code == 2
    assert "--binary-encoding" in res.output and "latin1" in res.output


def test_every_command_fails_the_same_way(tmp_path: Path) -> None:
    """The one handler every command wraps its work in (``cli.common.one_line_errors``): the
    user's mistake as its own line, anything else named with where it happened, both exit 2 with
    no traceback; a command's own exit status passes through."""
    import typer
    from pydantic import BaseModel, Field

    from cdclake.cli.common import one_line_errors
    from cdclake.errors import ConfigError

    class Options(BaseModel):
        keep_batches: int = Field(ge=11)

    def fail(what: str) -> None:
        with one_line_errors(f"reading {tmp_path}"):
            if what == "config":
                raise ConfigError("--table 'x[': expected a glob")
            if what == "range":
                Options(keep_batches=3)
            if what == "disk":
                (tmp_path / "missing" / "x").read_text()
            raise typer.Exit(1)  # e.g. status: a table is stale

    def run(what: str):  # type: ignore[no-untyped-def]
        one = typer.Typer()
        one.command()(lambda: fail(what))
        return CliRunner().invoke(one, [])

    assert _one_error_line(run("config")) == "error: --table 'x[': expected a glob"
    assert _one_error_line(run("range")) == (
        "error: --keep-batches: Input should be greater than or equal to 11 (got 3)"
    )
    disk = _one_error_line(run("disk"))
    assert disk.startswith(f"error: reading {tmp_path}: ") and "No such file" in disk, disk
    stale = run("stale")
    assert stale.exit_code == 1 and stale.output == ""
