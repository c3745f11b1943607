"""Build hook: the wheel's layout. Everything else about the build is in ``pyproject.toml``.

Two things a wheel needs that the checkout's layout does not give by itself:

* the top-level ``models.toml`` (the one maintainers edit, where ARCHITECTURE.md puts it) ships
  as package data ``backends/models.toml``: copied at build time, one source of truth without a
  symlink, which a wheel cannot carry;
* the app's packages (``backends``, ``protocols``, ``store``, ``outputs``, ``tui``) go inside
  the ``symposium`` package's folder, so that the wheel installs one top-level name and no
  other distribution's ``store`` or ``tui`` can overwrite ours or be overwritten by it. The
  launcher there (``symposium/__init__.py``) puts that folder on the app's path.

An editable install keeps the checkout's layout: it reads the checkout's files directly.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REGISTRY = Path(__file__).parent / "models.toml"
LAUNCHER = "symposium"


class BuildPyForWheel(build_py):
    """``build_py``, then the registry copied into ``backends/`` and the packages moved under
    the launcher's folder in the build tree."""

    def _moved(self) -> list[str]:
        """The top-level packages that go under the launcher's folder."""
        return sorted({name.split(".")[0] for name in self.packages or []} - {LAUNCHER})

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        build = Path(self.build_lib)
        self.copy_file(str(REGISTRY), str(build / "backends" / "models.toml"))
        for name in self._moved():
            target = build / LAUNCHER / name
            if target.exists():  # a build folder left by an earlier build
                shutil.rmtree(target)
            shutil.move(str(build / name), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        build = Path(self.build_lib)
        moved = set(self._moved())
        outputs.append(str(build / "backends" / "models.toml"))
        relocated = []
        for output in outputs:
            relative = Path(output).relative_to(build)
            if relative.parts[0] in moved:
                relative = Path(LAUNCHER) / relative
            relocated.append(str(build / relative))
        return relocated


setup(cmdclass={"build_py": BuildPyForWheel})
