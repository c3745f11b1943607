"""Every registered protocol's sample runs (``ProtocolDefinition.samples``), as the contract
tests read them: no test keeps a table of protocols, so a protocol is covered by all of them the
moment it is registered (see :mod:`protocols.core.sample`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.definition import ProtocolDefinition
from protocols.core.sample import Sample
from protocols.registry import PROTOCOLS
from tui.forms import ProtocolSpec
from tui.protocol_catalog import SPECS

#: Every sample of every protocol, by its name (``d3-samre``, ``d3-more``, ``evince`` …).
ALL: dict[str, tuple[ProtocolDefinition, Sample]] = {s.name: (d, s) for d in PROTOCOLS for s in d.samples}
#: Each protocol's first sample, by the protocol's name: the run the slower contracts use.
FIRST: dict[str, tuple[ProtocolDefinition, Sample]] = {d.name: (d, d.samples[0]) for d in PROTOCOLS if d.samples}


def spec_of(name: str) -> ProtocolSpec:
    """The form of the protocol a sample (or protocol) named ``name`` belongs to."""
    definition = (ALL.get(name) or FIRST[name])[0]
    return SPECS[definition.name]


def form_values(spec: ProtocolSpec, sample: Sample, *extra: Mapping[str, str], seed: int | None = None) -> dict[str, Any]:
    """The form's values of a sample run: the form's defaults, the small-model profile, the
    sample's values, then ``extra``; with ``seed``, the first text input carries it so that
    each seeded run (and the replies a scripted model draws from its prompts) is its own."""
    values: dict[str, Any] = {**spec.defaults(), "profile": "small", **sample.values}
    for more in extra:
        values.update(more)
    if seed is not None:
        text = next(i.name for i in spec.definition.inputs if i.kind in ("text", "textarea"))
        values[text] = f"{values[text]} (case {seed})"
    return values


def model_ids(spec: ProtocolSpec, values: Mapping[str, Any]) -> set[str]:
    """The placeholder model ids a sample's values seat (one backend each)."""
    return set(spec.roles_for(values).values())


def cli_args(definition: ProtocolDefinition, sample: Sample, model: str, *, person_script: str | None = None) -> list[str]:
    """``symposium run`` arguments for the sample's run on one real ``model`` in every seat:
    its inputs from ``values``, its parameters from ``on_model`` (short turns), the small
    profile; a person's seat reads ``person_script`` (and confirms labels as read)."""
    name = next((v.name for v in definition.variants if all(sample.values.get(k) == str(x) for k, x in v.values.items())),
                definition.name)
    args = [name, "--profile", "small"]
    for i in definition.inputs:
        raw = sample.values.get(i.name)
        if raw is None or i.name in {k for v in definition.variants for k in v.values}:
            continue
        if i.kind == "bool":
            if str(raw).casefold() in ("yes", "true", "1"):
                args.append(i.cli_flag)
        elif i.kind == "list":
            for item in (s.strip() for s in str(raw).split(i.separator) if s.strip()):
                args += [i.cli_flag, item]
        elif str(raw) != "":
            args += [i.cli_flag, str(raw)]
    for role in definition.roles:
        if role.kind == "person":
            if role.optional and sample.values.get(role.name):
                args.append(role.cli_flag)
            if role.script_flag and person_script is not None:
                args += [role.script_flag, person_script]
            if role.confirms:
                args += ["--confirm", "accept"]
            continue
        raw = sample.values.get(role.name)
        if raw is None:
            continue
        count = len([m for m in str(raw).split(",") if m.strip()])
        args += [role.cli_flag, ",".join([model] * count)]
    for name, raw in sample.on_model.items():
        flag = "--" + name.replace("_", "-")
        if raw in ("yes", "no"):
            args.append(flag if raw == "yes" else "--no-" + name.replace("_", "-"))
        else:
            args += [flag, raw]
    return args
