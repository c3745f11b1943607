"""The moderator's commands through the real Debate screen, protocol by protocol.

Each protocol's first sample (its definition's ``samples``, the run's ``moderated`` values) is
started from the New-debate form and moderated with the keys a person would press: what its
definition's ``commands`` offer is offered (Interject lists this debate's own roles and
"all"), each command is checked in the journal (its moderator event, and the interjection in
the addressed role's next request), and what it does not honour has no key, no footer entry
and no dialog.

Scripted models stand in for the bundled ones (``create_backend`` patched, as in
test_tui_engines.py): any reply that fits the call's schema (tests/helpers/scripted_backends.py's
``fits``), paced like a small model. The test is about the screen and the command channel,
which must not depend on what a tiny model happens to say; test_tui_protocols.py runs every
protocol on the real models.

Every reply streams through a gate (``Gate``, tests/helpers/debate_from_form.py) the test
holds, so where the debate stands when a key is pressed is decided by the debate's own course,
never by how fast the test looks around: it starts held in its first reply (it cannot end before the pause is sent), and it holds
itself in the first reply after a condition came true (a skip sent then has rounds to reach).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select

from protocols.core.events import Interject, Pause
from store.queries import Queries
from tests.app.replayed import fed, replay
from tests.helpers.debate_from_form import Gate, start_from_form, until
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.sample_debate import sample_events
from tests.helpers.samples import FIRST
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog, InterjectDialog, NumberDialog, PersonDialog

SAID = "Weigh the [b]cost[/b] to small towns."  # markup-like on purpose: it must arrive as typed

async def _press(pilot: Pilot, app: SymposiumApp, debate: DebateScreen, key: str) -> None:
    """Press ``key`` on the Debate screen. The protocol may open the person's dialog at any
    moment; a key that landed there was typed into it, not given to the Debate screen: the
    dialog is answered and the key pressed again."""
    for _ in range(10):
        await until(pilot, app, lambda: app.screen is debate, "the Debate screen to be on top")
        await pilot.press(key)
        await pilot.pause()
        if not (isinstance(app.screen, PersonDialog) and app.screen.query_one("#words", Input).value.endswith(key)):
            return
    raise AssertionError(f"the key {key!r} never reached the Debate screen")


async def _start_held(pilot: Pilot, app: SymposiumApp, gate: Gate, protocol: str, values: Mapping[str, str]) -> DebateScreen:
    """Start the protocol with the gate closed, and wait until it is held in its first reply
    with the Debate screen on top: no dialog can open while it waits there (the person's seat
    asks only between replies), so a key pressed now reaches the screen, and the debate is
    short of its end."""
    gate.clear()
    debate = await start_from_form(pilot, app, protocol, values)
    await until(pilot, app, lambda: bool(debate.addressable) and gate.holding and app.screen is debate,
                 f"{protocol} to start and wait in its first reply", running=debate)
    return debate


async def _pause_held(pilot: Pilot, app: SymposiumApp, gate: Gate, debate: DebateScreen, what: str) -> None:
    """Send the pause to the held ``debate``, then let it run to its next checkpoint, where the
    pause takes effect (it cannot end before it: it is held in a reply with more to come)."""
    assert gate.holding and app.screen is debate
    said = len(_pausing(app))
    await pilot.press("p")
    await until(pilot, app, lambda: len(_pausing(app)) > said, "the pause to be sent")
    gate.set()
    await until(pilot, app, lambda: debate.paused, what, running=debate)


def _pausing(app: SymposiumApp) -> list[str]:
    """The screen's confirmations that a pause was sent (one per pause)."""
    return [n.message for n in app._notifications if n.message.startswith("Pausing after")]


def _shown_keys(debate: DebateScreen) -> dict[str, str]:
    """The keys the footer shows now (key -> action): the screen's active bindings."""
    return {key: b.binding.action for key, b in debate.active_bindings.items() if b.binding.show}


def reached(label: str) -> list[str]:
    """The roles Interject's "all" entry names (``all: a, b, juror-1…3``), a shortened run of
    numbered roles read back in full."""
    assert label.startswith("all: "), label
    roles: list[str] = []
    for part in label.removeprefix("all: ").split(", "):
        stem, _, numbers = part.rpartition("-")
        if "…" in numbers:
            first, last = numbers.split("…")
            roles += [f"{stem}-{n}" for n in range(int(first), int(last) + 1)]
        else:
            roles.append(part)
    return roles


@pytest.mark.timeout(180)  # a protocol's every command through the screen: 38 s on a busy two-core machine
@pytest.mark.parametrize("protocol", list(FIRST))
async def test_every_command_a_protocol_offers_works_through_the_screen(
        protocol: str, tmp_path: Path, registry, scripted_models: Gate) -> None:
    definition, sample = FIRST[protocol]
    values, target, honoured = sample.moderated, sample.addressed, definition.commands
    gate = scripted_models
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await _start_held(pilot, app, gate, protocol, values)
        roles = [role for role in debate.addressable]
        await _pause_held(pilot, app, gate, debate, "the pause to take effect")
        keys = _shown_keys(debate)
        assert keys["p"] == "unpause"  # the footer says Resume while paused
        assert {keys.get(k) for k in "isx"} == {"interject", "skip", "stop"}
        assert (keys.get("k") == "contentiousness") == honoured.contentiousness
        if not honoured.contentiousness:  # no key, so no dialog that would confirm and do nothing
            await pilot.press("k")
            await pilot.pause()
            assert app.screen is debate

        await pilot.press("i")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, InterjectDialog)
        assert [role for _, role in dialog.targets] == ["all", *roles]
        labels = [str(prompt) for prompt, _ in dialog.query_one("#to", Select)._options]
        assert reached(labels[0]) == roles and all(label.startswith(f"{role} (") for label, role in zip(labels[1:], roles))
        assert len(labels[0]) < 60  # a numbered run of three or more is shortened
        dialog.query_one("#to", Select).value = target
        dialog.query_one("#text", Input).value = SAID
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is debate
        if honoured.contentiousness:
            await pilot.press("k")
            await pilot.pause()
            assert isinstance(app.screen, NumberDialog)
            app.screen.query_one("#number", Input).value = "0.35"
            await pilot.press("enter")
            await pilot.pause()
        await pilot.press("p")
        await until(pilot, app, lambda: not debate.paused, "the debate to resume")
        # the footer offers Pause again once the screen has taken the resume in (a frame or so after
        # `paused` turned false: looked at at once, a loaded machine once showed no "p" at all), or
        # the debate ran on to its end, or the seat asks on top
        await until(pilot, app, lambda: not debate.running or app.screen is not debate or _shown_keys(debate).get("p") == "pause",
                    "the footer to offer Pause again")

        queries = Queries(app.journal)

        def heard() -> list[dict[str, Any]]:
            stored = queries.debate(debate.debate_id or "")
            return [t for t in (stored or {}).get("turns", []) if t["request"] and SAID in t["request"]]

        gate.hold_when(lambda: bool(heard()))
        await until(pilot, app, lambda: gate.holding, f"{target}'s next request", running=debate)
        assert {t["role"].split(".")[0] for t in heard()} <= {target}  # D3's advocate-2 speaks as advocate-2.1, -2.2
        notes = [str(n.render()) for n in debate.query(".note.moderator")]
        # the person's words shown as typed, not as markup, in a sentence (protocols.core.outcome.moderator_action)
        assert any(n.startswith("✋ In round ") and n.endswith(f" the moderator said to {target}: “{SAID}”") for n in notes), notes
        if honoured.contentiousness:  # the next round is argued at the moderator's κ

            def at_new_kappa() -> bool:
                stored = queries.debate(debate.debate_id or "")
                return any(t["kappa"] is not None and abs(t["kappa"] - 0.35) < 1e-9 for t in (stored or {}).get("turns", []))

            gate.hold_when(at_new_kappa)
            await until(pilot, app, lambda: gate.holding, "a turn at the new contentiousness", running=debate)

        # Held in the first reply after the last condition while the skip is sent: a debate with
        # rounds to go cannot reach its end (where a skip comes too late) before the skip is in its channel.
        await _press(pilot, app, debate, "s")
        gate.set()
        await until(pilot, app, lambda: not debate.running, "the debate to end after the skip")
        assert not _shown_keys(debate).keys() & set("pikxs")  # an ended debate takes no commands
        debate_id = debate.debate_id

        await pilot.press("escape")
        await pilot.pause()
        second = await _start_held(pilot, app, gate, protocol, values)
        await _pause_held(pilot, app, gate, second, "the second debate's pause")  # paused, it cannot end before the Stop
        await _press(pilot, app, second, "x")
        await until(pilot, app, lambda: isinstance(app.screen, ConfirmDialog), "the Stop question")  # the seat may ask on top
        await pilot.press("enter")  # "Stop" is focused
        await pilot.pause()
        assert any(n.message.startswith("Stopping.") for n in app._notifications)  # said before it takes effect
        await until(pilot, app, lambda: not second.running, "the stop")
        stopped_id = second.debate_id
    stored = Queries(app.journal).debate(debate_id or "")
    stopped = Queries(app.journal).debate(stopped_id or "")
    app.journal.close()
    assert stored is not None and stopped is not None
    kinds = [m["kind"] for m in stored["moderator_events"]]
    kappa = ["set_contentiousness"] if honoured.contentiousness else []
    # a κ sent while paused between a round's two turns takes effect (is journalled) when the next
    # round begins, after the resume; paused before a round, at once
    assert kinds in (["pause", "interject", *kappa, "resume", "skip_to_conclusion"],
                     ["pause", "interject", "resume", *kappa, "skip_to_conclusion"]), kinds
    interject = stored["moderator_events"][1]["payload"]
    assert interject == {"to": target, "text": SAID}
    if honoured.contentiousness:
        setting = next(m for m in stored["moderator_events"] if m["kind"] == "set_contentiousness")
        assert setting["payload"]["value"] == pytest.approx(0.35)
        before = [t for t in stored["turns"] if t["created_at"] < setting["created_at"]]
        assert not any(t["kappa"] is not None and abs(t["kappa"] - 0.35) < 1e-9 for t in before)
    assert stored["status"] == "finished" and "skip" in stored["stop_reason"], stored["stop_reason"]
    assert stopped["status"] == "stopped" and stopped["stop_reason"] == "stopped by the moderator"
    assert [m["kind"] for m in stopped["moderator_events"]] == ["pause", "stop"]


async def test_a_command_the_debate_ended_before_hearing_is_said_to_be_lost(tmp_path: Path, registry) -> None:
    """A command sent after the protocol's last checkpoint is never applied: the screen says so
    rather than leave its earlier confirmation standing."""
    events = sample_events(rounds=1, finished=True)
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await replay(app, pilot, events[:-1], held=True)
        debate.channel.send(Pause())
        debate.channel.send(Interject(SAID, to="agent-a"))
        await fed(pilot, debate, events[-1])
        notes = [str(n.render()) for n in debate.query(".note.moderator")]
    app.journal.close()
    assert "✋ the debate ended before your pause, interjection could take effect" in notes


async def test_a_resumed_debate_offers_its_protocols_commands_and_roles(tmp_path: Path, registry, scripted_models: Gate) -> None:
    """Cut off by Ctrl-C and resumed from Home: the Debate screen learns the protocol from the
    journal (``resumable``), so a resumed D3 offers D3's commands to D3's roles, as a fresh one."""
    values = FIRST["d3"][1].moderated
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await start_from_form(pilot, app, "d3", values)
        await until(pilot, app, lambda: bool(debate.addressable), "the debate to start")
        roles = debate.addressable
        await wait_for(pilot, lambda: debate.collector.turns != [], 60, "a finished turn")
        await pilot.press("ctrl+c")
        await pilot.press("enter")  # "Quit"
        await pilot.pause()
        debate_id = debate.debate_id
    app.journal.close()
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.resume(debate_id or "")
        await pilot.pause()
        resumed = next(s for s in app.screen_stack if isinstance(s, DebateScreen))
        await until(pilot, app, lambda: bool(resumed.addressable), "the resumed debate's roles")
        assert resumed.honoured == FIRST["d3"][0].commands and resumed.addressable == tuple(roles)
        assert "k" not in _shown_keys(resumed) and _shown_keys(resumed).get("i") == "interject"
        await _press(pilot, app, resumed, "x")
        await until(pilot, app, lambda: isinstance(app.screen, ConfirmDialog), "the Stop question")
        await pilot.press("enter")
        await until(pilot, app, lambda: not resumed.running, "the stop")
    app.journal.close()
