"""The report key (h) on Home and in Review: the HTML report written, readable by the owner only,
and the app says where (the real app under Pilot, a real journal)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from store.journal import Journal
from tests.helpers.sample_debate import record_sample
from tests.helpers.save_dialog import save
from tui.app.app import SymposiumApp
from tui.app.screens.home import HomeScreen
from tui.app.screens.review import ReviewScreen

SIZE = (140, 42)


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


def _notices(app: SymposiumApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_h_writes_the_report_from_home_and_from_review(tmp_path: Path, registry) -> None:
    app = SymposiumApp(journal=Journal(tmp_path / "journal.db"), registry=registry, export_dir=tmp_path / "exports")
    record_sample(app.journal, "sample0001ab", rounds=3)
    report = tmp_path / "exports" / "symposium-sample0001ab.html"
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, HomeScreen)
        await save(pilot, "h", redacted=False)
        assert report.exists() and stat.S_IMODE(report.stat().st_mode) == 0o600
        assert any(f"report written to {report}" in n for n in _notices(app)), _notices(app)
        page = report.read_text(encoding="utf-8")
        assert "Content-Security-Policy" in page and 'id="metrics"' in page and page.count("<article") == 6
        report.unlink()
        await pilot.press("o")
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("left")  # a round, not the whole debate, on screen …
        await save(pilot, "h", redacted=False)
        assert report.exists() and report.read_text(encoding="utf-8").count("<article") == 6  # … the report is whole
        app.save_screenshot(str(tmp_path / "review.svg"))
