"""Model output is never evaluated: no module of Symposium can turn text into code or objects.

RELIABILITY.md promises that text from models, users and servers is read as data only
(``json.loads``, ``tomllib`` and pydantic). This walks the syntax tree of every module the
package ships and flags every way Python has to run text or rebuild objects from bytes:

* ``eval``, ``exec``, ``compile``, ``__import__`` — called, or merely named (``f = eval``),
  imported under another name (``from builtins import eval as e``), reached through the
  ``builtins`` module under any alias (``import builtins as b; b.exec``), through
  ``getattr(…, "eval")`` or a subscript (``vars(builtins)["eval"]``, ``__builtins__["exec"]``);
* deserialisers that run code: ``pickle``/``_pickle``/``cPickle``, ``marshal``, ``shelve``,
  ``dill``, ``cloudpickle``, ``runpy``, ``code``/``codeop`` (any import of them);
  ``yaml.load``/``unsafe_load``/``full_load`` and the unsafe loaders (``yaml.safe_load`` is
  allowed); ``torch.load`` without ``weights_only=True``; ``numpy.load(allow_pickle=True)``;
  ``pandas.read_pickle``;
* imports of a module named by a value rather than a literal (``importlib.import_module(x)``);
* Jinja templates outside the sandbox (``jinja2.Environment``/``Template``);
* text handed to a shell (``os.system``, ``os.popen``, ``subprocess…(shell=True)``).

What may still do one of these is listed in :data:`ALLOWED` with the reason; an entry that no
longer matches anything fails too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PACKAGES = ("backends", "protocols", "store", "tui")
EVALUATORS = {"eval", "exec", "compile", "__import__"}
CODE_LOADING_MODULES = {"pickle", "_pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "runpy", "code",
                        "codeop"}
UNSAFE_YAML = {"load", "load_all", "unsafe_load", "unsafe_load_all", "full_load", "full_load_all", "Loader",
               "UnsafeLoader", "FullLoader"}

#: (file, rule) -> why it is safe. Each must still match a finding.
ALLOWED: dict[tuple[str, str], str] = {
    ("tui/cli/parser.py", "dynamic import"):
        "imports the module of a command from the COMMANDS table (constants in tui/cli/commands.py), never text",
    ("backends/sources.py", "dynamic import"):
        "imports the installed package a models.toml entry names (package sources with assemble = true, the "
        "bundled Gemma), to call its assemble(); the registry is the user's own file, and only installed code runs",
    ("protocols/core/lazy.py", "dynamic import"):
        "imports a library named by a constant in the code (numpy, scipy.stats) the first time it is used, so the "
        "journal commands start without them; every caller passes a literal, never text",
}


@dataclass(frozen=True)
class Finding:
    line: int
    rule: str
    detail: str


class _Checker(ast.NodeVisitor):
    """One module's findings; tracks the names under which builtins, yaml, os, … are bound."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.modules: dict[str, str] = {}  # local name -> module it is bound to
        self.imported: dict[str, str] = {}  # local name -> "module.attr" it was imported as

    def flag(self, node: ast.AST, rule: str, detail: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), rule, detail))

    # -- imports -----------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in CODE_LOADING_MODULES:
                self.flag(node, "code-loading module", alias.name)
            self.modules[alias.asname or root] = alias.name if alias.asname else root
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.split(".")[0] in CODE_LOADING_MODULES:
            self.flag(node, "code-loading module", module)
        for alias in node.names:
            local = alias.asname or alias.name
            self.imported[local] = f"{module}.{alias.name}"
            if module == "builtins" and alias.name in EVALUATORS:
                self.flag(node, "evaluator", f"from builtins import {alias.name}")
            if module == "yaml" and alias.name in UNSAFE_YAML:
                self.flag(node, "unsafe yaml", f"from yaml import {alias.name}")
            if module.startswith("jinja2") and alias.name in ("Environment", "Template") and "sandbox" not in module:
                self.flag(node, "unsandboxed jinja", f"from {module} import {alias.name}")
            if module == "importlib" and alias.name == "import_module":
                self.modules[local] = "importlib.import_module"
        self.generic_visit(node)

    # -- names and attributes ----------------------------------------------------------------

    def _qualified(self, node: ast.AST) -> str | None:
        """``node`` as a dotted name through the module aliases (``b.eval`` -> ``builtins.eval``)."""
        if isinstance(node, ast.Name):
            if node.id in self.modules:
                return self.modules[node.id]
            return self.imported.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._qualified(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in EVALUATORS and node.id not in self.imported:
            self.flag(node, "evaluator", node.id)
        if node.id == "__builtins__":
            self.flag(node, "evaluator", "__builtins__")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self._qualified(node)
        if name in {f"builtins.{e}" for e in EVALUATORS} or name == "importlib.__import__":
            self.flag(node, "evaluator", name)
        elif name is not None and name.startswith("yaml.") and name.removeprefix("yaml.") in UNSAFE_YAML:
            self.flag(node, "unsafe yaml", name)
        elif name in ("jinja2.Environment", "jinja2.Template"):
            self.flag(node, "unsandboxed jinja", name)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and key.value in EVALUATORS:
            self.flag(node, "evaluator", f"[{key.value!r}]")
        self.generic_visit(node)

    # -- calls ---------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        name = self._qualified(node.func) or ""
        keywords = {k.arg: k.value for k in node.keywords}
        first = node.args[0] if node.args else keywords.get("name")
        if name == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value in EVALUATORS:
            self.flag(node, "evaluator", f"getattr(…, {node.args[1].value!r})")
        if name in ("importlib.import_module", "import_module"):
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value.split(".")[0] in CODE_LOADING_MODULES:
                    self.flag(node, "code-loading module", first.value)
            else:
                self.flag(node, "dynamic import", ast.unparse(node))
        if name == "torch.load" and not _is_true(keywords.get("weights_only")):
            self.flag(node, "pickle load", "torch.load without weights_only=True")
        if name in ("numpy.load", "np.load") and _is_true(keywords.get("allow_pickle")):
            self.flag(node, "pickle load", "numpy.load(allow_pickle=True)")
        if name.endswith("read_pickle"):
            self.flag(node, "pickle load", name)
        if name in ("os.system", "os.popen") or (name.startswith("subprocess.") and _is_true(keywords.get("shell"))):
            self.flag(node, "shell", name)
        self.generic_visit(node)


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def findings(source: str) -> list[Finding]:
    checker = _Checker()
    checker.visit(ast.parse(source))
    return checker.findings


def rules(source: str) -> set[str]:
    return {f.rule for f in findings(source)}


def _modules() -> Iterator[Path]:
    for pkg in PACKAGES:
        yield from sorted((REPO / pkg).rglob("*.py"))


@pytest.mark.parametrize(("source", "rule"), [
    ("eval(x)", "evaluator"),
    ("exec(y)", "evaluator"),
    ("compile(z, 'f', 'exec')", "evaluator"),
    ("__import__('os')", "evaluator"),
    ("f = eval\nf(x)", "evaluator"),
    ("from builtins import eval as e\ne(x)", "evaluator"),
    ("import builtins\nbuiltins.exec(y)", "evaluator"),
    ("import builtins as b\nb.eval(x)", "evaluator"),
    ("import builtins\ngetattr(builtins, 'eval')(x)", "evaluator"),
    ("vars(builtins)['exec'](y)", "evaluator"),
    ("__builtins__.eval(x)", "evaluator"),
    ("import importlib\nimportlib.__import__('os')", "evaluator"),
    ("import pickle\npickle.loads(b)", "code-loading module"),
    ("from pickle import loads\nloads(b)", "code-loading module"),
    ("import _pickle as p", "code-loading module"),
    ("import marshal\nmarshal.loads(b)", "code-loading module"),
    ("import shelve", "code-loading module"),
    ("import dill", "code-loading module"),
    ("import runpy\nrunpy.run_path(p)", "code-loading module"),
    ("import code\ncode.InteractiveInterpreter().runsource(s)", "code-loading module"),
    ("import importlib\nimportlib.import_module('pickle')", "code-loading module"),
    ("import yaml\nyaml.load(text, Loader=yaml.Loader)", "unsafe yaml"),
    ("import yaml\nyaml.unsafe_load(text)", "unsafe yaml"),
    ("import yaml as y\ny.full_load(text)", "unsafe yaml"),
    ("from yaml import load\nload(text)", "unsafe yaml"),
    ("import importlib\nimportlib.import_module(name)", "dynamic import"),
    ("from importlib import import_module\nimport_module(text)", "dynamic import"),
    ("import torch\ntorch.load(path)", "pickle load"),
    ("import numpy as np\nnp.load(path, allow_pickle=True)", "pickle load"),
    ("import pandas as pd\npd.read_pickle(path)", "pickle load"),
    ("import jinja2\njinja2.Environment().from_string(t)", "unsandboxed jinja"),
    ("from jinja2 import Template\nTemplate(t)", "unsandboxed jinja"),
    ("import os\nos.system(cmd)", "shell"),
    ("import subprocess\nsubprocess.run(cmd, shell=True)", "shell"),
])
def test_the_checker_catches_each_form(source: str, rule: str) -> None:
    assert rule in rules(source), f"{source!r} was not flagged as {rule}: {findings(source)}"


@pytest.mark.parametrize("source", [
    "model.eval()", "import re\nre.compile('a')", "import json\njson.loads(s)", "import yaml\nyaml.safe_load(s)",
    "import importlib\nimportlib.import_module('tui.cli.run')", "import torch\ntorch.load(p, weights_only=True)",
    "import numpy as np\nnp.load(p)", "from jinja2.sandbox import ImmutableSandboxedEnvironment",
    "import subprocess\nsubprocess.run(['ls'])", "d = {'compile': 1}\nd.get('x')", "getattr(obj, 'name')",
])
def test_the_checker_leaves_data_reading_alone(source: str) -> None:
    assert findings(source) == []


def test_no_module_evaluates_text() -> None:
    files = list(_modules())
    assert len(files) > 30, "the package folders were not found"
    offenders, matched = [], set()
    for f in files:
        rel = f.relative_to(REPO).as_posix()
        for found in findings(f.read_text(encoding="utf-8")):
            if (rel, found.rule) in ALLOWED:
                matched.add((rel, found.rule))
            else:
                offenders.append(f"{rel}:{found.line}: {found.rule}: {found.detail}")
    assert not offenders, "model or user text must never be evaluated:\n" + "\n".join(offenders)
    assert matched == set(ALLOWED), f"allow-list entries that match nothing any more: {set(ALLOWED) - matched}"
