"""Context is never dropped in silence: when a seat's conversation outgrows its
window, :meth:`Agent.fit` leaves its oldest exchanges out, tells the model, and every caller puts
a note on the journal's record of that call (a turn's notes, a judgement's notes), which the
export and the app show.

Why oracle backends with small windows: which calls must drop depends on the protocol alone only
when the replies are a function of the prompt (tests/helpers/scripted_backends.py) and the window is known;
the windows below are the smallest that let every protocol's conversations grow past them
without its fixed prompts overflowing (which would be a different note). The protocols are built
from their forms, as the app and the CLI build them. The chat templates are the real ones of
Gemma 2 and Mistral (tests/fixtures/chat_templates), which refuse two user turns in a row.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from backends.base import Message, SamplingOptions
from backends.chat_template import ChatTemplate
from outputs.export import to_markdown
from protocols.core.agents import ELIDED, Agent
from protocols.core.events import about_context
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.cut_and_resume import Person
from tests.helpers.samples import ALL, form_values, spec_of
from tests.helpers.scripted_backends import OracleBackend, ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=5)
TEMPLATES = Path(__file__).parent.parent / "fixtures" / "chat_templates"
DROPPED = re.compile(r"dropped the (\d+) oldest messages after the opening \(messages 3–(\d+) of (\d+), [\d,]+ characters\) "
                     r"from (\S+)'s conversation")


def conversation(exchanges: int, chars: int = 400) -> list[Message]:
    """A system prompt, then ``exchanges`` request/reply pairs, then the newest request."""
    out = [Message("system", "You debate.")]
    for i in range(exchanges):
        out += [Message("user", f"request {i} " + "r" * chars), Message("assistant", f"reply {i} " + "a" * chars)]
    return [*out, Message("user", "the newest request")]


def test_fit_drops_the_oldest_exchanges_and_its_note_says_how_many() -> None:
    backend = ScriptedBackend("m", [])
    agent = Agent("agent-a", backend, OPTS)
    messages = conversation(6)  # 14 messages, about 1,700 estimated tokens
    assert agent.fit(messages, 200).messages == messages and not agent.fit(messages, 200).notes  # 16,384 tokens: whole
    backend.context_length = 1024
    fit = agent.fit(messages, 200)
    assert agent.session.count_tokens(fit.messages) + 200 <= 1024
    [note] = fit.notes
    dropped, last, total, role = DROPPED.match(note).groups()  # type: ignore[union-attr]
    assert role == "agent-a" and int(total) == len(messages) == 14 and int(last) == 2 + int(dropped)
    assert len(fit.messages) == len(messages) - int(dropped)
    assert fit.messages[2:] == messages[2 + int(dropped):]  # the newest exchanges, untouched
    assert fit.messages[1].content == f"{messages[1].content}\n\n{ELIDED}"  # the model is told
    assert "context window (1,024 tokens, 200 kept for the reply)" in note and about_context(note)
    backend.context_length = 120  # not even the opening and the newest turn fit: said, not hidden
    hopeless = agent.fit(messages, 100)
    assert hopeless.notes[-1].startswith("agent-a's conversation does not fit its context window (120 tokens")


@pytest.mark.parametrize("template", ["gemma-2-it", "mistral-7b-instruct", "mistral-7b-instruct-v0.3"])
def test_a_fitted_conversation_still_alternates_for_templates_that_require_it(template: str) -> None:
    """The note used to be a user message of its own, after the first request: two user turns
    in a row, which these templates refuse (so a Gemma or Mistral debater failed the first time
    its history outgrew the window)."""
    chat = ChatTemplate((TEMPLATES / f"{template}.jinja").read_text(encoding="utf-8"), bos_token="<s>", eos_token="</s>")
    backend = ScriptedBackend("m", [])
    agent = Agent("agent-a", backend, OPTS)
    messages = conversation(6)
    for window in (1536, 1024, 700):
        backend.context_length = window
        fit = agent.fit(messages, 200)
        assert fit.notes and ELIDED in chat.render(fit.messages)
    assert ELIDED in chat.render(Agent.shortest(messages))


#: The samples whose conversations can outgrow a window (``Sample.windowed``: more rounds, so
#: that conversations grow; ``Sample.window``: the window every model gets). D3-MORE has none:
#: each of its calls is a conversation of its own (one round), so nothing can be dropped.
WINDOWED = [name for name, (_, sample) in ALL.items() if sample.windowed]


async def run_small(case: str, tmp_path: Path) -> tuple[dict[str, Any], dict[str, OracleBackend]]:
    sample = ALL[case][1]
    spec = spec_of(case)
    window = sample.window
    values = form_values(spec, sample, sample.windowed)
    roles = spec.roles_for(values)
    backends = {model: OracleBackend(model) for model in set(roles.values())}
    for backend in backends.values():
        backend.context_length = window
    agents = {role: Agent(role, backends[model], OPTS) for role, model in roles.items()}
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(spec.build(values, agents, "d", CommandChannel(), Person()), journal)
        debate = Queries(journal).debate("d")
    assert final is not None and final.status == "finished" and debate is not None
    return debate, backends


def drop_notes(debate: dict[str, Any]) -> list[str]:
    """Every drop note in the journal, one per call: a judgement that shares its call with the
    next (D3's judge scores both sides at once) carries the same notes and counts once."""
    notes = [n for t in debate["turns"] for n in t["parse_notes"]]
    seen: set[tuple[Any, ...]] = set()
    for j in debate["judgements"]:
        for n in (j["reasons"] or {}).get("notes") or []:
            key = (j["round"], j["judge_role"], j["kind"], n)
            if key not in seen:
                seen.add(key)
                notes.append(n)
    return [n for n in notes if isinstance(n, str) and DROPPED.search(n)]


@pytest.mark.parametrize("case", WINDOWED)
async def test_every_drop_is_journalled_on_its_call_and_shown_in_the_export(tmp_path: Path, case: str) -> None:
    """Each call sent with older messages left out has exactly one note in the journal, in the
    speaker's name and with the length of the conversation it was cut from; the request the
    journal keeps is the one sent; the Markdown export shows every note."""
    debate, backends = await run_small(case, tmp_path)
    sent: Counter[tuple[str, int]] = Counter()  # (role, messages sent) of every call that dropped some
    requests: set[str] = set()
    for backend in backends.values():
        for session, messages, _ in backend.calls:
            requests.add(messages[-1].content)
            if any(ELIDED in m.content for m in messages):
                sent[(session.split("/")[0], len(messages))] += 1
    noted: Counter[tuple[str, int]] = Counter()
    for note in drop_notes(debate):
        dropped, _, total, role = DROPPED.search(note).groups()  # type: ignore[union-attr]
        noted[(role, int(total) - int(dropped))] += 1
    assert sent, f"{case}: no conversation outgrew its window; the test proves nothing"
    assert noted == sent
    assert not [n for t in debate["turns"] for n in t["parse_notes"] if "even with only" in n]  # the windows are not too small
    assert all(t["request"] in requests for t in debate["turns"] if t["model_id"] != "human" and t["request"])
    exported = to_markdown(debate)
    assert all(note in exported for note in drop_notes(debate))


async def test_the_app_shows_each_drop_beside_its_turn_and_its_judgement(tmp_path: Path, registry: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The Review screen of a journalled deliberation: a turn's drop note
    under the turn, the moderator's drop note on choosing the next speaker (a judgement) between
    the turns, once per call; neither only in the journal's reasons."""
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))
    from tests.helpers.pilot import SIZE, make_app
    from tui.app.screens.review import ReviewScreen
    from tui.app.widgets.transcript import Transcript, TurnView

    debate, _ = await run_small("deliberation", tmp_path)
    turn_notes = [n for t in debate["turns"] for n in t["parse_notes"] if DROPPED.search(n)]
    judge_notes = [n for n in drop_notes(debate) if n not in turn_notes]
    assert turn_notes and judge_notes
    app = make_app(tmp_path / "app", registry)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(ReviewScreen(debate, app.workspace))
        await pilot.pause()
        transcript = app.screen.query_one(Transcript)
        turns = "\n".join(str(s.render()) for view in transcript.query(TurnView) for s in view.query("Static"))
        lines = [str(s.render()) for s in transcript.query(".note")]
        app.save_screenshot(str(tmp_path / "drops.svg"))
    assert all(f"↳ {n}" in turns for n in turn_notes)
    for note in judge_notes:
        assert sum(line.endswith(note) and line.startswith("✂ moderator's next-speaker: ") for line in lines) == 1, note


@pytest.mark.parametrize("case", ["deliberation", "d3-samre"])
async def test_the_headless_printer_shows_each_drop_once(tmp_path: Path, case: str) -> None:
    """`symposium run --headless` prints a turn's drop note under the turn and a judge's once
    (D3's judge scores both sides in one call: two judgements, one note)."""
    from rich.console import Console

    from tui.app.recorded import recorded_events
    from tui.headless.printer import EventPrinter

    debate, _ = await run_small(case, tmp_path)
    console = Console(record=True, width=10_000, highlight=False)
    printer = EventPrinter(console)
    for event in recorded_events(debate):
        printer(event)
    printed = console.export_text()
    for note in drop_notes(debate):
        assert printed.count(note) == 1, note
