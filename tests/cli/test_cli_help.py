"""Every command's ``--help`` at 80 columns names each of its options whole (issue 35)."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cdclake.cli import app

ROOT = typer.main.get_command(app)


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):  # a group of commands
            out += _commands(command, (*path, name))
        else:
            out.append((*path, name))
    return out


def _command(path: tuple[str, ...]) -> Any:
    command = ROOT
    for name in path:
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", _commands(ROOT), ids=" ".join)
def test_help_names_every_option_whole_at_80_columns(path: tuple[str, ...]) -> None:
    res = CliRunner().invoke(app, [*path, "--help"], terminal_width=80)
    assert res.exit_code == 0, res.output
    names = [o for p in _command(path).params for o in (*p.opts, *p.secondary_opts)]
    cut = [o for o in names if o.startswith("--") and o not in res.output.split()]
    # a name stands whole as a word (or before "/" of a boolean pair) in the help text
    words = {w for line in res.output.splitlines() for w in line.replace("/", " ").split()}
    assert not [o for o in cut if o not in words], res.output
    assert max(len(line) for line in res.output.splitlines()) <= 80, res.output
