"""Regenerate the screenshots in docs/ from a real journal.

    python docs/make_screenshots.py --db JOURNAL [--debate ID] [--only app|report]

Home shows the journal's debates; New debate the demo form; Debate the chosen (default: the
newest EVINCE) debate as it stood after its second round, the way it looks while running.
report.png is the top of that debate's HTML report (`symposium report`) in headless Chromium
(Debian's `chromium`), as a reader first sees it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from backends.registry import load_registry  # noqa: E402
from outputs.report import report_html  # noqa: E402
from store.journal import Journal  # noqa: E402
from store.queries import Queries  # noqa: E402
from tui.app.app import SymposiumApp  # noqa: E402
from tui.app.recorded import rounds_of  # noqa: E402
from tui.app.screens.review import ReviewScreen  # noqa: E402

SIZE = (140, 42)


async def shoot(db: Path, debate_id: str | None) -> None:
    os.environ["SYMPOSIUM_CONFIG_DIR"] = tempfile.mkdtemp()
    journal = Journal(db)
    queries = Queries(journal)
    if debate_id is None:
        debate_id = next(d["id"] for d in queries.debates() if d["protocol"] == "evince")
    debate = queries.debate(debate_id)
    assert debate is not None
    app = SymposiumApp(journal=journal, registry=load_registry())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.save_screenshot("home.svg", path=str(REPO / "docs"))
        await pilot.press("d")  # the demo's form, filled in (ctrl+s would start it)
        await pilot.pause()
        app.save_screenshot("new-debate.svg", path=str(REPO / "docs"))
        await pilot.press("escape")
        rounds = rounds_of(debate)
        shown = rounds[min(1, len(rounds) - 1)]  # mid-debate: after its second round
        review = ReviewScreen(debate, app.workspace)
        await app.push_screen(review)
        review.position = rounds.index(shown)
        await pilot.pause(0.5)
        app.save_screenshot("debate.svg", path=str(REPO / "docs"))


def report_png(db: Path, debate_id: str | None, width: int = 1000, height: int = 1700) -> None:
    """docs/report.png: the report's first screen (summary and plots) at a laptop's width."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("report.png needs Chromium (Debian: apt-get install chromium)")
    with Journal(db) as journal:
        queries = Queries(journal)
        if debate_id is None:
            debate_id = next(d["id"] for d in queries.debates() if d["protocol"] == "evince")
        debate = queries.debate(debate_id)
    assert debate is not None
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        page.write_text(report_html(debate)[0], encoding="utf-8")
        subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                        f"--user-data-dir={folder}/profile", f"--window-size={width},{height}",
                        f"--screenshot={REPO / 'docs' / 'report.png'}", page.as_uri()], check=True, capture_output=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--debate")
    parser.add_argument("--only", choices=("app", "report"))
    args = parser.parse_args()
    if args.only != "report":
        asyncio.run(shoot(args.db, args.debate))
    if args.only != "app":
        report_png(args.db, args.debate)
