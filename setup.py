"""Build hook: ship the top-level ``models.toml`` as package data ``backends/models.toml``.

The top-level file is the one maintainers edit (the layout in ARCHITECTURE.md puts it there);
copying it into the built package at build time keeps one source of truth without a symlink,
which a wheel cannot carry. Everything else about the build is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REGISTRY = Path(__file__).parent / "models.toml"


class BuildPyWithRegistry(build_py):
    """``build_py`` plus the registry copied into ``backends/`` of the build tree."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's file directly
            return
        target = Path(self.build_lib) / "backends" / "models.toml"
        self.copy_file(str(REGISTRY), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if not self.editable_mode:
            outputs.append(str(Path(self.build_lib) / "backends" / "models.toml"))
        return outputs


setup(cmdclass={"build_py": BuildPyWithRegistry})
