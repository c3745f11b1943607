"""Keypress-to-screen latency of the app, idle and while a debate between two models generates.

The app runs headless under Textual's Pilot. Each measurement sends a key that changes the
screen (``?`` opens the help screen, ``escape`` closes it) and times it until the app composes
the first frame that shows the result (the frame a terminal would be sent). The baseline is
the same measurement with no debate running, in the same process; the ratio says what a live
debate costs the interface. A debate's models compute in worker threads, so the ratio should
stay near 1 on a machine with a core to spare; on 2 cores both threads compete with the
interface for CPU, which is what this measures honestly.

    python benchmarks/tui.py                 # 40 presses each way, EVINCE between the two bundled models
    python benchmarks/tui.py --presses 20 --json out.json
    python benchmarks/tui.py --scripted      # long turns over a long transcript, at model pace
    python benchmarks/tui.py --scripted --profile /tmp/tui   # and what held the event loop, per condition

``--scripted`` isolates the interface's own cost: the Debate screen opens on a recorded
transcript of ``--history-turns`` long turns, then two scripted models (tests/helpers/scripted_backends.py,
no CPU of their own) take turns writing ``--turn-tokens``-token replies at ``--rate`` tokens per
second each, through the same ``drive`` → ``DebateScreen.show`` path as a live debate (the
screen runs them as it runs a protocol: :class:`BenchRun`). What is
left is what the app does per token and per frame, and whether it grows with turn length.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from rich.text import Text  # noqa: E402
from textual import events  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.widgets import Static  # noqa: E402

from backends.registry import load_registry  # noqa: E402
from protocols.core.events import DebateStarted, Event, Participant, TurnFinished  # noqa: E402
from protocols.core.roles import AGENT_A, AGENT_B, JUDGE  # noqa: E402
from store.journal import Journal  # noqa: E402
from tui.app.app import SymposiumApp  # noqa: E402
from tui.app.runs import DebateRun  # noqa: E402
from tui.app.screens.debate import DebateScreen  # noqa: E402
from tui.app.screens.help import HelpScreen  # noqa: E402
from tui.app.widgets.transcript import Transcript, TurnView  # noqa: E402
from tui.protocol_catalog import SPECS  # noqa: E402
from tui.sanitize import terminal_safe  # noqa: E402

EVINCE = SPECS["evince"]


#: Threads alive in this process at each press (the models' worker threads included).
THREADS: list[int] = []
#: With ``--profile``: one profile per condition of the event loop's thread, each keypress to its frame.
PROFILES: dict[str, cProfile.Profile] | None = None


class FrameClock:
    """Timestamps of the frames the app composes (``App._display``), with the screen each shows.

    Headless, Textual still composes every frame and hands it to ``_display`` (which then skips
    the terminal write), so this is the moment a real terminal would receive the new screen.
    """

    def __init__(self, app: SymposiumApp) -> None:
        self.frames: list[tuple[float, type]] = []
        original = app._display

        def display(screen, renderable) -> None:  # type: ignore[no-untyped-def]
            self.frames.append((time.perf_counter(), type(screen)))
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]


async def press_latencies(pilot: Pilot, clock: FrameClock, presses: int, still_busy=lambda: True,
                          cpu: list[float] | None = None, label: str = "") -> list[float]:
    """Milliseconds from each keypress to the first frame showing its result (help open, then closed).

    The key goes straight to the driver's queue, as a terminal's would; nothing here waits for
    the process to be idle (Pilot's ``pause()`` does, which never happens while models compute
    in the same process).
    """
    app = pilot.app
    driver = app._driver
    assert driver is not None
    out: list[float] = []
    profile = PROFILES.setdefault(label, cProfile.Profile()) if PROFILES is not None else None
    for i in range(presses):
        key, char, want_help = ("question_mark", "?", True) if i % 2 == 0 else ("escape", None, False)
        seen = len(clock.frames)
        start, cpu_start = time.perf_counter(), time.process_time()
        event = events.Key(key, char)
        event.set_sender(app)
        if profile is not None:
            profile.enable()
        driver.send_message(event)
        while not any(issubclass(kind, HelpScreen) == want_help for _, kind in clock.frames[seen:]):
            if time.perf_counter() - start > 30:
                raise TimeoutError(f"no frame after pressing {key}")
            await asyncio.sleep(0.001)
        if profile is not None:
            profile.disable()
        shown = next(t for t, kind in clock.frames[seen:] if issubclass(kind, HelpScreen) == want_help)
        out.append((shown - start) * 1000)
        THREADS.append(threading.active_count())
        if cpu is not None:  # this process's CPU until the frame was seen: what a busy machine does not inflate
            cpu.append((time.process_time() - cpu_start) * 1000)
        await asyncio.sleep(0.15)  # a person's pace between keys
        if not still_busy():
            break
    if isinstance(app.screen, HelpScreen):
        await pilot.press("escape")
    return out


@asynccontextmanager
async def bench_app(registry=None):
    """The real app, headless at 140×42, on a throwaway journal and config, with its frame clock."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYMPOSIUM_CONFIG_DIR"] = tmp
        app = SymposiumApp(journal=Journal(Path(tmp) / "bench.db"), registry=registry or load_registry())
        clock = FrameClock(app)
        async with app.run_test(size=(140, 42)) as pilot:
            await pilot.pause()
            yield app, pilot, clock
        app.journal.close()


async def measure(presses: int, model_a: str, model_b: str) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    async with bench_app() as (app, pilot, clock):
        results["idle"] = await press_latencies(pilot, clock, presses, label="idle")
        values = {**EVINCE.defaults(), AGENT_A: model_a, AGENT_B: model_b, "max_rounds": 2, "turn_tokens": 256}
        app.start_debate(EVINCE, values)
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        while not debate.query(Transcript):  # composed on the next frames
            await pilot.pause(0.05)
        transcript = debate.query_one(Transcript)
        while transcript.current is None:  # wait until the models are generating
            await pilot.pause(0.1)
        results["debate generating"] = await press_latencies(pilot, clock, presses, lambda: debate.running, label="generating")
        debate.workers.cancel_group(debate, "debate")
        await pilot.pause()
    return results


async def measure_vllm_start(presses: int, folder: Path) -> tuple[dict[str, list[float]], list[str]]:
    """Keypresses while the app starts a vLLM engine (an EVINCE debate with every role on SmolLM2
    on vLLM, ``folder`` its Hugging Face folder), until the engine runs; also the progress lines
    the Debate screen showed meanwhile. Needs vLLM (.venv-vllm)."""
    from dataclasses import replace

    from backends import vllm_engine
    from backends.registry import LocalSource, VllmSettings

    base = load_registry()
    entry = base.get("smollm2-135m").model_copy(update={
        "id": "smollm2-vllm", "backend": "vllm", "chat_format": None, "source": LocalSource(kind="local", path=str(folder)),
        "vllm": VllmSettings(kv_cache_gb=1)})
    registry = replace(base, entries={**base.entries, entry.id: entry})
    results: dict[str, list[float]] = {}
    shown: list[str] = []
    async with bench_app(registry) as (app, pilot, clock):
        results["idle"] = await press_latencies(pilot, clock, presses, label="idle")
        values = {**EVINCE.defaults(), AGENT_A: entry.id, AGENT_B: entry.id, JUDGE: entry.id, "max_rounds": 2}
        app.start_debate(EVINCE, values)
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        while "starting vLLM" not in str(debate.view.phase):
            await asyncio.sleep(0.05)

        def starting() -> bool:
            phase = str(debate.view.phase)
            if not shown or shown[-1] != phase:
                shown.append(phase)
            return not vllm_engine.PROCESS.running and debate.running

        results["vLLM engine starting"] = await press_latencies(pilot, clock, 100_000, starting, label="starting")
        debate.workers.cancel_group(debate, "debate")
        await pilot.pause()
    return results, shown


def long_reply(tokens: int, seed: int) -> str:
    """About ``tokens`` tokens (4 characters each) of prose in paragraphs, like a model's turn."""
    words = ("the", "liver", "enzymes", "point", "to", "hepatitis", "rather", "than", "jaundice", "alone,",
             "given", "dark", "urine", "and", "itching;", "a", "bilirubin", "test", "would", "settle", "it.")
    out, n = [], 0
    while n * 4 < tokens * 4:
        out.append(words[(n * 7 + seed) % len(words)])
        n += 1
        if n % 60 == 0:
            out.append("\n\n")
    return " ".join(out)


def scripted_history(debate_id: str, turns: int, tokens: int) -> list:
    parts = (Participant(AGENT_A, "scripted-a", "scripted"), Participant(AGENT_B, "scripted-b", "scripted"))
    events: list = [DebateStarted(debate_id, "evince", "Benchmark", "a long transcript", {}, parts)]
    for i in range(turns):
        role = (AGENT_A, AGENT_B)[i % 2]
        text = long_reply(tokens, i)
        events.append(TurnFinished(debate_id, role, f"scripted-{role[-1]}", "debate", i // 2, "argument", text, text, None))
    return events


async def scripted_turns(debate_id: str, first_round: int, tokens: int, rate: float):
    """Two scripted agents alternating long turns, streamed at ``rate`` tokens/s (4 chars a token)."""
    from backends.base import SamplingOptions
    from protocols.core.agents import Agent
    from tests.helpers.scripted_backends import ScriptedBackend

    agents = [Agent(role, ScriptedBackend(f"scripted-{role[-1]}", [long_reply(tokens, i) for i in range(50)],
                                          delay=1 / rate, chunk=4), SamplingOptions(max_tokens=tokens))
              for role in (AGENT_A, AGENT_B)]
    n = first_round
    while True:
        agent = agents[n % 2]
        turn = agent.turn([])
        async for event in turn.events(debate_id, phase="debate", round=n // 2, kind="argument"):
            yield event
        assert turn.completion is not None
        text = turn.completion.text
        yield TurnFinished(debate_id, agent.role, agent.model_id, "debate", n // 2, "argument", text, text, turn.call())
        n += 1


class BenchRun(DebateRun):
    """The Debate screen's run of ``given`` events, then, once :attr:`go` is set, of ``more``
    (on no models): the screen journals and shows them as it does a protocol's."""

    def __init__(self, given: list[Event], more=None) -> None:  # type: ignore[no-untyped-def]
        self.definition = EVINCE.definition
        self.given, self.more = given, more
        self.go = asyncio.Event()

    def roles(self):  # type: ignore[no-untyped-def]
        return {}

    async def _stream(self):  # type: ignore[no-untyped-def]
        for event in self.given:
            yield event
        await self.go.wait()
        if self.more is not None:
            async for event in self.more:
                yield event

    def events(self, agents, channel, person, registry):  # type: ignore[no-untyped-def]
        return self._stream()


async def measure_scripted(presses: int, history: int, tokens: int, rate: float) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    async with bench_app() as (app, pilot, clock):
        run = BenchRun(scripted_history("bench00000ab", history, tokens),
                       scripted_turns("bench00000ab", history, tokens, rate))
        debate = DebateScreen(run, app.workspace)
        app.push_screen(debate)
        transcript_ready = lambda: debate.is_mounted and len(debate.query_one(Transcript).turns) == history  # noqa: E731
        while not transcript_ready():
            await asyncio.sleep(0.05)
        await pilot.pause(0.5)
        idle_cpu: list[float] = []
        results[f"idle, {history} long turns shown"] = await press_latencies(pilot, clock, presses, cpu=idle_cpu, label="idle")
        run.go.set()
        transcript = debate.query_one(Transcript)
        while transcript.current is None or len(transcript.current.raw) < tokens * 2:  # halfway into a long turn
            await asyncio.sleep(0.05)
        busy_cpu: list[float] = []
        results[f"generating {tokens}-token turns at {rate:g} tok/s"] = await press_latencies(pilot, clock, presses, cpu=busy_cpu,
                                                                                                label="generating")
        results["CPU ms, idle"], results["CPU ms, generating"] = idle_cpu, busy_cpu
        debate.workers.cancel_group(debate, "debate")
        await pilot.pause()
    return results


class WholeTurn(Static):
    """The baseline: how a streaming turn was painted before (the whole text re-sanitized and
    redrawn at every repaint), kept here to measure the change against in the same run."""

    def __init__(self) -> None:
        super().__init__(Text(""))
        self.raw = ""

    def append(self, text: str) -> None:
        self.raw += text

    def flush(self) -> bool:
        self.update(Text(terminal_safe(self.raw)))
        return True


async def flush_costs(lengths: tuple[int, ...], flushes: int) -> dict[str, list[float]]:
    """CPU milliseconds of this process from one repaint of a streaming turn to its frame, by
    the turn's length so far. CPU time, not wall time: it is what the repaint itself costs the
    event loop, and other people's processes on a busy machine do not inflate it."""
    results: dict[str, list[float]] = {}
    async with bench_app() as (app, pilot, clock):
        screen = DebateScreen(BenchRun(scripted_history("flush0000000", 0, 0)), app.workspace)
        await app.push_screen(screen)
        await pilot.pause()
        transcript = screen.query_one(Transcript)
        for way, make in (("before: whole turn", WholeTurn), ("now: paragraphs", lambda: TurnView(AGENT_A, "m", "t"))):
            for n in lengths:
                view = make()
                await transcript.mount(view)
                text = long_reply(n + flushes * 2, n)
                view.append(text[: n * 4])
                view.flush()
                await pilot.pause()
                costs = []
                for k in range(flushes):
                    view.append(text[n * 4 + k * 8: n * 4 + k * 8 + 8])
                    seen = len(clock.frames)
                    cpu = time.process_time()
                    view.flush()
                    while len(clock.frames) == seen:
                        await asyncio.sleep(0.0005)
                    costs.append((time.process_time() - cpu) * 1000)
                results[f"{way}, at {n} tokens"] = costs
                await view.remove()
    return results


def table(results: dict[str, list[float]], title: str = "Keypress → updated screen (ms)", vs: str = "idle") -> Table:
    baseline = statistics.median(next(iter(results.values())))  # the first condition is the baseline
    t = Table(title=title)
    for col in ("condition", "samples", "p50", "p95", "max", f"p50 vs {vs}"):
        t.add_column(col, justify="right")
    for name, values in results.items():
        values = sorted(values)
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        t.add_row(name, str(len(values)), f"{statistics.median(values):.1f}", f"{p95:.1f}", f"{values[-1]:.1f}",
                  f"{statistics.median(values) / baseline:.2f}×")
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--model-a", default="smollm2-135m")
    parser.add_argument("--model-b", default="gemma3-270m")
    parser.add_argument("--scripted", action="store_true", help="scripted models: the interface's own cost")
    parser.add_argument("--history-turns", type=int, default=30, help="--scripted: turns already shown")
    parser.add_argument("--turn-tokens", type=int, default=1000, help="--scripted: tokens per turn")
    parser.add_argument("--rate", type=float, default=40.0, help="--scripted: tokens per second while writing")
    parser.add_argument("--flush-cost", action="store_true", help="CPU per repaint of a streaming turn, by length")
    parser.add_argument("--vllm-start", metavar="FOLDER", type=Path,
                        help="presses while the app starts vLLM's engine on this Hugging Face folder (run with .venv-vllm)")
    parser.add_argument("--json", help="also write the raw latencies here")
    parser.add_argument("--profile", metavar="PREFIX", help="profile the event loop from each keypress to its frame; "
                        "writes PREFIX-idle.prof and PREFIX-generating.prof and prints their top entries")
    args = parser.parse_args()
    if args.profile:
        global PROFILES
        PROFILES = {}
    if args.vllm_start:
        results, shown = asyncio.run(measure_vllm_start(args.presses, args.vllm_start))
        what = f"vLLM's engine starting in the app (progress shown: {' | '.join(shown[:3])} … {shown[-1] if shown else ''})"
    elif args.flush_cost:
        results = asyncio.run(flush_costs((100, 1000, 3000), args.presses))
        what = "CPU ms from a streaming turn's repaint to its frame (baseline: the first row)"
    elif args.scripted:
        results = asyncio.run(measure_scripted(args.presses, args.history_turns, args.turn_tokens, args.rate))
        what = f"scripted models, {args.history_turns} turns shown, {args.turn_tokens}-token turns at {args.rate:g} tok/s"
    else:
        results = asyncio.run(measure(args.presses, args.model_a, args.model_b))
        what = f"models {args.model_a} and {args.model_b} (EVINCE demo, 256-token turns)"
    console = Console()
    console.print(table(results, "Repaint of a streaming turn → its frame (CPU ms)", "first row") if args.flush_cost
                  else table(results))
    from importlib.metadata import version

    import textual
    console.print(f"{os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}), {platform.platform()}, Python "
                  f"{platform.python_version()}, textual {textual.__version__}, rich {version('rich')}, "
                  f"Python threads during presses {min(THREADS, default=threading.active_count())}–{max(THREADS, default=threading.active_count())}; "
                  f"{what}; command: "
                  f"python benchmarks/tui.py {' '.join(sys.argv[1:])}", highlight=False)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    for label, profile in (PROFILES or {}).items():
        import pstats
        profile.dump_stats(f"{args.profile}-{label}.prof")
        console.print(f"\nWhat held the event loop, {label} (cumulative; {args.profile}-{label}.prof):", highlight=False)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
