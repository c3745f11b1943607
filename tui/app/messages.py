"""What the screens ask the app for: navigation as messages, handled by the app.

A screen posts one (``self.post_message(OpenReview(debate_id))``); it bubbles to the app, which
owns the screen stack and decides what to push or pop. The screens need not know the app's
class or each other's constructors."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from tui.forms import ProtocolSpec


class StartDebate(Message):
    """The New-debate form's values are valid: start the debate (the form is closed)."""

    def __init__(self, spec: ProtocolSpec, values: dict[str, Any]) -> None:
        super().__init__()
        self.spec, self.values = spec, values


class OpenReview(Message):
    """Show a journalled debate, round by round."""

    def __init__(self, debate_id: str) -> None:
        super().__init__()
        self.debate_id = debate_id


class ResumeDebate(Message):
    """Continue an interrupted debate from its last finished turn."""

    def __init__(self, debate_id: str) -> None:
        super().__init__()
        self.debate_id = debate_id


class DebateEnded(Message):
    """A debate's run on a Debate screen is over (finished, stopped, failed, left): its status in
    the journal changed, and Home lists it (``debate_id`` is ``None`` for a run that never started)."""

    def __init__(self, debate_id: str | None) -> None:
        super().__init__()
        self.debate_id = debate_id
