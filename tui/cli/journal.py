"""Reading the journal from the command line: ``history``, ``show``, ``export``."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from store.export import to_json, to_markdown, write_private
from store.redact import describe, redact_debate
from store.journal import Journal
from store.queries import Queries

from tui.cli.commands import help_for
from tui.errors import UserError
from tui.sanitize import terminal_safe


def add_parsers(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser("history", help=help_for("history"))
    h.add_argument("--json", action="store_true", help="print JSON")
    h.add_argument("--limit", type=int, default=30)
    h.set_defaults(handler=history)

    s = sub.add_parser("show", help=help_for("show"))
    s.add_argument("debate_id", help="id or unique prefix")
    s.set_defaults(handler=show)

    e = sub.add_parser("export", help=help_for("export"))
    e.add_argument("debate_id", help="id or unique prefix")
    e.add_argument("--format", choices=("md", "json"), default="md")
    e.add_argument("--out", help="file to write (created 0600); default: standard output")
    e.add_argument("--redact", action="store_true", help=describe())
    e.set_defaults(handler=export)


def _resolve(queries: Queries, debate_id: str) -> str:
    full = queries.find_debate(debate_id)
    if full is None:
        raise UserError(f"no debate {debate_id!r} in the journal (or the prefix is ambiguous); see `symposium history`")
    return full


def history(args: argparse.Namespace) -> int:
    with Journal(args.db) as journal:
        rows = Queries(journal).debates(limit=args.limit)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    table = Table(title=f"Debates in {journal.path}")
    for col in ("id", "started", "protocol", "title", "models", "status", "turns"):
        table.add_column(col, overflow="fold", no_wrap=col in ("id", "started"))
    for r in rows:
        started = datetime.fromtimestamp(r["created_at"]).strftime("%Y-%m-%d %H:%M")
        table.add_row(r["id"], started, r["protocol"], terminal_safe(r["title"]), r["models"] or "", r["status"], str(r["turns"]))
    Console().print(table)
    return 0


def _load(args: argparse.Namespace) -> dict:
    with Journal(args.db) as journal:
        queries = Queries(journal)
        debate = queries.debate(_resolve(queries, args.debate_id))
    assert debate is not None
    return debate


def show(args: argparse.Namespace) -> int:
    from rich.markdown import Markdown  # only here: it takes a while to import

    Console().print(Markdown(terminal_safe(to_markdown(_load(args)))))
    return 0


def export(args: argparse.Namespace) -> int:
    debate = _load(args)
    if args.redact:
        debate = redact_debate(debate)
    text = to_json(debate) if args.format == "json" else to_markdown(debate)
    if args.out:
        write_private(Path(args.out), text)
        Console(stderr=True).print(f"wrote {args.out}", markup=False)
    else:
        print(text, end="")
    return 0
