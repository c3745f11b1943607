"""``symposium report ID``: one debate as a self-contained HTML document (store/report)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from outputs.export import write_private
from store.journal import Journal
from store.queries import Queries
from outputs.redact import describe
from outputs.report import report_html

from tui.cli.commands import help_for
from tui.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help=help_for("report"),
                       description="Write one debate as a single HTML file: header, transcript, plots of every metric, "
                                   "the judges' tables, the outcome, provenance and the journal's seal. It loads nothing "
                                   "from outside, runs no script, and prints cleanly (a browser's Save as PDF).")
    p.add_argument("debate_id", help="id or unique prefix (see `symposium history`)")
    p.add_argument("--out", metavar="FILE", help="file to write (created 0600); default: symposium-ID.html here")
    p.add_argument("--redact", action="store_true",
                   help="as `export --redact` does, and say how many of each were masked: " + describe())
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    with Journal(args.db) as journal:
        queries = Queries(journal)
        full = queries.find_debate(args.debate_id)
        if full is None:
            raise UserError(f"no debate {args.debate_id!r} in the journal (or the prefix is ambiguous); see `symposium history`")
        debate = queries.debate(full)
    assert debate is not None
    page, masked = report_html(debate, redact=args.redact)
    path = Path(args.out).expanduser() if args.out else Path(f"symposium-{full}.html")
    try:
        write_private(path, page)
    except OSError as exc:
        raise UserError(f"cannot write the report to {path}: {exc.strerror}; choose another file with --out") from None
    err = Console(stderr=True, highlight=False)
    if masked is not None:
        said = ", ".join(f"{n} {kind.lower()}" for kind, n in masked.items()) or "nothing found to mask"
        err.print(f"redacted: {said}", markup=False)
    print(path.resolve())
    return 0
