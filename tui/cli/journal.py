"""Reading the journal from the command line: ``history``, ``show``, ``export``.

What reaches the terminal is the journal's text, and the journal holds what models and people
wrote: every string is printed through :func:`tui.sanitize.terminal_safe` (escape sequences and
controls dropped, invisible formatting shown as marks), ``show`` draws a Markdown document in
which that text is never read as Markdown (:mod:`outputs.markdown_text`; no links at all), and
JSON on the terminal carries those characters as JSON escapes (:func:`tui.sanitize.json_for_terminal`), so
the same values parse back and none is obeyed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from outputs.export import to_json, to_markdown
from outputs.redact import describe
from protocols.core.text import clip
from store.journal import Journal
from store.queries import Queries
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.sanitize import json_for_terminal, terminal_safe
from tui.saving import WriteRefused, debate_for_export, write
from tui.titles import distinct_clips, when


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
    e.add_argument("--out", help="file to write (created 0600); default: standard output. A redacted copy's "
                                 "name must say it is redacted (e.g. case-redacted.md)")
    e.add_argument("--redact", action="store_true", help=describe())
    e.add_argument("--force", action="store_true", help="replace --out if it exists (else nothing is replaced)")
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
        print(json_for_terminal(json.dumps(rows, indent=2, ensure_ascii=False)))
        return 0
    console = Console()
    console.print(history_table(rows, Text(f"Debates in {journal.path}"), console.width))
    return 0


#: What a history line takes besides the debate's cell: the id (12), the start (16), the gaps.
HISTORY_OVERHEAD = 12 + 16 + 8  # each column padded by one space a side, one between


def history_table(rows: list[dict[str, Any]], title: Text, width: int) -> Table:
    """One debate in two lines: its title, then protocol · status · turns · models, beside its id
    and start. Seven columns side by side wrapped every title into a ten-line cell at 80 columns
   ; as two lines, each clipped to the width (titles where they differ from the
    others', see :func:`tui.titles.distinct_clips`), a row stays two lines at any width."""
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False)
    room = max(width - HISTORY_OVERHEAD, 20)
    table.add_column("id", no_wrap=True, min_width=12)
    table.add_column("started", no_wrap=True, min_width=16)
    table.add_column("debate", no_wrap=True, overflow="ellipsis")
    titles = distinct_clips([terminal_safe(r["title"]) for r in rows], room)
    for r, shown in zip(rows, titles, strict=True):
        models = sorted({m.split("=", 1)[1] for m in (r["models"] or "").split(", ") if "=" in m} - {"human"})
        details = " · ".join([r["protocol"], r["status"], f"{r['turns']} turns", *([", ".join(models)] if models else [])])
        debate = Text(shown, style="bold")
        debate.append("\n" + clip(terminal_safe(details), room), style="dim")
        table.add_row(Text(terminal_safe(r["id"])), Text(when(r["created_at"])), debate)
    return table


def _load(args: argparse.Namespace, *, chain: bool = False, redact: bool = False) -> dict:
    """The debate as the exports show it (:func:`tui.saving.debate_for_export`)."""
    with Journal(args.db) as journal:
        return debate_for_export(journal, _resolve(Queries(journal), args.debate_id), chain=chain, redact=redact)


def show(args: argparse.Namespace) -> int:
    from tui.cli.fitted import FittedMarkdown  # only here: rich.markdown takes a while to import

    Console().print(FittedMarkdown(terminal_safe(to_markdown(_load(args))), hyperlinks=False))
    return 0


def export(args: argparse.Namespace) -> int:
    if args.out:
        path = Path(args.out).expanduser()
        with Journal(args.db) as journal:
            debate_id = _resolve(Queries(journal), args.debate_id)
            try:
                written = write(journal, debate_id, args.format, path, redacted=args.redact, replace=args.force,
                                option="another --out")
            except WriteRefused as exc:
                raise UserError(f"export not written: {exc}{'; --force replaces it' if exc.exists else ''}") from None
        Console(stderr=True).print(f"{'replaced' if written.replaced else 'wrote'} {path}", markup=False)
        return 0
    debate = _load(args, chain=args.format == "json", redact=args.redact)
    text = to_json(debate) if args.format == "json" else to_markdown(debate, redacted=args.redact)
    # the terminal, or a pipe to one: nothing in it may be obeyed
    print(json_for_terminal(text) if args.format == "json" else terminal_safe(text), end="")
    return 0

