"""``symposium verify [ID]`` and ``symposium verify --export FILE``: check the seal.

Recomputes each debate's hash chain (:mod:`store.seal`) from the journal, or from a JSON export
without the journal, and names the first row that was changed, deleted, inserted or reordered,
with its table and time. Exit status 0 only when every chain holds; 1 when one does not (and
for the errors every command reports so: an unknown debate, an unreadable file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from store import seal
from store.journal import Journal
from store.queries import Queries

from tui.cli.commands import help_for
from tui.errors import UserError
from tui.sanitize import terminal_safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help=help_for("verify"))
    p.add_argument("debate_id", nargs="?", help="id or unique prefix (default: every debate in the journal)")
    p.add_argument("--export", metavar="FILE", help="check a JSON export (`symposium export ID --format json`) "
                                                     "instead of the journal; no journal is needed")
    p.add_argument("--head", help="the chain head you noted earlier (from a report or `show`): it must still be the head")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(handler=verify)


def verify(args: argparse.Namespace) -> int:
    if args.export:
        if args.debate_id:
            raise UserError("give either a debate id (to check the journal) or --export FILE, not both")
        verdicts = [_from_export(Path(args.export))]
    else:
        with Journal(args.db) as journal:
            if args.debate_id:
                full = Queries(journal).find_debate(args.debate_id)
                if full is None:
                    raise UserError(f"no debate {args.debate_id!r} in the journal (or the prefix is ambiguous); "
                                    "see `symposium history`")
                verdicts = [seal.verify(journal.conn, full)]
            else:
                verdicts = seal.verify_all(journal.conn)
    if args.head is not None:
        if len(verdicts) != 1:
            raise UserError("--head checks one debate: name its id (or --export FILE)")
        verdicts = [_against(verdicts[0], args.head)]
    if args.json:
        print(json.dumps([_as_dict(v) for v in verdicts], indent=2, ensure_ascii=False))
    else:
        _print(verdicts)
    return 0 if all(v.ok for v in verdicts) else 1


def _from_export(path: Path) -> seal.Verdict:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a JSON export ({exc}); export one with `symposium export ID --format json`") from None
    if not isinstance(document, dict):
        raise UserError(f"{path}: not a JSON export of one debate; export one with `symposium export ID --format json`")
    try:
        return seal.verify_export(document)
    except seal.ExportError as exc:
        raise UserError(f"{path}: {exc}") from None


def _against(verdict: seal.Verdict, head: str) -> seal.Verdict:
    """The verdict, failed if its head is not the one the user noted (a chain recomputed
    whole after an edit still differs from a head noted before it)."""
    if verdict.head is not None and verdict.head.startswith(head.strip().lower()) and len(head.strip()) >= 12:
        return verdict
    problem = seal.Problem(verdict.debate_id, "seal", "head", "chain",
                           f"the head is {verdict.head or 'missing'}, not the {head} you gave (at least 12 characters "
                           "of it): the record is not the one whose head you noted", None, verdict.rows + 1)
    return seal.Verdict(verdict.debate_id, verdict.rows, verdict.head, verdict.sealed_on_migration_at,
                        (*verdict.problems, problem))


def _as_dict(v: seal.Verdict) -> dict[str, object]:
    return {"debate_id": v.debate_id, "ok": v.ok, "rows": v.rows, "head": v.head,
            "sealed_on_migration_at": None if v.sealed_on_migration_at is None else seal.iso(v.sealed_on_migration_at),
            "problems": [{"table": p.table, "key": p.key, "what": p.what, "detail": p.detail,
                          "at": None if p.at is None else seal.iso(p.at)} for p in v.problems]}


def _print(verdicts: list[seal.Verdict]) -> None:
    console = Console(highlight=False, soft_wrap=True)  # a hash broken by a wrap cannot be copied
    if not verdicts:
        console.print("the journal holds no debates: nothing to verify")
    for v in verdicts:
        migrated = "" if v.sealed_on_migration_at is None else f"; sealed on migration at {seal.iso(v.sealed_on_migration_at)}"
        if v.ok:
            console.print(Text.assemble(("ok ", "green"), f"{v.debate_id}: {v.rows} rows, head {v.head}{migrated}"))
            continue
        first = v.problems[0]
        console.print(Text.assemble(("FAILED ", "bold red"), f"{v.debate_id}: first {terminal_safe(str(first))}"))
        for p in v.problems[1:]:
            console.print(Text(f"  also {terminal_safe(str(p))}"))
    bad = sum(not v.ok for v in verdicts)
    if len(verdicts) > 1:
        console.print(f"{len(verdicts) - bad} of {len(verdicts)} debates verified" + (f"; {bad} failed" if bad else ""))
