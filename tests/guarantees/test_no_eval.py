"""Model output is never evaluated: no module of Symposium calls ``eval``, ``exec`` or ``compile``.

RELIABILITY.md promises that text from models is read as data only (``json.loads`` and
pydantic). This walks the syntax tree of every module the package ships, so a call added
anywhere — also as ``builtins.eval`` or ``__import__('builtins').exec`` — fails here.
"""

from __future__ import annotations

import ast

from tests.helpers.paths import REPO

PACKAGES = ("backends", "protocols", "store", "tui")
FORBIDDEN = {"eval", "exec", "compile", "__import__"}


def _forbidden_calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            # eval(...), or builtins.eval(...); a method such as torch's model.eval() is no evaluator
            if isinstance(func, ast.Name):
                name = func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "builtins":
                name = func.attr
            else:
                continue
            if name in FORBIDDEN:
                found.append((node.lineno, name))
    return found


def test_the_checker_catches_each_form() -> None:
    src = "eval(x)\nbuiltins.exec(y)\ncompile(z, 'f', 'exec')\n__import__('os')\nre.compile('a')\nmodel.eval()\n"
    assert [name for _, name in _forbidden_calls(ast.parse(src))] == ["eval", "exec", "compile", "__import__"]


def test_no_module_evaluates_text() -> None:
    files = [f for pkg in PACKAGES for f in sorted((REPO / pkg).rglob("*.py"))]
    assert len(files) > 30, "the package folders were not found"
    offenders = [
        f"{f.relative_to(REPO)}:{line}: {name}()"
        for f in files
        for line, name in _forbidden_calls(ast.parse(f.read_text(encoding="utf-8"), str(f)))
    ]
    assert not offenders, "model or user text must never be evaluated:\n" + "\n".join(offenders)
