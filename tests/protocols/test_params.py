"""Each protocol parameter is defined once (on the protocol's config) and the command line, the
app's form and the API agree on its name, default and bounds.

The test walks every protocol the app offers, finds its ``symposium run`` sub-command, and
checks each parameter three ways: the flag exists with the config's default and choices; the
form has the field; and a value just outside the bounds is refused by all three with a message
naming the parameter, while the bound itself is accepted by all three.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from typing import Any

import pytest

from protocols.core.params import ParamError, ParamInfo, build, defaults, params_of, profile_overrides
from tui.cli.params import build_config
from tui.cli.parser import build_parser
from tui.errors import UserError
from tui.forms import FormError, ProtocolSpec
from tui.protocol_catalog import SPECS

#: The ``symposium run`` sub-command of each protocol the app offers.
#: A protocol's command is its name, but where its variants are the commands.
COMMANDS = {"d3": "d3-samre"}


def command_for(protocol: str, p: ParamInfo) -> str:
    """D3's ``k`` belongs to ``d3-more``; everything else to the protocol's usual command."""
    return "d3-more" if (protocol, p.name) == ("d3", "k") else COMMANDS.get(protocol, protocol)


def run_parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    run = next(a for a in parser._subparsers._group_actions if a.dest == "command").choices["run"]  # type: ignore[union-attr]
    return next(a for a in run._subparsers._group_actions if a.dest == "protocol").choices[command]  # type: ignore[union-attr]


def flag_action(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def cases() -> list[tuple[str, ParamInfo]]:
    return [(name, p) for name, spec in SPECS.items() for p in params_of(spec.config_cls)]


def test_every_protocol_has_a_command_and_parameters() -> None:
    for spec in SPECS.values():
        assert run_parser(COMMANDS.get(spec.name, spec.name)) is not None
        assert params_of(spec.config_cls), f"{spec.name}: no parameters declared with param()"


@pytest.mark.parametrize(("protocol", "p"), cases(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_cli_form_and_api_agree(protocol: str, p: ParamInfo) -> None:
    spec = SPECS[protocol]
    if (protocol, p.name) == ("d3", "variant"):
        return  # the sub-command (d3-more / d3-samre) is the variant
    parser = run_parser(command_for(protocol, p))
    action = flag_action(parser, p.flag)
    assert action is not None, f"symposium run {COMMANDS[protocol]}: no {p.flag}"
    assert action.dest == p.name
    assert action.default is None  # unset: the profile's default applies, not a second copy of it
    if p.choices:
        assert tuple(action.choices or ()) == p.choices
    assert p.description and p.description.split()[0] in (action.help or "")
    field = next((f for f in spec.fields if f.name == p.name), None)
    if any(r.enables == p.name for r in spec.definition.roles):  # one option, one place: the role's field turns it on
        assert field is None, f"{spec.name} form: {p.name} offered beside the role that turns it on"
        return
    assert field is not None, f"{spec.name} form: no field {p.name}"
    assert field.optional and field.default == ""  # empty: the profile's default
    shown = "none" if p.default is None else "yes" if p.default is True else "no" if p.default is False else p.default
    assert field.placeholder.startswith(f"default {shown}")  # the form shows the API's default
    # API default = the default every interface falls back to.
    assert defaults(spec.config_cls)[p.name] == p.default


def _inputs(spec: ProtocolSpec) -> dict[str, Any]:
    return spec.prepare(spec.defaults())


def _cli_args(command: str, **flags: str) -> argparse.Namespace:
    parser = run_parser(command)
    required = [arg for a in parser._actions if a.required for arg in (a.option_strings[0], "x")]
    return parser.parse_args([*required, *(arg for flag, value in flags.items() for arg in (flag, value))])


#: Values a bound needs from another parameter (a jury of personas has at most 5 seats).
COMPANIONS = {("d3", "jury_size"): {"personas": False}}

BOUNDED = [(n, p) for n, p in cases() if p.ge is not None or p.le is not None]


@pytest.mark.parametrize(("protocol", "p"), BOUNDED, ids=lambda v: v if isinstance(v, str) else v.name)
def test_bounds_are_enforced_the_same_way_everywhere(protocol: str, p: ParamInfo) -> None:
    spec = SPECS[protocol]
    companions = COMPANIONS.get((protocol, p.name), {})
    step = 1 if p.kind == "int" else 0.001
    for bound, outside in ((p.ge, -step), (p.le, step)):
        if bound is None:
            continue
        bad, good = bound + outside, bound
        shown = str(int(bad)) if p.kind == "int" else f"{bad:g}"
        # API
        with pytest.raises(ParamError, match=rf"^{p.name}:"):
            build(spec.config_cls, {**_inputs(spec), **companions, p.name: bad})
        assert getattr(build(spec.config_cls, {**_inputs(spec), **companions, p.name: good}), p.name) == good
        # form
        with pytest.raises(FormError, match=rf"^{re.escape(p.label)}:") as refused:  # the field as the form labels it
            spec.configure({**spec.defaults(), **companions, p.name: shown})
        assert refused.value.field == p.name
        assert getattr(spec.configure({**spec.defaults(), **companions, p.name: str(good)}), p.name) == good
        # command line
        args = _cli_args(command_for(protocol, p), **{p.flag: shown})
        with pytest.raises(UserError, match=rf"^{p.flag}:"):
            build_config(spec.config_cls, args, "standard", **_inputs(spec))


def test_profile_defaults_apply_unless_a_value_is_given() -> None:
    """The small-model profile changes defaults, never a value the user typed."""
    spec = SPECS["evince"]
    small = profile_overrides(spec.config_cls, "small")
    assert small, "EVINCE declares a small-model profile"
    name, value = next(iter(small.items()))
    assert getattr(spec.configure({**spec.defaults(), "profile": "small"}), name) == value
    assert getattr(spec.configure({**spec.defaults(), "profile": "standard"}), name) == defaults(spec.config_cls)[name]
    typed = spec.configure({**spec.defaults(), "profile": "small", name: str(value + 1)})
    assert getattr(typed, name) == value + 1
    assert typed.profile == "small"


def test_auto_profile_follows_the_registry(registry) -> None:
    """The bundled tiny models are marked ``profile = "small"``; a real model entry is not."""
    spec = SPECS["evince"]
    assert spec.configure(spec.defaults(), registry).profile == "small"
    real = {**spec.defaults(), "agent-a": "llama31-8b-instruct", "agent-b": "gemma2-9b-it", "judge": "qwen25-7b-instruct"}
    assert spec.configure(real, registry).profile == "standard"


def test_command_line_rejects_what_the_form_rejects() -> None:
    """``--max-rounds -1`` and ``--top-k 0`` were accepted by the command line. (EVINCE's
    ``max_rounds`` counts refutation rounds after the opening one so 0 is valid.)"""
    for flag, value in (("--max-rounds", "-1"), ("--top-k", "0")):
        args = _cli_args("evince", **{flag: value})
        with pytest.raises(UserError, match=flag):
            build_config(SPECS["evince"].config_cls, args, "standard", case="x")


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_a_misspelt_parameter_is_refused_not_ignored(protocol: str) -> None:
    """A parameter name the config does not know (a typo, or one a newer version dropped) is an
    error naming it: silently running with the default would report a debate the user did not
    ask for. (Before, ``SocraSynthConfig(crit_tolerancee=2.0)`` ran at the default 1.0.)"""
    spec = SPECS[protocol]
    required = {f.name: "text" for f in dataclasses.fields(spec.config_cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    build(spec.config_cls, required)  # the inputs alone are a valid config
    name = params_of(spec.config_cls)[0].name + "_typo"
    with pytest.raises(ParamError) as caught:
        build(spec.config_cls, {**required, name: 1})
    assert str(caught.value).startswith(name), caught.value


#: One meaning and one wording for EVINCE's and SocraSynth's round caps.
CAP_WORDING = "rounds of rebuttal after the opening round, at most; "


@pytest.mark.parametrize("protocol", ["evince", "socrasynth"])
def test_both_round_caps_count_refutation_rounds_after_the_opening_in_one_wording(protocol: str) -> None:
    """EVINCE's and SocraSynth's ``max_rounds`` both count refutation rounds after the opening
    round (Figure 7.1's t, appendix 6.C's rounds), and say so in the same words, first, in the
    declaration, ``symposium run … --help`` and the app's form."""
    spec = SPECS[protocol]
    cap = next(p for p in params_of(spec.config_cls) if p.name == "max_rounds")
    assert cap.description.startswith(CAP_WORDING), cap.description
    assert (cap.label, cap.ge) == ("Rounds at most", 0)  # 0: the opening round alone
    action = flag_action(run_parser(COMMANDS.get(protocol, protocol)), "--max-rounds")
    assert action is not None and (action.help or "").startswith(CAP_WORDING), action.help if action else None
    field = next(f for f in spec.fields if f.name == "max_rounds")
    assert field.label == "Rounds at most" and field.help.startswith(CAP_WORDING), field.help
