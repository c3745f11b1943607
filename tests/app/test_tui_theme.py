"""Role colours are theme variables (tui/app/theme.py, tui/app/symposium.tcss): switching to the
light theme recolours every role, on screen, in what is already drawn. A colour written into the
code or the stylesheet (``"cyan"``, ``#57A5E2``) would stay the same and fail here."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from protocols.core.events import ModeratorActed, Notice
from tests.app.replayed import replay
from tests.helpers.pilot import SIZE, make_app
from tests.helpers.sample_debate import T0, sample_events
from tui.app.app import SymposiumApp
from tui.app.theme import CHOSEN, ROLE_VARIABLES, role_variables
from tui.app.widgets.distribution import Distributions
from tui.app.widgets.metrics import MetricsPlot
from tui.app.widgets.transcript import TurnView

Rgb = tuple[int, int, int]


def drawn_colour(widget: Widget, text: str) -> Rgb:
    """The foreground colour ``widget`` draws ``text`` in (the first segment that is exactly it)."""
    for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height)):
        for segment in strip:
            if segment.text.strip() == text and segment.style is not None and segment.style.color is not None:
                return tuple(segment.style.color.get_truecolor())  # type: ignore[return-value]
    raise AssertionError(f"{text!r} is not drawn in {widget}")


def variable(app: SymposiumApp, name: str) -> Rgb:
    return Color.parse(app.theme_variables[name]).rgb


def colours(app: SymposiumApp) -> dict[str, Rgb]:
    """Each role's colour as the Debate screen shows it now."""
    screen = app.screen
    views = {view.role: view for view in screen.query(TurnView)}
    notes = {kind: note for kind in ("moderator", "notice") for note in screen.query(f"Transcript > .note.{kind}")}
    return {
        "turn agent-a": views["agent-a"].styles.border_top[1].rgb,
        "turn agent-b": views["agent-b"].styles.border_top[1].rgb,
        "bars agent-a": drawn_colour(screen.query_one(Distributions), "agent-a"),
        "bars agent-b": drawn_colour(screen.query_one(Distributions), "agent-b"),
        "judge in judgements": drawn_colour(screen.query_one("#judgements", Static), "judge"),
        "moderator note": notes["moderator"].styles.color.rgb,
        "notice": notes["notice"].styles.color.rgb,
    }


def expected(app: SymposiumApp) -> dict[str, Rgb]:
    return {"turn agent-a": variable(app, "role-a"), "turn agent-b": variable(app, "role-b"),
            "bars agent-a": variable(app, "role-a"), "bars agent-b": variable(app, "role-b"),
            "judge in judgements": variable(app, "role-judge"),
            "moderator note": variable(app, "role-moderator"), "notice": variable(app, "notice")}


def events():
    evs = sample_events(rounds=2, finished=False)
    return [*evs[:6], ModeratorActed("sample0001ab", "interject", {"text": "think [b]again[/b]", "to": "both"}, 0),
            Notice("sample0001ab", "parse", "a reply was repaired", {}, 0, at=T0 + 30), *evs[6:]]


async def test_switching_to_the_light_theme_recolours_every_role(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "textual-dark"
        await replay(app, pilot, events())
        dark = colours(app)
        assert dark == expected(app)
        assert dark["turn agent-a"] != dark["turn agent-b"] and dark["bars agent-a"] != dark["bars agent-b"]
        plot_dark = app.screen.query_one(MetricsPlot)._plot.build()

        await pilot.press("ctrl+t")  # the app's own theme toggle
        await pilot.pause()
        await pilot.pause()
        assert app.theme == "textual-light"
        light = colours(app)
        assert light == expected(app)
        changed = {role for role in dark if dark[role] != light[role]}
        assert changed == set(dark), f"not recoloured by the light theme: {set(dark) - changed}"
        # the plot is drawn again with the light theme's curve colours (plotext takes RGB, not variables)
        r, g, b = variable(app, "metric-jsd")
        plot_light = app.screen.query_one(MetricsPlot)._plot.build()
        assert f"{r};{g};{b}" in plot_light and f"{r};{g};{b}" not in plot_dark


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "nord", "gruvbox", "solarized-light"])
async def test_every_theme_defines_every_role_variable(tmp_path: Path, registry, theme: str) -> None:
    """A theme picked from the palette must not leave a variable of the stylesheet undefined
    (Textual would refuse the stylesheet); the two toggled themes use the chosen sets."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        values = {name: app.theme_variables[name] for name in ROLE_VARIABLES}
        assert values == role_variables(app.current_theme)
        if theme in CHOSEN:
            assert values == CHOSEN[theme]
        assert values["role-a"] != values["role-b"]
