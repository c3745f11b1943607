"""The ``symposium`` command line.

``symposium`` alone opens the Textual app; the sub-commands run headless. Every error a user
can cause (a bad ``models.toml``, a missing model, an unreadable journal, a server that is
down) ends in one clear line on stderr and exit status 1, never a traceback.

Start-up is kept short: only the module of the command being run is imported (see
:mod:`tui.cli.commands`); the others appear in ``--help`` from their one-line summaries. The
global options (``--db``, ``--models``, ``--log-file``, ``--verbose``) are accepted before or
after the command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence

from tui.cli.commands import COMMANDS
from tui.errors import UserError
from tui.headless.signals import Terminated

#: Libraries that could phone home are told not to, before any of them is imported, whatever
#: the user's environment says (every command but ``models pull``).
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
}

#: (flags, argparse keywords) of the options every command accepts, wherever they stand.
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict], ...] = (
    (("--db",), {"help": "journal file (default: $SYMPOSIUM_DB or the user data folder)"}),
    (("--models",), {"help": "model registry (default: $SYMPOSIUM_MODELS or the registries Symposium ships and you add to)"}),
    (("--log-file",), {"metavar": "FILE", "help": "write a diagnostic log (llama.cpp, backends, debates) to FILE "
                                                 "(default: $SYMPOSIUM_LOG; none)"}),
    (("-v", "--verbose"), {"action": "store_true", "help": "more detail in the log (and on stderr when no log file is named)"}),
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("symposium-tui")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``, looked up only when asked (reading package metadata is not free)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.exit(message=f"symposium {_version()}\n")


def _selected(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (its first word that is a command), if any."""
    return next((arg for arg in argv if arg in COMMANDS), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser when ``argv`` is None; else one that fully defines only the command
    ``argv`` names (every other command is listed by its summary, nothing more imported)."""
    parser = argparse.ArgumentParser(
        prog="symposium",
        description="Moderate debates between local language models; everything stays on this machine. "
                    "Run on its own on a terminal, `symposium` opens the app; `symposium demo` opens it with a demo "
                    "debate ready to start.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    for flags, kwargs in GLOBAL_OPTIONS:
        parser.add_argument(*flags, **kwargs)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else _selected(argv)
    modules = dict.fromkeys(c.module for c in COMMANDS.values())
    for module in modules:
        names = [name for name, c in COMMANDS.items() if c.module == module]
        if argv is None or wanted in names:
            defining = importlib.import_module(module)
            adder: Callable[[argparse._SubParsersAction], None] = getattr(defining, "add_parsers", None) or defining.add_parser
            adder(sub)
        else:
            for name in names:
                sub.add_parser(name, help=COMMANDS[name].help, add_help=False)
    _accept_global_options(sub.choices.values())
    return parser


def _accept_global_options(parsers: Iterable[argparse.ArgumentParser]) -> None:
    """Let every sub-command (at any depth) take the global options after its name too. They are
    added with no default, so a value given before the command is not overwritten; an option a
    command defines itself (``bench diagnosis --models``) keeps its own meaning there."""
    for parser in parsers:
        taken = {s for action in parser._actions for s in action.option_strings}
        for flags, kwargs in GLOBAL_OPTIONS:
            free = [f for f in flags if f not in taken]
            if len(free) == len(flags):
                parser.add_argument(*free, **kwargs, default=argparse.SUPPRESS)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_global_options(action.choices.values())


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    if not (args.command == "models" and getattr(args, "models_command", None) == "pull"):
        # Forced, not defaulted: a user's HF_HUB_OFFLINE=0 (set for other work) must not let a
        # library go online from here; only `models pull` may, when the user asks.
        os.environ.update(OFFLINE_ENV)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        if not sys.stdout.isatty():
            parser.print_help()
            return 0
        handler = open_app
    from tui import diagnostics

    diagnostics.configure(args.log_file, args.verbose, interactive=handler is open_app)
    try:
        return handler(args)
    except KeyboardInterrupt:
        _error_console().print("interrupted", style="yellow")
        return 130
    except Terminated as exc:  # SIGTERM or SIGHUP, after the same clean-up as Ctrl-C's
        _last_words(f"interrupted by {exc.name}")
        return exc.exit_status
    except Exception as exc:  # noqa: BLE001 - turned into one clear line below
        if not is_user_error(exc):
            raise
        # One line whatever the terminal's width: a path broken by a wrap cannot be copied.
        from tui.sanitize import terminal_safe  # the message may quote a server, a file or a model: shown, never obeyed

        _error_console().print(f"error: {terminal_safe(str(exc))}", style="red", markup=False, soft_wrap=True)
        return 1


def _last_words(message: str) -> None:
    """Say ``message`` on stderr if the terminal is still there. After SIGHUP it often is not
    (the session closed): a write then fails with EIO, and so would the interpreter's last flush
    of stdout, which would turn the signal's exit status into 1 or 120. So the output goes to
    /dev/null instead, and the status stays the one that names the signal."""
    try:
        sys.stdout.flush()
        _error_console().print(message, style="yellow")
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        os.close(devnull)


def _error_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def open_app(args: argparse.Namespace) -> int:
    """``symposium`` with no command: the Textual app (help instead when not on a terminal)."""
    from tui.app.app import run_app

    return run_app(db=args.db, models=args.models)


def is_user_error(exc: BaseException) -> bool:
    """Errors whose message is written for the user (and so needs no traceback)."""
    from backends.base import BackendError
    from backends.registry import RegistryError
    from store.journal import JournalError

    return isinstance(exc, UserError | BackendError | RegistryError | JournalError)


if __name__ == "__main__":
    raise SystemExit(main())
