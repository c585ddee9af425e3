"""The package's layers (README, "Layout"): every import points down or sideways, none up, and
no two modules import each other, read from the modules' own source (``ast``), so a new import
that breaks the layering fails here before it fails anyone's import order."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdclake import globs

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "cdclake"

# Lower rank: imported by higher ranks, never importing them.
LAYERS: list[tuple[str, ...]] = [
    # the leaves: the change model, errors, paths, column names, raw records, Spark helpers
    (
        "cdclake",
        "cdclake.errors",
        "cdclake.model",
        "cdclake.paths",
        "cdclake.phases",
        "cdclake.names",
        "cdclake.globs",
        "cdclake.target_layout",
        "cdclake.delta_rs",
        "cdclake.sources",
        "cdclake.history",
        "cdclake.jvm",
        "cdclake._spark",
    ),
    ("cdclake.formats",),
    ("cdclake.decode",),
    ("cdclake.apply",),
    ("cdclake.config",),
    # reading a target: status, quarantine inspection, metrics, the report
    ("cdclake.ops",),
    # running: batches, streams, quarantine replay, produce
    ("cdclake.run",),
    ("cdclake.cli", "cdclake.spark_submit"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def rank(module: str) -> int:
    """The layer of ``module``: its longest prefix listed in :data:`LAYERS`."""
    best, found = -1, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), i
    assert found >= 0, f"{module} is in no layer: add it to LAYERS"
    return found


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(module: str, top_level_only: bool, skip_typing: bool = True) -> set[str]:
    """The cdclake modules ``module`` imports (``from pkg import submodule`` names the
    submodule), at module level only or anywhere; imports for type checking are left out."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(node: ast.AST, nested: bool) -> None:
        if isinstance(node, ast.If) and _type_checking(node) and skip_typing:
            for child in node.orelse:
                visit(child, nested)
            return
        if isinstance(node, ast.Import) and not (nested and top_level_only):
            found.update(a.name for a in node.names if a.name.startswith("cdclake"))
        elif isinstance(node, ast.ImportFrom) and not (nested and top_level_only):
            base = node.module or ""
            if base.startswith("cdclake") and not node.level:
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    found.add(sub if sub in MODULES else base)
        inner = nested or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    found.discard(module)
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_points_up(module: str) -> None:
    """Anywhere in the module, lazy imports inside functions included."""
    up = sorted(i for i in imports(module, top_level_only=False) if rank(i) > rank(module))
    assert not up, f"{module} (layer {rank(module)}) imports from a higher layer: {up}"


def test_no_import_cycles() -> None:
    """Among module-level imports, those for type checking included (a package imports its own
    submodules: edges from a package to what it contains are left out, as Python runs the
    package first anyway)."""
    graph = {
        m: {i for i in imports(m, top_level_only=True, skip_typing=False) if i in MODULES}
        for m in MODULES
    }
    for m, deps in graph.items():
        graph[m] = {d for d in deps if not d.startswith(m + ".") and not m.startswith(d + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append([*stack[stack.index(d) :], d])
            elif d not in state:
                walk(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_import_cdclake_loads_no_spark() -> None:
    """``import cdclake`` and its errors, and the CLI's startup, import neither PySpark nor
    Delta: commands that do not need Spark start at once."""
    code = (
        "import sys, cdclake, cdclake.errors, cdclake.cli\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'delta', 'py4j'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SRC
    )
    assert done.stdout.strip() == "[]"


# --- one glob rule ---------------------------------------------------------------------------

NAME = st.text(alphabet="ab.*?[]!_%", max_size=8)


@given(name=st.text(alphabet="ab._%", max_size=8), pattern=NAME)
def test_the_glob_regex_is_fnmatch(name: str, pattern: str) -> None:
    """The regex Spark filters with (``--include``, quarantine ``--table``) matches exactly what
    :func:`cdclake.globs.matches` does (``--scd-type TABLE=…``): one rule for every command."""
    assert (re.search(globs.regex(pattern), name) is not None) == globs.matches(name, pattern)
