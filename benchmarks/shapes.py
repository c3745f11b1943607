"""Speed at the sizes people run: synthetic models of real shapes, measured side by side in one run.

The bundled 135M model is bound by arithmetic on one thread; the 1–70B models people run are
bound by reading their weights, which is what decoding several replies in one step saves. This
measures the llama.cpp backend on synthetic GGUFs with the exact shapes and quantization of real
models (``benchmarks/synthetic.py``: seeded random weights, the bundled tokenizer and template),
so every figure is a speed figure, never a quality one; every table says "synthetic".

For each shape, in one process and one run (each section's baseline measured beside it):

reply    prefill and decode tokens/s of one reply through the backend and through raw
         llama-cpp-python (``llama_cpp.Llama``) on the same file, threads and prompt tokens;
         ratio = backend ÷ raw (goal: overhead ≤ 2 %). Also the backend with prompts in
         n_batch chunks, to show what evaluating prompts exactly (63-token chunks) costs.
raw      llama.cpp's own batched decoding, no Symposium code: one ``llama_decode`` per step
         with N rows (N sequences after one shared prompt), tokens/s and step time ÷ one row's.
         The limit the panel and the cases can approach.
prompts  what batching prompts of different sequences into one decode would gain: k agents each
         with an m-token prompt tail after a shared prefix, evaluated one llama_decode per agent
         (the backend's way) or together in decodes of at most 63 rows; time ratio, and whether
         each agent's next-token logits stay bit-identical (raw llama.cpp, no Symposium code).
panel    N = 1, 2, 4, 8 judges of one transcript on one model, asked at once: lockstep
         (``max_concurrency = 8``) and one at a time; wall time ÷ one judgement (goal: 4 judges
         ≤ 1.6×), verdicts identical between the modes (greedy).
cases    the diagnosis benchmark (design quick) with 1, 4, 8 cases in flight: cases per hour and
         ÷ one at a time (goal ≥ 2× at 4), predictions identical.
memory   peak resident and peak anonymous memory of a three-role EVINCE debate (``symposium
         run``, a process of its own) against the memory guard's estimate (``backends/kv_memory.py``).

    python benchmarks/synthetic.py llama32-1b llama32-3b          # once: the files (minutes, GBs)
    python benchmarks/shapes.py --shapes llama32-1b,llama32-3b --write-docs docs/performance.md
    python benchmarks/shapes.py --shapes tiny --quant Q8_0 --cases-n 2 --jobs 1,2   # a smoke run

Run it on a quiet machine (``uptime``: load average well under the core count); the script prints
the load average it saw before and after. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from backend import load_raw_llama  # noqa: E402  (beside this script, in benchmarks/)
from inflight import differences  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from synthetic import SHAPES, synthetic_model  # noqa: E402

from backends.base import Backend, Message, SamplingOptions  # noqa: E402
from backends.kv_memory import memory_need  # noqa: E402
from backends.llamacpp import LlamaCppBackend, LlamaCppSession  # noqa: E402
from backends.llamacpp.native import version  # noqa: E402
from backends.registry import LocalSource, ModelEntry  # noqa: E402
from backends.threads import default_threads  # noqa: E402

GREEDY = SamplingOptions(max_tokens=48, temperature=0.0, repeat_penalty=1.0)
CONTEXT = 4096
TRANSCRIPT = "\n".join(
    f"Round {r}. Proponent: banning cars from city centres cuts pollution and makes streets safer for children. "
    f"Opponent: shops, tradespeople and disabled residents depend on cars; a ban moves traffic elsewhere."
    for r in range(1, 7)
)
ASKS = ["Who argued better, and why?", "Which side used evidence?", "What did the opponent concede?",
        "Which argument was weakest?", "Summarize the proponent's case.", "Summarize the opponent's case.",
        "What question was left open?", "Give a verdict in one sentence."]
SECTIONS = ("reply", "raw", "prompts", "panel", "cases", "memory")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="llama32-1b,llama32-3b", help=f"comma separated, of: {', '.join(SHAPES)}")
    p.add_argument("--quant", default="Q4_K_M", help="Q4_K_M, Q4_0, Q8_0 or F16")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma separated, of: {', '.join(SECTIONS)}")
    p.add_argument("--threads", type=int, default=default_threads(), help="llama.cpp threads (the backend's default)")
    p.add_argument("--prompt-tokens", type=int, default=512, help="reply: prompt length")
    p.add_argument("--tokens", type=int, default=64, help="reply: tokens generated")
    p.add_argument("--repeat", type=int, default=3, help="reply: runs per side (median)")
    p.add_argument("--widths", default="1,2,4,8", help="raw: sequences per step")
    p.add_argument("--steps", type=int, default=32, help="raw: steps timed per width")
    p.add_argument("--tails", default="4,16,48", help="prompts: tokens per agent after the shared prefix")
    p.add_argument("--agents", default="2,4,8", help="prompts: agents whose tails are evaluated")
    p.add_argument("--panel", default="1,2,4,8", help="panel sizes; the first is the baseline")
    p.add_argument("--cases", type=Path, default=None, help="Symptom2Disease CSV (default: ../shared's dev split)")
    p.add_argument("--cases-n", type=int, default=8)
    p.add_argument("--jobs", default="1,4,8", help="cases in flight; the first is the baseline")
    p.add_argument("--json", type=Path, help="also write every number as JSON")
    p.add_argument("--write-docs", type=Path, help="replace each measured section's block (shapes.py:SECTION markers) in this file")
    return p.parse_args(argv)


def entry(shape_id: str, quant: str, path: Path, *, width: int = 4, threads: int | None = None) -> ModelEntry:
    return ModelEntry(id=f"synthetic-{shape_id}", name=f"Synthetic {SHAPES[shape_id].label} {quant}", family="synthetic",
                      backend="llamacpp", source=LocalSource(kind="local", path=str(path)), context_length=CONTEXT,
                      max_concurrency=width, threads=threads)


def load(e: ModelEntry, path: Path) -> LlamaCppBackend:
    return LlamaCppBackend(e, path)


# -- one reply: the backend against raw llama-cpp-python ------------------------------------


def prompt_messages(backend: LlamaCppBackend, n_tokens: int) -> list[Message]:
    """A system prompt and a user turn of about ``n_tokens`` tokens in all (the transcript repeated)."""
    text = TRANSCRIPT
    while backend.session("count").count_tokens([Message("user", text)]) < n_tokens:
        text += "\n" + TRANSCRIPT
    words = text.split(" ")
    lo, hi = 1, len(words)
    while lo < hi:  # the longest prefix of words within n_tokens
        mid = (lo + hi + 1) // 2
        if backend.session("count").count_tokens([Message("user", " ".join(words[:mid]))]) <= n_tokens:
            lo = mid
        else:
            hi = mid - 1
    return [Message("user", " ".join(words[:lo]))]


async def backend_reply(session: LlamaCppSession, messages: list[Message], tokens: int) -> dict[str, float]:
    session.reset()
    options = SamplingOptions(max_tokens=tokens, temperature=0.0, repeat_penalty=1.0)
    done = await session.complete(messages, options)
    first = done.timing.first_token_s or done.timing.total_s
    return {"prompt_tokens": done.usage.prompt_tokens_evaluated, "prefill_s": done.timing.prompt_s,
            "tokens": done.usage.completion_tokens, "decode_s": done.timing.total_s - first}


def raw_llama(path: Path, threads: int) -> Any:
    """``llama_cpp.Llama`` as its users would set it up, on the backend's thread count and kernels
    (benchmarks/backend.py: extra buffers off, flash attention on)."""
    return load_raw_llama(path, threads)


def raw_reply(llm: Any, prompt: list[int], tokens: int) -> dict[str, float]:
    """One greedy streamed completion of exactly ``prompt``'s tokens, timed at each sampled token."""
    sampled: list[float] = []
    real_sample = llm.sample

    def sample(*args: Any, **kwargs: Any) -> int:
        token = real_sample(*args, **kwargs)
        sampled.append(time.perf_counter())
        return int(token)

    llm.reset()
    llm.sample = sample
    try:
        started = time.perf_counter()
        for _ in llm.create_completion(prompt, max_tokens=tokens, temperature=0.0, repeat_penalty=1.0, stream=True):
            pass
        ended = time.perf_counter()
    finally:
        del llm.sample
    first = sampled[0] if sampled else ended
    return {"prompt_tokens": len(prompt), "prefill_s": first - started, "tokens": len(sampled), "decode_s": ended - first}


def rates(runs: list[dict[str, float]]) -> dict[str, float]:
    prefill = statistics.median(r["prompt_tokens"] / r["prefill_s"] for r in runs)
    decode = statistics.median((r["tokens"] - 1) / r["decode_s"] for r in runs if r["tokens"] > 1 and r["decode_s"] > 0)
    return {"prefill_tps": prefill, "decode_tps": decode, "prompt_tokens": runs[0]["prompt_tokens"], "tokens": runs[0]["tokens"]}


async def measure_reply(shape_id: str, quant: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    backend = load(entry(shape_id, quant, path, width=1, threads=args.threads), path)
    llm = raw_llama(path, backend.n_threads)
    try:
        messages = prompt_messages(backend, args.prompt_tokens)
        session = backend.session("reply")
        assert isinstance(session, LlamaCppSession)
        prompt = session._prompt_tokens(messages)
        await backend_reply(session, messages, 4)  # warm-up, each side
        raw_reply(llm, prompt, 4)
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        big: list[dict[str, float]] = []
        for i in range(args.repeat):  # interleaved, so noise hits every side alike
            if i % 2:
                theirs.append(raw_reply(llm, prompt, args.tokens))
            ours.append(await backend_reply(session, messages, args.tokens))
            if not i % 2:
                theirs.append(raw_reply(llm, prompt, args.tokens))
            exact, backend.prompt_chunk = backend.prompt_chunk, backend.n_batch
            big.append(await backend_reply(session, messages, args.tokens))
            backend.prompt_chunk = exact
        return {"backend": rates(ours), "raw": rates(theirs), "backend_n_batch": rates(big),
                "prompt_chunk": backend.prompt_chunk, "n_batch": backend.n_batch, "threads": backend.n_threads}
    finally:
        llm.close()
        await backend.aclose()


# -- raw llama.cpp batched decoding (no Symposium code) ---------------------------------------


class RawModel:
    """llama.cpp through its C API alone (no Symposium code): one model, one unified-cache context
    for ``n_seq`` sequences, one batch, greedy reading of logits."""

    def __init__(self, path: Path, threads: int, cells: int, n_seq: int) -> None:
        import llama_cpp as L

        from backends.llamacpp.native import library

        library()  # only for its log callback: llama.cpp's load messages go to logging, not over the tables
        self.L = L
        mparams = L.llama_model_default_params()
        mparams.use_extra_bufts = False  # as the backend (AMX kernels crash on some VMs)
        self.model = L.llama_model_load_from_file(str(path).encode(), mparams)
        self.n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(self.model))
        cparams = L.llama_context_default_params()
        cparams.n_ctx = cells
        cparams.n_batch = cparams.n_ubatch = 512
        cparams.n_seq_max = n_seq
        cparams.kv_unified = True
        cparams.n_threads = cparams.n_threads_batch = threads
        self.ctx = L.llama_init_from_model(self.model, cparams)
        self.memory = L.llama_get_memory(self.ctx)
        self.batch = L.llama_batch_init(512, 0, n_seq)

    def decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        batch = self.batch
        batch.n_tokens = len(items)
        for j, (token, pos, seq, logits) in enumerate(items):
            batch.token[j], batch.pos[j], batch.n_seq_id[j], batch.logits[j] = token, pos, 1, logits
            batch.seq_id[j][0] = seq
        code = self.L.llama_decode(self.ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def logits(self, row: int) -> Any:
        import ctypes

        import numpy as np

        ptr = self.L.llama_get_logits_ith(self.ctx, row)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,)).copy()

    def prefill(self, tokens: list[int], seq: int = 0, start: int = 0, chunk: int = 63) -> None:
        for offset in range(0, len(tokens), chunk):
            part = tokens[offset : offset + chunk]
            self.decode([(t, start + offset + i, seq, offset + i == len(tokens) - 1) for i, t in enumerate(part)])

    def close(self) -> None:
        self.L.llama_batch_free(self.batch)
        self.L.llama_free(self.ctx)
        self.L.llama_model_free(self.model)


def measure_raw(path: Path, args: argparse.Namespace) -> list[dict[str, float]]:
    """For each width N: one prompt in sequence 0, shared with sequences 1..N-1 (its cells tagged,
    not copied), then ``steps`` steps of one ``llama_decode`` with N rows, greedy per row."""
    import numpy as np

    widths = [int(w) for w in args.widths.split(",") if w.strip()]
    raw = RawModel(path, args.threads, max(widths) * (args.prompt_tokens + args.steps + 16), max(widths))
    prompt = [int(t) for t in np.random.default_rng(0).integers(100, 40000, size=args.prompt_tokens)]
    rows: list[dict[str, float]] = []
    try:
        for n in widths:
            raw.L.llama_memory_clear(raw.memory, True)
            raw.prefill(prompt, chunk=512)
            first = int(raw.logits(-1).argmax())
            for s in range(1, n):
                raw.L.llama_memory_seq_cp(raw.memory, 0, s, -1, -1)
            tokens = [first] * n
            started = time.perf_counter()
            for step in range(args.steps):
                raw.decode([(tokens[s], args.prompt_tokens + step, s, True) for s in range(n)])
                tokens = [int(raw.logits(s).argmax()) for s in range(n)]
            seconds = time.perf_counter() - started
            rows.append({"n": n, "step_ms": seconds / args.steps * 1000, "tokens_per_s": n * args.steps / seconds})
    finally:
        raw.close()
    return rows


def measure_prompts(path: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """k agents share a prefix (sequence 0's cells, tagged onto theirs), then each has an m-token
    tail of its own: evaluated one decode per agent, or packed together into decodes of at most
    63 rows (a tail may be split across two). Times are medians of 3; "identical" compares each
    agent's next-token logits bit for bit."""
    import numpy as np

    tails = [int(m) for m in args.tails.split(",") if m.strip()]
    agents = [int(k) for k in args.agents.split(",") if k.strip()]
    prefix_len = 128
    raw = RawModel(path, args.threads, max(agents) * (prefix_len + max(tails)) + 256, max(agents) + 1)
    rng = np.random.default_rng(1)
    prefix = [int(t) for t in rng.integers(100, 40000, size=prefix_len)]
    rows: list[dict[str, Any]] = []
    try:
        raw.prefill(prefix, seq=0)
        for m in tails:
            for k in agents:
                tail = {s: [int(t) for t in rng.integers(100, 40000, size=m)] for s in range(1, k + 1)}

                def reset() -> None:
                    for s in tail:
                        raw.L.llama_memory_seq_rm(raw.memory, s, -1, -1)
                        raw.L.llama_memory_seq_cp(raw.memory, 0, s, -1, -1)

                def one_by_one() -> dict[int, Any]:
                    out = {}
                    for s, tokens in tail.items():
                        raw.prefill(tokens, seq=s, start=prefix_len)
                        out[s] = raw.logits(-1)
                    return out

                def packed() -> dict[int, Any]:
                    items = [(t, prefix_len + i, s, i == len(tokens) - 1) for s, tokens in tail.items()
                             for i, t in enumerate(tokens)]
                    out = {}
                    for start in range(0, len(items), 63):
                        part = items[start : start + 63]
                        raw.decode(part)
                        for row, (_, _, s, last) in enumerate(part):
                            if last:
                                out[s] = raw.logits(row)
                    return out

                timing: dict[str, list[float]] = {"alone": [], "packed": []}
                results: dict[str, dict[int, Any]] = {}
                for _ in range(3):
                    for name, way in (("alone", one_by_one), ("packed", packed)):
                        reset()
                        started = time.perf_counter()
                        results[name] = way()
                        timing[name].append(time.perf_counter() - started)
                alone, together = (statistics.median(timing[n]) for n in ("alone", "packed"))
                identical = all(np.array_equal(results["alone"][s], results["packed"][s]) for s in tail)
                rows.append({"tail": m, "agents": k, "alone_s": alone, "packed_s": together, "identical": identical,
                             "decodes_alone": sum(-(-m // 63) for _ in tail), "decodes_packed": -(-(m * k) // 63)})
    finally:
        raw.close()
    return rows


# -- a panel of judges; cases in flight --------------------------------------------------------


def panel(i: int) -> list[Message]:
    return [Message("system", "You are a judge of a debate. Answer in one or two sentences."),
            Message("user", f"{TRANSCRIPT}\n\n{ASKS[i % len(ASKS)]}")]


async def time_panel(e: ModelEntry, path: Path, n: int) -> tuple[float, list[str]]:
    backend = load(e, path)
    try:
        started = time.perf_counter()
        done = await asyncio.gather(*(backend.session(f"judge{i}").complete(panel(i), GREEDY) for i in range(n)))
        return time.perf_counter() - started, [d.text for d in done]
    finally:
        await backend.aclose()


async def measure_panel(shape_id: str, quant: str, path: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    sizes = [int(n) for n in args.panel.split(",") if n.strip()]
    rows: list[dict[str, Any]] = []
    reference: dict[int, list[str]] = {}
    for mode, width in (("one at a time", 1), ("lockstep", max(sizes))):
        for n in sizes:
            seconds, texts = await time_panel(entry(shape_id, quant, path, width=width, threads=args.threads), path, n)
            same = reference.setdefault(n, texts) == texts
            rows.append({"mode": mode, "n": n, "seconds": seconds, "identical": same})
    return rows


async def measure_cases(shape_id: str, quant: str, path: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    from store.journal import Journal
    from tests.helpers.paths import dev_csv
    from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases

    csv = args.cases or dev_csv()
    cases = read_cases(csv, limit=args.cases_n, seed=0)
    labels = label_set(read_cases(csv, limit=None, seed=0), None)
    rows: list[dict[str, Any]] = []
    baseline: dict[Any, Any] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in [int(n) for n in args.jobs.split(",") if n.strip()]:
            backend = load(entry(shape_id, quant, path, width=max(jobs, 1), threads=args.threads), path)
            backends: dict[str, Backend] = {"model-a": backend, "model-b": backend}
            config = BenchConfig(cases=csv, models=("model-a", "model-b"), out=Path(tmp) / f"jobs{jobs}", design="quick",
                                 schedules=("exponential",), jobs=jobs, seed=0, n_boot=10)
            try:
                with Journal(Path(tmp) / f"jobs{jobs}.db") as journal:
                    bench = Bench(config, backends, dict.fromkeys(backends, GREEDY), journal)
                    started = time.perf_counter()
                    await bench.run(cases, labels)
                    seconds = time.perf_counter() - started
            finally:
                await backend.aclose()
            predictions = {key: outcome.prediction for key, outcome in bench.done.items()}
            diff = [] if baseline is None else differences(baseline, predictions)
            baseline = baseline or predictions
            rows.append({"jobs": jobs, "seconds": seconds, "cases_per_hour": len(cases) / seconds * 3600,
                         "identical": not diff, "differences": diff[:10]})
    return rows


# -- peak memory of a debate against the guard's estimate -----------------------------------------


def measure_memory(shape_id: str, quant: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """A three-role EVINCE debate (one model for all roles) in a process of its own, its memory read
    from ``/proc`` every 50 ms while it runs.

    Resident memory is of two kinds. File-backed pages are the GGUF mapped from disk: clean, so
    the kernel can drop any that are not being read and read them again later, without swapping.
    Anonymous pages (the KV cache, llama.cpp's buffers, any weights copied out of the mapping,
    the interpreter) cannot be dropped, only swapped. The table shows the peak of each, and the
    estimate against each."""
    model_id = f"synthetic-{shape_id}"
    need = memory_need(model_id, path, context=CONTEXT, agents=3)
    with tempfile.TemporaryDirectory() as tmp:
        registry = Path(tmp) / "models.toml"
        registry.write_text(
            f'[models.{model_id}]\nname = "Synthetic {SHAPES[shape_id].label} {quant}"\nfamily = "synthetic"\n'
            f'backend = "llamacpp"\nsource = {{ kind = "local", path = {json.dumps(str(path))} }}\n'
            f"context_length = {CONTEXT}\nthreads = {args.threads}\n", encoding="utf-8")
        env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp, PYTHONPATH=str(REPO))
        cmd = [sys.executable, "-m", "tui.cli", "--models", str(registry), "--db", str(Path(tmp) / "journal.db"),
               "run", "evince", "--case", "fever, chills and a headache for three days",
               "--agent-a", model_id, "--agent-b", model_id, "--judge", model_id,
               "--max-rounds", "1", "--turn-tokens", "48", "--crit-tokens", "48"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        peak = {"total": 0, "anon": 0, "file": 0}
        with tempfile.TemporaryFile("w+") as err:
            child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
            while child.poll() is None:
                now = _resident(child.pid)
                if now["hwm"] > peak["total"]:  # the kernel's high-water mark: a new peak since the last look
                    peak.update(total=now["hwm"], file=now["file"])
                peak["anon"] = max(peak["anon"], now["anon"])
                time.sleep(0.05)
            seconds = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child reaped so far
            err.seek(0)
            stderr = err.read()
    if not peak["anon"]:
        raise RuntimeError(f"could not read the debate's memory from /proc (exit {child.returncode}): {stderr[-400:]}")
    return {"returncode": child.returncode, "seconds": seconds, "peak_rss": peak["total"], "peak_anon": peak["anon"],
            "file_at_peak": peak["file"], "rusage_max_rss": after * 1024 if after > before else None,
            "estimate": need.total, "weights": need.weights, "kv": need.kv,
            "overhead": need.overhead, "file_bytes": path.stat().st_size, "stderr_tail": stderr[-400:] if child.returncode else ""}


def _resident(pid: int) -> dict[str, int]:
    """A running process's resident anonymous and file-backed bytes, and the kernel's high-water
    mark of all it has held resident (zeros once it has exited)."""
    found = {"anon": 0, "file": 0, "hwm": 0}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                name = {"RssAnon": "anon", "RssFile": "file", "VmHWM": "hwm"}.get(key)
                if name:
                    found[name] = int(value.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass  # exited between poll() and the read: the last sample stands
    return found


# -- tables -------------------------------------------------------------------------------------


def markdown(title: str, header: list[str], rows: list[list[str]]) -> str:
    out = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def render(results: list[dict[str, Any]], args: argparse.Namespace, console: Console) -> dict[str, str]:
    """Print every table and return them as markdown (for ``--write-docs``)."""
    parts: dict[str, str] = {}

    def show(section: str, title: str, header: list[str], rows: list[list[str]]) -> None:
        table = Table(title=title)
        for col in header:
            table.add_column(col, justify="right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        parts[section] = markdown(title, header, rows)

    tag = f"synthetic {args.quant}, {args.threads} thread(s)"
    reply_rows, raw_rows, prompt_rows, panel_rows, case_rows, memory_rows = [], [], [], [], [], []
    for res in results:
        name = f"{SHAPES[res['shape']].label} (synthetic)"
        if "reply" in res:
            r = res["reply"]
            for what in ("prefill", "decode"):
                key = f"{what}_tps"
                reply_rows.append([name, what, f"{r['raw'][key]:.1f}", f"{r['backend'][key]:.1f}",
                                   f"{r['backend'][key] / r['raw'][key]:.3f}", f"{r['backend_n_batch'][key]:.1f}"])
        if "raw" in res:
            one = res["raw"][0]
            for row in res["raw"]:
                raw_rows.append([name, str(row["n"]), f"{row['step_ms']:.1f}", f"{row['step_ms'] / one['step_ms']:.2f}×",
                                 f"{row['tokens_per_s']:.1f}", f"{row['tokens_per_s'] / one['tokens_per_s']:.2f}×"])
        if "prompts" in res:
            for row in res["prompts"]:
                prompt_rows.append([name, str(row["tail"]), str(row["agents"]),
                                    f"{row['alone_s'] * 1000:.0f} ms ({row['decodes_alone']})",
                                    f"{row['packed_s'] * 1000:.0f} ms ({row['decodes_packed']})",
                                    f"{row['alone_s'] / row['packed_s']:.2f}×", "yes" if row["identical"] else "no"])
        if "panel" in res:
            for row in res["panel"]:
                base = next(r for r in res["panel"] if r["mode"] == row["mode"] and r["n"] == res["panel"][0]["n"])
                panel_rows.append([name, row["mode"], str(row["n"]), f"{row['seconds']:.1f} s",
                                   f"{row['seconds'] / base['seconds']:.2f}×", "identical" if row["identical"] else "DIFFER"])
        if "cases" in res:
            base = res["cases"][0]
            for row in res["cases"]:
                case_rows.append([name, str(row["jobs"]), f"{row['seconds']:.0f} s", f"{row['cases_per_hour']:.0f}",
                                  f"{row['cases_per_hour'] / base['cases_per_hour']:.2f}×",
                                  "baseline" if row is base else "identical" if row["identical"] else "DIFFER"])
        if "memory" in res:
            m = res["memory"]
            gib = 2**30
            rusage = f"{m['rusage_max_rss'] / gib:.2f}" if m.get("rusage_max_rss") else "–"
            resident = f"{m['peak_rss'] / gib:.2f} ({m['file_at_peak'] / gib:.2f} file)"
            memory_rows.append([name, f"{m['file_bytes'] / gib:.2f}", resident, rusage,
                                f"{m['peak_anon'] / gib:.2f}", f"{m['estimate'] / gib:.2f}",
                                f"{m['weights'] / gib:.2f} + {m['kv'] / gib:.2f} + {m['overhead'] / gib:.2f}",
                                f"{m['estimate'] / m['peak_rss']:.2f}", f"{m['estimate'] / m['peak_anon']:.2f}",
                                "ok" if m["returncode"] == 0 else f"exit {m['returncode']}"])
    if reply_rows:
        show("reply", f"one reply, tokens/s ({tag}; {args.prompt_tokens}-token prompt, {args.tokens} tokens, median of {args.repeat})",
             ["model", "measure", "raw llama-cpp-python", "Symposium", "Symposium ÷ raw", "Symposium, n_batch chunks"],
             reply_rows)
    if raw_rows:
        show("raw", f"raw llama.cpp batched decoding, no Symposium code ({tag}; one llama_decode per step with N rows)",
             ["model", "N", "step", "× one row", "tokens/s", "× one row"], raw_rows)
    if prompt_rows:
        show("prompts", f"prompt tails of several agents: one decode each vs packed into decodes of ≤ 63 rows ({tag}; raw llama.cpp)",
             ["model", "tail tokens", "agents", "one each (decodes)", "packed (decodes)", "gain", "logits identical"],
             prompt_rows)
    if panel_rows:
        show("panel", f"a panel of judges of one transcript on one model ({tag}; greedy, {GREEDY.max_tokens} tokens each)",
             ["model", "mode", "judges", "wall time", "× one judgement", "verdicts"], panel_rows)
    if case_rows:
        show("cases", f"diagnosis cases in flight on one model ({tag}; design quick, greedy)",
             ["model", "in flight", "wall time", "cases/hour", "× one at a time", "predictions"], case_rows)
    if memory_rows:
        show("memory", f"peak memory of a three-role EVINCE debate vs the memory guard's estimate, GiB ({tag}; context {CONTEXT})",
             ["model", "file", "peak resident (of it file-backed)", "getrusage max RSS", "peak anonymous", "estimate",
              "weights + KV + buffers", "estimate ÷ resident", "estimate ÷ anonymous", "run"], memory_rows)
    return parts


def write_docs(path: Path, tables: dict[str, str], argv: list[str], load: tuple[float, float], note: str = "") -> None:
    """Replace, in ``path``, the block of each measured section (between ``<!-- shapes.py:SECTION:begin -->``
    and its ``end``) with its table and the command, date, machine and load that produced it; the
    other sections' blocks keep the run that wrote them. A run of some sections leaves the rest alone."""
    text = path.read_text(encoding="utf-8")
    command = " ".join(["python benchmarks/shapes.py", *argv])
    stamp = (f"Written by `{command}` on {time.strftime('%Y-%m-%d')}: {platform.machine()}, {os.cpu_count()} CPUs, "
             f"load average {load[0]:.1f} before and {load[1]:.1f} after, llama-cpp-python {version()}. "
             "Synthetic models (seeded random weights in real shapes): speed figures only.")
    for section, table in tables.items():
        begin, end = f"<!-- shapes.py:{section}:begin -->", f"<!-- shapes.py:{section}:end -->"
        if begin not in text or end not in text:
            raise SystemExit(f"{path}: no '{begin}' … '{end}' block to replace")
        head, rest = text.split(begin, 1)
        text = head + f"{begin}\n{stamp}{note}\n\n{table}{end}" + rest.split(end, 1)[1]
    path.write_text(text, encoding="utf-8")


async def measure(args: argparse.Namespace, argv: list[str]) -> int:
    console = Console(highlight=False)
    sections = {s for s in args.sections.split(",") if s}
    unknown = sections - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown section(s): {', '.join(sorted(unknown))}; choose from {', '.join(SECTIONS)}")
    load_before = os.getloadavg()[0]
    results: list[dict[str, Any]] = []
    shapes = [s for s in args.shapes.split(",") if s]

    def publish() -> None:
        """Print and write what is measured so far: a long run cut short keeps its finished shapes."""
        load_after = os.getloadavg()[0]
        tables = render(results, args, console)
        left = shapes[len(results):]
        note = f" Cut short: {', '.join(left)} not measured in this run." if left else ""
        console.print(f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load_before:.1f} before, {load_after:.1f} "
                      f"after; llama-cpp-python {version()}. Synthetic models: speed only.", markup=False)
        if args.json:
            args.json.write_text(json.dumps({"results": results, "load": [load_before, load_after]}, indent=2),
                                 encoding="utf-8")
        if args.write_docs:
            shown = [a for i, a in enumerate(argv) if not a.startswith("--json") and not (i and argv[i - 1] == "--json")]
            write_docs(args.write_docs, tables, shown, (load_before, load_after), note)

    for shape_id in shapes:
        path = synthetic_model(shape_id, args.quant, log=lambda m: console.print(m, style="dim"))
        res: dict[str, Any] = {"shape": shape_id, "quant": args.quant, "file": str(path)}
        for section in SECTIONS:
            if section not in sections:
                continue
            console.print(f"{shape_id}: {section} …", style="dim")
            if section == "reply":
                res["reply"] = await measure_reply(shape_id, args.quant, path, args)
            elif section == "raw":
                res["raw"] = await asyncio.to_thread(measure_raw, path, args)
            elif section == "prompts":
                res["prompts"] = await asyncio.to_thread(measure_prompts, path, args)
            elif section == "panel":
                res["panel"] = await measure_panel(shape_id, args.quant, path, args)
            elif section == "cases":
                res["cases"] = await measure_cases(shape_id, args.quant, path, args)
            elif section == "memory":
                res["memory"] = await asyncio.to_thread(measure_memory, shape_id, args.quant, path, args)
        results.append(res)
        publish()
    differ = any(not r["identical"] for res in results for r in res.get("panel", []) + res.get("cases", []))
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return asyncio.run(measure(parse_args(argv), argv))


if __name__ == "__main__":
    sys.exit(main())
