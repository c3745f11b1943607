"""The five rooms point one way: ``backends`` ← ``protocols`` ← ``store`` ← ``outputs`` ← ``tui``,
and inside them nothing imports in a circle.

Read from the source (every ``import``, also those inside functions and under
``TYPE_CHECKING``), so a lazy import that runs back up is caught as well as one at the top of a
module. ``protocols`` also never touches a screen or SQL, and ``backends`` never a debate.
Inside ``tui`` the parts are layered too: the shared modules at its root (forms, the protocol
catalog, settings …) below ``headless`` (the runner every interface drives a debate with),
below ``bench`` and ``app``, below ``cli``; each imports only parts below it. The engines'
lifecycle (:mod:`backends.lifecycle`), which every interface uses, reaches no interface at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

#: What each package may not import (top-level package names). ``symposium``, the installed
#: app's launcher, sits above them all: it imports ``tui.cli``, and nothing imports it.
FORBIDDEN = {
    "backends": {"protocols", "store", "outputs", "tui", "textual", "symposium"},
    "protocols": {"store", "outputs", "tui", "textual", "sqlite3", "sqlite_utils", "symposium"},
    "store": {"outputs", "tui", "textual", "symposium"},
    "outputs": {"tui", "textual", "symposium"},
    "tui": {"symposium"},
}
PACKAGES = ("backends", "protocols", "store", "outputs", "tui")
#: The parts of ``tui``, lowest first: a part may import only parts of a lower rank.
TUI_RANK = {"tui": 0, "tui.headless": 1, "tui.bench": 2, "tui.app": 2, "tui.cli": 3}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def module_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports (``from a import b`` counts as ``a.b``
    when that is a module, else as ``a``; relative imports resolved)."""
    modules: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                edges |= {m for alias in node.names if (m := known(alias.name))}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")[: None if is_package else -1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    found = full if full in modules else known(target)
                    if found:
                        edges.add(found)
        edges.discard(module)
        graph[module] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                on_stack.discard(w)
                group.append(w)
            on_stack.discard(v)
            if group:
                found.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in graph[todo.pop()] - seen:
            seen.add(w)
            todo.append(w)
    return seen


def tui_part(module: str) -> str:
    """``tui.cli.run`` → ``tui.cli``; a module at tui's root (``tui.forms``) → ``tui``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and ".".join(parts[:2]) in TUI_RANK else "tui"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return module_graph(REPO)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package: str) -> None:
    wrong = {str(f.relative_to(REPO)): sorted(imported_packages(f) & FORBIDDEN[package])
             for f in sorted((REPO / package).rglob("*.py"))}
    assert {f: names for f, names in wrong.items() if names} == {}


def test_no_module_imports_in_a_circle(graph: dict[str, set[str]]) -> None:
    """A circle (``backends.base`` → ``registry`` → ``chat_format`` → ``base`` was one) makes
    import order matter and every module in it depend on all the others."""
    assert circles(graph) == []


def test_the_backend_interface_imports_neither_registry_nor_chat_format(graph: dict[str, set[str]]) -> None:
    assert graph["backends.base"] & {"backends.registry", "backends.chat_format"} == set()


def test_tui_parts_import_only_parts_below_them(graph: dict[str, set[str]]) -> None:
    upward = sorted(f"{m} → {w}" for m, edges in graph.items() if m.startswith("tui")
                    for w in edges if w.startswith("tui") and tui_part(m) != tui_part(w)
                    and TUI_RANK[tui_part(w)] >= TUI_RANK[tui_part(m)])
    assert upward == []


def test_the_engines_lifecycle_reaches_no_interface(graph: dict[str, set[str]]) -> None:
    """What ``backends.lifecycle`` imports, directly or through others, is backends only; what
    the interfaces share (tui's root, headless, bench) never reaches the app or the CLI."""
    assert {m.split(".")[0] for m in reachable(graph, "backends.lifecycle")} <= {"backends"}
    shared = [m for m in graph if m.startswith("tui") and tui_part(m) in ("tui", "tui.headless", "tui.bench")]
    leaks = {m: sorted(w for w in reachable(graph, m) if tui_part(w) in ("tui.app", "tui.cli"))
             for m in shared}
    assert {m: w for m, w in leaks.items() if w} == {}


def test_the_check_sees_lazy_imports(tmp_path: Path) -> None:
    """The reader finds an import inside a function (where a lazy import would hide)."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tui.app import app\n    import store.journal\n")
    assert imported_packages(module) == {"tui", "store"}


def test_the_graph_sees_relative_type_checking_and_lazy_imports(tmp_path: Path) -> None:
    """The circle check would be blind without these: the old circle went through an import
    under ``TYPE_CHECKING``, and backends import each other relatively."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "c.py").write_text("from pkg.a import x\n")
    graph = module_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def _protocol_names() -> set[str]:
    from protocols.registry import PROTOCOLS

    return {name for d in PROTOCOLS for name in (d.name, *(v.name for v in d.variants))}


def _protocol_folders() -> set[str]:
    return {p.parent.name for p in (REPO / "protocols").glob("*/__init__.py")} - {"core", "measures"}


def named_protocols(path: Path, names: set[str], folders: set[str]) -> list[str]:
    """Where the module at ``path`` names a protocol: a string that is a protocol's name (or a
    variant's), or an import of a protocol's folder (``protocols.evince``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append(f"line {node.lineno}: {node.value!r}")
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                   else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
        if isinstance(node, ast.ImportFrom) and node.module == "protocols":
            modules += [f"protocols.{a.name}" for a in node.names]
        for module in modules:
            parts = module.split(".")
            if len(parts) > 1 and parts[0] == "protocols" and parts[1] in folders:
                found.append(f"line {node.lineno}: imports {module}")
    return found


#: Where a string outside the protocols' folders equals a protocol's name for another reason:
#: (module, string) → why. The list only shrinks: a new entry needs a reason a reviewer accepts.
NAMED_ON_PURPOSE: dict[tuple[str, str], str] = {
    ("protocols/measures/agreement_judge.py", "'agreement'"): "the judge's own metric per round (1 agreed, 0 not), "
                                                             "which every protocol using the judge logs",
    ("protocols/measures/contentiousness.py", "'socrasynth'"): "the name of Table 6.2's Δ/δ schedule, which any "
                                                               "protocol may choose",
    ("tui/bench/diagnosis.py", "imports protocols.evince"): "the diagnosis benchmark replicates EVINCE's section 7.4",
    ("tui/bench/diagnosis.py", "'evince'"): "the diagnosis benchmark replicates EVINCE's section 7.4",
    ("tui/cli/health_debate.py", "imports protocols.evince"): "`models test --debate` checks a model with one short "
                                                              "EVINCE debate: structured replies, distributions, KV reuse",
}


def test_no_protocol_is_named_outside_its_folder() -> None:
    """A protocol is one folder: nothing in the shared machinery, the journal, the outputs or the
    interfaces names one (by a string or by importing its folder), so adding or removing a
    protocol touches its folder, the registry's line and its docs page, and nothing else."""
    names, folders = _protocol_names(), _protocol_folders()
    shared = [*(REPO / "protocols" / "core").rglob("*.py"), *(REPO / "protocols" / "measures").rglob("*.py")]
    outside = [f for package in ("backends", "store", "outputs", "tui") for f in (REPO / package).rglob("*.py")]
    found = {str(f.relative_to(REPO)): named_protocols(f, names, folders) for f in sorted([*shared, *outside])}
    unexplained = {f: [w for w in where if (f, w.split(": ", 1)[1]) not in NAMED_ON_PURPOSE] for f, where in found.items()}
    assert {f: where for f, where in unexplained.items() if where} == {}


def test_the_name_check_sees_strings_and_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('from protocols import evince\nimport protocols.d3.audit\nx = "socrasynth"\ny = "evinced"\n')
    assert named_protocols(module, {"evince", "socrasynth"}, {"evince", "d3"}) == [
        "line 1: imports protocols.evince", "line 2: imports protocols.d3.audit", "line 3: 'socrasynth'"]
