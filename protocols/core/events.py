"""The typed events every protocol yields, and the moderator commands it accepts.

A protocol run is an async generator of these events. The journal (``store``) records them,
the TUI renders them and the headless command line prints them, so all three see exactly the
same debate. Events are plain frozen dataclasses with JSON-able fields: no backend objects, no
widgets, no SQL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from protocols.core.passages import EvidenceFile, Passage

Status = Literal["running", "finished", "stopped", "failed", "interrupted"]


@dataclass(frozen=True)
class Participant:
    """Who takes part: a role in the protocol played by a model (or a person)."""

    role: str  # "agent-a", "agent-b", "judge", "judge-2", "moderator", "human", ...
    model_id: str
    backend: str
    options: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """One model call: what was asked of which model and what it cost.

    The cost as the backend measured it (``backends.base.Usage`` and ``Timing``): the prompt's
    tokens, how many the model ran and how many it took from its cache (``cached_tokens``), the
    tokens generated; the call's time, and where it went: waiting for the model (``wait_s``),
    evaluating the prompt (``prefill_s``), generating (``decode_s``). A figure the backend
    cannot measure (a server's queue, a cache hit it does not report) is ``None``."""

    role: str
    model_id: str
    purpose: str  # "turn", "crit", "score", "agenda", "verdict", "analysis", ...
    options: dict[str, Any]
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    duration_s: float
    first_token_s: float | None = None
    finish_reason: str = "stop"
    error: str | None = None
    cached_tokens: int | None = None
    wait_s: float | None = None
    prefill_s: float | None = None
    decode_s: float | None = None


CitationStatus = Literal["supported", "not_found", "uncited"]


@dataclass(frozen=True)
class Citation:
    """One factual claim of a turn and what its citation turned out to be
    (:mod:`protocols.measures.citations`): ``source`` and ``quote`` as the agent wrote them;
    ``status`` the verdict; ``passage`` the id of the passage the source names when there is one
    (also when the quote is not in it); ``match`` how a quote matched (``exact``, ``folded``);
    ``problem`` why a citation did not check; ``label`` where the passage is (``E3 p.4 ¶3 ·
    chart.pdf``), for a supported citation only: a fabricated one is never shown as a source."""

    claim: str
    source: str
    quote: str
    status: CitationStatus
    passage: str | None = None
    match: str = ""
    problem: str = ""
    label: str = ""


@dataclass(frozen=True)
class Event:
    debate_id: str


@dataclass(frozen=True)
class DebateStarted(Event):
    protocol: str
    title: str
    subject: str
    config: dict[str, Any]
    participants: tuple[Participant, ...]
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class PhaseChanged(Event):
    phase: str
    round: int
    kappa: float | None = None
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class TurnStarted(Event):
    role: str
    model_id: str
    phase: str
    round: int
    kind: str = "argument"
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class TokenDelta(Event):
    role: str
    text: str


@dataclass(frozen=True)
class TurnFinished(Event):
    """A finished turn: what the model said, what we parsed from it, and what it cost.

    ``raw`` is the model's exact output; ``text`` is what is shown (they differ when the reply
    was structured JSON). ``parse_notes`` records every repair made or the reason for rejection,
    and what the speaker's prompt had to leave out to fit its context window (:func:`about_context`).
    ``call`` is ``None`` for a person's turn (the moderator's case, a human seat).
    """

    role: str
    model_id: str
    phase: str
    round: int
    kind: str
    text: str
    raw: str
    call: CallRecord | None
    parsed: dict[str, Any] | None = None
    parse_notes: tuple[str, ...] = ()
    distribution: dict[str, float] | None = None
    kappa: float | None = None
    at: float = field(default_factory=time.time)
    #: What the agent was asked this turn (its user message), so a debate can be audited.
    request: str | None = None
    #: The speaker's own 0-100 confidence in its reasoning, where the protocol asks for one
    #: (Triem, Appendix i: "rank your confidence ... on a scale of 0-100"); parsed and
    #: range-checked from the reply, ``None`` when not stated or out of range.
    confidence: float | None = None
    #: The (role, content) messages this turn added to the speaker's conversation after
    #: ``request``, when they are more than the one reply ``raw``: EVINCE's parse retry adds
    #: the reply that did not parse, the ask to try again and the retry's reply. ``None``: the
    #: conversation gained ``request`` and ``raw``. Kept so that a reader of the journal sees
    #: each conversation exactly as it was (a resumed run replays the replies instead:
    #: :mod:`protocols.core.replay`).
    exchange: tuple[tuple[str, str], ...] | None = None
    #: The turn's factual claims and the verdict on each one's citation, when the debate has
    #: evidence (:mod:`protocols.core.evidence`); empty otherwise.
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class EvidenceAttached(Event):
    """The user's files a debate argues from, as read and cut into passages before its first
    turn (:mod:`protocols.core.evidence`): journalled once, right after the debate's start, so
    that a resumed or replayed run uses these passages and never the files on disk.
    ``settings``: how many passages each turn is shown, how many claims a reply may list."""

    files: tuple[EvidenceFile, ...]
    passages: tuple[Passage, ...]
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DebateResumed(Event):
    """A debate cut off earlier continues (``symposium resume``, the TUI's resume)."""

    from_round: int
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class ModelCalled(Event):
    """A model call that is not a debate turn (a judge, a scorer, an analyzer)."""

    call: CallRecord
    round: int | None = None


@dataclass(frozen=True)
class MetricsComputed(Event):
    round: int
    metrics: dict[str, float]
    kappa: float | None = None


@dataclass(frozen=True)
class JudgementMade(Event):
    """A judge's assessment: a CRIT score, a verdict, an agreement call, a jury vote."""

    judge_role: str
    judge_model: str
    kind: str  # "crit", "verdict", "agreement", "vote", "evaluation", ...
    target: str | None
    subject: str | None
    score: float | None
    verdict: str | None
    reasons: dict[str, Any]
    raw: str
    round: int | None = None
    call: CallRecord | None = None


@dataclass(frozen=True)
class ModeratorActed(Event):
    """A moderator command as it took effect (the journal's moderator events)."""

    kind: str
    payload: dict[str, Any]
    round: int | None = None
    #: The protocol's checkpoint (counted from 1 in each run) at which a command took effect;
    #: ``None`` for what the protocol itself did (an agenda edit, the person ending a session).
    #: A resumed run applies each journalled command again at the same checkpoint.
    checkpoint: int | None = None


@dataclass(frozen=True)
class Notice(Event):
    """Something the person must know about the run that is not a turn or a judgement, e.g. a
    judge that is one of the debaters' own models (SocraSynth's judges are independent, seed
    004 section 6.3.1.3). Shown by the app and the CLI, and journalled (table ``notices``)."""

    kind: str
    text: str
    details: dict[str, Any] = field(default_factory=dict)
    round: int | None = None
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class AwaitingModerator(Event):
    prompt: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class DebateFinished(Event):
    status: Status
    stop_reason: str
    outcome: dict[str, Any]
    at: float = field(default_factory=time.time)


#: The words every note on fitting a prompt to a context window carries (an older exchange
#: dropped by :meth:`protocols.core.agents.Agent.fit`, a section shortened by
#: :func:`protocols.core.fitting.fit_sections`, a prompt too long even so).
CONTEXT_WINDOW = "context window"


def about_context(note: str) -> bool:
    """Whether a turn's or judgement's ``note`` says that its model did not see everything
    (what the app and the export show beside the judgement, not only in its reasons)."""
    return CONTEXT_WINDOW in note


# -- moderator commands (flow into a protocol through its command channel) -------------------


@dataclass(frozen=True)
class Command:
    pass


@dataclass(frozen=True)
class Interject(Command):
    text: str
    to: Literal["both", "agent-a", "agent-b"] | str = "both"


@dataclass(frozen=True)
class SetContentiousness(Command):
    value: float


@dataclass(frozen=True)
class Pause(Command):
    pass


@dataclass(frozen=True)
class Resume(Command):
    pass


@dataclass(frozen=True)
class SkipToConclusion(Command):
    pass


@dataclass(frozen=True)
class Stop(Command):
    reason: str = "stopped by the moderator"


@dataclass(frozen=True)
class Verdict(Command):
    """Accept or reject the final consensus, with a note."""

    accept: bool
    note: str = ""


@dataclass(frozen=True)
class AdvanceStage(Command):
    """Close the current stage of a staged protocol (the decision conference) and go on to the
    next, whatever the agreement judge says."""

    reason: str = "advanced by the moderator"
