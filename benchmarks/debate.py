"""What a whole debate costs on the llama.cpp backend: tokens evaluated, time, memory.

Runs a 5-round EVINCE debate (closed Symptom2Disease label set, distributions by label scoring)
and a 5-round SocraSynth debate between the bundled models, each in a fresh process per way of
keeping the KV cache, and prints per agent and in total:

* prompt tokens evaluated, tokens new to that agent (prompt tokens past the longest prefix it
  has already seen, its own replies included, plus scored candidates' tokens: what any cache
  must evaluate), and their ratio (goal ≤ 1.3×);
* the same for the naive way, measured by running the debate again with KV reuse switched off
  (``LlamaCppBackend.kv_reuse = False``: every call evaluates its whole transcript), and how
  many times fewer tokens the cached way evaluates (goal ≥ 3× at 5 rounds);
* wall time split into prefill, decode (debaters), judging (judge calls), scoring (label
  scoring) and journal writes;
* peak RSS of the process and KV cache bytes per role, for the shared layout (the agents of a
  model are sequences of one context whose cache grows with the tokens in use) against a whole
  context per agent (the way before), with one context's KV as the yardstick (goal: a 3-role
  debate within 1.5× of it).

Each run is its own process so peak RSS belongs to one layout. Nothing asserts on timings.
Sampling is seeded; the naive run may still drift from the cached one (llama.cpp rounds
differently for different batch sizes), so both runs' own "new" counts are shown.

    python benchmarks/debate.py                       # both protocols, all roles on smollm2-135m
    python benchmarks/debate.py --quick               # 2 rounds, short turns (~3 min busy)
    python benchmarks/debate.py --agent-b gemma3-270m --judge gemma3-270m --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

#: The dev split beside the checkout (``../shared``), or beside the worktrees' folder.
DEV_CSV = next((p for base in (REPO.parent, REPO.parent.parent) if (p := base / "shared" / "data" / "symptom2disease" / "dev.csv").exists()),
               REPO.parent / "shared" / "data" / "symptom2disease" / "dev.csv")
MODES = ("shared", "per_agent", "naive")
SUBJECT = "Should hospitals let AI triage systems decide which emergency patients are seen first?"


# -- the child: one debate in one process --------------------------------------------------


class Meter:
    """Counts every llama.cpp call of the run by wrapping the backend's worker-thread methods."""

    def __init__(self) -> None:
        self.agents: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.time: dict[str, float] = defaultdict(float)
        self._seen: dict[int, list[int]] = {}

    def _new_tokens(self, session: Any, prompt: list[int]) -> int:
        seen = self._seen.get(id(session), [])
        common = 0
        for a, b in zip(seen, prompt):
            if a != b:
                break
            common += 1
        return len(prompt) - common

    def install(self) -> None:
        from backends.llamacpp import LlamaCppSession
        from store.journal import Journal

        meter = self
        generate, score, record = LlamaCppSession._generate_sync, LlamaCppSession._score_sync, Journal.record

        def timed_generate(session: Any, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            new = meter._new_tokens(session, session._prompt_tokens(messages))
            done = generate(session, messages, *args, **kwargs)
            meter._seen[id(session)] = list(session._prompt_tokens(messages)) + list(session._generated.get(done.text.strip(), []))
            meter._count(session.name, done.usage.prompt_tokens, done.usage.prompt_tokens_evaluated, new, done.usage.completion_tokens)
            if session.name.startswith("judge"):
                meter.time["judging"] += done.timing.total_s
            else:
                meter.time["prefill"] += done.timing.prompt_s
                meter.time["decode"] += done.timing.total_s - done.timing.prompt_s
            return done

        def timed_score(session: Any, messages: list[Any], candidates: list[str], prefix: str) -> Any:
            prompt = session._prompt_tokens(messages, reply_prefix=prefix)
            new = meter._new_tokens(session, prompt)
            done = score(session, messages, candidates, prefix)
            meter._seen[id(session)] = list(prompt)
            fed = sum(done.token_counts) - len(done.token_counts)
            meter._count(session.name, done.usage.prompt_tokens, done.usage.prompt_tokens_evaluated, new + fed, 0)
            meter.time["scoring"] += done.timing.total_s
            return done

        def timed_record(journal: Any, event: Any) -> Any:
            started = time.perf_counter()
            try:
                return record(journal, event)
            finally:
                meter.time["journal"] += time.perf_counter() - started

        LlamaCppSession._generate_sync = timed_generate  # type: ignore[method-assign]
        LlamaCppSession._score_sync = timed_score  # type: ignore[method-assign]
        Journal.record = timed_record  # type: ignore[method-assign]

    def _count(self, name: str, prompt: int, evaluated: int, new: int, generated: int) -> None:
        row = self.agents[name]
        row["calls"] += 1
        row["prompt"] += prompt
        row["evaluated"] += evaluated
        row["new"] += new
        row["generated"] += generated


async def run_child(args: argparse.Namespace) -> dict[str, Any]:
    """One debate of ``args.protocol`` with the KV way ``args.mode``; returns its numbers."""
    from backends.lifecycle import Engines
    from backends.llamacpp import LlamaCppBackend
    from backends.registry import Registry, load_registry
    from protocols import evince, socrasynth
    from protocols.core.agents import agents_for
    from protocols.core.roles import AGENT_A, AGENT_B, JUDGE
    from protocols.measures.labels import read_label_set
    from protocols.registry import definition
    from store.drive import drive
    from store.journal import Journal

    meter = Meter()
    meter.install()
    base = load_registry()
    layout = "per_agent" if args.mode == "per_agent" else "shared"
    update = {"kv_layout": layout, "kv_cache_type": args.kv_cache_type}
    if args.context:
        update["context_length"] = args.context
    registry = Registry(base.path, {k: e.model_copy(update=update) for k, e in base.entries.items()})
    started = time.perf_counter()
    async with Engines(registry) as engines:
        protocol = definition(args.protocol)
        # The definition names the roles: EVINCE's one judge, SocraSynth's panel of one.
        # (Its inputs are read too: the case and the subject stand in; the configs below set them.)
        roles = protocol.role_models({AGENT_A: args.agent_a, AGENT_B: args.agent_b, JUDGE: args.judge,
                                      "case": SUBJECT, "subject": SUBJECT})
        backends = await engines.load(roles.values())
        agents = agents_for(roles, backends, seed=args.seed)
        loaded = time.perf_counter()
        for backend in backends.values():
            if isinstance(backend, LlamaCppBackend):
                backend.kv_reuse = args.mode != "naive"
        if args.protocol == "evince":
            import csv

            with DEV_CSV.open(newline="", encoding="utf-8") as handle:
                row = list(csv.DictReader(handle))[args.case]
            config = evince.EvinceConfig(
                case=row["symptoms"], labels=read_label_set(str(DEV_CSV)), scoring="scored",
                # EVINCE's max_rounds counts refutation rounds after the opening one: N rounds in all.
                max_rounds=args.rounds - 1, turn_tokens=args.turn_tokens, crit_tokens=args.crit_tokens,
                eps_wd=0.0, eps_mi=0.0, eps_jsd=0.0, eps_crit=0.0,  # |Δ| < 0 never holds: a 5-round cost
            )
            events = protocol.run(config, protocol.team(agents), debate_id=f"bench-{os.getpid()}")
        else:
            config = socrasynth.SocraSynthConfig(
                subject=SUBJECT, max_rounds=args.rounds, subtopics=2, turn_tokens=args.turn_tokens,
                crit_tokens=args.crit_tokens, delta=1.05, crit_tolerance=9.0, case_check=False,  # never stop early
            )
            events = protocol.run(config, protocol.team(agents), debate_id=f"bench-{os.getpid()}")
        with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "journal.db") as journal:
            final = await drive(events, journal)
        debate_s = time.perf_counter() - loaded
        kv = {b.model_id: b.kv_stats() for b in backends.values() if isinstance(b, LlamaCppBackend)}
        one_context = {b.model_id: b.n_ctx * b.kv_bytes_per_token() for b in backends.values() if isinstance(b, LlamaCppBackend)}
        roles_per_model = defaultdict(int)
        for a in agents.values():
            roles_per_model[a.model_id] += 1
    return {
        "protocol": args.protocol,
        "mode": args.mode,
        "status": final.status if final else "cut off",
        "agents": {k: dict(v) for k, v in meter.agents.items()},
        "time": dict(meter.time) | {"debate_wall": debate_s, "load": loaded - started},
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "kv": kv,
        "one_context_kv": one_context,
        "roles_per_model": dict(roles_per_model),
        "threads": {b.model_id: b.n_threads for b in backends.values() if isinstance(b, LlamaCppBackend)},
    }


# -- the parent: one process per (protocol, mode), then the tables --------------------------


def run_all(args: argparse.Namespace, console: Console) -> list[dict[str, Any]]:
    results = []
    for protocol in args.protocols:
        for mode in args.modes:
            console.log(f"{protocol}: {mode} …")
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
                path = Path(out.name)
            command = [sys.executable, __file__, "--child", protocol, mode, "--out", str(path), *child_args(args)]
            done = subprocess.run(command, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(REPO)})
            if done.returncode != 0:
                console.print(f"[red]{protocol} {mode} failed[/]\n{done.stderr[-3000:]}")
                continue
            results.append(json.loads(path.read_text()))
            path.unlink()
    return results


def child_args(args: argparse.Namespace) -> list[str]:
    return [
        "--agent-a", args.agent_a, "--agent-b", args.agent_b, "--judge", args.judge, "--rounds", str(args.rounds),
        "--turn-tokens", str(args.turn_tokens), "--crit-tokens", str(args.crit_tokens), "--seed", str(args.seed),
        "--case", str(args.case), "--kv-cache-type", args.kv_cache_type, *(["--context", str(args.context)] if args.context else []),
    ]


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def token_table(results: list[dict[str, Any]]) -> Table:
    table = Table(title="Prompt tokens over a whole debate, per agent", caption_justify="left", caption=(
        "evaluated = prompt tokens llama.cpp ran (scored labels' tokens included); new = tokens new to that agent "
        "(past the longest prefix it had seen, its replies included): the least any cache must run. "
        "naive = the same debate with KV reuse off, measured; its sampled text drifts from the cached run's (llama.cpp "
        "rounds differently for other batch sizes), so fewer = naive (evaluated ÷ new) ÷ cached (evaluated ÷ new): "
        "how many times more tokens the naive way runs per token new to the agent."))
    for column in ("protocol", "agent", "calls", "evaluated", "new", "eval ÷ new", "naive evaluated", "naive new",
                   "naive eval ÷ new", "fewer"):
        table.add_column(column, justify="left" if column in ("protocol", "agent") else "right")
    by = {(r["protocol"], r["mode"]): r for r in results}
    for protocol in dict.fromkeys(r["protocol"] for r in results):
        cached, naive = by.get((protocol, "shared")), by.get((protocol, "naive"))
        if cached is None:
            continue
        names = list(cached["agents"]) + ["total"]
        for name in names:
            row = _sum(cached["agents"]) if name == "total" else cached["agents"][name]
            nrow = (_sum(naive["agents"]) if name == "total" else naive["agents"].get(name)) if naive else None
            table.add_row(
                protocol if name == names[0] else "", f"[bold]{name}[/]" if name == "total" else name, f"{row['calls']:.0f}",
                f"{row['evaluated']:,.0f}", f"{row['new']:,.0f}", f"{row['evaluated'] / max(1, row['new']):.2f}×",
                f"{nrow['evaluated']:,.0f}" if nrow else "—", f"{nrow['new']:,.0f}" if nrow else "—",
                f"{nrow['evaluated'] / max(1, nrow['new']):.2f}×" if nrow else "—",
                f"{(nrow['evaluated'] / max(1, nrow['new'])) / (row['evaluated'] / max(1, row['new'])):.1f}×" if nrow else "—",
            )
        table.add_section()
    return table


def _sum(rows: dict[str, dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = defaultdict(float)
    for row in rows.values():
        for key, value in row.items():
            total[key] += value
    return total


def cost_table(results: list[dict[str, Any]]) -> Table:
    table = Table(title="Wall time and memory per run", caption_justify="left", caption=(
        "prefill/decode = debaters' chat calls; judging = judge calls; scoring = label scoring; journal = "
        "Journal.record. KV/role = KV bytes reserved ÷ roles on the model; vs 1 ctx = all KV reserved ÷ one "
        "context's KV (n_ctx × bytes/token). Peak RSS of the run's own process (weights mapped once per model)."))
    for column in ("protocol", "KV way", "status", "wall", "prefill", "decode", "judging", "scoring", "journal",
                   "peak RSS", "KV/role", "vs 1 ctx"):
        table.add_column(column, justify="left" if column in ("protocol", "KV way", "status") else "right")
    for r in results:
        t = r["time"]
        kv_total = sum(k["kv_bytes"] for k in r["kv"].values())
        one = max(r["one_context_kv"].values()) if r["one_context_kv"] else 0
        roles = sum(r["roles_per_model"].values())
        table.add_row(
            r["protocol"], r["mode"], r["status"], f"{t['debate_wall']:.1f} s",
            *(f"{t.get(k, 0):.1f} s" for k in ("prefill", "decode", "judging", "scoring")), f"{t.get('journal', 0) * 1000:.0f} ms",
            _mb(r["peak_rss"]), _mb(kv_total / max(1, roles)), f"{kv_total / one:.2f}×" if one else "—",
        )
    return table


def machine(threads: Any) -> str:
    import llama_cpp

    return (f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), {platform.platform()}, "
            f"Python {platform.python_version()}, llama-cpp-python {llama_cpp.__version__}, threads {threads}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocols", default="evince,socrasynth")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--agent-a", default="smollm2-135m")
    parser.add_argument("--agent-b", default="smollm2-135m")
    parser.add_argument("--judge", default="smollm2-135m")
    parser.add_argument("--rounds", type=int, default=None, help="debate rounds (default 5; 2 with --quick)")
    parser.add_argument("--turn-tokens", type=int, default=None, help="reply limit per turn (default 128; 48 with --quick)")
    parser.add_argument("--crit-tokens", type=int, default=None, help="judge reply limit (default 160; 64 with --quick)")
    parser.add_argument("--context", type=int, default=None, help="context_length override for every model")
    parser.add_argument("--kv-cache-type", default="f16", choices=("f16", "q8_0"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--case", type=int, default=0, help="dev.csv row for EVINCE")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write every number here")
    parser.add_argument("--report", type=Path, nargs="+", metavar="JSON", help="print the tables of earlier --json files")
    parser.add_argument("--child", nargs=2, metavar=("PROTOCOL", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.turn_tokens = args.turn_tokens or (48 if args.quick else 128)
    args.crit_tokens = args.crit_tokens or (64 if args.quick else 160)
    args.protocols = [p for p in args.protocols.split(",") if p]
    args.modes = [m for m in args.modes.split(",") if m]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        args.protocol, args.mode = args.child
        result = asyncio.run(run_child(args))
        args.out.write_text(json.dumps(result))
        return 0
    console = Console() if sys.stdout.isatty() else Console(width=130)
    started = time.perf_counter()
    if args.report:
        saved = [json.loads(path.read_text()) for path in args.report]
        results = [r for doc in saved for r in doc["results"]]
        console.print(token_table(results))
        console.print(cost_table(results))
        console.print(f"[dim]{saved[0]['machine']}; " + "; ".join(doc.get("command", "") for doc in saved) + "[/]")
        return 0
    results = run_all(args, console)
    console.print(token_table(results))
    console.print(cost_table(results))
    threads = sorted({t for r in results for t in r["threads"].values()})
    console.print(f"[dim]{machine(threads)}; {args.rounds} rounds, turns ≤ {args.turn_tokens} tokens, judge ≤ "
                  f"{args.crit_tokens}; {time.perf_counter() - started:.0f} s. Command: "
                  f"{' '.join([Path(sys.executable).name, *sys.argv])}[/]")
    if args.json:
        command = " ".join([Path(sys.executable).name, *sys.argv])
        args.json.write_text(json.dumps({"machine": machine(threads), "command": command, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
