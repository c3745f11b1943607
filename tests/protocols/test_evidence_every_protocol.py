"""Every protocol argues from an evidence folder and has every citation checked (generated from
the registry: each protocol's first sample run, tests/helpers/samples.py).

The folder holds a text file, a PDF and a Word document made here (tests/helpers/evidence_files.py).
The agents (tests/helpers/citing.py: scripted, since no real model fabricates on demand) cite a
real passage quoting it exactly, a passage that does not exist, a real passage with a quote that
is not in it, and make one claim with no source. The journal, the debate screen, ``show``, the
Markdown and JSON exports and the report must each classify all four correctly; a fabricated
citation is never shown as a source. A debate cut off midway resumes with the prompts of an
uninterrupted run, from the journalled passages, though the file on disk has changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from outputs.export import to_json, to_markdown
from outputs.markdown_text import inline
from outputs.report import render as render_html
from outputs.report.document import build as build_document
from protocols.core.agents import Agent
from protocols.core.moderation import CommandChannel
from protocols.core.replay import counted
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.citing import LINES, SAID, VERDICTS, citing
from tests.helpers.evidence_files import evidence_folder
from tests.helpers.samples import FIRST, form_values, spec_of
from tests.helpers.scripted_backends import OracleBackend
from tui.cli.parser import main
from tui.forms import ProtocolSpec
from tui.protocol_catalog import resumable

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=5)
#: Turns that make no factual claim and so are shown no evidence: choosing the subtopics,
#: answering whether one's case is made. Every other turn a model writes argues from the files.
PROCEDURAL = frozenset({"agenda", "case_check"})


async def _person(prompt: str) -> str:
    return "I would wait for the potassium result."


async def run_cited(tmp_path: Path, name: str, db: Path, journal: Journal | None = None) -> tuple[ProtocolSpec, dict[str, Any],
                                                                                               dict[str, OracleBackend]]:
    """``name``'s first sample run with the evidence folder, on citing agents, into ``db``."""
    spec = spec_of(name)
    folder = tmp_path / "case" if (tmp_path / "case").is_dir() else evidence_folder(tmp_path)
    values = form_values(spec, FIRST[name][1], {"evidence": str(folder), "evidence_claims": "4"})
    roles = spec.roles_for(values)
    backends = {model: citing(model) for model in set(roles.values())}
    agents = {role: Agent(role, backends[model], OPTS) for role, model in roles.items()}
    if journal is not None:  # the app's: it stays open
        final = await drive(spec.build(values, agents, "d1", CommandChannel(), _person), journal)
    else:
        with Journal(db) as j:
            final = await drive(spec.build(values, agents, "d1", CommandChannel(), _person), j)
    assert final is not None and final.status == "finished", final
    return spec, values, backends


def debate_of(db: Path) -> dict[str, Any]:
    with Journal(db) as journal:
        debate = Queries(journal).debate("d1")
    assert debate is not None
    return debate


def cited_turns(debate: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in debate["turns"] if t["citations"]]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", list(FIRST))
async def test_every_protocols_citations_are_checked_and_classified_in_the_journal_show_the_exports_and_the_report(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "journal.db"
    await run_cited(tmp_path, name, db)
    debate = debate_of(db)
    folder = tmp_path / "case"

    # the journal: the files with their hashes, every passage, each claim's verdict
    evidence = debate["evidence"]
    assert [(f["name"], f["sha256"]) for f in evidence["files"]] == [
        (f"case/{n}", hashlib.sha256((folder / n).read_bytes()).hexdigest()) for n in ("chart.txt", "guideline.docx", "labs.pdf")]
    assert len(evidence["passages"]) == 12
    turns = cited_turns(debate)
    assert turns, f"{name}: no turn listed a claim"
    # a turn with no model call (a person's, the rules' moderator) is journalled with finish reason "human"
    written = [t for t in debate["turns"] if t["finish_reason"] != "human" and t["kind"] not in PROCEDURAL]
    assert [(t["role"], t["kind"]) for t in written if not t["citations"]] == [], f"{name}: a model's turn argued without the evidence"
    for t in turns:
        assert [(c["status"], c["passage"], c["problem"]) for c in t["citations"]] == list(VERDICTS), (name, t["role"], t["kind"])
        assert "Evidence: passages from the user's files" in (t["request"] or ""), (name, t["kind"])
        assert t["citations"][0]["label"] == "E2 ¶2 · case/chart.txt" and not any(c["label"] for c in t["citations"][1:])
        if json.loads(t["raw"]).keys() == {"text", "claims"}:  # a free-text turn asked for as JSON: its words shown
            assert t["text"] == SAID
    # show (the terminal)
    capsys.readouterr()
    assert main(["show", "d1", "--db", str(db)]) == 0
    shown = flat(capsys.readouterr().out)
    for line in LINES:
        assert flat(line) in shown, (name, line)
    assert "Sources" in shown and evidence["files"][0]["sha256"] in shown
    # the exports
    markdown = to_markdown(debate)
    for line in LINES:
        assert inline(line) in markdown
    assert markdown.count(inline(LINES[0])) == len(turns)
    exported = json.loads(to_json(debate))
    assert [c["status"] for t in cited_turns(exported) for c in t["citations"]] == [v[0] for v in VERDICTS] * len(turns)
    # the report: each supported citation links to its passage; no other does
    html = render_html(build_document(debate))
    assert html.count('<a href="#e2">') == len(turns) and 'id="e2"' in html
    assert 'href="#e8"' not in html and 'href="#e99"' not in html and 'id="e8"' not in html
    assert "no passage E99; not a source" in html and "the quote is not in E8; not a source" in html
    for f in evidence["files"]:
        assert f["sha256"] in html
    # claims per agent: each speaker that cited, its counts (the table's rows as text)
    rows = {re.sub(r"<[^>]+>", "|", row).strip("|").replace("||", "|") for row in re.findall(r"<tr>(.*?)</tr>", html)}
    for role in {t["role"] for t in turns}:
        said = sum(1 for t in turns if t["role"] == role)
        assert f"{role}|{4 * said}|{said}|{2 * said}|{said}|33%" in rows, (name, role)


@pytest.mark.parametrize("name", list(FIRST))
async def test_every_protocols_citations_show_on_the_debate_screen_and_a_supported_one_opens_its_passage(
        tmp_path: Path, name: str, registry) -> None:
    from tests.helpers.pilot import make_app
    from tui.app.screens.review import ReviewScreen
    from tui.app.widgets.citations import CitationLine, PassageDialog

    app = make_app(tmp_path, registry)
    await run_cited(tmp_path, name, tmp_path / "journal.db", journal=app.journal)
    debate = Queries(app.journal).debate("d1")
    assert debate is not None
    async with app.run_test(size=(140, 42)) as pilot:
        screen = ReviewScreen(debate, app.workspace)
        await app.push_screen(screen)
        await pilot.pause()
        lines = list(screen.query(CitationLine))
        assert [line.citation.status for line in lines] == [v[0] for v in VERDICTS] * len(cited_turns(debate))
        assert [str(line.render()) for line in lines[:4]] == list(LINES)
        lines[1].action_open()  # a citation that did not check opens nothing: it has no passage
        await pilot.pause()
        assert not isinstance(app.screen, PassageDialog)
        lines[0].focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PassageDialog)
        assert str(app.screen.query_one("#passage-text").render()) == "Creatinine rose from 1.0 to 2.1 mg/dL within 48 hours of admission."
        await pilot.press("escape")
    app.journal.close()


class Cut(Exception):
    """The process dying at a journal write."""


class CuttingJournal(Journal):
    def __init__(self, path: Path, at: int) -> None:
        super().__init__(path)
        self.at, self.n = at, 0

    def record(self, event: Any) -> int | None:
        row = super().record(event)
        if counted(event):
            self.n += 1
            if self.n == self.at:
                raise Cut
        return row


@pytest.mark.parametrize("name", list(FIRST))
async def test_a_grounded_debate_resumes_from_its_journalled_passages_with_an_uninterrupted_runs_prompts(
        tmp_path: Path, name: str) -> None:
    """Cut halfway, the chart rewritten on disk, resumed: every role was sent exactly what the
    uninterrupted run sent it (so the resumed turns were shown the journalled passages, not the
    file as it is now), and the journal ends holding the same turns and verdicts."""
    _, values, straight = await run_cited(tmp_path, name, tmp_path / "straight.db")
    whole = debate_of(tmp_path / "straight.db")
    at = max(3, whole["events_recorded"] // 2)
    spec = spec_of(name)
    roles = spec.roles_for(values)
    first = {model: citing(model) for model in set(roles.values())}
    agents = {role: Agent(role, first[model], OPTS) for role, model in roles.items()}
    with CuttingJournal(tmp_path / "cut.db", at) as journal:
        with pytest.raises(Cut):
            await drive(spec.build(values, agents, "d1", CommandChannel(), _person), journal)
    (tmp_path / "case" / "chart.txt").write_text("Creatinine was normal throughout.\n", encoding="utf-8")
    with Journal(tmp_path / "cut.db") as journal:
        cut = Queries(journal).debate("d1")
        assert cut is not None and cut["evidence"] is not None
        resumed_spec, by_role = resumable(cut)
        fresh = {model: citing(model) for model in set(by_role.values())}
        agents = {role: Agent(role, fresh[model], SamplingOptions()) for role, model in by_role.items()}
        final = await drive(resumed_spec.resume(cut, agents, CommandChannel(), _person), journal)
    assert final is not None and final.status == "finished"
    for model, backend in straight.items():
        for role in {r for r, _, _ in backend.calls}:
            assert first[model].prompts_of(role) + fresh[model].prompts_of(role) == backend.prompts_of(role), f"{name}: {role}"
    again = debate_of(tmp_path / "cut.db")
    assert [(t["role"], t["text"], [c["status"] for c in t["citations"]]) for t in again["turns"]] == \
           [(t["role"], t["text"], [c["status"] for c in t["citations"]]) for t in whole["turns"]]
    assert again["evidence"]["passages"] == whole["evidence"]["passages"]
