"""The ``symposium`` command line: ``parser.py`` builds the parser, one module per command group
(``models``, ``chat``, ``run`` and its protocol modules, ``resume``, ``bench``, ``journal``,
``serve``). Command modules import their heavy dependencies inside their handlers, so
``symposium --help`` starts fast."""

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The command line's entry point, which the ``symposium`` command reaches through its launcher
    (:func:`symposium.main`); see :mod:`tui.cli.parser`."""
    from tui.cli.parser import main as run

    return run(argv)
