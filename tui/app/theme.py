"""The colours of the debate's roles, as theme variables.

Every role colour is a CSS variable (``$role-a``, ``$role-b``, ``$role-judge`` …) that the
stylesheet (``symposium.tcss``) uses, and that Python code uses through
:func:`role_style` in :class:`textual.content.Content` spans: a span's style string such as
``"bold $role-a"`` is resolved when it is drawn, against the theme in force then, so switching
theme recolours text already on screen. Model text stays plain: a ``Content`` built from a
string never reads markup.

The values come from the theme's own colours (``$text-primary`` for agent A, ``$text-accent``
for agent B …; the ``text-`` variants are the ones Textual makes readable on the theme's
background), so any theme picked from the command palette has a full, matching set. The two
themes ctrl+t toggles, where those own colours collide (``textual-dark`` has the same orange
for accent and warning, and a secondary too close to its primary), get a set chosen beside
them. A theme of one's own can set any of the variables in ``Theme(variables=…)``.
"""

from __future__ import annotations

from textual.theme import Theme

from protocols.core.roles import AGENT_A, AGENT_B, ANALYZER, HUMAN, JUDGE, MODERATOR

#: Variable name → (what it colours, the theme variable it is derived from).
ROLE_VARIABLES: dict[str, tuple[str, str]] = {
    "role-a": ("agent A: its turns, its distribution", "text-primary"),
    "role-b": ("agent B", "text-accent"),
    "role-judge": ("the judge / CRIT evaluator, and the CRIT curve", "text-secondary"),
    "role-human": ("a person's seat (deliberation, human judge)", "text-success"),
    "role-moderator": ("the moderator's actions, and the κ curve", "text-warning"),
    "role-analyzer": ("the analyzer model", "text-secondary"),
    "role-consensus": ("the consensus and the debate's outcome", "text-success"),
    "notice": ("a protocol's notices between turns", "text-warning"),
    "problem": ("errors: a debate that could not go on, a failed analysis", "text-error"),
    "metric-jsd": ("the JSD curve", "text-primary"),
    "metric-wd": ("the WD curve", "text-accent"),
    "metric-mi": ("the MI curve", "text-success"),
}

#: Chosen beside the two themes the app toggles between (see the module's docstring).
#: Light values are dark enough to read on #E0E0E0 (contrast 4.5:1 or more).
CHOSEN: dict[str, dict[str, str]] = {
    "textual-dark": {
        "role-a": "#57A5E2",  # = its $text-primary
        "role-b": "#FFB45C",  # its accent, as text
        "role-judge": "#C59BEA",
        "role-human": "#8AD4A1",  # = its $text-success
        "role-moderator": "#5FD0C6",
        "role-analyzer": "#A0A8B8",
        "role-consensus": "#8AD4A1",
        "notice": "#E8D27A",
        "problem": "#E0728C",
        "metric-jsd": "#57A5E2",
        "metric-wd": "#FFB45C",
        "metric-mi": "#8AD4A1",
    },
    "textual-light": {
        "role-a": "#0B5CAD",
        "role-b": "#9A4A00",
        "role-judge": "#7433A8",
        "role-human": "#23703A",
        "role-moderator": "#006B66",
        "role-analyzer": "#4F5666",
        "role-consensus": "#23703A",
        "notice": "#6E5A00",
        "problem": "#A3213F",
        "metric-jsd": "#0B5CAD",
        "metric-wd": "#9A4A00",
        "metric-mi": "#23703A",
    },
}

#: A protocol's role name → the variable that colours it.
ROLE_OF = {
    AGENT_A: "role-a",
    AGENT_B: "role-b",
    JUDGE: "role-judge",
    "judges": "role-judge",
    "crit": "role-judge",
    "user": "role-human",
    HUMAN: "role-human",
    MODERATOR: "role-moderator",
    ANALYZER: "role-analyzer",
    "consensus": "role-consensus",
}


def role_variables(theme: Theme) -> dict[str, str]:
    """Every role variable's value under ``theme``."""
    chosen = CHOSEN.get(theme.name)
    if chosen is not None:
        return dict(chosen)
    system = theme.to_color_system().generate()
    return {name: system[source] for name, (_, source) in ROLE_VARIABLES.items()}


def role_variable(role: str) -> str:
    """The variable for a role name from a protocol (``agent-a``, ``judge-2`` …); a role not
    known here (a panel's third agent) takes the judge's colour rather than none."""
    return ROLE_OF.get(role) or ROLE_OF.get(role.split("-")[0]) or "role-judge"


def role_style(role: str, extra: str = "") -> str:
    """A ``Content`` span style for a role, resolved against the current theme when drawn."""
    return f"{extra} ${role_variable(role)}".strip()
