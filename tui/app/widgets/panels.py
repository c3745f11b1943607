"""Side panels a protocol declares (``protocols.core.definition.Panel``): the latest judgements,
the agenda and the judges' tables per subtopic (Edward Y. Chang,
"SocraSynth: Adversarial Multi-LLM Reasoning", section 6.3.1, Tables 6.5 and 6.6).

Everything they show comes from models (subtopic titles, roles' words): plain text through
``terminal_safe``, never markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.content import Content
from textual.widgets import Static

from protocols.core.events import JudgementMade
from tui.app.theme import role_style
from tui.sanitize import terminal_safe

#: How many judgements the panel keeps (the transcript and the journal hold all of them).
JUDGEMENTS_SHOWN = 10


class JudgementList(Static):
    """The latest judgements, one line each: round, judge, what it judged, score or verdict."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Content.styled("none yet", "dim"), **kwargs)
        self.lines: list[Content] = []

    def add(self, event: JudgementMade) -> None:
        score = "missing" if event.score is None and event.verdict is None else (f"{event.score:g}" if event.score is not None else "")
        verdict = f" {event.verdict}" if event.verdict else ""
        about = f" on {event.subject}" if event.subject else ""
        target = event.target or ""
        line = Content.assemble(
            f"r{event.round if event.round is not None else '-'} ",
            (terminal_safe(event.judge_role), role_style(event.judge_role)),
            terminal_safe(f" {event.kind}{about}: "),
            (terminal_safe(target), role_style(target) if target else ""),
            terminal_safe(f" {score}{verdict}"))
        self.lines = [*self.lines[-(JUDGEMENTS_SHOWN - 1):], line]
        self.update(Content("\n").join(self.lines))


#: How a role alignment reads as a table's caption.
_ALIGNED = {"a_argues": "agent-a argues, agent-b counters", "b_argues": "agent-b argues, agent-a counters"}


class AgendaPanel(Static):
    """The latest agenda: each agent's proposal, the merged list, the agreed list, then any
    edit by the moderator (a turn's ``parsed`` ``subtopics``/``agreed``, an ``edit_agenda``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[Mapping[str, Any]] = []
        self.step = ""
        self.clear()

    def clear(self) -> None:
        self.items, self.step = [], ""
        self.update(Content.styled("not agreed yet", "dim"))

    def set(self, items: list[Mapping[str, Any]], step: str) -> None:
        self.items, self.step = items, step
        lines = [Content.styled(terminal_safe(step), "dim")]
        for i, item in enumerate(items, 1):
            lines.append(Content(terminal_safe(f"{i}. {item.get('title', '')}")))
        self.update(Content("\n").join(lines))


def _cell(score: float | None) -> str:
    return "  —  " if score is None else f"{score:5.2f}"


class JudgeTables(Static):
    """Each judge's scores per subtopic and side, in each role alignment, as the evaluative
    stage makes them (judgements with an ``alignment`` in their reasons); totals and the winners
    once the debate's outcome is known (:meth:`finish`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: judge -> alignment -> subtopic -> role -> score
        self.scores: dict[str, dict[str, dict[str, dict[str, float | None]]]] = {}
        self.winners: Mapping[str, Any] = {}
        self.winner: str | None = None
        self.clear()

    def clear(self) -> None:
        self.scores, self.winners, self.winner = {}, {}, None
        self.update(Content.styled("after the debate rounds, the judges score each subtopic", "dim"))

    def add(self, event: JudgementMade) -> bool:
        """Take one judgement; ``False`` when it is not a per-subtopic score (shown elsewhere)."""
        alignment = event.reasons.get("alignment") if isinstance(event.reasons, Mapping) else None
        if event.kind != "crit" or not alignment or not event.subject or not event.target:
            return False
        rows = self.scores.setdefault(event.judge_role, {}).setdefault(str(alignment), {})
        rows.setdefault(event.subject, {})[event.target] = event.score
        self._draw()
        return True

    def finish(self, outcome: Mapping[str, Any]) -> None:
        """The panel's verdict from the outcome's ``evaluation`` (winners per judge, the majority)."""
        evaluation = outcome.get("evaluation")
        if isinstance(evaluation, Mapping):
            self.winners = evaluation.get("winners") or {}
            self.winner = evaluation.get("winner")
        self._draw()

    def _draw(self) -> None:
        lines: list[Content] = []
        for judge, alignments in self.scores.items():
            lines.append(Content.styled(terminal_safe(judge), f"bold {role_style(judge)}"))
            for alignment, rows in alignments.items():
                roles = ("agent-a", "agent-b")
                lines.append(Content.styled(f" {_ALIGNED.get(alignment, alignment)}", "dim"))
                lines.append(Content.assemble(" " * 20, ("   A  ", role_style("agent-a")), ("   B", role_style("agent-b"))))
                # as the protocol totals them (``tally``): only subtopics scored for both sides
                # count, and with none there is no total (—), not a total of 0.00
                totals: dict[str, float | None] = dict.fromkeys(roles)
                for subject, cells in rows.items():
                    if all(cells.get(role) is not None for role in roles):
                        for role in roles:
                            totals[role] = (totals[role] or 0.0) + float(cells[role] or 0.0)
                    lines.append(Content.assemble(
                        Content(terminal_safe(f" {subject}")).truncate(20, ellipsis=True, pad=True),
                        f"{_cell(cells.get('agent-a'))} {_cell(cells.get('agent-b'))}"))
                lines.append(Content.assemble(Content(" total").truncate(20, pad=True),
                                              f"{_cell(totals['agent-a'])} {_cell(totals['agent-b'])}"))
            won = self.winners.get(judge) if isinstance(self.winners, Mapping) else None
            if won:
                lines.append(Content(f" {terminal_safe(judge)} finds: {terminal_safe(str(won))}"))
        if self.winner:
            lines.append(Content.styled(f"the judges' majority: {terminal_safe(self.winner)}", "bold $role-consensus"))
        if lines:
            self.update(Content("\n").join(lines))
