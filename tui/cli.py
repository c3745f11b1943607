"""The ``symposium`` command line.

``symposium`` alone opens the Textual app; the sub-commands run headless. Every error a user
can cause (a bad ``models.toml``, a missing model, an unreadable journal, a server that is
down) ends in one clear line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from rich.console import Console

from . import cmd_bench, cmd_chat, cmd_d3report, cmd_journal, cmd_models, cmd_resume, cmd_run, cmd_serve
from .errors import UserError

#: Libraries that could phone home are told not to, before any of them is imported.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symposium",
        description="Moderate debates between local language models; everything stays on this machine.",
    )
    parser.add_argument("--db", help="journal file (default: $SYMPOSIUM_DB or the user data folder)")
    parser.add_argument("--models", help="model registry (default: $SYMPOSIUM_MODELS or the bundled models.toml)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    cmd_models.add_parser(sub)
    cmd_chat.add_parsers(sub)
    cmd_run.add_parsers(sub)
    cmd_resume.add_parser(sub)
    cmd_bench.add_parser(sub)
    cmd_journal.add_parsers(sub)
    cmd_d3report.add_parser(sub)
    cmd_serve.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not (args.command == "models" and getattr(args, "models_command", None) == "pull"):
        for key, value in OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        if not sys.stdout.isatty():
            parser.print_help()
            return 0
        handler = open_app
    err = Console(stderr=True, highlight=False)
    try:
        return handler(args)
    except KeyboardInterrupt:
        err.print("interrupted", style="yellow")
        return 130
    except Exception as exc:  # noqa: BLE001 - turned into one clear line below
        if not is_user_error(exc):
            raise
        err.print(f"error: {exc}", style="red", markup=False)
        return 1


def open_app(args: argparse.Namespace) -> int:
    """``symposium`` with no command: the Textual app (help instead when not on a terminal)."""
    from .app import run_app

    return run_app(db=args.db, models=args.models)


def is_user_error(exc: BaseException) -> bool:
    """Errors whose message is written for the user (and so needs no traceback)."""
    from backends.base import BackendError
    from backends.registry import RegistryError
    from store.journal import JournalError

    return isinstance(exc, UserError | BackendError | RegistryError | JournalError)


if __name__ == "__main__":
    raise SystemExit(main())
