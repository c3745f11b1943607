"""Crash safety, measured: hundreds of headless debates killed after shown turns, checked, resumed.

    python benchmarks/crash.py --kills 200 --model-kills 10 [--seed S] [--jobs 2]

``--kills`` run in the fast mode (scripted backends streaming at a model's pace, the real
protocol, journal and printer); ``--model-kills`` run ``symposium run``/``resume`` on the
bundled SmolLM2 model. Every kill is timed from the debate's own output (after 1–5 shown
turns, plus a random part of a turn), SIGKILL four times in five, else SIGINT. Prints the
seed, a summary table per mode and every failed trial. The figures go into RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.helpers.crash_harness import Trial, run_trials  # noqa: E402


def summary(trials: list[Trial], mode: str, seconds: float) -> list[str]:
    mine = [t for t in trials if t.mode == mode]
    lost = sum(max(0, t.printed_before - t.turns_before) for t in mine)
    return [mode, str(len(mine)), str(sum(t.sig == "SIGKILL" for t in mine)), str(sum(t.sig == "SIGINT" for t in mine)),
            str(sum(t.turns_before for t in mine)), str(lost),
            str(sum(t.integrity == "ok" for t in mine)), str(sum(t.rows_valid for t in mine)),
            f"{sum(t.resumed for t in mine)}/{sum(t.status_before not in ('finished', 'stopped') for t in mine)}",
            str(sum(not t.kept for t in mine)), str(sum(t.survived for t in mine)), f"{seconds:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="kills in the fast (scripted) mode")
    parser.add_argument("--model-kills", type=int, default=10, help="kills on the bundled model")
    parser.add_argument("--seed", type=int, default=None, help="default: a fresh one, printed")
    parser.add_argument("--jobs", type=int, default=2, help="fast-mode debates run side by side on one journal")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    console = Console(width=max(160, Console().width))  # the table whole, also when piped
    console.print(f"seed {seed}")
    trials: list[Trial] = []
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "journal.db"
        for mode, count, jobs in (("fast", args.kills, args.jobs), ("model", args.model_kills, 1)):
            started = time.perf_counter()
            trials += run_trials(db, count, seed=seed, mode=mode, jobs=jobs, first=len(trials) + 1)  # type: ignore[arg-type]
            seconds[mode] = time.perf_counter() - started
    table = Table(title=f"random kills timed from the debate's output (seed {seed})")
    for col in ("mode", "kills", "SIGKILL", "SIGINT", "turns kept", "shown but lost", "integrity ok", "rows whole",
                "resumed to the end", "earlier turns changed", "survived", "s"):
        table.add_column(col, justify="right")
    for mode in ("fast", "model"):
        table.add_row(*summary(trials, mode, seconds[mode]))
    console.print(table)
    for t in trials:
        if not t.survived:
            console.print(f"[red]FAILED[/] {t}")
    console.print(f"survived {sum(t.survived for t in trials)}/{len(trials)} kills; "
                  f"command: python benchmarks/crash.py {' '.join(sys.argv[1:])}")


if __name__ == "__main__":
    main()
