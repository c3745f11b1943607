"""Replies decoded together on llama.cpp (backends/llamacpp/lockstep.py): a judge panel and cases in flight.

With one model serving several roles, the calls that do not wait for each other used to run one
after another. This measures, on the bundled SmolLM2 model, in one run:

(a) a panel of N = 1, 2, 4, 8 judges of one transcript on one model, all asked at once: wall
    time and its ratio to one judgement, in lockstep (``max_concurrency = 8``) and one at a
    time (``max_concurrency = 1``, the way before);
(b) the diagnosis benchmark with 1, 4 and 16 cases in flight on one llama.cpp model (models A
    and B are two entries on the same file, so one model serves both): cases per hour and
    the ratio to one case at a time (the baseline, measured in the same run);
(c) the results: decoding is greedy, so every judge's verdict and every case's prediction
    must be the same at every N and in both modes; the script says IDENTICAL or lists what
    differs (and exits 1).

Goals: a panel of 4 in at most 1.6× one judgement's time; 4 cases in flight at
least 2× the cases per hour of one. Run it on a quiet machine (nothing else running):

    .venv/bin/python benchmarks/batching.py                      # panel 1,2,4,8; 16 cases at 1,4,16
    .venv/bin/python benchmarks/batching.py --cases-n 8 --jobs 1,4 --panel 1,4 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from inflight import Predictions, cases_table, differences  # noqa: E402  (benchmarks/, beside this script)
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from backends.base import Backend, Message, SamplingOptions  # noqa: E402
from backends.llamacpp import LlamaCppBackend  # noqa: E402
from backends.registry import load_registry  # noqa: E402
from backends.sources import resolve_path  # noqa: E402
from store.journal import Journal  # noqa: E402
from tests.helpers.paths import dev_csv  # noqa: E402
from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases  # noqa: E402

GREEDY = SamplingOptions(max_tokens=48, temperature=0.0, repeat_penalty=1.0)

TRANSCRIPT = "\n".join(
    f"Round {r}. Proponent: banning cars from city centres cuts pollution and makes streets safer for children. "
    f"Opponent: shops, tradespeople and disabled residents depend on cars; a ban moves traffic elsewhere."
    for r in range(1, 7)
)
ASKS = ["Who argued better, and why?", "Which side used evidence?", "What did the opponent concede?",
        "Which argument was weakest?", "Summarize the proponent's case.", "Summarize the opponent's case.",
        "What question was left open?", "Give a verdict in one sentence."]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--panel", default="1,2,4,8", help="panel sizes, comma separated; the first is the baseline")
    p.add_argument("--repeats", type=int, default=3, help="panel runs per size (the median is reported)")
    p.add_argument("--cases", type=Path, default=None, help="Symptom2Disease CSV (default: ../shared's dev split)")
    p.add_argument("--cases-n", type=int, default=16, help="how many cases (a reproducible subset, --seed)")
    p.add_argument("--jobs", default="1,4,16", help="cases in flight, comma separated; the first is the baseline")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the numbers as JSON")
    return p.parse_args(argv)


def load(width: int) -> LlamaCppBackend:
    """A fresh SmolLM2 backend that decodes up to ``width`` replies together (1: one at a time)."""
    entry = load_registry(user=False).get("smollm2-135m")
    return LlamaCppBackend(entry.model_copy(update={"max_concurrency": width}), resolve_path(entry))


def panel(i: int) -> list[Message]:
    return [Message("system", "You are a judge of a debate. Answer in one or two sentences."),
            Message("user", f"{TRANSCRIPT}\n\n{ASKS[i % len(ASKS)]}")]


async def time_panel(width: int, n: int, repeats: int) -> tuple[float, list[str]]:
    """Median wall time of ``n`` judges asked at once (fresh backend each time, so no run reads
    a cache another filled), and their verdicts."""
    times: list[float] = []
    texts: list[str] = []
    for _ in range(repeats):
        backend = load(width)
        try:
            started = time.perf_counter()
            done = await asyncio.gather(*(backend.session(f"judge{i}").complete(panel(i), GREEDY) for i in range(n)))
            times.append(time.perf_counter() - started)
            texts = [d.text for d in done]
        finally:
            await backend.aclose()
    return sorted(times)[len(times) // 2], texts


async def run_cases(jobs: int, args: argparse.Namespace, cases: list[Any], labels: Any, out: Path) -> tuple[float, Predictions]:
    """One pass over the cases with ``jobs`` in flight on one lockstep model: wall time, predictions."""
    backend = load(max(jobs, 1))
    backends: dict[str, Backend] = {"smollm2-a": backend, "smollm2-b": backend}
    config = BenchConfig(cases=args.cases, models=("smollm2-a", "smollm2-b"), out=out / f"jobs{jobs}", design="quick",
                         schedules=("exponential",), jobs=jobs, seed=args.seed, n_boot=10)
    try:
        with Journal(out / f"jobs{jobs}.db") as journal:
            bench = Bench(config, backends, dict.fromkeys(backends, GREEDY), journal)
            started = time.perf_counter()
            await bench.run(cases, labels)
            seconds = time.perf_counter() - started
    finally:
        await backend.aclose()
    return seconds, {key: outcome.prediction for key, outcome in bench.done.items()}


async def measure(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    sizes = [int(n) for n in args.panel.split(",") if n.strip()]
    ok = True
    panel_rows: list[dict[str, Any]] = []
    reference: dict[int, list[str]] = {}
    for mode, width in (("one at a time", 1), ("lockstep", max(sizes))):
        for n in sizes:
            console.print(f"panel of {n}, {mode} …", style="dim")
            seconds, texts = await time_panel(width, n, args.repeats)
            same = reference.setdefault(n, texts) == texts and texts[: len(reference[sizes[0]])] == reference[sizes[0]]
            ok &= same
            panel_rows.append({"mode": mode, "n": n, "seconds": seconds, "identical": same})
    table = Table(title=f"a panel of judges on one model (smollm2-135m, {len(panel(0)[1].content)}-character transcript, "
                        f"greedy, {GREEDY.max_tokens} tokens, median of {args.repeats})")
    for col in ("mode", "judges", "wall time", "× one judgement", "verdicts"):
        table.add_column(col, justify="right")
    for row in panel_rows:
        base = next(r for r in panel_rows if r["mode"] == row["mode"] and r["n"] == sizes[0])
        table.add_row(row["mode"], str(row["n"]), f"{row['seconds']:.2f} s", f"{row['seconds'] / base['seconds']:.2f}×",
                      "IDENTICAL" if row["identical"] else "DIFFER")
    console.print(table)

    args.cases = args.cases or dev_csv()
    cases = read_cases(args.cases, limit=args.cases_n, seed=args.seed)
    labels = label_set(read_cases(args.cases, limit=None, seed=0), None)
    jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
    case_rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline: Predictions | None = None
        for n in jobs:
            console.print(f"{len(cases)} cases, {n} in flight …", style="dim")
            seconds, predictions = await run_cases(n, args, cases, labels, Path(tmp))
            diff = [] if baseline is None else differences(baseline, predictions)
            baseline = baseline or predictions
            ok &= not diff
            case_rows.append({"jobs": n, "seconds": seconds, "cases_per_hour": len(cases) / seconds * 3600,
                              "identical": not diff, "differences": diff})
    table = cases_table(f"diagnosis benchmark on one llama.cpp model: {len(cases)} cases, design quick, greedy", case_rows)
    console.print(table)
    console.print(f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
                  "(run it on a quiet machine)", markup=False)
    for row in case_rows:
        for line in row["differences"][:10]:
            console.print(f"  {row['jobs']} in flight differs: {line}", markup=False)
    if args.json:
        args.json.write_text(json.dumps({"panel": panel_rows, "cases": case_rows, "load_average": os.getloadavg()[0]},
                                        indent=2), encoding="utf-8")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(measure(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
