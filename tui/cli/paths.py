"""``symposium paths``: where everything Symposium reads and writes lives on this machine, so a
user can back it up, delete it, or attach it to a bug report. The app writes reports and exports
to its own folder (or one the person chooses when asked); ``symposium report`` writes to the
current folder unless ``--out`` names a file, and ``symposium export`` prints unless it does."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui.cli.commands import help_for
from tui.diagnostics import default_log_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("paths", help=help_for("paths"))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=show_paths)


def paths(args: argparse.Namespace) -> dict[str, Path]:
    """Each place by name, as this invocation would use it (flags and environment applied)."""
    from backends.registry import registry_path
    from backends.sources import models_dir
    from store.journal import default_db_path
    from store.signing import key_path
    from tui.saving import app_folder, command_line_folder
    from tui.settings import config_dir

    log = args.log_file or os.environ.get("SYMPOSIUM_LOG")
    return {
        "journal": Path(args.db).expanduser() if args.db else default_db_path(),
        "model registry": registry_path(args.models),
        "model files": models_dir(),
        "settings": config_dir(),
        "key map": config_dir() / "keymap.toml",
        "seal key": key_path(),
        "log": Path(log).expanduser() if log else default_log_file(),
        "app's reports and exports": app_folder(),
        "report (command line)": command_line_folder(),
    }


def show_paths(args: argparse.Namespace) -> int:
    places = paths(args)
    if args.json:
        print(json.dumps({k: str(v) for k, v in places.items()}, indent=2))
        return 0
    table = Table(box=None, padding=(0, 2))
    table.add_column("what", style="bold")
    table.add_column("where", overflow="fold")
    table.add_column("")
    for name, path in places.items():
        table.add_row(name, Text(str(path)), Text("exists" if path.exists() else "not yet created", style="dim"))
    Console(highlight=False).print(table)
    return 0
