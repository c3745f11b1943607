"""The documents a person reads stay short, and everything they point at is there.

README.md is read first and RELIABILITY.md is an index, so each has a size it must stay under
(the detail lives in ``docs/``). Every relative link in the README, RELIABILITY.md, CHANGELOG.md
and ``docs/`` resolves to a file of the repository (and a ``#heading`` to a heading of it); no
document points outside the repository, where a reader of a clone finds nothing. Every
repository path a document names in backticks exists, and a test named as ``file::name`` is
defined in that file, so an index of guarantees cannot cite a test that was renamed or removed.
A paper is cited by its authors and title (the list in ``docs/protocols.md``), never by the
number of a file in the team's reading folder ("seed 004"), which means nothing to a reader of
the code, the docs or the app.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

KB = 1024
#: The most each may weigh, in bytes.
LIMITS = {"README.md": 10 * KB, "RELIABILITY.md": 20 * KB}
#: The repository's top-level folders and files whose paths the documents name.
TOP = ("backends/", "protocols/", "store/", "outputs/", "tui/", "tests/", "benchmarks/", "docs/")
TOP_FILES = ("Makefile", "models.toml", "pyproject.toml", "README.md", "RELIABILITY.md", "CHANGELOG.md")
#: Paths the benchmarks write and git ignores: named in the docs, absent from a clone.
WRITTEN_BY_RUNS = ("benchmarks/out/",)
#: A path with one of these is a pattern for the reader to fill in (``protocols/<name>/``).
PLACEHOLDER = re.compile(r"[<*…]|\byours\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
#: A citation by the reading folder's file number ("seed 004", "Seed 000's judge").
SEED_CITATION = re.compile(r"\bseed 0\d\d", re.I)
#: The code whose docstrings, comments and strings (help, summaries, report titles) cite papers.
CODE_FOLDERS = ("backends", "protocols", "store", "outputs", "tui", "benchmarks")


def prose(text: str) -> str:
    """``text`` without its code: a link written inside code is an example, not a link."""
    return CODE.sub("", FENCE.sub("", text))


def documents() -> list[Path]:
    return [REPO / "README.md", REPO / "RELIABILITY.md", REPO / "CHANGELOG.md",
            *sorted((REPO / "docs").rglob("*.md"))]


def doc_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), re.M)}


@cache
def defined(path: Path) -> frozenset[str]:
    """The functions and classes a Python file defines, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_the_readme_and_the_index_stay_short(name: str) -> None:
    size = len((REPO / name).read_bytes())
    assert size <= LIMITS[name], f"{name} is {size:,} bytes, more than {LIMITS[name]:,}: move detail to a page in docs/"


@pytest.mark.parametrize("doc", documents(), ids=doc_id)
def test_every_relative_link_resolves_inside_the_repository(doc: Path) -> None:
    broken = []
    for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.is_relative_to(REPO.resolve()):
            broken.append(f"{target}: outside the repository")
        elif not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {path.name}")
    assert broken == [], f"{doc_id(doc)}: {broken}"


@pytest.mark.parametrize("doc", documents(), ids=doc_id)
def test_no_document_names_a_folder_outside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text, f"{doc_id(doc)} names a path outside the repository"


@pytest.mark.parametrize("doc", documents(), ids=doc_id)
def test_every_repository_path_a_document_names_exists(doc: Path) -> None:
    missing = []
    for token in CODE.findall(doc.read_text(encoding="utf-8")):
        file, _, name = token.partition("::")
        if not (file.startswith(TOP) or file in TOP_FILES) or " " in file or PLACEHOLDER.search(file):
            continue
        if file.startswith(WRITTEN_BY_RUNS):
            continue
        path = REPO / file
        if not path.exists():
            missing.append(token)
        elif name and path.suffix == ".py" and re.sub(r"\[.*$", "", name) not in defined(path):
            missing.append(token)
    assert missing == [], f"{doc_id(doc)} names what the repository does not hold: {missing}"


def citing_texts() -> list[Path]:
    """The documents and every Python file and bundled text file of the code folders (not what
    the benchmarks write: their output quotes models and cases)."""
    code = [path for folder in CODE_FOLDERS for path in sorted((REPO / folder).rglob("*"))
            if path.suffix in (".py", ".txt") and path.is_file()
            and not str(path.relative_to(REPO)).startswith(WRITTEN_BY_RUNS)]
    return [*documents(), *code]


def test_no_paper_is_cited_by_its_reading_folder_number() -> None:
    texts = citing_texts()
    assert any(path.suffix == ".py" for path in texts) and REPO / "README.md" in texts
    found = [f"{path.relative_to(REPO)}:{line_no}: {match.group(0)!r}"
             for path in texts
             for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in SEED_CITATION.finditer(line)]
    assert found == [], ("cite a paper by its authors (\"Chang, ch. 7\", \"Heller et al.\"; the list in "
                         f"docs/protocols.md), not by a reading-folder number: {found}")
