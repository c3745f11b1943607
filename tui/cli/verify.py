"""``symposium verify [ID]`` and ``symposium verify --export FILE``: check the seal.

Recomputes each debate's hash chain (:mod:`store.seal`) from the journal, or from a JSON export
without the journal (:mod:`store.export_check`), checks the head's signature, and says one of
three things per debate: **ok** (intact, and vouched for by something the person holds: their
own key, the key they named with ``--key``, or the head they noted with ``--head``), **FAILED**
(the first row changed, deleted, inserted or reordered, with its table and time, or a signature
or head that does not match) or **NOT VERIFIABLE** (nothing vouches for it: no seal, a redacted
copy, unsigned, or signed by a key nobody named). Exit status 0 when every debate is ok, 1 when
one failed (and for the errors every command reports so: an unknown debate, an unreadable
file), 3 when none failed but one is not verifiable.

Everything printed from a received file passes the terminal sanitizer; ``--json`` escapes
every character outside ASCII.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from store import export_check, seal, signing
from store.journal import Journal
from store.queries import Queries
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.sanitize import terminal_safe

#: The exit status of a run in which nothing failed but something could not be verified.
NOT_VERIFIABLE = 3

_HEAD = re.compile(r"[0-9a-f]{64}")
_FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help=help_for("verify"),
                       description="ok: the debate's rows are the ones written, vouched for by your key, the key you "
                                   "named or the head you noted. "
                                   "FAILED: a row was changed, deleted, inserted or reordered after it was written, or "
                                   "the signature or head does not match. "
                                   "NOT VERIFIABLE: nothing you hold vouches for it. "
                                   "It cannot show an edit re-signed by someone else who holds the signing key, a record "
                                   "put back to an earlier signed state (compare the head you noted: --head), or a "
                                   "debate deleted whole.",
                       epilog="Exit status: 0 every debate ok; 1 one failed (was changed) or an error; "
                              f"{NOT_VERIFIABLE} none failed but one is not verifiable (no seal, redacted, unsigned, "
                              "or signed by a key you did not name).")
    p.add_argument("debate_id", nargs="?", help="id or unique prefix (default: every debate in the journal)")
    p.add_argument("--export", metavar="FILE", help="check a JSON export (`symposium export ID --format json`) "
                                                     "instead of the journal; no journal is needed")
    p.add_argument("--head", help="the whole chain head you noted earlier (64 hex digits, from a report or `show`): "
                                  "it must still be the head")
    p.add_argument("--key", metavar="FINGERPRINT", help="the fingerprint (SHA256:…) of the key that must have signed, "
                                                        "as its owner gave it to you")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(handler=verify)


def verify(args: argparse.Namespace) -> int:
    head = _head(args.head)
    key = _key(args.key)
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
    if head is not None and len(verdicts) != 1:
        raise UserError("--head checks one debate: name its id (or --export FILE)")
    try:
        own = signing.own_public_key()
    except signing.KeyFileError as exc:
        raise UserError(str(exc)) from None
    verdicts = [seal.judged(v, own, key=key, head=head) for v in verdicts]
    if args.json:
        print(json.dumps([_as_dict(v) for v in verdicts], indent=2, ensure_ascii=True))
    else:
        _print(verdicts, own)
    if any(v.status == "tampered" for v in verdicts):
        return 1
    return NOT_VERIFIABLE if any(v.status == "not verifiable" for v in verdicts) else 0


def _head(given: str | None) -> str | None:
    if given is None:
        return None
    head = given.strip().lower()
    if not _HEAD.fullmatch(head):
        raise UserError(f"--head takes the whole head, 64 hex digits (`symposium show ID` prints it); got {len(head)} "
                        "characters: a part of a head can be matched by grinding, so it proves nothing")
    return head


def _key(given: str | None) -> str | None:
    if given is None:
        return None
    key = given.strip()
    if not _FINGERPRINT.fullmatch(key):
        raise UserError("--key takes a whole key fingerprint, SHA256: and 43 characters, as `symposium verify` prints "
                        "it for a debate the key signed")
    return key


def _from_export(path: Path) -> seal.Verdict:
    try:
        document = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a JSON export ({exc}); export one with `symposium export ID --format json`") from None
    except _DuplicateKey as exc:
        raise UserError(f"{path}: the key {terminal_safe(repr(exc.args[0]))} appears twice in one object, so readers "
                        "would disagree on what the file says; it is not an export Symposium wrote") from None
    if not isinstance(document, dict):
        raise UserError(f"{path}: not a JSON export of one debate; export one with `symposium export ID --format json`")
    try:
        return export_check.verify_export(document)
    except export_check.ExportError as exc:
        raise UserError(f"{path}: {terminal_safe(str(exc))}") from None


class _DuplicateKey(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: one that names a key twice reads as one
    thing here and another elsewhere (the first or the last copy wins, by parser)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _as_dict(v: seal.Verdict) -> dict[str, object]:
    sig = v.signature
    return {"debate_id": v.debate_id, "status": v.status, "ok": v.ok, "rows": v.rows, "links": v.links,
            "head": v.head,
            "sealed_on_migration_at": None if v.sealed_on_migration_at is None else seal.iso(v.sealed_on_migration_at),
            "signature": None if sig is None else {"fingerprint": sig.fingerprint, "valid": sig.valid,
                                                   "signed_from": sig.signed_from},
            "not_verifiable": list(v.unverifiable), "notes": list(v.notes),
            "problems": [{"table": p.table, "key": p.key, "what": p.what, "detail": p.detail,
                          "at": None if p.at is None else seal.iso(p.at)} for p in v.problems]}


def _one_line(text: str) -> str:
    return terminal_safe(text).replace("\n", "\\n").replace("\t", " ")


def _print(verdicts: list[seal.Verdict], own: str | None) -> None:
    console = Console(highlight=False, soft_wrap=True)  # a hash broken by a wrap cannot be copied

    def line(*parts: str | tuple[str, str]) -> None:
        """One line of output, whatever the file put in it: no escape or control character, and
        no line break or tab (an id holding "\nok …" must not print a line of its own)."""
        console.print(Text.assemble(*[(_one_line(p[0]), p[1]) if isinstance(p, tuple) else _one_line(p) for p in parts]))

    if not verdicts:
        line("the journal holds no debates: nothing to verify")
    for v in verdicts:
        if v.status == "ok":
            line(("ok ", "green"), f"{v.debate_id}: {v.rows} rows in {v.links} links, head {v.head}")
        elif v.status == "not verifiable":
            line(("NOT VERIFIABLE ", "bold yellow"), f"{v.debate_id}: {'; '.join(v.unverifiable)}")
        else:
            line(("FAILED ", "bold red"), f"{v.debate_id}: first {v.problems[0]}")
            for p in v.problems[1:]:
                line(f"  also {p}")
        for note in v.notes:
            line(f"  {note}")
    counts = {status: sum(v.status == status for v in verdicts) for status in ("ok", "tampered", "not verifiable")}
    if len(verdicts) > 1:
        line(f"{counts['ok']} of {len(verdicts)} debates verified"
             + (f"; {counts['tampered']} failed" if counts["tampered"] else "")
             + (f"; {counts['not verifiable']} not verifiable" if counts["not verifiable"] else ""))
    if verdicts:
        mine = f"your key ({signing.key_path()})" if own is not None else "the signing key"
        line(("cannot show: ", "dim"), f"an edit re-signed by whoever else holds {mine}; a record put back to an "
                                       "earlier signed state (compare the head you noted: --head); a debate deleted whole")
