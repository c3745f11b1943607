"""The New-debate form's pieces, shared by every interface that starts a protocol.

A :class:`ProtocolSpec` lists the fields of its form (its inputs, then its parameters, generated
from the protocol's config: one definition) and turns submitted values into the protocol's
config and event stream; the Debate screen and the headless runs only ever see the stream, so
every protocol is run, shown and journalled the same way. The specs themselves, one per
protocol, are in :mod:`tui.protocol_catalog`. Also here: the defaults profile a debate's models
call for, and class sets read from a built-in name or a file (the form's and ``--labels``).
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backends.base import SamplingOptions
from backends.registry import Registry
from protocols import replay
from protocols.agents import Agent
from protocols.events import Event
from protocols.labels import LabelSet, normalize_label
from protocols.moderation import CommandChannel
from protocols.params import PROFILES, ParamError, Profile, build, from_description, params_of, profile_overrides

FieldKind = Literal["text", "textarea", "select", "model", "models", "int", "float"]

#: The person's seat in protocols that have one: the app asks in a dialog, the command line on stdin.
PersonSeat = Callable[[str], Awaitable["str | None"]]

SYMPTOM_LABELS = Path(__file__).parent / "data" / "symptom2disease_labels.txt"
LABEL_SOURCES = {
    "symptom2disease": "Symptom2Disease: 41 diseases",
    "open": "Open set: the agents name the labels",
}


@dataclass(frozen=True)
class Field:
    """One input of a New-debate form."""

    name: str
    label: str
    kind: FieldKind
    default: Any = ""
    choices: tuple[tuple[str, str], ...] = ()  # (value, shown text) for selects
    help: str = ""
    optional: bool = False
    placeholder: str = ""  # shown in an empty input: a parameter's default


#: The form's choice of defaults (see ``protocols/params.py``); "auto" follows the models.
PROFILE_FIELD = Field("profile", "Defaults", "select", "auto",
                      (("auto", "auto: as the models' registry entries say"),
                       ("standard", "standard: real instruction models (7B and up)"),
                       ("small", "small: the bundled tiny models")),
                      help="empty parameter fields take this profile's defaults")


def param_fields(config_cls: type) -> tuple[Field, ...]:
    """The form fields of a protocol's parameters, generated from its config (one definition).
    They start empty: an empty field takes the profile's default, shown in its help."""
    small = profile_overrides(config_cls, "small")
    fields = []
    for p in params_of(config_cls):
        shown = "none" if p.default is None else ("yes" if p.default is True else "no" if p.default is False else p.default)
        default = f"default {shown}" + (f" (small: {small[p.name]})" if p.name in small else "")
        help_text = " · ".join(n for n in (p.description, p.bounds(), p.section) if n)
        if p.kind in ("bool", "choice"):
            values = ("yes", "no") if p.kind == "bool" else p.choices
            fields.append(Field(p.name, p.label, "select", "", (("", default), *((v, v) for v in values)),
                                help=help_text, optional=True, placeholder=default))
        else:
            kind: FieldKind = p.kind if p.kind in ("int", "float") else "text"
            fields.append(Field(p.name, p.label, kind, "", help=help_text, optional=True, placeholder=default))
    return tuple(fields)


@dataclass(frozen=True)
class ProtocolSpec:
    """A protocol as the app offers it: its inputs (what it works on, who plays which role), its
    parameters (generated from the config), and how to start a run."""

    name: str
    title: str
    summary: str
    config_cls: type
    #: The protocol's inputs; its parameters' fields are generated (see :func:`param_fields`).
    inputs: tuple[Field, ...]
    #: Form values → the config's non-parameter values (case, labels …); raises :class:`FormError`.
    prepare: Callable[[Mapping[str, Any]], dict[str, Any]]
    #: Config, agents (by role), the person's seat → the run's events.
    start: Callable[[Any, Mapping[str, Agent], str, CommandChannel, PersonSeat], AsyncIterator[Event]]

    @property
    def fields(self) -> tuple[Field, ...]:
        return (*self.inputs, PROFILE_FIELD, *param_fields(self.config_cls))

    def profile(self, values: Mapping[str, Any], registry: Registry | None) -> Profile:
        """The defaults profile the form asks for; "auto" follows the models' registry entries."""
        requested = str(values.get("profile") or "auto")
        if requested != "auto":
            if requested not in PROFILES:
                raise FormError(f"profile: {requested!r} is not one of auto, {', '.join(PROFILES)}")
            return requested  # type: ignore[return-value]
        return choose_profile(registry, self.roles_for(values).values()) if registry is not None else "standard"

    def configure(self, values: Mapping[str, Any], registry: Registry | None = None) -> Any:
        """Form values → the protocol's config, validated by the config itself (as on the
        command line); raises :class:`FormError` naming the field."""
        params: dict[str, Any] = {}
        for p in params_of(self.config_cls):
            raw = values.get(p.name)
            if raw is None or (isinstance(raw, str) and raw.strip() == ""):
                continue
            try:
                params[p.name] = p.parse(raw)
            except ParamError as exc:
                raise FormError(str(exc)) from None
        try:
            return build(self.config_cls, {**self.prepare(values), **params}, profile=self.profile(values, registry))
        except ParamError as exc:
            raise FormError(str(exc)) from None

    def build(self, values: Mapping[str, Any], agents: Mapping[str, Agent], debate_id: str,
              channel: CommandChannel, person: PersonSeat, registry: Registry | None = None) -> AsyncIterator[Event]:
        return self.start(self.configure(values, registry), agents, debate_id, channel, person)

    def roles_for(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Role → model id: one role per ``model`` field, ``<field>-1``, ``<field>-2`` … per
        model listed in a ``models`` field."""
        roles: dict[str, str] = {}
        for f in self.inputs:
            if f.kind == "model":
                roles[f.name] = str(values[f.name])
            elif f.kind == "models":
                for i, model in enumerate(model_list(values[f.name], f.name), 1):
                    roles[f"{f.name}-{i}"] = model
        return roles

    def resume(self, debate: dict[str, Any], agents: Mapping[str, Agent], channel: CommandChannel,
               person: PersonSeat) -> AsyncIterator[Event]:
        """The continuation of a journalled debate cut off early: the same run, under the config
        it journalled and with each agent sampling as it did, replayed from the journal up to
        where it was cut (:mod:`protocols.replay`), then live. Every protocol resumes this way."""
        config_from = getattr(self.config_cls, "from_description", None)
        config = config_from(debate["config"]) if config_from is not None else from_description(self.config_cls, debate["config"])
        recorded = self.recorded_options(debate["participants"])
        agents = {role: dataclasses.replace(agent, options=recorded.get(role, agent.options)) for role, agent in agents.items()}
        return replay.resume(debate, lambda ch: self.start(config, agents, debate["id"], ch, person), channel=channel)

    def roles_from(self, participants: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """Role → model id of a journalled debate, in the roles of this form (the inverse of
        :meth:`roles_for`). A ``model`` field whose role the protocol journals per seat (D3's
        advocates, ``advocate-1`` and ``advocate-2``) takes the model of its first seat."""
        played = {p["role"]: p["model_id"] for p in participants if p["backend"] != "human"}
        roles: dict[str, str] = {}
        for f in self.inputs:
            if f.kind == "model":
                seat = f.name if f.name in played else next((r for r in played if r.startswith(f"{f.name}-")), None)
                if seat is not None:
                    roles[f.name] = played[seat]
            elif f.kind == "models":
                for i in itertools.count(1):
                    if f"{f.name}-{i}" not in played:
                        break
                    roles[f"{f.name}-{i}"] = played[f"{f.name}-{i}"]
        return roles

    def recorded_options(self, participants: Iterable[Mapping[str, Any]]) -> dict[str, SamplingOptions]:
        """Each form role's sampling options as journalled (a seed, a temperature given for one
        agent), so that a resumed agent samples as it did."""
        by_seat = {p["role"]: p for p in participants if p["backend"] != "human"}
        out: dict[str, SamplingOptions] = {}
        for role in self.roles_from(participants):
            seat = by_seat.get(role) or next((p for r, p in by_seat.items() if r.startswith(f"{role}-")), None)
            if seat is not None and seat.get("options"):
                options = dict(seat["options"])
                options["stop"] = tuple(options.get("stop") or ())
                out[role] = SamplingOptions(**options)
        return out

    def defaults(self) -> dict[str, Any]:
        return {f.name: f.default for f in self.fields}


def choose_profile(registry: Registry, model_ids: Iterable[str]) -> Profile:
    """``small`` when any of the debate's models is marked ``profile = "small"`` in the registry
    (a tiny model cannot use a real model's turn lengths), else ``standard``."""
    entries = [registry.entries[m] for m in model_ids if m in registry.entries]
    return "small" if any(e.profile == "small" for e in entries) else "standard"


class FormError(ValueError):
    """A form value is invalid; the message names the field."""


def model_list(value: Any, name: str) -> list[str]:
    """A ``models`` field: model ids separated by commas, at least one."""
    models = [m.strip() for m in str(value).split(",") if m.strip()]
    if not models:
        raise FormError(f"{name}: name at least one model id, separated by commas")
    return models


def load_labels(source: str) -> LabelSet | None:
    """A class set C: ``open``/``auto`` → ``None`` (the agents name the labels); a built-in
    name; or a file — one label per line (``#`` comments), or a CSV with a ``disease``,
    ``label`` or ``class`` column such as the Symptom2Disease splits. Duplicates (also after
    normalisation, e.g. "Diabetes " and "Diabetes") are kept once, first spelling first."""
    if source in ("open", "auto"):
        return None
    path = SYMPTOM_LABELS if source == "symptom2disease" else Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FormError(f"labels: cannot read {path} ({exc.strerror})") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        column = next((c for c in ("disease", "label", "class") if rows and c in rows[0]), None)
        if column is None:
            raise FormError(f"labels: {path} needs a 'disease', 'label' or 'class' column")
        names = [row[column] or "" for row in rows]
    else:
        names = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    unique = list({normalize_label(n): n.strip() for n in reversed(names) if n.strip()}.values())[::-1]
    if len(unique) < 2:
        raise FormError(f"labels: {path} needs at least two labels, found {len(unique)}")
    try:
        return LabelSet(unique)
    except ValueError as exc:
        raise FormError(f"labels: {path}: {exc}") from None

