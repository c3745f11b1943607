"""The roles of the protocols, as named constants (never bare strings).

A role is who plays a part in a debate: one model (``agent-a``, ``judge``), one of a numbered
list of models (``juror-1``, ``juror-2`` …: see :func:`numbered`), or the person. These are the
values the journal stores in its participants and turns, so they never change spelling; what a
protocol calls its roles is declared once, in its :class:`~protocols.core.definition.ProtocolDefinition`.
"""

from __future__ import annotations

from collections.abc import Iterable

AGENT_A = "agent-a"
AGENT_B = "agent-b"
JUDGE = "judge"
EVALUATOR = "evaluator"
MODERATOR = "moderator"
ANALYZER = "analyzer"
ADVOCATE = "advocate"
CLERK = "clerk"
QA = "qa"
HUMAN = "human"
SIMULATOR = "simulator"

#: Prefixes of numbered roles (``participant-1`` …).
AGENT = "agent"
PARTICIPANT = "participant"
DELIBERATOR = "deliberator"
JUROR = "juror"

#: The app's analyzer side panel (ArgsBase's analyzer), any protocol: kept apart from a protocol's own
#: ``analyzer`` role (deliberation's) so the two never take each other's seat.
SIDE_PANEL = "side-panel"


def numbered(prefix: str, n: int) -> str:
    """The ``n``-th (1-based) role of a numbered list: ``numbered(JUROR, 2) == "juror-2"``."""
    if n < 1:
        raise ValueError(f"numbered roles start at 1, not {n}")
    return f"{prefix}-{n}"


def numbered_roles(prefix: str, count: int) -> list[str]:
    """``prefix-1`` … ``prefix-count``."""
    return [numbered(prefix, i) for i in range(1, count + 1)]


def number_of(role: str, prefix: str) -> int | None:
    """The number of a numbered role of ``prefix`` (``"juror-2"`` → 2), else ``None``."""
    head, _, tail = role.rpartition("-")
    return int(tail) if head == prefix and tail.isdigit() and int(tail) >= 1 else None


def list_of(role: str) -> str:
    """The list a numbered role belongs to (``"judge-2"`` → ``"judge"``); any other role itself."""
    head, _, tail = role.rpartition("-")
    return head if head and tail.isdigit() else role


def in_order(roles: Iterable[object], prefix: str) -> list[str]:
    """The numbered roles of ``prefix`` among ``roles`` (any iterable of names), by number."""
    found = [(n, r) for r in roles if isinstance(r, str) and (n := number_of(r, prefix)) is not None]
    return [r for _, r in sorted(found)]
