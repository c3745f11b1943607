"""Command-line flags generated from a protocol's parameters (see ``protocols/core/params.py``).

Each parameter becomes one flag (``max_rounds`` → ``--max-rounds``) whose help gives the
description, the default for real models and for the small-model profile, the valid range and
the paper's section. A flag left out is not set, so the profile's default applies; values are
validated by the config itself, exactly as in the app.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from protocols.core.params import PROFILES, ParamError, ParamInfo, Profile, build, params_of, profile_overrides
from tui.errors import UserError


def add_param_flags(parser: argparse.ArgumentParser, config_cls: type, *, skip: Iterable[str] = ()) -> None:
    """One flag per parameter of ``config_cls`` (bar ``skip``), plus ``--profile``."""
    group = parser.add_argument_group(
        "protocol parameters", "defaults suit real instruction models; the small-model profile (chosen per "
        "model in the registry, or with --profile small) changes those marked 'small:'")
    small = profile_overrides(config_cls, "small")
    for p in params_of(config_cls):
        if p.name in skip:
            continue
        group.add_argument(p.flag, dest=p.name, default=None, help=_help(p, small),
                           **({"action": argparse.BooleanOptionalAction} if p.kind == "bool" else
                              {"metavar": _metavar(p), "choices": p.choices or None}))
    group.add_argument("--profile", choices=("auto", *PROFILES), default="auto",
                       help="defaults profile: 'auto' (the models' registry entries say), 'standard' or 'small'")


def _metavar(p: ParamInfo) -> str | None:
    return None if p.choices else {"int": "N", "float": "X"}.get(p.kind, "TEXT")


def param_help(p: ParamInfo, small: Mapping[str, Any]) -> str:
    """A parameter flag's help: its description, defaults, range and section."""
    return _help(p, small)


def _help(p: ParamInfo, small: Mapping[str, Any]) -> str:
    default = "not set" if p.default is None else p.default
    parts = [f"default {default}"]
    if p.name in small:
        parts.append(f"small: {small[p.name]}")
    if p.bounds():
        parts.append(p.bounds())
    if p.section:
        parts.append(f"§ {p.section}" if p.section[0].isdigit() else p.section)
    return f"{p.description} ({'; '.join(parts)})".replace("%", "%%")


def given(args: argparse.Namespace, config_cls: type, *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The parameters the user set on the command line, parsed to their types."""
    values: dict[str, Any] = {}
    for p in params_of(config_cls):
        raw = getattr(args, p.name, None)
        if p.name in skip or raw is None:
            continue
        try:
            values[p.name] = p.parse(raw)
        except ParamError as exc:
            raise UserError(f"{p.flag}: {exc.problem}") from None
    return values


def build_config(config_cls: type, args: argparse.Namespace, profile: Profile, **inputs: Any) -> Any:
    """The config from the flags the user gave and ``inputs`` (the case, labels …); a bad value
    becomes one clear line naming its flag."""
    try:
        return build(config_cls, {**inputs, **given(args, config_cls)}, profile=profile)
    except ParamError as exc:
        known = {p.name: p.flag for p in params_of(config_cls)}
        raise UserError(f"{known.get(exc.name, exc.name)}: {exc.problem}") from None
