"""No module of the test suite imports a test module (a ``test_*.py`` under ``tests/``).

What tests share lives where it says so: helpers in ``tests/helpers/``, fixtures in the nearest
``conftest.py``. A test module that another imports cannot change or drop one of its own helpers
without breaking a file it does not name, running one file runs another's module code, and a
fixture imported by name needs a ``noqa`` to get past the linter.
Read from the source (every ``import``, also those inside functions; relative ones resolved), so
a lazy import is caught as well as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import REPO


def module_name(path: Path, root: Path) -> str:
    """The dotted name ``path`` (a ``.py`` file under ``root``) is imported by."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, root: Path) -> list[tuple[int, str]]:
    """Each (line, dotted name) ``path`` imports: ``import a.b`` gives ``a.b``; ``from a import b``
    gives ``a`` and ``a.b`` (``b`` may be a module); relative imports are resolved from ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def imports_of_test_modules(root: Path) -> list[str]:
    """``file:line imports MODULE`` for every import of a test module by any module under ``root/tests``."""
    tests = root / "tests"
    test_modules = {module_name(p, root) for p in tests.rglob("test_*.py")}
    return [f"{path.relative_to(root)}:{line} imports {name}"
            for path in sorted(tests.rglob("*.py"))
            for line, name in sorted(imported_names(path, root)) if name in test_modules]


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    found = imports_of_test_modules(REPO)
    assert not found, ("move what is shared into tests/helpers/ (helpers) or the nearest conftest.py (fixtures):\n"
                       + "\n".join(found))


def test_the_check_sees_every_form_of_import(tmp_path: Path) -> None:
    """Top-level, lazy, ``import``, ``from … import module``, and relative imports are each found;
    a helper module's name that merely starts like a test (``tests.helpers.testing``) is not."""
    (tmp_path / "tests" / "app").mkdir(parents=True)
    (tmp_path / "tests" / "helpers").mkdir()
    for name in ("tests/__init__.py", "tests/app/__init__.py", "tests/app/test_a.py", "tests/helpers/testing.py"):
        (tmp_path / name).write_text("X = 1\n")
    (tmp_path / "tests" / "helpers" / "testing.py").write_text("from tests.app.test_a import X\n")
    (tmp_path / "tests" / "app" / "test_b.py").write_text(
        "from tests.app.test_a import X\n"
        "import tests.app.test_a\n"
        "from tests.app import test_a\n"
        "from . import test_a as again\n"
        "from .test_a import X as Y\n"
        "from tests.helpers.testing import X as Z\n"
        "def test_lazy():\n"
        "    from tests.app.test_a import X\n")
    assert imports_of_test_modules(tmp_path) == [
        "tests/app/test_b.py:1 imports tests.app.test_a",
        "tests/app/test_b.py:2 imports tests.app.test_a",
        "tests/app/test_b.py:3 imports tests.app.test_a",
        "tests/app/test_b.py:4 imports tests.app.test_a",
        "tests/app/test_b.py:5 imports tests.app.test_a",
        "tests/app/test_b.py:8 imports tests.app.test_a",
        "tests/helpers/testing.py:1 imports tests.app.test_a",
    ]
