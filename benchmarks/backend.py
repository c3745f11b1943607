"""Speed of Symposium's llama.cpp backend against plain llama-cpp-python, measured in one run.

For each bundled model this prints:

* decode tokens/s for free text and under a JSON-schema grammar, greedy, with the same prompt
  tokens, through ``llama_cpp.Llama.create_completion`` (the baseline) and through
  ``LlamaCppSession.chat`` (Symposium), and their ratio (the backend's overhead);
* the time to score the 41 disease labels of the Symptom2Disease dev set as the answer to one
  case, four ways: batched (the prompt once, then every label's tokens in one llama.cpp batch,
  one sequence per label sharing the prompt's KV cells), sequential (the prompt once, then the
  labels one after another), naive (the whole prompt again for every label), and a raw
  llama-cpp-python ``Llama`` keeping its own prefix reuse (prompt once, then each label after
  rewinding ``n_tokens``, no ``reset()`` per label); with the largest log-probability
  difference of each against the sequential way.

Baselines are measured in the same process, interleaved with the backend's runs, so a busy
machine slows both sides alike: read the ratios, not the absolute numbers. Nothing here asserts
on timings; it only reports.

    python benchmarks/backend.py                 # both bundled models, ~3-4 minutes on 2 cores
    python benchmarks/backend.py --quick         # ~30 s smoke run
    python benchmarks/backend.py --models smollm2-135m --tokens 256 --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from pydantic import BaseModel, Field  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from backends.base import Message, SamplingOptions  # noqa: E402
from backends.chat_format import ChatFormat  # noqa: E402
from backends.lifecycle import Engines  # noqa: E402
from backends.llamacpp import LlamaCppBackend, LlamaCppSession  # noqa: E402
from backends.registry import load_registry  # noqa: E402
from backends.sources import resolve_path  # noqa: E402

BUNDLED = ("smollm2-135m", "gemma3-270m")
#: The dev split beside the checkout (``../shared``), or beside the worktrees' folder.
DEV_CSV = next((p for base in (REPO.parent, REPO.parent.parent) if (p := base / "shared" / "data" / "symptom2disease" / "dev.csv").exists()),
               REPO.parent / "shared" / "data" / "symptom2disease" / "dev.csv")
RAW_N_CTX = 2048

#: Asks for a long answer so that greedy decoding rarely stops before ``--tokens``.
DEBATE_PROMPT = (
    "You are debating the motion: 'Hospitals should let AI triage systems decide which "
    "emergency patients are seen first.' Argue for the motion in a long, detailed opening "
    "statement of at least five paragraphs, giving evidence, examples and rebuttals of the "
    "strongest objections."
)
JSON_PROMPT = (
    "You are debating the motion: 'Hospitals should let AI triage systems decide which "
    "emergency patients are seen first.' Reply in JSON with your stance, your main claim and "
    "up to four supporting arguments, each a full sentence."
)


class DebateTurn(BaseModel):
    """A debate-turn shape like the protocols request: bounded strings and a bounded list,
    sized so that filling it takes roughly 128 tokens (~4 characters per token)."""

    stance: str = Field(max_length=24)
    claim: str = Field(max_length=160)
    arguments: list[Annotated[str, Field(max_length=100)]] = Field(max_length=4)


# -- results ------------------------------------------------------------------------------


@dataclass
class DecodeRun:
    """One generation: how many tokens, how fast, and the text (to check both sides agree)."""

    completion_tokens: int
    prompt_tokens: int
    first_token_s: float
    decode_s: float
    finish: str
    text: str

    @property
    def decode_tps(self) -> float | None:
        """(n - 1) tokens over the span from the first token to the end, as Completion does."""
        if self.completion_tokens < 2 or self.decode_s <= 0:
            return None
        return (self.completion_tokens - 1) / self.decode_s

    @property
    def prompt_tps(self) -> float | None:
        """Prompt tokens over the time to the first token (includes one sampling step)."""
        return self.prompt_tokens / self.first_token_s if self.first_token_s > 0 else None


@dataclass
class DecodeComparison:
    """Raw and backend runs of one measure (free text or JSON) on one model."""

    measure: str
    raw: list[DecodeRun] = field(default_factory=list)
    backend: list[DecodeRun] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        raw_tps, be_tps = _median(r.decode_tps for r in self.raw), _median(r.decode_tps for r in self.backend)
        raw_pps, be_pps = _median(r.prompt_tps for r in self.raw), _median(r.prompt_tps for r in self.backend)
        return {
            "measure": self.measure,
            "raw_decode_tps": raw_tps,
            "backend_decode_tps": be_tps,
            "decode_ratio": be_tps / raw_tps if raw_tps and be_tps else None,
            "raw_prompt_tps": raw_pps,
            "backend_prompt_tps": be_pps,
            "prompt_ratio": be_pps / raw_pps if raw_pps and be_pps else None,
            "raw_tokens": [r.completion_tokens for r in self.raw],
            "backend_tokens": [r.completion_tokens for r in self.backend],
            "raw_finish": [r.finish for r in self.raw],
            "backend_finish": [r.finish for r in self.backend],
            "prompt_tokens": self.backend[0].prompt_tokens if self.backend else None,
            "same_text": bool(self.raw and self.backend) and self.raw[0].text.strip() == self.backend[0].text.strip(),
            "runs": {"raw": [asdict(r) for r in self.raw], "backend": [asdict(r) for r in self.backend]},
        }


@dataclass
class ScoringComparison:
    """Shared-prompt scoring against one-prompt-per-label scoring of the same labels.

    The naive way may be timed on a subset (``naive_index``) to keep ``--quick`` quick; its
    time is then scaled to the full label set and marked as an estimate.
    """

    labels: list[str]
    prompt_tokens: int
    shared_s: list[float]
    naive_s: list[float]
    shared_logprobs: list[float]
    sequential_s: list[float]
    sequential_logprobs: list[float]
    raw_s: list[float]
    raw_logprobs: list[float]
    naive_index: list[int]
    naive_logprobs: list[float]
    shared_evaluated: int
    naive_evaluated: int

    def summary(self) -> dict[str, Any]:
        shared = statistics.median(self.shared_s)
        measured = statistics.median(self.naive_s)
        naive = measured * len(self.labels) / len(self.naive_index)
        subset = [self.shared_logprobs[i] for i in self.naive_index]
        order_shared = sorted(range(len(subset)), key=lambda k: -subset[k])
        order_naive = sorted(range(len(subset)), key=lambda k: -self.naive_logprobs[k])
        top = sorted(range(len(self.labels)), key=lambda i: -self.shared_logprobs[i])[:3]
        sequential = statistics.median(self.sequential_s)
        raw = statistics.median(self.raw_s)
        ref = self.sequential_logprobs
        return {
            "sequential_s": sequential,
            "raw_s": raw,
            "batched_vs_sequential": sequential / shared if shared > 0 else None,
            "batched_vs_raw": raw / shared if shared > 0 else None,
            "max_diff_batched": max(abs(a - b) for a, b in zip(self.shared_logprobs, ref)),
            "max_diff_raw": max(abs(a - b) for a, b in zip(self.raw_logprobs, ref)),
            "n_labels": len(self.labels),
            "naive_labels": len(self.naive_index),
            "naive_estimated": len(self.naive_index) < len(self.labels),
            "prompt_tokens": self.prompt_tokens,
            "shared_s": shared,
            "naive_s": naive,
            "speedup": naive / shared if shared > 0 else None,
            "max_abs_logprob_diff": max(abs(a - b) for a, b in zip([ref[i] for i in self.naive_index], self.naive_logprobs)),
            "same_ranking": order_shared == order_naive,
            "top3": [(self.labels[i], self.shared_logprobs[i]) for i in top],
            "tokens_evaluated": {"shared": self.shared_evaluated, "naive": self.naive_evaluated},
            "runs": {"shared_s": self.shared_s, "sequential_s": self.sequential_s, "raw_s": self.raw_s, "naive_s_measured": self.naive_s},
            "logprobs": dict(zip(self.labels, self.shared_logprobs)),
        }


def _median(values: Any) -> float | None:
    clean = [v for v in values if v is not None]
    return statistics.median(clean) if clean else None


# -- the raw llama-cpp-python baseline ----------------------------------------------------


def load_raw_llama(path: Path, n_threads: int, *, logits_all: bool = False) -> Any:
    """``llama_cpp.Llama`` on the same file and thread count as the backend.

    The backend turns llama.cpp's CPU "extra buffer" kernels (AMX repacking) off because they
    crash on this machine; ``Llama`` has no parameter for it, so the model-params factory it
    calls is wrapped for the duration of the constructor.

    ``flash_attn=True``: the backend keeps llama.cpp's default ``flash_attn_type = AUTO``, which
    turns flash attention on for CPU, whereas ``Llama`` defaults to off. Matching it makes both
    sides run the same kernels; greedy outputs then agree token for token ("same text").
    """
    import llama_cpp
    import llama_cpp.llama_cpp as low
    from llama_cpp._utils import suppress_stdout_stderr

    original = low.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without_extra_buffers
    llama_cpp.llama_model_default_params = without_extra_buffers
    try:
        # Llama() resets the log level itself, so its context's warnings are caught at the fd.
        with suppress_stdout_stderr(disable=False):
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=RAW_N_CTX,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                flash_attn=True,
                logits_all=logits_all,
                verbose=False,
            )
    finally:
        low.llama_model_default_params = original
        llama_cpp.llama_model_default_params = original
    quiet_llama_logs()
    return llm


def quiet_llama_logs() -> None:
    """Keep llama.cpp's warnings off the table.

    llama-cpp-python maps ggml's log levels with an outdated enum (WARN arrives as ERROR), so
    ``set_verbose(False)``, which ``Llama()`` itself calls, still prints warnings such as
    "using full-size SWA cache" to stderr. Raising the logger above CRITICAL silences them.
    """
    from llama_cpp import _logger

    _logger.logger.setLevel(logging.CRITICAL + 1)


def render_prompt(fmt: ChatFormat, messages: Sequence[Message]) -> str:
    """The prompt text the backend builds for ``messages`` (BOS is added by ``Llama``)."""
    parts = [fmt.prefix[m.role] + m.content + fmt.suffix[m.role] for m in fmt.turns(messages)]
    return "".join(parts) + fmt.prefix["assistant"]


def raw_decode(llm: Any, prompt: str, max_tokens: int, grammar: Any = None) -> DecodeRun:
    """One streamed greedy ``create_completion`` from an empty cache.

    A thin per-instance wrapper around ``Llama.sample`` records when each token is sampled and
    which it was, so the token count is exact (the stream's chunks are not one per token) and
    "first token" means the same instant as in the backend. No stop strings are passed, so a
    run ends only at ``max_tokens`` or an end-of-generation token.
    """
    import llama_cpp

    sampled: list[tuple[float, int]] = []
    real_sample = llm.sample

    def sample(*args: Any, **kwargs: Any) -> int:
        token = real_sample(*args, **kwargs)
        sampled.append((time.perf_counter(), token))
        return token

    llm.reset()  # forget the previous run's prompt: its tokens would be reused otherwise
    llm.sample = sample
    chunks: list[str] = []
    finish = "?"
    try:
        started = time.perf_counter()
        for chunk in llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, stream=True, grammar=grammar):
            choice = chunk["choices"][0]
            chunks.append(choice["text"])
            finish = choice["finish_reason"] or finish
        ended = time.perf_counter()
    finally:
        del llm.sample
    tokens = [t for _, t in sampled]
    if tokens and llama_cpp.llama_vocab_is_eog(llm._model.vocab, tokens[-1]):
        tokens.pop()
    first = sampled[0][0] if sampled else ended
    return DecodeRun(
        completion_tokens=len(tokens),
        prompt_tokens=len(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)),
        first_token_s=first - started,
        decode_s=ended - first,
        finish=finish,
        text="".join(chunks),
    )


def shared_grammar(json_schema: dict[str, Any]) -> Any:
    """The very ``LlamaGrammar`` the backend compiles for ``json_schema``, so both sides are
    constrained by the same GBNF (the backend rewrites some schemas before converting them).
    Falls back to converting the schema as it is if that private helper ever moves."""
    try:
        from backends.llamacpp import grammar_for
    except ImportError:
        from llama_cpp.llama_grammar import LlamaGrammar

        return LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
    return grammar_for(json_schema).raw


# -- the Symposium backend ----------------------------------------------------------------


async def backend_decode(
    session: LlamaCppSession, messages: Sequence[Message], max_tokens: int, schema: type[BaseModel] | None = None
) -> DecodeRun:
    """One streamed greedy ``session.chat`` after ``reset()``, so the prompt is evaluated anew."""
    session.reset()
    options = SamplingOptions(max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.0)
    stream = session.chat(messages, options, schema=schema)
    async for _ in stream:  # consume deltas as the TUI does
        pass
    done = stream.completion
    assert done is not None
    first = done.timing.first_token_s if done.timing.first_token_s is not None else done.timing.total_s
    return DecodeRun(
        completion_tokens=done.usage.completion_tokens,
        prompt_tokens=done.usage.prompt_tokens_evaluated,
        first_token_s=first,
        decode_s=done.timing.total_s - first,
        finish=done.finish_reason,
        text=done.text,
    )


# -- measurements -------------------------------------------------------------------------


async def compare_decode(
    measure: str,
    llm: Any,
    session: LlamaCppSession,
    messages: list[Message],
    max_tokens: int,
    repeat: int,
    schema: type[BaseModel] | None = None,
) -> DecodeComparison:
    """Alternate raw and backend runs (after one short warm-up each) so noise hits both."""
    prompt = render_prompt(session.backend.format, messages)
    grammar = shared_grammar(schema.model_json_schema()) if schema is not None else None
    raw_decode(llm, prompt, 4, grammar)
    await backend_decode(session, messages, 4, schema)
    result = DecodeComparison(measure)
    for i in range(repeat):  # raw first on even repetitions, backend first on odd ones
        if i % 2:
            result.backend.append(await backend_decode(session, messages, max_tokens, schema))
        result.raw.append(raw_decode(llm, prompt, max_tokens, grammar))
        if not i % 2:
            result.backend.append(await backend_decode(session, messages, max_tokens, schema))
    return result


def load_cases(path: Path = DEV_CSV) -> tuple[list[str], list[dict[str, str]]]:
    """The unique disease labels (whitespace stripped, sorted) and the rows of dev.csv."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    labels = sorted({row["disease"].strip() for row in rows})
    return labels, rows


def case_messages(row: dict[str, str]) -> list[Message]:
    """A diagnosis question built from one row's symptoms."""
    symptoms = row["symptoms"].replace("_", " ").replace(";", ", ")
    return [
        Message("system", "You are a careful physician. Answer with the name of one disease only."),
        Message("user", f"A patient presents with: {symptoms}. What is the most likely diagnosis?"),
    ]


def raw_score(llm: Any, prompt: list[int], encoded: list[list[int]]) -> tuple[float, list[float]]:
    """The labels' log-probabilities through ``llama_cpp.Llama`` as its users would get them with
    its own prefix reuse: the prompt evaluated once, then for each label ``n_tokens`` rewound to
    the prompt (``Llama.eval`` drops the cells past it) and the label's tokens evaluated."""
    import numpy as np

    from backends.llamacpp import log_softmax

    started = time.perf_counter()
    llm.reset()
    llm.eval(prompt)
    n = len(prompt)
    first = log_softmax(np.asarray(llm.scores[n - 1], dtype=np.float32))
    out: list[float] = []
    for tokens in encoded:
        total = float(first[tokens[0]])
        if len(tokens) > 1:
            llm.n_tokens = n
            llm.eval(tokens[:-1])
            for i, token in enumerate(tokens[1:]):
                total += float(log_softmax(np.asarray(llm.scores[n + i], dtype=np.float32))[token])
        out.append(total)
    return time.perf_counter() - started, out


async def timed_scores(session: LlamaCppSession, messages: list[Message], labels: list[str], mode: str, repeat: int) -> tuple[list[float], list[float]]:
    """``repeat`` runs of ``score(messages, labels)`` from an empty cache in ``mode``."""
    backend = session.backend
    backend.score_mode = mode
    times: list[float] = []
    result = None
    try:
        for _ in range(repeat):
            session.reset()
            started = time.perf_counter()
            result = await session.score(messages, labels)
            times.append(time.perf_counter() - started)
    finally:
        backend.score_mode = "batched"
    assert result is not None
    return times, result.logprobs


async def compare_scoring(
    session: LlamaCppSession,
    messages: list[Message],
    labels: list[str],
    repeat: int,
    naive_repeat: int,
    naive_labels: int | None,
    raw_llm: Any,
) -> ScoringComparison:
    """Batched, sequential, naive (``reset(); score(messages, [label])`` per label) and raw
    ``Llama`` scoring of the same labels, interleaved per repetition so load hits all alike."""
    session.reset()
    await session.score(messages, labels[:2])  # warm-up: allocate the context and batch
    be = session.backend
    prompt = session._prompt_tokens(messages)
    ends = be.tokenize(be.format.end_of_turn, special=True)
    encoded = [be.tokenize(label, special=False) + ends for label in labels]
    shared_s: list[float] = []
    sequential_s: list[float] = []
    raw_s: list[float] = []
    shared_lp = sequential_lp = raw_lp = []
    for _ in range(repeat):
        times, shared_lp = await timed_scores(session, messages, labels, "batched", 1)
        shared_s += times
        times, sequential_lp = await timed_scores(session, messages, labels, "sequential", 1)
        sequential_s += times
        took, raw_lp = raw_score(raw_llm, prompt, encoded)
        raw_s.append(took)
    session.reset()
    shared = await session.score(messages, labels)
    step = max(1, len(labels) // naive_labels) if naive_labels else 1
    index = list(range(0, len(labels), step))[: naive_labels or None]
    naive_s: list[float] = []
    naive_lp: list[float] = []
    naive_evaluated = 0
    for _ in range(naive_repeat):
        naive_lp, naive_evaluated = [], 0
        started = time.perf_counter()
        for i in index:
            session.reset()
            one = await session.score(messages, [labels[i]])
            naive_lp.append(one.logprobs[0])
            naive_evaluated += one.usage.prompt_tokens_evaluated
        naive_s.append(time.perf_counter() - started)
    return ScoringComparison(
        labels=labels,
        prompt_tokens=shared.usage.prompt_tokens,
        shared_s=shared_s,
        naive_s=naive_s,
        shared_logprobs=shared_lp,
        sequential_s=sequential_s,
        sequential_logprobs=sequential_lp,
        raw_s=raw_s,
        raw_logprobs=raw_lp,
        naive_index=index,
        naive_logprobs=naive_lp,
        shared_evaluated=shared.usage.prompt_tokens_evaluated,
        naive_evaluated=naive_evaluated,
    )


async def bench_model(model_id: str, args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Every measurement for one model; the raw ``Llama`` and the backend share the process."""
    entry = load_registry().get(model_id)
    path = resolve_path(entry)
    console.log(f"[bold]{model_id}[/]: loading {path.name}")
    async with Engines() as engines:  # the backend is closed however the measurements end
        backend = await engines.load_entry(entry)
        if not isinstance(backend, LlamaCppBackend):
            raise SystemExit(f"{model_id}: this benchmark measures the llamacpp backend, not {entry.backend!r}")
        llm = load_raw_llama(path, backend.n_threads)
        try:
            session = backend.session("bench")
            assert isinstance(session, LlamaCppSession)
            free_messages = [Message("user", DEBATE_PROMPT)]
            json_messages = [Message("user", JSON_PROMPT)]
            raw_len = len(llm.tokenize(render_prompt(backend.format, free_messages).encode(), add_bos=True, special=True))
            prompts_match = raw_len == session.count_tokens(free_messages)

            decode: list[dict[str, Any]] = []
            if not args.scoring_only:
                console.log(f"{model_id}: decode, free text ({args.repeat} × {args.tokens} tokens each side)")
                free = await compare_decode("free", llm, session, free_messages, args.tokens, args.repeat)
                console.log(f"{model_id}: decode, JSON grammar")
                constrained = await compare_decode("json", llm, session, json_messages, args.tokens, args.repeat, DebateTurn)
                decode = [free.summary(), constrained.summary()]

            labels, rows = load_cases()
            console.log(f"{model_id}: scoring {len(labels)} labels, shared prompt vs one prompt per label")
            raw_scorer = load_raw_llama(path, backend.n_threads, logits_all=True)
            try:
                scoring = await compare_scoring(
                    session, case_messages(rows[args.case]), labels, args.repeat, args.naive_repeat, args.naive_labels, raw_scorer
                )
            finally:
                raw_scorer.close()
            return {
                "model": model_id,
                "chat_format": backend.format.name,
                "threads": backend.n_threads,
                "prompt_tokens_match": prompts_match,
                "decode": decode,
                "scoring": scoring.summary() | {"case_id": rows[args.case].get("case_id")},
            }
        finally:
            llm.close()


# -- reporting ----------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _tokens(counts: list[int]) -> str:
    return "/".join(str(c) for c in sorted(set(counts))) or "—"


def decode_table(results: list[dict[str, Any]], max_tokens: int) -> Table:
    """Rows per model: decode and prompt tok/s, free and JSON; raw, backend, backend ÷ raw."""
    table = Table(
        title="Decode speed (tok/s, greedy, identical prompt tokens, median)",
        caption=(
            f"decode = (completion tokens − 1) / (end − first token), up to {max_tokens} tokens "
            "(fewer where the model ended its turn; counts raw | backend). "
            "prompt = prompt tokens / time to first token. ratio = backend ÷ raw: 1.00 = no overhead, "
            "above 1 = the backend is faster. "
            "same = both sides generated the same text."
        ),
        caption_justify="left",
    )
    table.add_column("model", no_wrap=True)
    table.add_column("measure", no_wrap=True)
    table.add_column("raw llama-cpp-python", justify="right")
    table.add_column("Symposium backend", justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("same", justify="center")
    for res in results:
        for i, d in enumerate(res["decode"]):
            label = "free" if d["measure"] == "free" else "JSON"
            table.add_row(
                res["model"] if i == 0 else "",
                f"decode, {label}",
                _fmt(d["raw_decode_tps"]),
                _fmt(d["backend_decode_tps"]),
                _fmt(d["decode_ratio"], 2),
                f"{_tokens(d['raw_tokens'])} | {_tokens(d['backend_tokens'])}",
                "yes" if d["same_text"] else "[yellow]no[/]",
            )
        for d in res["decode"]:
            label = "free" if d["measure"] == "free" else "JSON"
            table.add_row(
                "", f"prompt, {label}", _fmt(d["raw_prompt_tps"], 0), _fmt(d["backend_prompt_tps"], 0),
                _fmt(d["prompt_ratio"], 2), f"{d['prompt_tokens']} in", "",
            )
        table.add_section()
    return table


def scoring_table(results: list[dict[str, Any]]) -> Table:
    """One row per model: naive vs shared-prompt scoring time, speed-up, and agreement."""
    top3 = "; ".join(
        f"{r['model']}: " + ", ".join(f"{label} ({lp:.1f})" for label, lp in r["scoring"]["top3"]) for r in results
    )
    estimated = any(r["scoring"]["naive_estimated"] for r in results)
    table = Table(
        title="Label scoring: every disease label as the reply to one case (s, median)",
        caption=(
            r"naive = reset() then score(case, \[label]) per label: the whole prompt once per label. "
            "sequential = the prompt once, then each label's tokens one label after another (the way before "
            "batching). raw = llama_cpp.Llama with its own prefix reuse (prompt once, n_tokens rewound per label). "
            "batched = the prompt once, then the labels' tokens in batches of ≤ 63 tokens, one sequence per label "
            "sharing the prompt's KV cells, a prefix shared by labels evaluated once (from 64 rows llama.cpp's CPU "
            "flash attention takes a tiled path that rounds differently). "
            "Δ = largest |log-prob difference| against sequential. "
            + ("≈ = naive timed on a subset of labels, scaled to all (--naive-labels). " if estimated else "")
            + f"Top 3 (logprob) — {top3}."
        ),
        caption_justify="left",
    )
    table.add_column("model", no_wrap=True)
    table.add_column("labels", justify="right")
    table.add_column("prompt tok", justify="right")
    table.add_column("naive", justify="right")
    table.add_column("sequential", justify="right")
    table.add_column("raw Llama", justify="right")
    table.add_column("batched", justify="right")
    table.add_column("batched vs seq | raw | naive", justify="right")
    table.add_column("Δ naive | raw | batched", justify="right")
    for res in results:
        s = res["scoring"]
        approx = "≈" if s["naive_estimated"] else ""
        table.add_row(
            res["model"], str(s["n_labels"]), str(s["prompt_tokens"]), approx + _fmt(s["naive_s"], 2),
            _fmt(s["sequential_s"], 2), _fmt(s["raw_s"], 2), _fmt(s["shared_s"], 2),
            f"{_fmt(s['batched_vs_sequential'], 2)}× | {_fmt(s['batched_vs_raw'], 2)}× | {approx}{_fmt(s['speedup'], 1)}×",
            f"{s['max_abs_logprob_diff']:.1e} | {s['max_diff_raw']:.1e} | {s['max_diff_batched']:.1e}",
        )
    return table


def machine() -> dict[str, Any]:
    import llama_cpp

    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "llama_cpp_python": llama_cpp.__version__,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


# -- command line -------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default=",".join(BUNDLED), help="comma-separated model ids (default: the bundled ones)")
    parser.add_argument("--tokens", type=int, default=None, help="decode length (default 128; 32 with --quick)")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions, median reported (default 3; 1 with --quick)")
    parser.add_argument("--naive-repeat", type=int, default=1, help="repetitions of the slow one-prompt-per-label scoring")
    parser.add_argument(
        "--naive-labels", type=int, default=None, help="time the naive scoring on this many labels and scale (default all; 8 with --quick)"
    )
    parser.add_argument("--case", type=int, default=0, help="dev.csv row used as the scoring case")
    parser.add_argument("--scoring-only", action="store_true", help="skip the decode comparison")
    parser.add_argument("--quick", action="store_true", help="a ~30 s smoke run: fewer tokens, one repetition")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write every number here")
    args = parser.parse_args(argv)
    args.tokens = args.tokens or (32 if args.quick else 128)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.naive_labels = args.naive_labels or (8 if args.quick else None)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console()
    if not console.is_terminal:  # piped or redirected: no screen to fit, so do not squeeze the tables
        console = Console(width=110)
    started = time.perf_counter()
    results = [asyncio.run(bench_model(model_id, args, console)) for model_id in args.models]
    info = machine() | {"elapsed_s": round(time.perf_counter() - started, 1)}
    if not args.scoring_only:
        console.print(decode_table(results, args.tokens))
    console.print(scoring_table(results))
    for res in results:
        if not res["prompt_tokens_match"]:
            console.print(f"[yellow]{res['model']}: the raw prompt tokenises differently from the backend's[/]")
    console.print(
        f"[dim]{info['cpu_count']} CPUs ({info['processor']}), {info['platform']}, Python {info['python']}, "
        f"llama-cpp-python {info['llama_cpp_python']}, {results[0]['threads'] if results else '?'} threads; "
        f"{info['elapsed_s']} s. Command: {info['command']}[/]"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"machine": info, "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, "results": results}
        args.json.write_text(json.dumps(payload, indent=2))
        console.print(f"[dim]wrote {args.json}[/]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
