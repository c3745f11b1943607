"""What a debate's model calls cost (protocols/core/costs.py): one definition of the tables per
agent and per round, read by ``symposium show``, the Markdown export and the HTML report.

A scripted backend (tests/helpers/scripted_backends.py, ``measured``) reports every figure an in-process
backend measures, so the tables have everything to add up; they are checked against sums the
test makes itself, in SQL, over the journal's own rows. That the journal's figures are the
backend's own counts is tests/backends/test_costs_counted.py's (the bundled model).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from outputs.export import to_markdown
from outputs.report import report_html
from protocols import socrasynth as ss
from protocols.core.agents import Agent
from protocols.core.costs import (
    AGENT_HEADERS,
    NOTE,
    ROUND_HEADERS,
    Figure,
    Ledger,
    agent_table,
    cost_section,
    journal_calls,
    seconds,
    shown,
    tokens,
)
from protocols.core.present import Para, Table, num
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend, fits
from tui.cli.parser import main

ID = "costs0001"


async def _scripted_debate(path: Path) -> dict[str, Any]:
    """A SocraSynth debate (debaters, a judge, the Q&A baseline) on scripted models that measure
    every figure, journalled."""
    def agent(role: str, model: str) -> Agent:
        return Agent(role, ScriptedBackend(model, [], answer=fits, measured=True), SamplingOptions(max_tokens=64))

    team = ss.SocraSynthAgents(agent("agent-a", "m-a"), agent("agent-b", "m-b"), [agent("judge-1", "m-judge")],
                               qa=agent("qa", "m-a"))
    config = ss.SocraSynthConfig(subject="Should towns ban cars from their centres?", max_rounds=2, subtopics=1,
                                 qa_baseline=True, case_check=False)
    with Journal(path) as journal:
        await drive(ss.run(config, team, debate_id=ID), journal)
        debate = Queries(journal).debate(ID)
    assert debate is not None
    return debate


@pytest.fixture
async def debate(tmp_path: Path) -> dict[str, Any]:
    return await _scripted_debate(tmp_path / "j.db")


def _sums(path: Path, by: str) -> dict[Any, tuple[Any, ...]]:
    """Per ``by`` (role or round), the journal's calls summed in SQL: calls, prompt tokens,
    cached, generated, waited, prefill, decode, total."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            f"SELECT m.{by}, COUNT(*), SUM(m.prompt_tokens), SUM(c.cached_tokens), SUM(m.completion_tokens),"
            " SUM(c.wait_s), SUM(c.prefill_s), SUM(c.decode_s), SUM(m.duration_s)"
            " FROM model_calls m JOIN call_costs c ON c.call_id = m.id WHERE m.debate_id = ?"
            f" GROUP BY m.{by}", (ID,)).fetchall()
    finally:
        conn.close()
    return {r[0]: (r[1], r[2], r[3], r[4], round(r[5], 1), round(r[6], 1), round(r[7], 1), round(r[8], 1)) for r in rows}


def _rows(table: Table) -> dict[Any, list[Any]]:
    return {row[0]: row[1:] for row in table.rows}


async def test_the_tables_add_up_the_journals_calls_per_agent_and_per_round(debate: dict[str, Any], tmp_path: Path) -> None:
    section = cost_section(journal_calls(debate))
    assert section is not None and section.id == "cost"
    per_agent, per_round = (b for b in section.blocks if isinstance(b, Table))
    assert per_agent.headers == AGENT_HEADERS and per_round.headers == ROUND_HEADERS
    models = {"agent-a": "m-a", "agent-b": "m-b", "judge-1": "m-judge", "qa": "m-a"}
    by_role = _sums(tmp_path / "j.db", "role")
    assert set(by_role) == set(models)  # every agent that was called: debaters, the judge, the Q&A baseline
    shown = _rows(per_agent)
    for role, sums in by_role.items():
        row = shown[f"{role} ({models[role]})"]
        assert tuple(row[:8]) == sums, role
        assert row[8] == round(sums[3] / sum(c["decode_s"] for c in journal_calls(debate) if c["role"] == role), 1)
    total = tuple(sum(s[i] for s in by_role.values()) for i in range(8))
    assert tuple(shown["all"][:4]) == total[:4] and shown["all"][7] == pytest.approx(total[7], abs=0.1)
    by_round = _sums(tmp_path / "j.db", "round")
    rounds = _rows(per_round)
    assert [r for r in rounds if r != "all"] == [*sorted(r for r in by_round if r is not None),
                                                  *(["—"] if None in by_round else [])]
    for number, sums in by_round.items():
        assert tuple(rounds["—" if number is None else number]) == sums, number
    assert tuple(rounds["all"][:4]) == total[:4]


def _call(role: str, **figures: Any) -> dict[str, Any]:
    return {"role": role, "model_id": "m", "round": 1, "prompt_tokens": 100, "prompt_tokens_evaluated": 40,
            "completion_tokens": 20, "duration_s": 2.0, "cached_tokens": None, "wait_s": None, "prefill_s": None,
            "decode_s": None, **figures}


def test_a_figure_no_call_measured_is_a_dash_and_one_only_some_measured_a_lower_bound() -> None:
    """A server that reports no cache hits is never shown as reusing nothing: its calls' cache
    figure is "—", and a sum over calls of which only some measured it is "≥" that sum."""
    ledger = Ledger([_call("agent-a", cached_tokens=60, decode_s=3.0), _call("agent-a"),
                     _call("judge", cached_tokens=60, wait_s=0.5, prefill_s=0.25, decode_s=1.0),
                     _call("qa", model_id="m-http")])
    rows = _rows(agent_table(ledger))
    assert rows["agent-a (m)"] == [2, 200, "≥60", 40, "—", "—", "≥3.0", 4.0, 6.7]  # the rate over the timed call alone
    assert rows["judge (m)"] == [1, 100, 60, 20, 0.5, 0.2, 1.0, 2.0, 20.0]
    assert rows["qa (m-http)"] == [1, 100, "—", 20, "—", "—", "—", 2.0, "—"]  # a server that measures none of them
    assert rows["all"] == [4, 400, "≥120", 80, "≥0.5", "≥0.2", "≥4.0", 8.0, 10.0]
    assert cost_section([]) is None


def test_calls_of_no_round_a_failed_call_and_an_export_missing_fields_are_counted_as_they_are() -> None:
    """A call outside any round (a final verdict) is its own last row; a failed call counts as a
    call with nothing spent; a call read from an export that lacks its role, model, round or
    costs (or gives a round that is not a number) is still counted, under "?" and "—"."""
    calls = [_call("agent-a", round=2), _call("agent-a", round=0), _call("judge", round=None),
             _call("judge", prompt_tokens=0, prompt_tokens_evaluated=0, completion_tokens=0, duration_s=0.0, round=2),
             {"prompt_tokens": 10, "completion_tokens": 1, "round": "2"}, _call("agent-a", model_id="m2", round=0)]
    section = cost_section(calls)
    assert section is not None
    per_agent, per_round, note = section.blocks
    assert (per_agent.caption, per_round.caption) == ("Per agent", "Per round") and note == Para(NOTE, "note")
    agents = _rows(per_agent)
    assert list(agents) == ["agent-a (m, m2)", "judge (m)", "? (?)", "all"]
    assert agents["judge (m)"][:4] == [2, 100, "—", 20] and agents["? (?)"][:4] == [1, 10, "—", 1]
    rounds = _rows(per_round)
    assert list(rounds) == [0, 2, "—", "all"]
    assert rounds[0][:2] == [2, 200] and rounds[2][:2] == [2, 100] and rounds["—"][:2] == [2, 110]
    assert rounds["all"] == [6, 410, "—", 81, "—", "—", "—", 8.0]
    ledger = Ledger()
    ledger.add({"role": "judge", "prompt_tokens": 5}, 3)  # a CallRecord has no round: the event's is given
    assert list(ledger.rounds) == [3]
    old = {"model_calls": [{"id": 1, **_call("agent-a")}, {"id": 2, **_call("judge")}],
           "call_costs": [{"call_id": 2, "cached_tokens": 7, "wait_s": None, "prefill_s": 0.5, "decode_s": 1.0}]}
    merged = journal_calls(old)  # a call journalled before costs were kept has none
    assert [(c["cached_tokens"], c["prefill_s"]) for c in merged] == [(None, None), (7, 0.5)]
    assert journal_calls({"model_calls": [{"id": 1, **_call("agent-a")}]})[0]["decode_s"] is None


def test_a_glance_rounds_as_the_tables_do() -> None:
    assert [tokens(n) for n in (0, 9_999, 10_000, 12_345, 250_000)] == ["0", "9,999", "10.0k", "12.3k", "250.0k"]
    assert [seconds(s) for s in (0.04, 59.94, 60, 75.4)] == ["0.0", "59.9", "60", "75"]
    assert [shown(f) for f in (Figure(), Figure(5.0, 1, 2), Figure(5.0, 2, 2))] == ["—", "≥5.0", "5.0"]
    assert shown(Figure(12_345, 3, 3), tokens) == "12.3k"


async def test_show_the_markdown_export_and_the_report_render_the_same_tables(
        debate: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    section = cost_section(journal_calls(debate))
    assert section is not None
    per_agent = next(b for b in section.blocks if isinstance(b, Table))
    judge = next(row for row in per_agent.rows if str(row[0]).startswith("judge-1"))
    cells = [num(v) for v in judge]  # as every renderer writes a number

    markdown = to_markdown(debate)
    assert "## Cost" in markdown
    assert "| " + " | ".join(cells) + " |" in markdown

    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")  # each table whole (narrower, show splits its columns into groups)
    assert main(["show", ID, "--db", str(tmp_path / "j.db")]) == 0
    shown = capsys.readouterr().out
    assert "Cost" in shown and "Per agent" in shown and "Per round" in shown
    line = next(line for line in shown.splitlines() if "judge-1" in line and cells[1] in line)
    assert [c for c in cells[1:] if c not in line] == [], line  # every figure of the judge's row, in its row

    html, _ = report_html(debate)
    found = re.search(r'<section id="cost".*?</section>', html, re.S)
    assert found is not None
    in_html = [str(v) for v in judge[1:]]  # the report writes a value as Python does
    assert re.search("".join(rf"<td[^>]*>{re.escape(c)}</td>\s*" for c in in_html), found.group(0)), in_html
