"""Kill debates at moments timed from their own progress, check that the kill took, check the journal, resume.

Used by tests/store/test_crash_harness.py (a few kills) and benchmarks/crash.py (hundreds). Real
processes and one real journal file shared by every trial (trials may run side by side).

Each kill is timed from the debate's progress: the harness waits until a randomly chosen
number of turns has been shown (``fast``/``model``: printed; ``app``: journalled, which the
app does before it shows a turn; in the fast mode 1…the protocol's fewest turns less one, fewer
on the bundled model, see :func:`latest_kill`), then waits a random part of a turn more and strikes. So kills land
right after finished turns and in the middle of the next reply, never at start-up.

A kill counts only when it took effect, which each trial proves from the process's exit:

* ``SIGKILL`` took effect when the returncode is ``-9`` (died of it; nothing could run).
* ``SIGINT`` took effect when the returncode is ``130``, the interrupt path of both headless
  entry points (``KeyboardInterrupt`` caught, the debate marked ``interrupted``, exit 130), or
  ``-2`` (an uncaught ``KeyboardInterrupt``: CPython then dies of SIGINT itself). Anything else,
  from a process that was alive and mid-debate when the signal was sent, is *no effect*: the
  signal was ignored or swallowed, and a test fails on it.
* ``SIGTERM`` and ``SIGHUP`` (``kill PID``, ``timeout``, a service manager; a closed terminal)
  took effect when the returncode is 128 + the signal's number (``143``, ``129``): the same
  clean-up as Ctrl-C's ran (``tui/headless/signals.py``; in the app, ``SymposiumApp._end_on_signal``)
  and the process reported the signal. Dying of it (``-15``, ``-1``) means nothing was marked
  or closed, and is *no effect*. In the app, the "Quit?" dialog must not have appeared either
  (a signal is not a keypress), and SIGHUP comes as a hang-up does: the terminal closed first.
* ``Ctrl-C`` (``app`` mode, the key through a pseudo-terminal, as a person presses it; a
  terminal in raw mode turns it into a key, not a signal) took effect when the app showed its
  "A debate is running. Quit?" dialog, the harness pressed Enter, and the app exited with 0.

Every process is started by :func:`tests.helpers.killable.spawn`: its own process group, SIGINT
at its default disposition (a harness started with ``&`` from a script would otherwise pass
an ignored SIGINT on, and CPython keeps it ignored), and signalled as a group. A signal sent
after the process had exited or the debate had ended is counted apart (``late``), as is a
trial whose debate ended before the chosen moment (``not sent``).

After each trial the journal must pass ``PRAGMA integrity_check`` and its seal must verify
(``store/seal.py``, again after the resume); every turn shown must be
stored; every stored turn whole (text, raw reply, JSON that parses, numbered 1…n) with its
distribution rows and its model-call row; a debate cut off by SIGINT, SIGTERM, SIGHUP or Ctrl-C
must be marked ``interrupted`` (SIGKILL leaves ``running``: nothing could mark it), and after any
of those no process of the killed one's process group may remain (an engine or server child left
running); then it is resumed to its end and no earlier turn may have changed.

Three modes: ``fast`` runs any protocol (:data:`PROTOCOLS`), started and resumed through its
spec as the app and the CLI do, with the real journal, runner and printer, on backends that
answer from the prompt and stream at a model's pace (:mod:`tests.helpers.scripted_debate`), for
volume; ``model`` runs ``symposium run <protocol>`` (the command lines: :func:`model_command`) /
``symposium resume`` on the bundled SmolLM2 model; ``app`` runs the Textual app itself on
SmolLM2 under a pseudo-terminal (:mod:`tests.helpers.app_debate`; EVINCE only), killed by Ctrl-C
(confirmed), SIGKILL, SIGTERM or SIGHUP and resumed in the app.

What "whole" means per protocol (:func:`check_rows`): every turn numbered 1…n with its text, raw
reply and JSON that parses; one model-call row for a model's turn, none for the person's
(deliberation, humanloop) or the protocol's own (the conference's scripted moderator); EVINCE's
openings and refutations with a distribution summing to 1 (or recorded as giving none); every
judgement's reasons JSON that parses. "Shown": EVINCE's openings and refutations, every turn of
the other protocols.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import queue
import random
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from tests.helpers.evince_rounds import says_no_prediction
from tests.helpers.killable import send_to_group, spawn
from tests.helpers.paths import REPO
from tests.helpers.samples import FIRST, cli_args

#: The protocols the harness kills: each registered protocol's first sample run (its
#: definition's ``samples``: D3 runs SAMRE), in the fast mode on scripted replies and in the
#: model mode on the bundled SmolLM2 (``symposium run``, its arguments from the sample).
PROTOCOLS: tuple[str, ...] = tuple(FIRST)
SMOL = "smollm2-135m"
#: The person's turns in the model mode (deliberation: one a line; humanloop: separated by ``---``).
PERSON_SCRIPT = "I think the evidence matters most.\n---\nI keep my view: the costs are too high.\n"
Mode = Literal["fast", "model", "app"]
MODES: tuple[Mode, ...] = ("fast", "model", "app")
CTRL_C = "Ctrl-C"
#: The ways each mode is killed (a trial draws one, evenly, unless told).
SIGNALS: dict[Mode, tuple[str, ...]] = {"fast": ("SIGKILL", "SIGINT", "SIGTERM", "SIGHUP"),
                                        "model": ("SIGKILL", "SIGINT", "SIGTERM", "SIGHUP"),
                                        "app": ("SIGKILL", CTRL_C, "SIGTERM", "SIGHUP")}
#: The fewest turns each protocol's fast-mode debate journals (its sample's ``fewest_turns``) …
FAST_TURNS: dict[str, int] = {name: sample.fewest_turns for name, (_, sample) in FIRST.items()}
#: … the latest shown turn after which each mode kills the EVINCE debate of the app mode and of
#: the runs that name no protocol (a trial draws 1…this; the fast mode: its fewest turns less one).
#: On SmolLM2 an EVINCE debate may converge after two rounds (four debate turns); the app's run
#: (recommendations off, to keep it short) then ends.
DEBATE_TURNS = FAST_TURNS["evince"]
LAST_KILL_AFTER: dict[Mode, int] = {"fast": DEBATE_TURNS - 1, "model": 4, "app": 3}
#: The model mode's latest shown turn per protocol (its sample's ``model_turns``: EVINCE counts its
#: debate turns, the others every turn).
MODEL_LAST_KILL_AFTER: dict[str, int] = {name: sample.model_turns for name, (_, sample) in FIRST.items()}
#: About how long one turn takes in each mode (for the random extra wait after a shown turn).
TURN_S: dict[Mode, float] = {"fast": 0.4, "model": 4.0, "app": 4.0}


def latest_kill(mode: Mode, protocol: str) -> int:
    """The latest shown turn after which a trial of ``mode`` and ``protocol`` kills (1…this is drawn)."""
    if mode == "fast":
        return FAST_TURNS[protocol] - 1
    return MODEL_LAST_KILL_AFTER[protocol] if mode == "model" else LAST_KILL_AFTER[mode]
#: The app's question on Ctrl-C while a debate runs (tui/app/app.py, action_request_quit).
QUIT_QUESTION = "A debate is running"
#: Statuses of a debate that has ended (a signal sent then came too late) …
ENDED = ("finished", "stopped", "failed")
#: … and of one that resume cannot continue.
COMPLETE = ("finished", "stopped")
#: What an exit status must be for the signal to have taken effect (see the module docstring).
EFFECTIVE_RETURNCODES: dict[str, tuple[int, ...]] = {"SIGKILL": (-signal.SIGKILL,), "SIGINT": (130, -signal.SIGINT),
                                                     "SIGTERM": (128 + signal.SIGTERM,),
                                                     "SIGHUP": (128 + signal.SIGHUP,), CTRL_C: (0,)}


@dataclass
class Trial:
    number: int
    mode: Mode
    sig: str  # SIGKILL, SIGINT, or Ctrl-C (the key, in the app)
    after_shown: int  # the kill was due after this many turns had been shown …
    extra_s: float  # … and this much longer
    sent: bool  # the moment came and the harness struck (False: the debate ended first)
    alive_at_signal: bool  # the process had not exited when it struck
    status_at_signal: str | None  # the debate's journalled status then
    stored_at_signal: int  # turns in the journal then (of every kind, as turns_before and turns_after)
    confirmed: bool  # Ctrl-C only: the app asked "Quit?" and the harness pressed Enter
    returncode: int | None
    debate_id: str | None
    status_before: str | None  # the debate's status once the process had gone
    turns_before: int  # turns stored then
    printed_before: int  # turns shown by the time the process died
    integrity: str
    rows_valid: bool
    resumed: bool
    turns_after: int  # turns stored after the resume
    kept: bool
    problem: str = ""
    asked: bool = False  # the app showed its "Quit?" dialog (SIGTERM and SIGHUP must not make it ask)
    left_behind: bool = False  # a process of the killed one's group was still there after it exited
    protocol: str = "evince"
    #: The debate's seal (store/seal.py) verified after the kill and again after the resume:
    #: '' when every chain held, else the first row :func:`store.seal.verify` named.
    seal_problem: str = ""

    @property
    def sealed(self) -> bool:
        return not self.seal_problem

    @property
    def took_effect(self) -> bool:
        """The process died of the signal or ran its interrupt path, as its exit status proves
        (and in the app, Ctrl-C was asked about and confirmed; a signal was not asked about)."""
        if not self.sent or self.returncode not in EFFECTIVE_RETURNCODES[self.sig]:
            return False
        return self.confirmed if self.sig == CTRL_C else not self.asked

    @property
    def outcome(self) -> str:
        """``kill`` (took effect), ``late`` (the process had exited or the debate had ended when
        the signal went), ``not sent`` (the debate ended before the chosen moment) or
        ``no effect`` (alive and mid-debate, and the signal changed nothing: a failure)."""
        if not self.sent:
            return "not sent"
        if self.took_effect:
            return "kill"
        if not self.alive_at_signal or self.status_at_signal in ENDED:
            return "late"
        return "no effect"

    @property
    def cut_off(self) -> bool:
        """A kill that stopped a debate before its end (the ones resume must finish)."""
        return self.outcome == "kill" and self.status_at_signal not in ENDED

    @property
    def marked_as_promised(self) -> bool:
        """SIGINT, SIGTERM, SIGHUP and Ctrl-C promise the debate is marked ``interrupted``; after
        SIGKILL it is left ``running`` (nothing could run). Only a kill that cut a debate off is
        held to it."""
        if not self.cut_off:
            return True
        if self.sig == "SIGKILL":
            return self.status_before == "running"
        return self.status_before == "interrupted"

    @property
    def survived(self) -> bool:
        """The journal's promises held (integrity, nothing shown lost, rows whole, the right
        mark, resumed to the end, nothing earlier changed), and no process of the killed one's
        group outlived it (SIGKILL excepted: nothing could close them). Says nothing of whether
        the kill took."""
        needs = self.debate_id is not None and self.status_before not in COMPLETE
        return (self.debate_id is not None and self.integrity == "ok" and self.rows_valid and self.kept and self.sealed
                and self.turns_before >= self.printed_before and (self.resumed or not needs) and self.marked_as_promised
                and (self.sig == "SIGKILL" or not self.left_behind))


def _env(db: Path, config_dir: str) -> dict[str, str]:
    return {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200", "PYTHONPATH": str(REPO),
            "SYMPOSIUM_CONFIG_DIR": config_dir, "TERM": "xterm-256color"}


def _start(db: Path, mode: Mode, config_dir: str, *args: str) -> subprocess.Popen[str]:
    cmd = ["-m", "tests.helpers.scripted_debate"] if mode == "fast" else ["-m", "tui.cli"]
    return spawn([sys.executable, *cmd, *args], cwd=REPO, env=_env(db, config_dir), text=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def model_command(protocol: str, number: int, rng: random.Random, config_dir: str) -> list[str]:
    """``symposium run …`` for ``protocol``'s sample on SmolLM2 in every seat (see
    :func:`tests.helpers.samples.cli_args`), seeded by the trial."""
    definition, sample = FIRST[protocol]
    person = definition.person_role()
    script = Path(config_dir) / "person.txt"
    paragraphs = person is not None and person.reads == "paragraph"
    script.write_text(PERSON_SCRIPT if paragraphs else PERSON_SCRIPT.replace("---\n", ""), encoding="utf-8")
    return ["run", *cli_args(definition, sample, SMOL, person_script=str(script)), "--seed", str(number)]


_DEBATE_TURN_HEADER = re.compile(r"agent-[ab] \(.*\) · (opening|refutation)$")
#: A turn's header as the printer shows it (``role (model) · kind``), any protocol.
_TURN_HEADER = re.compile(r"^\S+ \(\S+\) · \S+$")
_STARTED = re.compile(r"^\S+ · .* · debate (\S+)$")


class _ShownTurns:
    """Counts the debate turns a process has shown, from its output.

    ``fast``: the helper's ``@journalled`` milestone. ``model``, EVINCE: the printer's first
    ``↳`` line after an agent's opening/refutation header (its distribution, or the note that
    it gave none), which is printed once the turn has been journalled. (Counting distribution
    lines alone missed the turns a small model left without a distribution, and with them the
    moment of the kill.) ``model``, any other protocol: turn headers less one (turns run one
    after another, and a turn is shown finished, after it is journalled, before the next one's
    header), so a kill after N shown turns strikes as turn N+1 begins, plus the random wait."""

    def __init__(self, mode: Mode, protocol: str = "evince") -> None:
        self.mode = mode
        self.protocol = protocol
        self.count = 0
        self._pending = False
        self._headers = 0

    def feed(self, line: str) -> None:
        if self.mode == "fast":
            self.count += line.startswith("@journalled ")
        elif self.protocol != "evince":
            if _TURN_HEADER.match(line.strip()):
                self._headers += 1
                self.count = max(0, self._headers - 1)
        elif _DEBATE_TURN_HEADER.match(line.strip()):
            self._pending = True
        elif self._pending and line.startswith("  ↳ "):
            self.count += 1
            self._pending = False


def _debate_id(line: str, mode: Mode) -> str | None:
    if mode == "fast" and line.startswith("@debate "):
        return line.split()[1]
    if mode == "model" and (started := _STARTED.match(line.strip())):
        return started.group(1)
    return None


def check_seal(conn: sqlite3.Connection, debate_id: str, when: str) -> str:
    """'' when the debate's hash chain holds (each row written with its link, in one
    transaction: a kill can cut off neither alone), else the first row that does not match."""
    from store.seal import verify

    verdict = verify(conn, debate_id)
    return "" if verdict.ok else f"seal broken {when}: {verdict.problems[0]}"


def check_rows(conn: sqlite3.Connection, debate_id: str) -> str:
    """'' when every stored turn is whole (numbered 1…n, text and raw reply, JSON that parses),
    with its model-call row (one for a model's turn; none for the person's or the protocol's
    own, such as the conference's scripted moderator), EVINCE's with its distribution (or
    recorded as giving none), and every judgement's reasons JSON that parses; otherwise what is
    wrong."""
    protocol = conn.execute("SELECT protocol FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
    modelled = {role for role, backend in conn.execute(
        "SELECT role, backend FROM participants WHERE debate_id = ?", (debate_id,)) if backend not in ("human", "code")}
    rows = conn.execute("SELECT id, seq, kind, role, text, raw, parsed_json, parse_notes_json FROM turns"
                        " WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()
    for expected, (turn_id, seq, kind, role, text, raw, parsed, notes) in enumerate(rows, 1):
        if seq != expected or text is None or raw is None:
            return f"turn {seq}: numbered or written wrong"
        json.loads(notes)
        if parsed is not None:
            json.loads(parsed)
        calls = conn.execute("SELECT COUNT(*) FROM model_calls WHERE turn_id = ?", (turn_id,)).fetchone()[0]
        if calls != (1 if role in modelled else 0):
            return f"turn {seq} ({role}): {calls} model-call rows"
        if protocol == "evince" and kind in ("opening", "refutation"):
            count, dist = conn.execute("SELECT COUNT(*), COALESCE(SUM(probability), 0) FROM distributions"
                                       " WHERE turn_id = ?", (turn_id,)).fetchone()
            if count == 0 and says_no_prediction(json.loads(notes)):
                continue  # a reply with no prediction is kept as such, never given an invented one
            if abs(dist - 1.0) > 1e-6:
                return f"turn {seq}: distribution sums to {dist}"
    for (reasons,) in conn.execute("SELECT reasons_json FROM judgements WHERE debate_id = ?", (debate_id,)):
        if reasons is not None:
            json.loads(reasons)
    return ""


def _debate_turns(conn: sqlite3.Connection, debate_id: str) -> list[tuple[int, str]]:
    return conn.execute("SELECT seq, raw FROM turns WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()


def _progress(db: Path, debate_id: str | None) -> tuple[str | None, int, int]:
    """The debate's journalled status, its debate turns (the ones the harness counts as shown:
    EVINCE's openings and refutations, any other protocol's every turn) and all its stored turns
    (EVINCE's recommendations included) now."""
    if debate_id is None:
        return None, 0, 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        row = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()
        debate_turns, turns = conn.execute(
            "SELECT COALESCE(SUM(kind IN ('opening', 'refutation') OR d.protocol != 'evince'), 0), COUNT(*)"
            " FROM turns JOIN debates d ON d.id = turns.debate_id WHERE debate_id = ?", (debate_id,)).fetchone()
    finally:
        conn.close()
    return (row[0] if row else None), debate_turns, turns


def _debate_ids(db: Path) -> set[str]:
    if not db.exists():
        return set()
    conn = sqlite3.connect(db, timeout=30)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM debates")}
    except sqlite3.OperationalError:  # no journal yet: the first process creates its tables
        return set()
    finally:
        conn.close()


def _drain(stream: IO[str], into: queue.Queue[str | None] | list[str]) -> threading.Thread:
    """Read ``stream`` to its end in a thread (a full pipe would stall the child)."""
    def read() -> None:
        for line in stream:
            into.put(line) if isinstance(into, queue.Queue) else into.append(line)
        if isinstance(into, queue.Queue):
            into.put(None)
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


class _Terminal:
    """A pseudo-terminal for the app: 140×42, its output read (and kept, escapes removed) in a thread."""

    ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 42, 140, 0, 0))
        self._raw: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    def start_reading(self) -> None:
        os.close(self.slave)

        def read() -> None:
            while True:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # EIO: the app closed its end
                    return
                if not chunk:
                    return
                with self._lock:
                    self._raw.append(chunk.decode("utf-8", "replace"))

        threading.Thread(target=read, daemon=True).start()

    def text(self) -> str:
        with self._lock:
            return self.ESCAPES.sub("", "".join(self._raw))

    def press(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait_for(self, needle: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        """Close the terminal (once; closing it is also how a hang-up is played, before SIGHUP)."""
        if not self._closed:
            self._closed = True
            os.close(self.master)


def _app(db: Path, config_dir: str, *args: str) -> tuple[subprocess.Popen[str], _Terminal]:
    term = _Terminal()
    proc = spawn([sys.executable, "-m", "tests.helpers.app_debate", *args], cwd=REPO, env=_env(db, config_dir),
                 stdin=term.slave, stdout=term.slave, stderr=term.slave)
    term.start_reading()
    return proc, term


def _wait_exit(proc: subprocess.Popen[Any], timeout: float) -> int:
    """The returncode; a process still there after ``timeout`` is SIGKILLed (and its code is -9)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        send_to_group(proc, signal.SIGKILL)
        return proc.wait(timeout=60)


def group_left_behind(proc: subprocess.Popen[Any], grace_s: float = 5.0) -> bool:
    """Whether any process of ``proc``'s process group (``spawn`` makes ``proc`` its leader, and
    its children, an engine's or a server's, inherit the group) is still there, ``grace_s`` after
    ``proc`` exited and was reaped. Any that is, is then SIGKILLed, so no trial leaks processes."""
    assert proc.returncode is not None, "reap the process first"
    deadline = time.monotonic() + grace_s
    while True:
        try:
            os.killpg(proc.pid, 0)  # signal 0: a check that the group has a member, nothing sent
        except ProcessLookupError:
            return False
        if time.monotonic() >= deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            return True
        time.sleep(0.1)


@dataclass
class _Strike:
    """What the kill phase of a trial saw."""

    debate_id: str | None = None
    sent: bool = False
    alive: bool = False
    status: str | None = None
    stored: int = 0
    confirmed: bool = False
    asked: bool = False
    returncode: int | None = None
    left_behind: bool = False
    shown: int = 0
    detail: str = ""


def _strike_headless(db: Path, mode: Mode, config_dir: str, number: int, rng: random.Random, sig: str,
                     after_shown: int, extra: float, protocol: str = "evince") -> _Strike:
    if mode == "fast":
        proc = _start(db, mode, config_dir, "run", protocol, str(db), str(number))
    else:
        proc = _start(db, mode, config_dir, *model_command(protocol, number, rng, config_dir))
    assert proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []
    _drain(proc.stdout, lines)
    err_thread = _drain(proc.stderr, errors)
    s = _Strike()
    shown = _ShownTurns(mode, protocol)
    deadline = time.monotonic() + 600
    while (line := lines.get(timeout=max(1.0, deadline - time.monotonic()))) is not None:
        s.debate_id = s.debate_id or _debate_id(line, mode)
        shown.feed(line)
        s.shown = shown.count
        if s.shown == after_shown and not s.sent:
            time.sleep(extra)
            s.status, _, s.stored = _progress(db, s.debate_id)
            s.alive = proc.poll() is None
            if not send_to_group(proc, signal.Signals[sig]):
                s.alive = False  # it had exited: the signal reached nothing (counted ``late``)
            s.sent = True
    s.returncode = _wait_exit(proc, 120)
    s.left_behind = group_left_behind(proc)
    err_thread.join(timeout=10)
    s.detail = "".join(errors)[-300:]
    return s


def _strike_app(db: Path, config_dir: str, sig: str, after_shown: int, extra: float) -> _Strike:
    before = _debate_ids(db)
    proc, term = _app(db, config_dir, "run", str(db))
    s = _Strike()
    deadline = time.monotonic() + 600
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if s.debate_id is None:
                s.debate_id = next(iter(_debate_ids(db) - before), None)
            status, s.shown, _ = _progress(db, s.debate_id)  # the app journals a turn, then shows it
            if s.shown >= after_shown or status in ENDED:
                break
            time.sleep(0.1)
        if s.shown >= after_shown:
            time.sleep(extra)
            s.status, _, s.stored = _progress(db, s.debate_id)
            s.alive = proc.poll() is None
            if sig != CTRL_C:  # SIGKILL, SIGTERM, SIGHUP: to the process group, as `kill` would
                if sig == "SIGHUP":  # a hang-up: the terminal is gone first (the app must not need it to quit)
                    term.close()
                s.alive = send_to_group(proc, signal.Signals[sig]) and s.alive
                s.sent = True
            else:
                s.sent = True
                if s.alive:
                    term.press(b"\x03")  # what a terminal sends for Ctrl-C in raw mode
                    if term.wait_for(QUIT_QUESTION, 30):
                        term.press(b"\r")  # "Quit" is focused
                        s.confirmed = True
        s.returncode = _wait_exit(proc, 120 if s.sent else 600)
        s.left_behind = group_left_behind(proc)
        s.asked = QUIT_QUESTION in term.text()
        s.shown = max(s.shown, _progress(db, s.debate_id)[1]) if not s.sent else s.shown
        s.detail = term.text()[-300:]
    finally:
        term.close()
    return s


def _resume(db: Path, mode: Mode, config_dir: str, debate_id: str) -> str:
    """Resume the debate to its end as the mode's user would; the tail of what it printed."""
    if mode == "app":
        proc, term = _app(db, config_dir, "resume", str(db), debate_id)
        try:
            _wait_exit(proc, 900)
            return term.text()[-300:]
        finally:
            term.close()
    args = ("resume", str(db), debate_id) if mode == "fast" else ("resume", debate_id)
    _, err = _start(db, mode, config_dir, *args).communicate(timeout=900)
    return err[-300:]


def trial(db: Path, number: int, rng: random.Random, mode: Mode, *, resume: bool = True, sig: str | None = None,
          last_kill_after: int | None = None, protocol: str = "evince") -> Trial:
    """One ``protocol`` debate killed once (``sig``, or one of the mode's drawn evenly), checked
    and resumed. The kill comes after 1…``last_kill_after`` shown turns (default: the mode's and
    protocol's, :func:`latest_kill`; a test that must see every kill land mid-debate keeps it
    lower). The app mode runs EVINCE only."""
    if mode == "app" and protocol != "evince":
        raise ValueError("the app mode runs EVINCE only")
    drawn = rng.choice(SIGNALS[mode])
    sig = sig or drawn
    after_shown = rng.randint(1, last_kill_after or latest_kill(mode, protocol))
    extra = rng.uniform(0.0, TURN_S[mode])
    with tempfile.TemporaryDirectory(prefix="symposium-config-") as config_dir:
        if mode == "app":
            s = _strike_app(db, config_dir, sig, after_shown, extra)
        else:
            s = _strike_headless(db, mode, config_dir, number, rng, sig, after_shown, extra, protocol)
        conn = sqlite3.connect(db, timeout=30)
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        debate_id = s.debate_id
        before = [] if debate_id is None else _debate_turns(conn, debate_id)
        problem = f"no debate was started ({s.detail})" if debate_id is None else check_rows(conn, debate_id)
        seal_problem = "" if debate_id is None else check_seal(conn, debate_id, "after the kill")
        status = None if debate_id is None else conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
        conn.close()
        stored_debate_turns = _progress(db, debate_id)[1]
        if stored_debate_turns < s.shown:
            problem = problem or f"{s.shown} turns shown, {stored_debate_turns} stored"
        resumed, after, kept = False, len(before), True
        if resume and debate_id is not None and status not in COMPLETE:
            tail = _resume(db, mode, config_dir, debate_id)
            conn = sqlite3.connect(db, timeout=30)
            resumed = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0] == "finished"
            rows = _debate_turns(conn, debate_id)
            problem = problem or check_rows(conn, debate_id) or ("" if resumed else f"resume failed: {tail}")
            seal_problem = seal_problem or check_seal(conn, debate_id, "after the resume")
            conn.close()
            after, kept = len(rows), rows[: len(before)] == before
    return Trial(number, mode, sig, after_shown, round(extra, 2), s.sent, s.alive, s.status, s.stored, s.confirmed,
                 s.returncode, debate_id, status, len(before), s.shown if debate_id else 0, integrity, not problem,
                 resumed, after, kept, problem, s.asked, s.left_behind, protocol, seal_problem)


def run_trials(db: Path, count: int, *, seed: int = 0, mode: Mode = "fast", jobs: int = 1, first: int = 1,
               resume: bool = True, signals: Sequence[str] | None = None,
               last_kill_after: int | None = None, protocol: str = "evince") -> list[Trial]:
    """``count`` trials numbered from ``first``; ``jobs`` of them run side by side on ``db``
    (the app mode one at a time: it finds its debate as the one that is new in the journal).
    ``signals``, if given, is cycled through instead of drawing each trial's signal."""
    if mode == "app":
        jobs = 1
    plan = [(n, random.Random(seed * 100_003 + n), None if not signals else signals[i % len(signals)])
            for i, n in enumerate(range(first, first + count))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda p: trial(db, p[0], p[1], mode, resume=resume, sig=p[2],
                                             last_kill_after=last_kill_after, protocol=protocol), plan))
