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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from textual import events  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

from backends.registry import load_registry  # noqa: E402
from store.journal import Journal  # noqa: E402
from tui.app.app import SymposiumApp  # noqa: E402
from tui.launch import EVINCE  # noqa: E402
from tui.app.screens.debate import DebateScreen  # noqa: E402
from tui.app.screens.help import HelpScreen  # noqa: E402
from tui.app.widgets.transcript import Transcript  # noqa: E402


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


async def press_latencies(pilot: Pilot, clock: FrameClock, presses: int, still_busy=lambda: True) -> list[float]:
    """Milliseconds from each keypress to the first frame showing its result (help open, then closed).

    The key goes straight to the driver's queue, as a terminal's would; nothing here waits for
    the process to be idle (Pilot's ``pause()`` does, which never happens while models compute
    in the same process).
    """
    app = pilot.app
    driver = app._driver
    assert driver is not None
    out: list[float] = []
    for i in range(presses):
        key, char, want_help = ("question_mark", "?", True) if i % 2 == 0 else ("escape", None, False)
        seen = len(clock.frames)
        start = time.perf_counter()
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)
        while not any(issubclass(kind, HelpScreen) == want_help for _, kind in clock.frames[seen:]):
            if time.perf_counter() - start > 30:
                raise TimeoutError(f"no frame after pressing {key}")
            await asyncio.sleep(0.001)
        shown = next(t for t, kind in clock.frames[seen:] if issubclass(kind, HelpScreen) == want_help)
        out.append((shown - start) * 1000)
        await asyncio.sleep(0.15)  # a person's pace between keys
        if not still_busy():
            break
    if isinstance(app.screen, HelpScreen):
        await pilot.press("escape")
    return out


async def measure(presses: int, model_a: str, model_b: str) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYMPOSIUM_CONFIG_DIR"] = tmp
        app = SymposiumApp(journal=Journal(Path(tmp) / "bench.db"), registry=load_registry())
        results: dict[str, list[float]] = {}
        clock = FrameClock(app)
        async with app.run_test(size=(140, 42)) as pilot:
            await pilot.pause()
            results["idle"] = await press_latencies(pilot, clock, presses)
            values = {**EVINCE.defaults(), "agent-a": model_a, "agent-b": model_b, "max_rounds": 3, "turn_tokens": 256}
            app.start_debate(EVINCE, values)
            await pilot.pause()
            debate = app.screen
            assert isinstance(debate, DebateScreen)
            while not debate.query(Transcript):  # composed on the next frames
                await pilot.pause(0.05)
            transcript = debate.query_one(Transcript)
            while transcript.current is None:  # wait until the models are generating
                await pilot.pause(0.1)
            results["debate generating"] = await press_latencies(pilot, clock, presses, lambda: debate.running)
            debate.workers.cancel_group(debate, "debate")
            await pilot.pause()
        app.journal.close()
    return results


def table(results: dict[str, list[float]]) -> Table:
    baseline = statistics.median(results["idle"])
    t = Table(title="Keypress → updated screen (ms)")
    for col in ("condition", "presses", "median", "p95", "max", "median vs idle"):
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
    parser.add_argument("--json", help="also write the raw latencies here")
    args = parser.parse_args()
    results = asyncio.run(measure(args.presses, args.model_a, args.model_b))
    console = Console()
    console.print(table(results))
    console.print(f"{os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}; "
                  f"models {args.model_a} and {args.model_b} (EVINCE demo, 256-token turns); command: "
                  f"python benchmarks/tui.py {' '.join(sys.argv[1:])}", highlight=False)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
