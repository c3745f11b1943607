"""The journal: an SQLite file that records every debate event as it happens.

Guarantees (each has a test):

* WAL mode and a busy timeout, so the TUI and a headless run can write to one file at once;
* one transaction per finished turn (the turn, its distribution and its model call land
  together or not at all), so a process killed mid-reply leaves every earlier turn intact;
* the file (and its WAL) is created with mode 0600 in a 0700 folder, and one already there is
  narrowed to 0600 when opened (a journal of another account's is opened with a warning):
  cases are sensitive;
* text that is not UTF-8 (written by another tool, or a damaged file) reads as U+FFFD
  (:func:`readable_text`), never as an error, and is never written back;
* an explicit ``migrations`` table; a journal from a newer Symposium is refused, not damaged;
* every sealed row written is hash-chained (:mod:`store.seal`) in the transaction that writes
  it, and the chain's head signed with the user's key (:mod:`store.signing`), so the chain is
  exactly as whole as the rows after any crash.

Writes use plain SQL in explicit transactions (``BEGIN IMMEDIATE … COMMIT``); sqlite-utils
wraps the same connection for reading (see :mod:`store.queries`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from backends.private import narrow_own, private_dir, write_private
from protocols.core.events import (
    CallRecord,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    EvidenceAttached,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    ModeratorActed,
    Notice,
    PhaseChanged,
    TurnFinished,
)
from protocols.core.replay import counted
from protocols.core.replies import Reply

from . import seal, signing
from .schema import LATEST, MIGRATIONS

BUSY_TIMEOUT_MS = 10_000
#: How long a delete waits for other connections' reads to end before it says its words are
#: still in the file (:meth:`Journal._wipe`): the app's screen waits on it.
WIPE_WAIT_MS = 2_000


class JournalError(RuntimeError):
    """The journal cannot be opened or written. ``str()`` names the file and what to do."""


class DeleteUnfinished(JournalError):
    """A debate was deleted from the tables, but another connection's read kept its words in the
    file; the next open wipes them. ``str()`` says so, for the user."""


class ForeignJournal(UserWarning):
    """The journal opened belongs to another account (``str()`` names the file and the owner)."""


def default_db_path() -> Path:
    """``$SYMPOSIUM_DB`` if set, else ``journal.db`` in the platform's user data folder."""
    env = os.environ.get("SYMPOSIUM_DB")
    if env:
        return Path(env).expanduser()
    return Path(user_data_dir("symposium")) / "journal.db"


def readable_text(data: bytes) -> str:
    """Text as every reader of the journal is given it (``show``, the exports, the report, the
    app): Symposium writes UTF-8 only, so bytes that are not UTF-8 were written around it (another
    tool, a damaged file) and read as U+FFFD, the rest of the record shown rather than a crash.
    The file is not changed by reading it, and the seal hashes the bytes as stored
    (:func:`store.seal.as_stored`), so such an edit still fails ``symposium verify``."""
    return data.decode("utf-8", "replace")


def new_debate_id() -> str:
    """Short, unique, sortable-enough ids that are easy to type (``symposium show 3f9c2a1b``)."""
    return uuid.uuid4().hex[:12]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)  # keep order: distributions are ranked


class Journal:
    """An open journal file. Not shared between threads: open one per thread or process."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, signer: seal.Signs | None = None) -> None:
        """``signer`` signs each debate's seal head; by default the user's own key
        (:func:`store.signing.user_signer`), read (or made) at the first write."""
        self.path = Path(path) if path is not None else default_db_path()
        #: Rows written in the open transaction, to be sealed before it commits: (debate, table, key).
        self._unsealed: list[tuple[str, str, Any]] = []
        #: Debates whose ``updated_at`` the open transaction moves, and to when: set by the UPDATE
        #: that moves the seal's head (:meth:`_seal_written`), not by one of its own.
        self._touched: dict[str, float] = {}
        #: What this journal knows of each debate's chain: the head it last wrote and each row's
        #: latest seal (:func:`store.seal.trusted`, checked as each transaction begins).
        self._chains: dict[str, seal.Known] = {}
        #: False writes without sealing: only for ``benchmarks/journal_seal.py``'s comparison.
        self.sealing = True
        self._signer = signer
        self._prepare_file()
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.DatabaseError as exc:  # a folder where the file should be, say
            raise self._unreadable(exc) from None
        self.conn.row_factory = sqlite3.Row
        self.conn.text_factory = readable_text
        mode = self._open_wal()
        if mode.lower() != "wal":
            raise JournalError(f"{self.path}: could not switch to WAL mode (got {mode!r}); is it on a network drive?")
        self._migrate()
        #: The columns each sealed row's hash covers, as this journal declares them.
        self._sealed_columns = seal.columns(self.conn)
        if self._unwiped.exists():  # a delete that could not wipe its words: finished now if it can be
            self._wipe()

    # -- opening --------------------------------------------------------------------------

    def _prepare_file(self) -> None:
        """Create the folder (0700) and an empty file (0600) before SQLite touches it; SQLite
        gives the WAL and shared-memory files the same permissions as the database."""
        try:
            private_dir(self.path.parent, ours=False)  # missing folders 0700, parents included
            if not self.path.parent.is_dir():
                self._cannot_create("a file is in the way of its folder")
            fd = os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
            os.close(fd)
        except FileExistsError:
            self._narrow_existing()
        except OSError as exc:
            self._cannot_create(exc.strerror)

    def _narrow_existing(self) -> None:
        """A journal already there (restored from a backup, copied, written by an older version)
        keeps whatever mode it came with, and SQLite gives its WAL and shared memory the same:
        the user's own are narrowed to ``0600``; one owned by another account is opened as it is,
        with a warning naming the owner (who can read it, whatever its mode)."""
        for path in (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))):
            owner = narrow_own(path)
            if owner is not None:
                warnings.warn(ForeignJournal(f"{path}: belongs to {owner}, not to you: that account can read every "
                                             "debate in it whatever its mode. Keep your cases in a journal of your "
                                             "own (--db or SYMPOSIUM_DB)"), stacklevel=4)

    def _cannot_create(self, why: str | None) -> None:
        raise JournalError(
            f"{self.path}: cannot create the journal ({why}). "
            "Check the folder's permissions and free space, or choose another file with --db."
        ) from None

    def _open_wal(self) -> str:
        """Switch to WAL and set the connection's pragmas; the journal mode got.

        Two processes opening a new journal at once (a resume beside the app, the crash harness)
        can find it locked while the other switches it to WAL: SQLite then answers "locked" at
        once rather than waiting, so the switch is tried again until the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.01
        while True:
            try:
                self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                mode = str(self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
                self.conn.execute("PRAGMA foreign_keys = ON")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                # Deleted rows are overwritten, not left in free pages: a deleted case must be
                # gone from the disk. Many builds have it on already (Debian's); macOS's has not.
                self.conn.execute("PRAGMA secure_delete = ON")
                return mode
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise self._unreadable(exc) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.2)
            except sqlite3.DatabaseError as exc:
                raise self._unreadable(exc) from None

    def _unreadable(self, exc: sqlite3.Error) -> JournalError:
        return JournalError(
            f"{self.path}: not a readable Symposium journal ({exc}). "
            "Point --db (or SYMPOSIUM_DB) at another file, or move this one aside."
        )

    def _applied(self, version: int) -> bool:
        row = self.conn.execute("SELECT 1 FROM migrations WHERE version = ?", (version,)).fetchone()
        return row is not None

    def _migrate(self) -> None:
        with self._transaction():
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            current = self.conn.execute("SELECT COALESCE(MAX(version), 0) FROM migrations").fetchone()[0]
        if current > LATEST:
            raise JournalError(
                f"{self.path}: this journal was written by a newer Symposium (layout v{current}; "
                f"this version knows up to v{LATEST}). Upgrade Symposium, or use another file with --db."
            )
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            script = (
                "BEGIN IMMEDIATE;\n"
                f"{migration.sql}\n"
                f"INSERT INTO migrations(version, name, applied_at) VALUES "
                f"({migration.version}, {_sql_string(migration.name)}, {time.time()});\n"
            )
            try:
                self.conn.executescript(script)  # leaves the transaction open for ``then``
                if migration.then is not None:
                    migration.then(self.conn)
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                if self._applied(migration.version):  # another process opening it applied it first
                    continue
                raise JournalError(f"{self.path}: migration v{migration.version} failed ({exc}); nothing was changed.") from None

    @contextmanager
    def _transaction(self, debate_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE … COMMIT``, rolled back on any error (nothing half-written). A
        transaction that writes ``debate_id``'s rows first checks that its journal was not
        edited since this journal last wrote it (:func:`store.seal.trusted`)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise JournalError(f"{self.path}: journal is busy or read-only ({exc}).") from None
        try:
            if self.sealing and debate_id is not None:
                self._trust(debate_id)
            yield self.conn
            self._seal_written()
        except BaseException:
            self._unsealed.clear()
            self._touched.clear()
            self.conn.execute("ROLLBACK")
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            self.conn.execute("ROLLBACK")
            raise JournalError(f"{self.path}: could not save ({exc}); is the disk full or read-only?") from None

    def _trust(self, debate_id: str) -> None:
        known = seal.trusted(self.conn, debate_id, self._sealed_columns, self._chains.get(debate_id),
                             self._signing().public)
        if known is None:
            self._chains.pop(debate_id, None)
        else:
            self._chains[debate_id] = known

    def _rewriting(self, debate_id: str, table: str, key: Any) -> None:
        """Before a write that may rewrite a sealed row: refuse one edited since it was sealed
        (:func:`store.seal.check_rewrite`), or the new seal would vouch for the edit."""
        if self.sealing:
            seal.check_rewrite(self.conn, debate_id, table, key, self._sealed_columns, self._chains.get(debate_id))

    def _sealed(self, debate_id: str, table: str, key: Any) -> None:
        """Note a row written in this transaction; :meth:`_transaction` seals it before COMMIT."""
        self._unsealed.append((debate_id, table, key))

    def _signing(self) -> seal.Signs:
        """The signer, the user's key read (or made) at the first write that needs it."""
        if self._signer is None:
            try:
                self._signer = signing.user_signer()
            except signing.KeyFileError as exc:
                raise JournalError(f"{self.path}: cannot sign the journal's seal: {exc}") from None
        return self._signer

    def _seal_written(self) -> None:
        """Append a seal link for each row written in this transaction, debate by debate, in
        the order they were written (:func:`store.seal.append`), moving each debate's
        ``updated_at`` in the same UPDATE as its head; a debate touched with nothing to seal
        (or with sealing off) gets an UPDATE of its own."""
        written, self._unsealed = self._unsealed, []
        touched, self._touched = self._touched, {}
        if self.sealing and written:
            by_debate: dict[str, list[tuple[str, Any]]] = {}
            for debate_id, table, key in written:
                by_debate.setdefault(debate_id, []).append((table, key))
            signer = self._signing()
            for debate_id, rows in by_debate.items():
                if seal.append(self.conn, debate_id, rows, self._sealed_columns, chains=self._chains,
                               updated_at=touched.get(debate_id), signer=signer):
                    touched.pop(debate_id, None)
        for debate_id, at in touched.items():
            self.conn.execute("UPDATE debates SET updated_at = ? WHERE id = ?", (at, debate_id))

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The connection, inside :meth:`record`'s transaction (one per event)."""
        assert self.conn.in_transaction, "events are written through record(), one transaction each"
        yield self.conn

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- recording events -------------------------------------------------------------------

    def record(self, event: Event) -> int | None:
        """Write one event in one transaction; returns the new row id where there is one (turns,
        judgements).

        Events that only matter live (token deltas, turn starts, prompts to the moderator)
        are not stored: the finished turn holds the whole text. The events a resumed run
        replays are counted on the debate's row in the same transaction (``events_recorded``),
        so the count always says exactly how many of them the journal holds.
        """
        try:
            with self._transaction(event.debate_id):
                row = self._write(event)
                if counted(event):
                    self.conn.execute("UPDATE debates SET events_recorded = events_recorded + 1 WHERE id = ?",
                                      (event.debate_id,))
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: could not record {type(event).__name__} ({exc}).") from None
        return row

    def record_replies(self, debate_id: str, replies: Iterable[Reply]) -> None:
        """Keep the replies (and the person's answers) a run received since the last event, in
        one transaction, so a resumed run is answered as this one was (:mod:`protocols.core.replay`).
        Nothing is kept for a debate that has no row yet (there is nothing to resume)."""
        rows = [(r.role, r.kind, r.prompt_sha256, r.reply, _dumps(r.details), time.time(), debate_id) for r in replies]
        if not rows:
            return
        try:
            with self._transaction(debate_id) as c:
                for row in rows:
                    cur = c.execute(
                        "INSERT INTO replies(debate_id, role, kind, prompt_sha256, reply, details_json, created_at)"
                        " SELECT id, ?, ?, ?, ?, ?, ? FROM debates WHERE id = ?", row)
                    if cur.rowcount:
                        self._sealed(debate_id, "replies", cur.lastrowid)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: could not record the models' replies ({exc}).") from None

    def _write(self, event: Event) -> int | None:
        match event:
            case DebateStarted():
                self._debate_started(event)
            case TurnFinished():
                return self._turn_finished(event)
            case PhaseChanged():
                self._phase_changed(event)
            case MetricsComputed():
                self._metrics(event)
            case JudgementMade():
                return self._judgement(event)
            case ModelCalled():
                self._call(event.debate_id, event.call, None, event.round)
            case ModeratorActed():
                self._moderator(event)
            case Notice():
                self._notice(event)
            case DebateFinished():
                self._finished(event)
            case DebateResumed():
                self._resumed(event)
            case EvidenceAttached():
                self._evidence(event)
        return None

    def _debate_started(self, e: DebateStarted) -> None:
        now = e.at
        with self._writing() as c:
            c.execute(
                "INSERT INTO debates(id, protocol, title, subject, config_json, status, created_at, updated_at,"
                " events_recorded) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, 0)",
                (e.debate_id, e.protocol, e.title, e.subject, _dumps(e.config), now, now),
            )
            self._sealed(e.debate_id, "debates", e.debate_id)
            for p in e.participants:
                cur = c.execute(
                    "INSERT INTO participants(debate_id, role, model_id, backend, options_json, details_json)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (e.debate_id, p.role, p.model_id, p.backend, _dumps(p.options), _dumps(p.details)),
                )
                self._sealed(e.debate_id, "participants", cur.lastrowid)

    def _next_seq(self, debate_id: str) -> int:
        """The next turn number, read inside the write transaction (so never reused)."""
        row = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM turns WHERE debate_id = ?", (debate_id,)).fetchone()
        return int(row[0]) + 1

    def _turn_finished(self, e: TurnFinished) -> int:
        with self._writing() as c:
            params = (
                e.debate_id, self._next_seq(e.debate_id), e.round, e.phase, e.role, e.model_id, e.kind, e.kappa,
                e.text, e.raw, None if e.parsed is None else _dumps(e.parsed), _dumps(list(e.parse_notes)),
                *_turn_cost(e.call), e.at, e.request, e.confidence,
                None if e.exchange is None else _dumps([{"role": r, "content": c} for r, c in e.exchange]),
            )
            turn_id = c.execute(
                "INSERT INTO turns(debate_id, seq, round, phase, role, model_id, kind, kappa, text, raw, parsed_json,"
                " parse_notes_json, prompt_tokens, prompt_tokens_evaluated, completion_tokens, duration_s,"
                " finish_reason, created_at, request, confidence, exchange_json)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", params).lastrowid
            assert turn_id is not None  # an INSERT's row id
            self._sealed(e.debate_id, "turns", turn_id)
            if e.distribution:
                ranked = sorted(e.distribution.items(), key=lambda lp: lp[1], reverse=True)
                for i, (label, p) in enumerate(ranked):
                    row_id = c.execute(
                        "INSERT INTO distributions(turn_id, debate_id, round, role, rank, label, probability)"
                        " VALUES (?,?,?,?,?,?,?)", (turn_id, e.debate_id, e.round, e.role, i + 1, label, p)).lastrowid
                    self._sealed(e.debate_id, "distributions", row_id)
            if e.call is not None:
                self._call(e.debate_id, e.call, turn_id, e.round)
            for n, cited in enumerate(e.citations, start=1):
                claim_id = c.execute(
                    "INSERT INTO citations(debate_id, turn_id, claim_no, role, claim, source, quote, status, passage, match,"
                    " problem, label) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (e.debate_id, turn_id, n, e.role, cited.claim, cited.source, cited.quote, cited.status, cited.passage,
                     cited.match, cited.problem, cited.label)).lastrowid
                self._sealed(e.debate_id, "citations", claim_id)
            self._touch(e.debate_id)
        return turn_id

    def _evidence(self, e: EvidenceAttached) -> None:
        """The debate's evidence: its settings, each file (name, size, SHA-256 …) and every
        passage, in the event's one transaction: a resumed run reads them, not the files."""
        with self._writing() as c:
            c.execute("INSERT INTO evidence(debate_id, settings_json, created_at) VALUES (?,?,?)",
                      (e.debate_id, _dumps(e.settings), time.time()))
            self._sealed(e.debate_id, "evidence", e.debate_id)
            for f in e.files:
                cur = c.execute(
                    "INSERT INTO evidence_files(debate_id, number, name, kind, size, sha256, pages, first_passage, passages,"
                    " redactions_json, notes_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (e.debate_id, f.number, f.name, f.kind, f.size, f.sha256, f.pages, f.first, f.passages,
                     _dumps(f.redactions), _dumps(list(f.notes))))
                self._sealed(e.debate_id, "evidence_files", cur.lastrowid)
            for p in e.passages:
                cur = c.execute(
                    "INSERT INTO evidence_passages(debate_id, number, file, page, paragraph, part, parts, text)"
                    " VALUES (?,?,?,?,?,?,?,?)", (e.debate_id, p.number, p.file, p.page, p.paragraph, p.part, p.parts, p.text))
                self._sealed(e.debate_id, "evidence_passages", cur.lastrowid)
            self._touch(e.debate_id)

    def _call(self, debate_id: str, call: CallRecord, turn_id: int | None, round_: int | None) -> None:
        params = (
            debate_id, turn_id, round_, call.role, call.model_id, call.purpose, _dumps(call.options),
            call.prompt_tokens, call.prompt_tokens_evaluated, call.completion_tokens, call.duration_s,
            call.first_token_s, call.finish_reason, call.error, time.time(),
        )
        call_id = self.conn.execute(
            "INSERT INTO model_calls(debate_id, turn_id, round, role, model_id, purpose, options_json, prompt_tokens,"
            " prompt_tokens_evaluated, completion_tokens, duration_s, first_token_s, finish_reason, error, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", params).lastrowid
        self._sealed(debate_id, "model_calls", call_id)
        cost_id = self.conn.execute(
            "INSERT INTO call_costs(call_id, debate_id, cached_tokens, wait_s, prefill_s, decode_s) VALUES (?,?,?,?,?,?)",
            (call_id, debate_id, call.cached_tokens, call.wait_s, call.prefill_s, call.decode_s)).lastrowid
        self._sealed(debate_id, "call_costs", cost_id)

    def _phase_changed(self, e: PhaseChanged) -> None:
        with self._writing() as c:
            cur = c.execute(
                "INSERT INTO phases(debate_id, name, round, kappa, started_at) VALUES (?,?,?,?,?)",
                (e.debate_id, e.phase, e.round, e.kappa, e.at),
            )
            self._sealed(e.debate_id, "phases", cur.lastrowid)
            self._rewriting(e.debate_id, "rounds", e.round)
            c.execute(
                "INSERT INTO rounds(debate_id, round, phase, kappa) VALUES (?,?,?,?)"
                " ON CONFLICT(debate_id, round) DO UPDATE SET phase = excluded.phase, kappa = excluded.kappa",
                (e.debate_id, e.round, e.phase, e.kappa),
            )
            self._sealed(e.debate_id, "rounds", e.round)
            self._touch(e.debate_id)

    def _metrics(self, e: MetricsComputed) -> None:
        with self._writing() as c:
            for name, value in e.metrics.items():
                was = c.execute("SELECT id FROM metrics WHERE debate_id = ? AND round = ? AND name = ?",
                                (e.debate_id, e.round, name)).fetchone()
                if was is not None:
                    self._rewriting(e.debate_id, "metrics", was[0])
                metric_id = c.execute(
                    "INSERT INTO metrics(debate_id, round, name, value) VALUES (?,?,?,?)"
                    " ON CONFLICT(debate_id, round, name) DO UPDATE SET value = excluded.value RETURNING id",
                    (e.debate_id, e.round, name, value),
                ).fetchone()[0]
                self._sealed(e.debate_id, "metrics", metric_id)
            if e.kappa is not None:
                self._rewriting(e.debate_id, "rounds", e.round)
                c.execute(
                    "INSERT INTO rounds(debate_id, round, kappa) VALUES (?,?,?)"
                    " ON CONFLICT(debate_id, round) DO UPDATE SET kappa = excluded.kappa",
                    (e.debate_id, e.round, e.kappa),
                )
                self._sealed(e.debate_id, "rounds", e.round)
            self._touch(e.debate_id)

    def _judgement(self, e: JudgementMade) -> int:
        with self._writing() as c:
            cur = c.execute(
                "INSERT INTO judgements(debate_id, round, judge_role, judge_model, kind, target, subject, score,"
                " verdict, reasons_json, raw, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    e.debate_id, e.round, e.judge_role, e.judge_model, e.kind, e.target, e.subject, e.score,
                    e.verdict, _dumps(e.reasons), e.raw, time.time(),
                ),
            )
            self._sealed(e.debate_id, "judgements", cur.lastrowid)
            if e.call is not None:
                self._call(e.debate_id, e.call, None, e.round)
            self._touch(e.debate_id)
        assert cur.lastrowid is not None  # an INSERT's row id
        return cur.lastrowid

    def _moderator(self, e: ModeratorActed) -> None:
        with self._writing() as c:
            cur = c.execute(
                "INSERT INTO moderator_events(debate_id, round, kind, payload_json, created_at, checkpoint)"
                " VALUES (?,?,?,?,?,?)",
                (e.debate_id, e.round, e.kind, _dumps(e.payload), time.time(), e.checkpoint),
            )
            self._sealed(e.debate_id, "moderator_events", cur.lastrowid)
            self._touch(e.debate_id)

    def _notice(self, e: Notice) -> None:
        with self._writing() as c:
            cur = c.execute(
                "INSERT INTO notices(debate_id, round, kind, text, details_json, created_at) VALUES (?,?,?,?,?,?)",
                (e.debate_id, e.round, e.kind, e.text, _dumps(e.details), e.at),
            )
            self._sealed(e.debate_id, "notices", cur.lastrowid)
            self._touch(e.debate_id)

    def _finished(self, e: DebateFinished) -> None:
        with self._writing() as c:
            self._rewriting(e.debate_id, "debates", e.debate_id)
            c.execute(
                "UPDATE debates SET status = ?, stop_reason = ?, outcome_json = ?, finished_at = ?, updated_at = ?"
                " WHERE id = ?",
                (e.status, e.stop_reason, _dumps(e.outcome), e.at, e.at, e.debate_id),
            )
            self._sealed(e.debate_id, "debates", e.debate_id)

    def _resumed(self, e: DebateResumed) -> None:
        with self._writing() as c:
            self._rewriting(e.debate_id, "debates", e.debate_id)
            c.execute("UPDATE debates SET status = 'running', stop_reason = NULL, finished_at = NULL, updated_at = ?"
                      " WHERE id = ?", (e.at, e.debate_id))
            self._sealed(e.debate_id, "debates", e.debate_id)
            cur = c.execute("INSERT INTO moderator_events(debate_id, round, kind, payload_json, created_at)"
                            " VALUES (?,?,?,?,?)",
                            (e.debate_id, e.from_round, "resume_debate", _dumps({"from_round": e.from_round}), e.at))
            self._sealed(e.debate_id, "moderator_events", cur.lastrowid)

    def _touch(self, debate_id: str) -> None:
        """Move the debate's ``updated_at`` to now, when the transaction ends (:meth:`_seal_written`)."""
        self._touched[debate_id] = time.time()

    # -- small writes outside the event stream ------------------------------------------------

    def delete_debate(self, debate_id: str) -> bool:
        """Remove a debate and everything recorded about it. Returns whether it existed.

        Gone from the files too: ``secure_delete`` overwrites the freed rows, the search indexes
        (the turns', and the moderator's and judges' words) are rebuilt into one segment each
        (FTS5 only marks a deleted turn's words as deleted and keeps them in its older segments
        until they are merged), and the WAL is checkpointed into the journal and emptied
        (:meth:`_wipe`). When another connection's read keeps that from
        finishing, :class:`DeleteUnfinished` says so and the next open finishes it. (What the
        file system or a backup kept of earlier versions of the file is beyond a program's reach.)"""
        with self._transaction() as c:
            cur = c.execute("DELETE FROM debates WHERE id = ?", (debate_id,))
            if cur.rowcount:
                for index in ("turns_fts", "said_fts"):
                    c.execute(f"INSERT INTO {index}({index}) VALUES ('optimize')")
        if cur.rowcount:  # the file itself, now: the old pages would wait in it for a checkpoint
            self._wipe(debate_id)
        return cur.rowcount > 0

    @property
    def _unwiped(self) -> Path:
        """Names the deletes whose words are still in the files (debate ids only, no text)."""
        return self.path.with_name(self.path.name + "-purge")

    def _wipe(self, debate_id: str | None = None) -> None:
        """Copy every page the WAL holds into the journal and empty the WAL, so deleted words
        (in the journal's old pages and the WAL's old frames) are overwritten. A connection in
        the middle of a read (the app beside a command, a database browser) holds the old pages
        in use: the checkpoint then cannot finish, and a delete must not claim it did. Its id is
        kept beside the journal and :class:`DeleteUnfinished` raised; opening the journal tries
        again (:meth:`__init__`)."""
        self.conn.execute(f"PRAGMA busy_timeout = {WIPE_WAIT_MS}")
        try:
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not busy:
            self._unwiped.unlink(missing_ok=True)
            return
        if debate_id is None:
            return
        pending = self._unwiped.read_text(encoding="utf-8").split() if self._unwiped.exists() else []
        write_private(self._unwiped, "\n".join([*pending, debate_id]) + "\n")
        raise DeleteUnfinished(
            f"{self.path}: debate {debate_id} is deleted from the journal, but its words are still in the file: "
            "another program is reading the journal (the app, a command in another terminal, a database browser). "
            "They are wiped the next time the journal is opened with those closed.")

    def mark_interrupted(self, debate_id: str, reason: str) -> None:
        """Flag a debate cut off by Ctrl-C or a crash, so it can be listed and resumed."""
        try:
            with self._transaction(debate_id) as c:
                self._rewriting(debate_id, "debates", debate_id)
                cur = c.execute(
                    "UPDATE debates SET status = 'interrupted', stop_reason = ?, updated_at = ? WHERE id = ? AND status = 'running'",
                    (reason, time.time(), debate_id),
                )
                if cur.rowcount:
                    self._sealed(debate_id, "debates", debate_id)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: could not mark debate {debate_id} interrupted ({exc}).") from None

    def record_provenance(self, debate_id: str, provenance: dict[str, Any]) -> None:
        """Keep what produced a debate (:mod:`store.provenance`), sealed with its other rows.
        Written once at the start; the end time is the debate's ``finished_at``."""
        try:
            with self._transaction(debate_id) as c:
                self._rewriting(debate_id, "provenance", debate_id)
                c.execute("INSERT INTO provenance(debate_id, provenance_json, created_at) VALUES (?,?,?)"
                          " ON CONFLICT(debate_id) DO UPDATE SET provenance_json = excluded.provenance_json",
                          (debate_id, _dumps(provenance), time.time()))
                self._sealed(debate_id, "provenance", debate_id)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: could not record the debate's provenance ({exc}).") from None


def _turn_cost(call: CallRecord | None) -> tuple[int, int, int, float, str]:
    """Token counts, duration and finish reason of a turn (zeros for a person's turn)."""
    if call is None:
        return (0, 0, 0, 0.0, "human")
    return (call.prompt_tokens, call.prompt_tokens_evaluated, call.completion_tokens, call.duration_s, call.finish_reason)


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"

