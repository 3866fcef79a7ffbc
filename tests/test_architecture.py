"""The house rules, read from the source: no import cycles (function-local imports
included), the library never imports its command line, the core and the figures are
leaves, and no function is longer than a reader can hold (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "medspt"
CLI_MODULES = {"medspt.cli.study", "medspt.cli.datasets"}  # and the medspt.cli package
# the layers as folders, lowest first: a module imports its own layer and lower ones only
LAYERS = [
    ("core", ("medspt.core", "medspt._version", "medspt._moved")),
    ("data", ("medspt.data", "medspt.datasets")),
    ("nn", ("medspt.nn",)),
    ("estimator", ("medspt.estimator", "medspt.baselines")),
    ("evaluation", ("medspt.evaluation", "medspt.api")),
    ("study", ("medspt.study",)),
    ("cli", ("medspt.cli", "medspt.__main__", "medspt.cli.study", "medspt.cli.datasets")),
]
MAX_FUNCTION_LINES = 120


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str) -> list[tuple[str, bool]]:
    """``(module, local)`` for every medspt module ``name`` imports; ``local``: inside a
    function. ``from pkg import sub`` counts as importing ``pkg.sub`` only."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    local_nodes = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else [base, *subs]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:  # "medspt.core.splits.x" -> the module
                t = t.rpartition(".")[0]
            if t and t != name:
                found.append((t, id(node) in local_nodes))
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def _is_cli(name: str) -> bool:
    return (
        name in CLI_MODULES
        or name == "medspt.__main__"
        or name == "medspt.cli"
        or name.startswith("medspt.cli.")
    )


def test_the_graph_is_read():
    # the reader itself must see what is there, or every rule below passes vacuously
    assert {"medspt.api", "medspt.estimator.classifier", "medspt.core.splits"} <= set(MODULES)
    assert ("medspt.core.splits", False) in GRAPH["medspt.api"]
    assert any(t == "medspt.api" for t, local in GRAPH["medspt.cli.commands"])


def test_no_import_cycles_not_even_through_function_local_imports():
    assert _cycles() == []


def test_the_library_never_imports_the_command_line():
    bad = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if not _is_cli(name)
        for target, _ in targets
        if _is_cli(target)
    ]
    assert bad == []


def test_library_modules_import_medspt_modules_at_the_top():
    # function-local imports hide cycles; the command line may defer heavy imports so
    # that `medspt --help` starts fast
    bad = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if not _is_cli(name)
        for target, local in targets
        if local
    ]
    assert bad == []


def _layer(name: str) -> int:
    """Index in LAYERS of a module (the longest matching prefix; CLI modules inside the
    data and study folders belong to the command line)."""
    best, at = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (name == p or name.startswith(p + ".")) and len(p) > best:
                best, at = len(p), i
    return at


def test_every_module_sits_in_a_layer_folder():
    top = [n for n in MODULES if n != "medspt" and _layer(n) < 0]
    assert top == []  # a new module goes into the folder of its layer
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "_moved.py", "_version.py", "api.py"]


def test_layers_import_only_themselves_and_lower_layers():
    up = [
        f"{n} ({LAYERS[_layer(n)][0]}) -> {t} ({LAYERS[_layer(t)][0]})"
        for n, targets in GRAPH.items()
        if n != "medspt"
        for t, _ in targets
        if t != "medspt" and _layer(t) > _layer(n)
    ]
    assert up == []


def test_core_and_figures_are_leaves():
    core = {n for n in MODULES if n.startswith("medspt.core")}
    allowed = core | {"medspt"}
    bad = [f"{n} -> {t}" for n in core for t, _ in GRAPH[n] if t not in allowed]
    assert bad == []
    assert [t for t, _ in GRAPH["medspt.evaluation.plots"]] == []  # figures take data frames


def test_no_function_is_longer_than_a_reader_can_hold():
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {n} lines")
    assert long == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from medspt.core import splits\n", [("medspt.core.splits", False)]),
        ("from . import splits\n", [("medspt.core.splits", False)]),
        ("def f():\n    import medspt.api\n", [("medspt.api", True)]),
    ],
)
def test_the_reader_resolves_import_forms(tmp_path, monkeypatch, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source)
    monkeypatch.setitem(MODULES, "medspt.core.probe", path)
    assert _imports("medspt.core.probe") == expected


def test_no_module_imports_another_modules_private_names():
    # what two modules share is public in the lower one; a package's private submodule
    # (medspt.datasets._paths) is for that package only
    bad = []
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.module or node.level):
                continue
            base = node.module or ""
            if not base.startswith("medspt") and not node.level:
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                own_package = f"{base}.{alias.name}" in MODULES and base == package
                if private and not own_package:
                    bad.append(f"{name}: from {base} import {alias.name}")
    assert bad == []
