"""The files a debate is written to (a report, a Markdown or JSON export), for the app and the
command line alike: what they are called, what they hold, and when one may replace another.

A redacted copy's name says it is redacted (``symposium-ID-redacted.html``) and a full copy's
name never does, so the two kinds never share a name and a file's kind can be read from its
name: a full copy written where a redacted one was expected is the mistake that leaks a case.
Nothing replaces an existing file unless the person said so (the app asks; the command line
takes ``--force``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_documents_dir

from outputs.export import redacted_copy, to_json, to_markdown, write_private
from store import seal
from store.journal import Journal
from store.queries import Queries

Format = Literal["html", "md", "json"]
#: What each format is, as a sentence names it.
WHAT: dict[str, str] = {"html": "report", "md": "Markdown export", "json": "JSON export"}
#: The word a redacted copy's name carries.
REDACTED = "redacted"


def app_folder() -> Path:
    """Where the app offers to write reports and exports (the person may choose another folder):
    a ``symposium`` folder in the user's documents, created 0700 when first used."""
    return Path(user_documents_dir()) / "symposium"


def command_line_folder() -> Path:
    """Where ``symposium report`` writes without ``--out``: the current folder (``export``
    without ``--out`` prints to standard output)."""
    return Path.cwd()


class WriteRefused(ValueError):
    """The file was not written; the message says why and what to do instead. ``exists``: the
    reason is a file already there (the person may choose to replace it)."""

    def __init__(self, message: str, *, exists: bool = False) -> None:
        super().__init__(message)
        self.exists = exists


def file_name(debate_id: str, fmt: Format, *, redacted: bool) -> str:
    """The name the app and the command line give a debate's file when none is chosen."""
    return f"symposium-{debate_id}{'-' + REDACTED if redacted else ''}.{fmt}"


def says_redacted(path: Path) -> bool:
    """Whether ``path``'s name says the file is a redacted copy."""
    return REDACTED in path.name.casefold()


def check_name(path: Path, *, redacted: bool, option: str = "a file name") -> None:
    """A redacted copy goes to a name that says so, a full copy never does; else
    :class:`WriteRefused` naming the file and a name that would do."""
    if redacted and not says_redacted(path):
        better = path.with_name(f"{path.stem}-{REDACTED}{path.suffix}")
        raise WriteRefused(f"{path}: a redacted copy's name must say it is redacted (e.g. {better.name}), so that "
                           f"nobody takes it for the full text or the full text for it; choose such {option}")
    if not redacted and says_redacted(path):
        raise WriteRefused(f"{path}: this copy is not redacted, but its name says it is: someone could share it as "
                           f"redacted; choose {option} without \"{REDACTED}\" in it, or redact it")


@dataclass(frozen=True)
class Written:
    path: Path
    #: Whether an earlier file was replaced (which the person agreed to).
    replaced: bool
    #: Items masked per kind, for a redacted copy.
    masked: dict[str, int] | None


def debate_for_export(journal: Journal, debate_id: str, *, chain: bool = False, redact: bool = False) -> dict[str, Any]:
    """The debate as the exports show it. With ``chain`` its seal carries every link (the JSON
    export); redacted, it carries no seal and no hash of the unredacted text at all
    (:func:`outputs.export.redacted_copy`)."""
    debate = Queries(journal).debate(debate_id)
    if debate is None:
        raise WriteRefused(f"no debate {debate_id!r} in the journal")
    if redact:
        return redacted_copy(debate)
    debate["seal"] = seal.export(journal.conn, debate_id) if chain else seal.summary(journal.conn, debate_id)
    return debate


def content(journal: Journal, debate_id: str, fmt: Format, *, redacted: bool) -> tuple[str, dict[str, int] | None]:
    """What the file holds, and (a redacted report) how many items of each kind were masked."""
    if fmt == "html":
        from outputs.report import report_html  # here: its plots import numpy, which the journal commands do without

        debate = Queries(journal).debate(debate_id)
        if debate is None:
            raise WriteRefused(f"no debate {debate_id!r} in the journal")
        return report_html(debate, redact=redacted)
    debate = debate_for_export(journal, debate_id, chain=fmt == "json", redact=redacted)
    return (to_json(debate) if fmt == "json" else to_markdown(debate, redacted=redacted)), None


def write(journal: Journal, debate_id: str, fmt: Format, path: Path, *, redacted: bool, replace: bool = False,
          option: str = "a file name") -> Written:
    """Write the debate's ``fmt`` file to ``path`` (0600): refused when its name says the other
    kind, or when a file is there and ``replace`` was not given."""
    check_name(path, redacted=redacted, option=option)
    existed = path.exists()
    if existed and not replace:
        raise WriteRefused(f"{path} exists; nothing was replaced", exists=True)
    if existed and path.is_dir():
        raise WriteRefused(f"{path} is a folder; choose a file name")
    text, masked = content(journal, debate_id, fmt, redacted=redacted)
    try:
        write_private(path, text)
    except OSError as exc:
        raise WriteRefused(f"cannot write {path}: {exc.strerror}") from None
    return Written(path, existed, masked)


def masked_in_words(masked: dict[str, int] | None) -> str:
    """``3 name, 1 date`` — what a redacted copy masked, or that it found nothing to mask."""
    if masked is None:
        return ""
    return ", ".join(f"{n} {kind.lower()}" for kind, n in masked.items() if n) or "nothing found to mask"
