"""``symposium report ID``: one debate as a self-contained HTML document (outputs/report)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from outputs.redact import describe
from store.journal import Journal
from store.queries import Queries
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.saving import WriteRefused, file_name, masked_in_words, write


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help=help_for("report"),
                       description="Write one debate as a single HTML file: header, transcript, plots of every metric, "
                                   "the judges' tables, the outcome, provenance and the journal's seal. It loads nothing "
                                   "from outside, runs no script, and prints cleanly (a browser's Save as PDF).")
    p.add_argument("debate_id", help="id or unique prefix (see `symposium history`)")
    p.add_argument("--out", metavar="FILE", help="file to write (created 0600); default: symposium-ID.html in the "
                                                 "current folder (symposium-ID-redacted.html with --redact)")
    p.add_argument("--redact", action="store_true",
                   help="as `export --redact` does, and say how many of each were masked: " + describe()
                        + "; the file's name must say it is redacted")
    p.add_argument("--force", action="store_true", help="replace the file if it exists (else nothing is replaced)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    with Journal(args.db) as journal:
        full = Queries(journal).find_debate(args.debate_id)
        if full is None:
            raise UserError(f"no debate {args.debate_id!r} in the journal (or the prefix is ambiguous); see `symposium history`")
        path = Path(args.out).expanduser() if args.out else Path(file_name(full, "html", redacted=args.redact))
        try:
            written = write(journal, full, "html", path, redacted=args.redact, replace=args.force, option="another --out")
        except WriteRefused as exc:
            raise UserError(f"report not written: {exc}{'; --force replaces it' if exc.exists else ''}") from None
    err = Console(stderr=True, highlight=False)
    if written.masked is not None:
        err.print(f"redacted: {masked_in_words(written.masked)}", markup=False)
    if written.replaced:
        err.print(f"replaced {path}", markup=False)
    print(path.resolve())
    return 0
