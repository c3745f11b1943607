"""The backends side by side on the same model and prompt, measured in one run.

For SmolLM2 135M (or ``--model``) on each backend: llama.cpp in process, the openai backend
against ``llama_cpp.server`` (started here with ``python -m backends.serve_llamacpp``), and
transformers, this prints

* time to first token and decode tokens/s of a greedy debate opening (same prompt, same
  length), with their ratio to llama.cpp in process, the baseline measured in the same run;
* how long N short judge calls take when sent at once, relative to one call: about N where a
  backend serialises (llama.cpp, llama_cpp.server), well under N where it batches (vLLM,
  llama-server with ``--parallel``).

Rounds are interleaved across backends, so a busy machine slows all of them alike: read the
ratios, not the absolute numbers. Nothing here asserts; it only reports.

    python benchmarks/backends_compared.py --quick            # one round, 32 tokens (~2 minutes on 2 cores)
    python benchmarks/backends_compared.py --tokens 128 --repeat 3 --concurrency 8 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from backends.base import Backend, Message, SamplingOptions  # noqa: E402
from backends.lifecycle import Engines  # noqa: E402
from backends.registry import ModelEntry, load_registry  # noqa: E402
from backends.serve_llamacpp import command, free_port, wait_until_ready  # noqa: E402
from tui.cli.parser import OFFLINE_ENV  # noqa: E402

BACKENDS = ("llamacpp", "openai", "transformers")
PROMPT = [Message("user", "You are debating whether hospitals should let AI triage emergency patients. "
                          "Argue for the motion in a long, detailed opening statement with evidence and examples.")]
ARGUMENTS = ("Triage AI never tires.", "Nurses know patients.", "Software has bugs.", "Queues kill.", "Bias hides in data.",
             "Audits are possible.", "Doctors disagree too.", "Speed saves lives.")


@dataclass
class Result:
    backend: str
    load_s: float
    first_token_s: list[float] = field(default_factory=list)
    decode_tps: list[float] = field(default_factory=list)
    one_judge_s: list[float] = field(default_factory=list)
    n_judges_s: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"backend": self.backend, "load_s": self.load_s, "first_token_s": _median(self.first_token_s),
                "decode_tps": _median(self.decode_tps), "one_judge_s": _median(self.one_judge_s),
                "n_judges_s": _median(self.n_judges_s)}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


@contextmanager
def served(model_id: str, log: Path) -> Iterator[str]:
    """``llama_cpp.server`` for ``model_id`` on a free loopback port, for the block's duration."""
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(command(model_id, port), stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_ready(url, process, timeout=180)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def entry_for(kind: str, base: ModelEntry, url: str | None) -> ModelEntry:
    if kind == "openai":
        return ModelEntry(**{**base.model_dump(), "id": f"{base.id}-http", "backend": "openai",
                             "source": {"kind": "server", "base_url": url, "model": base.id}})
    return base.model_copy(update={"backend": kind})


async def decode_round(backend: Backend, tokens: int, result: Result, n: int) -> None:
    """One opening statement (time to first token, tokens/s), then one judge call and N at once."""
    opts = SamplingOptions(max_tokens=tokens, temperature=0.0, repeat_penalty=1.0)
    done = await backend.session(f"debater-{time.monotonic_ns()}").complete(PROMPT, opts)
    if done.timing.first_token_s is not None:
        result.first_token_s.append(done.timing.first_token_s)
    if done.decode_tokens_per_s:
        result.decode_tps.append(done.decode_tokens_per_s)
    judge = SamplingOptions(max_tokens=8, temperature=0.0, repeat_penalty=1.0)
    started = time.perf_counter()
    await backend.session(f"judge-{time.monotonic_ns()}").complete(judge_prompt(0), judge)
    result.one_judge_s.append(time.perf_counter() - started)
    started = time.perf_counter()
    await asyncio.gather(*(backend.session(f"juror-{i}-{time.monotonic_ns()}").complete(judge_prompt(i + 1), judge)
                           for i in range(n)))
    result.n_judges_s.append(time.perf_counter() - started)


def judge_prompt(i: int) -> list[Message]:
    """A short judge call; each differs, so no server answers one from another's cached prompt."""
    argument = ARGUMENTS[i % len(ARGUMENTS)]
    return [Message("user", f"Call {i} ({time.monotonic_ns()}). Rate this argument from 1 to 10 in one sentence: {argument!r}")]


async def run(args: argparse.Namespace, console: Console) -> list[Result]:
    base = load_registry(args.models).get(args.model)
    kinds = [k for k in args.backends.split(",") if k]
    loaded: dict[str, tuple[Backend, Result]] = {}
    with served(base.id, Path(args.server_log)) as url:
        async with Engines() as engines:  # every backend closed before the server stops, also on error
            for kind in kinds:
                console.print(f"loading {base.id} on {kind} …", style="dim")
                started = time.perf_counter()
                backend = await engines.load_entry(entry_for(kind, base, url))
                loaded[kind] = (backend, Result(kind, time.perf_counter() - started))
                await backend.session("warm-up").complete([Message("user", "Hi")], SamplingOptions(max_tokens=2, temperature=0.0))
            for round_ in range(args.repeat):
                for kind in kinds:  # interleaved, so load on the machine hits every backend alike
                    console.print(f"round {round_ + 1}/{args.repeat}: {kind}", style="dim")
                    backend, result = loaded[kind]
                    await decode_round(backend, args.tokens, result, args.concurrency)
    return [result for _, result in loaded.values()]


def table(results: list[Result], n: int, title: str) -> Table:
    base = next((r.summary() for r in results if r.backend == "llamacpp"), None)
    out = Table(title=title)
    for col in ("backend", "load s", "first token s", "decode tok/s", "tok/s vs llama.cpp", "1 judge s",
                f"{n} judges at once s", f"{n} at once / 1"):
        out.add_column(col, justify="left" if col == "backend" else "right")
    for r in results:
        s = r.summary()
        ratio = (f"{s['decode_tps'] / base['decode_tps']:.2f}×" if base and s["decode_tps"] and base["decode_tps"] else "")
        batch = f"{s['n_judges_s'] / s['one_judge_s']:.2f}" if s["n_judges_s"] and s["one_judge_s"] else ""
        out.add_row(r.backend, f"{s['load_s']:.1f}", _fmt(s["first_token_s"], 3), _fmt(s["decode_tps"], 1), ratio,
                    _fmt(s["one_judge_s"], 2), _fmt(s["n_judges_s"], 2), batch)
    return out


def _fmt(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m", help="a GGUF entry of models.toml")
    parser.add_argument("--models", help="model registry (default: the bundled models.toml)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, from " + ", ".join(BACKENDS))
    parser.add_argument("--tokens", type=int, default=96, help="length of the opening statement")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (medians are reported)")
    parser.add_argument("--concurrency", type=int, default=4, help="N judge calls sent at once")
    parser.add_argument("--quick", action="store_true", help="one round of 32 tokens")
    parser.add_argument("--server-log", default=os.devnull, help="where llama_cpp.server's output goes")
    parser.add_argument("--json", help="also write the medians to this file")
    args = parser.parse_args()
    if args.quick:
        args.tokens, args.repeat = 32, 1
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    console = Console(width=None if sys.stdout.isatty() else 150)
    results = asyncio.run(run(args, console))
    console.print(table(results, args.concurrency, f"{args.model}: {args.tokens}-token opening, greedy; "
                        f"{os.cpu_count()} CPU cores; medians of {args.repeat} round(s)"))
    if args.json:
        Path(args.json).write_text(json.dumps([r.summary() for r in results], indent=2))


if __name__ == "__main__":
    main()
