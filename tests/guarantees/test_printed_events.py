"""Every event the headless printer can receive, with hostile text in every field, prints inert.

``symposium run`` / ``chat`` print what protocols yield, and much of it is untrusted: model
output (turns, judges' verdicts and reasons, joint proposals), server error text (a failed
debate's stop reason), user input (titles, interjections). The list of event types is read from
:mod:`protocols.core.events` itself and each event is built from its dataclass fields, so an event
type added later is printed here too, or this test fails saying which field it cannot fill.
Every ``str`` anywhere in an event (field, dict key or value, tuple item, nested participant or
call record) carries ANSI CSI/OSC sequences, C0/C1 controls, bidi overrides and Rich markup.
"""

from __future__ import annotations

import dataclasses
import io
import re
import types
import typing
from typing import Any

import pytest
from rich.console import Console

from protocols.core import events
from tui.headless.printer import EventPrinter

#: Each piece of hostile text carries this visible word, so the test can see the text arrived.
MARK = "HOSTILE"
#: Escapes (erase screen, set title, a colour Rich never emits, a C1 CSI), controls, bidi
#: overrides and isolates, and markup that would restyle, crash (``[/b]``) or act if obeyed.
HOSTILE = (MARK + "\x1b[2J\x1b]0;pwned\x07\x1b[6;66m\x9b2J\x85\x00\x08\x7f\u202eevil\u202c\u2066x\u2069"
           "[bold red]M[/bold red][/b][@click=app.quit]q[/]\rend")
MARKUP = "[bold red]M[/bold red][/b][@click=app.quit]q[/]"  # must reach the output literally

#: Events the printer shows nothing for, on purpose (each with its reason).
SILENT = {
    events.ModelCalled: "a judge's or scorer's call record: journalled for cost accounting, not printed",
}

#: Events whose printed line shows no string field (each with its reason).
NUMBERS_ONLY = {
    events.MetricsComputed: "shows its round and the metrics it knows by name (wd, mi, crit, jsd) as numbers",
}

#: Escapes and controls that must never reach the output, and bidi controls that reorder it.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")  # Rich's own colours, in terminal mode only


def event_types() -> list[type[events.Event]]:
    """Every concrete event class defined in :mod:`protocols.core.events`."""
    found = [obj for obj in vars(events).values()
             if isinstance(obj, type) and issubclass(obj, events.Event) and obj is not events.Event]
    assert len(found) >= 13, found  # the discovery itself works
    return found


def socrasynth_outcome() -> dict[str, Any]:
    """A SocraSynth outcome (judge tables, winners, joint proposal, Q&A verdicts) in which every
    string is hostile: the shape the printer's report walks, so its tables are reached."""
    h = HOSTILE
    return {
        "evaluation": {
            "alignments": {"a_argues": {h: {h: {"agent-a": 7.0, "agent-b": 6.0}}}, h: {h: {h: {"agent-a": 5.0}}}},
            "judges": {h: h}, "totals": {"a_argues": {h: {"agent-a": 7.0, "agent-b": 6.0}}},
            "winners": {h: h}, "winner": h, "gaps": 1,
        },
        "joint": {"proposal": h, "written_by": [h, h], "pros": [h], "cons": [h], "questions": [h], "tests": [h]},
        "qa": {"model": h, "verdicts": {h: h, "judge-2": None}},
        h: h,
    }


def hostile_value(hint: Any, owner: str, name: str) -> Any:
    """A value of type ``hint`` in which every string is :data:`HOSTILE`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return hostile_value(next(a for a in args if a is not type(None)), owner, name)
    if origin is typing.Literal or hint is str:
        return HOSTILE
    if hint is float:
        return 0.5
    if hint is int:
        return 2
    if hint is Any:
        return HOSTILE
    if origin is dict:
        if (owner, name) == ("DebateFinished", "outcome"):
            return socrasynth_outcome()
        value = hostile_value(args[1], owner, name)
        return {HOSTILE: value, "wd": value, "mi": value, "crit": value, "jsd": value}
    if origin is tuple:
        return (hostile_value(args[0], owner, name),) * 2
    if origin is list:
        return [hostile_value(args[0], owner, name)] * 2
    if dataclasses.is_dataclass(hint):
        return build(hint)
    raise AssertionError(f"{owner}.{name}: no hostile value for type {hint!r}; teach hostile_value() about it")


def build(cls: type) -> Any:
    """An instance of the dataclass ``cls`` with every field filled by :func:`hostile_value`."""
    hints = typing.get_type_hints(cls, vars(events))
    return cls(**{f.name: hostile_value(hints[f.name], cls.__name__, f.name) for f in dataclasses.fields(cls)})


def printed(event_list: list[events.Event], *, terminal: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=400, force_terminal=terminal, color_system="truecolor" if terminal else None,
                      highlight=False)
    printer = EventPrinter(console)
    for event in event_list:
        printer(event)
    return buf.getvalue()


def assert_inert(out: str, what: str) -> None:
    leaked = UNSAFE.findall(out)
    assert not leaked, f"{what}: control characters reached the terminal: {sorted(set(leaked))!r}\n{out!r}"
    assert MARKUP in out, f"{what}: markup in untrusted text was obeyed, not shown:\n{out}"


@pytest.mark.parametrize("cls", event_types(), ids=lambda c: c.__name__)
def test_every_event_type_prints_hostile_text_inert(cls: type[events.Event]) -> None:
    """Each event type on its own (after a turn was streaming and a phase set, so the printer's
    state-dependent lines print too): plain output has no control character at all, and on a
    colour terminal nothing but Rich's own colour codes."""
    before = [build(events.PhaseChanged), build(events.MetricsComputed), build(events.TurnStarted)]
    plain = printed([*before, build(cls)], terminal=False)
    baseline = printed(before, terminal=False)
    assert_inert(plain, cls.__name__)
    if cls in SILENT:
        assert plain == baseline, f"{cls.__name__} is listed as silent but printed something"
    else:
        assert plain.startswith(baseline)
        shown = plain[len(baseline):]
        assert shown.strip(), f"{cls.__name__} printed nothing: add it to the printer, or to SILENT with why"
        if cls not in NUMBERS_ONLY:
            assert MARK in shown, f"{cls.__name__} printed none of its text fields"
    coloured = RICH_SGR.sub("", printed([*before, build(cls)], terminal=True))
    leaked = UNSAFE.findall(coloured)
    assert not leaked, f"{cls.__name__} on a colour terminal: {sorted(set(leaked))!r}"


def test_a_whole_run_of_hostile_events_prints_inert() -> None:
    """All event types in one stream, in the order a debate yields them, ending with the
    end-of-debate event whose stop reason carries a server's error text."""
    order = [events.DebateStarted, events.EvidenceAttached, events.DebateResumed, events.PhaseChanged, events.TurnStarted, events.TokenDelta,
             events.TurnFinished, events.MetricsComputed, events.JudgementMade, events.ModelCalled,
             events.ModeratorActed, events.Notice, events.AwaitingModerator, events.DebateFinished]
    assert set(order) == set(event_types()), "a new event type: add it to this run's order"
    out = printed([build(cls) for cls in order], terminal=False)
    assert_inert(out, "a whole run")
    # the ending is a sentence (protocols.core.outcome): "Status: reason."
    assert out.rstrip().removesuffix(".").endswith("end"), "the stop reason's text after the escapes is still shown"
