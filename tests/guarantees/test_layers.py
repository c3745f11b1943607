"""The four rooms point one way: ``backends`` ← ``protocols`` ← ``store`` ← ``tui``.

Read from the source (every ``import``, also those inside functions), so a lazy import that
runs back up is caught as well as one at the top of a module. ``protocols`` also never touches
a screen or SQL, and ``backends`` never a debate.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

#: What each package may not import (top-level package names).
FORBIDDEN = {
    "backends": {"protocols", "store", "tui", "textual"},
    "protocols": {"store", "tui", "textual", "sqlite3", "sqlite_utils"},
    "store": {"tui", "textual"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package: str) -> None:
    wrong = {str(f.relative_to(REPO)): sorted(imported_packages(f) & FORBIDDEN[package])
             for f in sorted((REPO / package).rglob("*.py"))}
    assert {f: names for f, names in wrong.items() if names} == {}


def test_the_check_sees_lazy_imports(tmp_path: Path) -> None:
    """The reader finds an import inside a function (where a lazy import would hide)."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tui.app import app\n    import store.journal\n")
    assert imported_packages(module) == {"tui", "store"}
