"""Cases per hour of the diagnosis benchmark on one vLLM engine, 1, 4 and 16 cases in flight.

vLLM batches requests that arrive together (continuous batching): with several cases in flight
(``symposium bench diagnosis --jobs N``) the engine decodes their turns side by side. This runs
the same cases, same seed, same engine at each N and prints cases per hour and its ratio to one
case at a time (the baseline, measured in the same run). The engine's prefix cache is emptied
before each N, so no run reads a cache the one before it filled.

Decoding is greedy (temperature 0 for every agent; CRIT follows), so the results cannot depend
on N: the script compares every system's prediction for every case across N and says IDENTICAL
or lists what differs (and exits 1).

Needs vLLM (run it with .venv-vllm's Python after `make test-vllm` has built it and converted
SmolLM2; ``--model-folder`` takes another Hugging Face folder):

    .venv-vllm/bin/python benchmarks/vllm_batching.py                          # 16 cases, N = 1, 4, 16
    .venv-vllm/bin/python benchmarks/vllm_batching.py --cases-n 8 --jobs 1,4 --json out.json
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

from backends.base import Backend, SamplingOptions  # noqa: E402
from backends.lifecycle import Engines  # noqa: E402
from backends.registry import LocalSource, VllmSettings, load_registry  # noqa: E402
from store.journal import Journal  # noqa: E402
from tests.helpers.paths import dev_csv  # noqa: E402
from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=Path, default=None, help="Symptom2Disease CSV (default: ../shared's dev split)")
    p.add_argument("--cases-n", type=int, default=16, help="how many cases (a reproducible subset, --seed)")
    p.add_argument("--jobs", default="1,4,16", help="cases in flight, comma separated; the first is the baseline")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--design", choices=("quick", "paper"), default="quick")
    p.add_argument("--schedules", default="exponential", help="EVINCE arms per case (comma separated)")
    p.add_argument("--model-folder", type=Path, default=REPO / ".cache" / "vllm" / "smollm2-135m")
    p.add_argument("--kv-cache-gb", type=float, default=2.0, help="the engine's KV cache (16 cases need room)")
    p.add_argument("--enforce-eager", action="store_true", help="start the engine without compiling (slower decoding)")
    p.add_argument("--json", type=Path, help="also write the numbers as JSON")
    return p.parse_args(argv)


async def backends_on_one_engine(args: argparse.Namespace, engines: Engines) -> dict[str, Backend]:
    """Models A and B of the benchmark: two registry entries on the same folder, so one engine
    serves both (and the benchmark's two single-model systems keep distinct names), loaded
    through the lifecycle as every interface loads them (closed when ``engines`` closes)."""
    from tests.fixtures.smollm2_hf import bundled_gguf, convert

    folder = await asyncio.to_thread(convert, bundled_gguf(), args.model_folder)
    base = load_registry(user=False).get("smollm2-135m")
    made: dict[str, Backend] = {}
    for model_id in ("smollm2-vllm-a", "smollm2-vllm-b"):
        entry = base.model_copy(update={
            "id": model_id, "backend": "vllm", "chat_format": None, "source": LocalSource(kind="local", path=str(folder)),
            "vllm": VllmSettings(kv_cache_gb=args.kv_cache_gb, enforce_eager=args.enforce_eager)})
        made[model_id] = await engines.load_entry(entry)
    return made


async def run_with(jobs: int, backends: dict[str, Backend], args: argparse.Namespace, cases: list, labels: Any,
                   out: Path) -> tuple[float, Predictions]:
    """One pass over the cases with ``jobs`` in flight: its wall time and every prediction."""
    first = next(iter(backends.values()))
    await first.on_engine(first.slot.engine.reset_prefix_cache())  # type: ignore[attr-defined]
    a, b = backends
    config = BenchConfig(cases=args.cases, models=(a, b), out=out / f"jobs{jobs}" / "diagnosis", design=args.design,
                         schedules=tuple(s for s in args.schedules.split(",") if s), jobs=jobs, seed=args.seed, n_boot=10)
    greedy = SamplingOptions(max_tokens=48, temperature=0.0, repeat_penalty=1.0)
    with Journal(out / f"jobs{jobs}.db") as journal:
        bench = Bench(config, backends, dict.fromkeys(backends, greedy), journal)
        started = time.perf_counter()
        await bench.run(cases, labels)
        seconds = time.perf_counter() - started
    return seconds, {key: outcome.prediction for key, outcome in bench.done.items()}


async def measure(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    args.cases = args.cases or dev_csv()
    cases = read_cases(args.cases, limit=args.cases_n, seed=args.seed)
    labels = label_set(read_cases(args.cases, limit=None, seed=0), None)
    jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
    console.print(f"starting vLLM's engine on {args.model_folder} …", style="dim")
    rows: list[dict[str, Any]] = []
    async with Engines() as engines:  # the engine is shut down however the run ends
        started = time.perf_counter()
        backends = await backends_on_one_engine(args, engines)
        start_s = time.perf_counter() - started
        engine = next(iter(backends.values())).describe()
        with tempfile.TemporaryDirectory() as tmp:
            baseline: Predictions | None = None
            for n in jobs:
                console.print(f"{len(cases)} cases, {n} in flight …", style="dim")
                seconds, predictions = await run_with(n, backends, args, cases, labels, Path(tmp))
                diff = [] if baseline is None else differences(baseline, predictions)
                baseline = baseline or predictions
                rows.append({"jobs": n, "seconds": seconds, "cases_per_hour": len(cases) / seconds * 3600,
                             "identical": not diff, "differences": diff})
    table = cases_table(f"diagnosis benchmark on one vLLM engine: {len(cases)} cases, design {args.design}, "
                        f"schedules {args.schedules}, greedy", rows)
    console.print(table)
    console.print(f"engine start {start_s:.0f} s; {platform.machine()}, {os.cpu_count()} CPUs, load average "
                  f"{os.getloadavg()[0]:.1f}; engine {json.dumps({k: v for k, v in engine.items() if k != 'model_id'})}",
                  markup=False)
    for row in rows:
        for line in row["differences"][:10]:
            console.print(f"  {row['jobs']} in flight differs: {line}", markup=False)
    if args.json:
        args.json.write_text(json.dumps({"engine_start_s": start_s, "cases": len(cases), "rows": rows,
                                         "load_average": os.getloadavg()[0]}, indent=2), encoding="utf-8")
    return 0 if all(r["identical"] for r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(measure(parse_args(argv)))


if __name__ == "__main__":  # vLLM's engine spawns processes that import this module: keep the guard
    sys.exit(main())
