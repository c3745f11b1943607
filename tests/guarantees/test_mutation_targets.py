"""Every test id that benchmarks/mutation.py names exists, so a renamed test fails `make test`
instead of the next mutation run.

Files and functions are checked by parsing the test files (fast, nothing imported); ids with a
parameter (``test_x[crit]``) are collected by pytest in a subprocess, since only collection
knows the parameters' ids.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _mutation() -> object:
    spec = importlib.util.spec_from_file_location("mutation_benchmark", REPO / "benchmarks" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _test_ids() -> list[str]:
    return sorted({test for target in _mutation().TARGETS.values() for test in target.tests})  # type: ignore[attr-defined]


@cache
def _names(path: str) -> frozenset[str]:
    """``name`` and ``Class::name`` for every function and class defined at the top of a test file."""
    tree = ast.parse((REPO / path).read_text(), filename=path)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{n.name}" for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return frozenset(names)


def missing_ids(ids: list[str]) -> list[str]:
    """The ids among ``ids`` whose file, test function or parameter does not exist."""
    missing, parametrized = [], []
    for test in ids:
        path, _, name = test.partition("::")
        if not (REPO / path).is_file():
            missing.append(f"{test} (no file {path})")
        elif name and name.partition("[")[0] not in _names(path):
            missing.append(f"{test} (no test {name.partition('[')[0]} in {path})")
        elif "[" in name:
            parametrized.append(test)
    missing += [f"{test} (pytest collects no such parameter)" for test in parametrized
                if test not in _collected(test.partition("::")[0])]
    return missing


@cache
def _collected(path: str) -> frozenset[str]:
    """Every test id pytest collects from one file (once per file: collection takes seconds)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", path],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"pytest could not collect {path}:\n{out.stdout[-2000:]}{out.stderr[-2000:]}"
    return frozenset(out.stdout.split())


def test_every_test_id_the_mutation_run_names_exists() -> None:
    ids = _test_ids()
    assert len(ids) > 20  # the table was read
    missing = missing_ids(ids)
    assert not missing, "benchmarks/mutation.py TARGETS names tests that do not exist (renamed?): " + "; ".join(missing)


def test_a_renamed_test_or_parameter_is_reported() -> None:
    """The check itself fails on a stale id of each kind (a file, a function, a parameter)."""
    stale = ["tests/store/test_no_such_file.py", "tests/store/test_journal.py::test_no_such_test",
             "tests/guarantees/test_fuzz_schemas.py::test_valid_and_mangled_replies_are_read_as_written_or_rejected_with_a_reason[no-such-parser]"]
    assert [m.split(" (")[0] for m in missing_ids(stale)] == stale
