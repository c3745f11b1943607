"""Crash safety, measured: hundreds of debates of every protocol killed after shown turns, each kill proven, checked, resumed.

    python benchmarks/crash.py --kills 40 --model-kills 2 --app-kills 10 [--protocol P] [--seed S] [--jobs 2] [--trials-csv F]
    python benchmarks/crash.py --kills 0 --model-kills 0 --app-kills 8 --signal Ctrl-C   # one signal only

Per protocol (``--protocol``: evince, socrasynth, agreement, deliberation, humanloop, d3; default
all of them): ``--kills`` run in the fast mode (backends streaming at a model's pace that answer
from the prompt, the real protocol started and resumed through its spec, journal and printer);
``--model-kills`` run ``symposium run <protocol>``/``symposium resume`` on the bundled SmolLM2
model (the command lines: ``MODEL_RUNS`` in tests/helpers/crash_harness.py); ``--app-kills`` run
the Textual app on it under a pseudo-terminal, resumed in the app (EVINCE only). Every kill is
timed from the debate's own progress (after 1…the protocol's fewest turns less one in the fast
mode; 1–4 or so on the model, whose debates may end early; 1–3 in the app; plus a random part
of a turn); headless modes get SIGKILL, SIGINT, SIGTERM or SIGHUP, the app SIGKILL, the Ctrl-C
key (answered "Quit" in its dialog), SIGTERM or SIGHUP, drawn evenly (``--signals`` narrows
the draw, cycled in order).

A kill counts only when it took effect, proven by the exit status (``tests/helpers/crash_harness.py``):
-9 for SIGKILL; 130 (the interrupt path) or -2 for SIGINT; 143 for SIGTERM and 129 for SIGHUP
(their interrupt path; in the app also no "Quit?" dialog); the dialog answered and exit 0 for
Ctrl-C. After any signal but SIGKILL no process of the killed one's group may remain. Signals that came after the process had exited or the debate had ended (``late``),
trials whose debate ended before the chosen moment (``not sent``) and signals that changed
nothing (``no effect``, a failure) are counted apart. After each kill and again after its resume the
debate's hash chain must verify (``store/seal.py``: "seal holds"). Prints the seed, two tables by mode and
signal, and every failed trial; exits 1 if any trial failed.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.helpers.crash_harness import MODES, PROTOCOLS, SIGNALS, Trial, run_trials  # noqa: E402


def _statuses(trials: list[Trial]) -> str:
    counts = Counter(t.returncode for t in trials if t.sent)
    return " ".join(f"{code}×{n}" for code, n in sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def did_it_take(trials: list[Trial], protocol: str, mode: str, sig: str, seconds: float) -> list[str]:
    mine = [t for t in trials if t.protocol == protocol and t.mode == mode and t.sig == sig]
    outcome = Counter(t.outcome for t in mine)
    return [protocol, mode, sig, str(len(mine)), str(outcome["kill"]), str(sum(t.cut_off for t in mine)), str(outcome["late"]),
            str(outcome["not sent"]), str(outcome["no effect"]), _statuses(mine), f"{seconds:.0f}"]


def journal_after(trials: list[Trial], protocol: str, mode: str, sig: str) -> list[str]:
    kills = [t for t in trials if t.protocol == protocol and t.mode == mode and t.sig == sig and t.outcome == "kill"]
    cut = [t for t in kills if t.cut_off]
    return [protocol, mode, sig, str(len(kills)), str(sum(t.stored_at_signal for t in kills)),
            str(sum(t.turns_before - t.stored_at_signal for t in kills)),
            str(sum(max(0, t.printed_before - t.turns_before) for t in kills)),
            str(sum(t.integrity == "ok" for t in kills)), str(sum(t.rows_valid for t in kills)),
            str(sum(t.sealed for t in kills)),
            f"{sum(t.marked_as_promised for t in cut)}/{len(cut)}",
            f"{sum(t.resumed for t in cut)}/{len(cut)}", str(sum(t.turns_after - t.turns_before for t in cut)),
            str(sum(not t.kept for t in kills)), f"{sum(t.survived for t in kills)}/{len(kills)}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("all", *PROTOCOLS), default="all", help="the protocol to kill (default: all)")
    parser.add_argument("--kills", type=int, default=40, help="trials per protocol in the fast mode")
    parser.add_argument("--model-kills", type=int, default=2, help="trials per protocol on the bundled model, headless")
    parser.add_argument("--app-kills", type=int, default=10, help="trials of the app on the bundled model (EVINCE only)")
    parser.add_argument("--seed", type=int, default=None, help="default: a fresh one, printed")
    parser.add_argument("--jobs", type=int, default=2, help="fast-mode debates run side by side on one journal")
    parser.add_argument("--trials-csv", type=Path, default=None, help="write every trial's record here")
    parser.add_argument("--signal", choices=sorted({s for pair in SIGNALS.values() for s in pair}), default=None,
                        help="only this signal, in the modes that use it (default: each mode's, drawn evenly)")
    parser.add_argument("--signals", default=None,
                        help="comma-separated: cycle through these in every mode that uses them, e.g. SIGKILL,SIGINT,SIGTERM")
    args = parser.parse_args()
    protocols = PROTOCOLS if args.protocol == "all" else (args.protocol,)
    cycle = [args.signal] if args.signal else (args.signals.split(",") if args.signals else None)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    console = Console(width=max(190, Console().width))  # the tables whole, also when piped
    console.print(f"seed {seed}")
    trials: list[Trial] = []
    seconds: dict[tuple[str, str], float] = {}
    counts = {"fast": args.kills, "model": args.model_kills, "app": args.app_kills}
    if cycle is not None:  # a mode that uses none of them runs no trials
        counts = {mode: n if set(cycle) & set(SIGNALS[mode]) else 0 for mode, n in counts.items()}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "journal.db"
        for mode in MODES:
            for protocol in protocols:
                if not counts[mode] or (mode == "app" and protocol != "evince"):
                    continue  # the app mode runs EVINCE only
                started = time.perf_counter()
                mine = [s for s in cycle if s in SIGNALS[mode]] if cycle else None
                trials += run_trials(db, counts[mode], seed=seed, mode=mode, jobs=args.jobs if mode == "fast" else 1,
                                     first=len(trials) + 1, signals=mine, protocol=protocol)
                seconds[protocol, mode] = time.perf_counter() - started
                console.print(f"{protocol} {mode}: {counts[mode]} trials in {seconds[protocol, mode]:.0f} s", highlight=False)
    if args.trials_csv is not None:
        fields = [f.name for f in dataclasses.fields(Trial)] + ["outcome", "cut_off", "survived"]
        with args.trials_csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            for t in trials:
                writer.writerow({**dataclasses.asdict(t), "outcome": t.outcome, "cut_off": t.cut_off, "survived": t.survived})
    rows = [(protocol, mode, sig) for protocol in protocols for mode in MODES
            if counts[mode] and (mode != "app" or protocol == "evince")
            for sig in SIGNALS[mode] if cycle is None or sig in cycle]
    took = Table(title=f"did each kill take? (seed {seed}; kills timed from the debate's progress)")
    for col in ("protocol", "mode", "signal", "trials", "kills (took)", "cut a debate off", "late", "not sent", "no effect",
                "exit statuses", "s (protocol, mode)"):
        took.add_column(col, justify="right")
    for protocol, mode, sig in rows:
        took.add_row(*did_it_take(trials, protocol, mode, sig, seconds[protocol, mode]))
    console.print(took)
    journal = Table(title="the journal after each kill that took")
    for col in ("protocol", "mode", "signal", "kills", "turns stored at the signal", "written after it", "shown but lost",
                "integrity ok", "rows whole", "seal holds", "marked as promised", "resumed to the end", "written by resume",
                "earlier turns changed", "survived"):
        journal.add_column(col, justify="right")
    for protocol, mode, sig in rows:
        journal.add_row(*journal_after(trials, protocol, mode, sig))
    console.print(journal)
    failed = [t for t in trials if t.outcome == "no effect" or (t.outcome == "kill" and not t.survived)]
    for t in failed:
        console.print(f"[red]FAILED[/] {t}", markup=True, highlight=False)
    kills = [t for t in trials if t.outcome == "kill"]
    console.print(f"{len(kills)} kills took ({sum(t.cut_off for t in kills)} cut a debate off) of {len(trials)} trials; "
                  f"{sum(t.survived for t in kills)}/{len(kills)} survived; {len(failed)} failed; "
                  f"command: python benchmarks/crash.py {' '.join(sys.argv[1:])}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
