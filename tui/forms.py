"""The New-debate form's pieces, shared by every interface that starts a protocol.

A :class:`ProtocolSpec` is a protocol's form, generated from its definition
(:class:`protocols.core.definition.ProtocolDefinition`: inputs, roles, and parameters from its config),
and turns submitted values into the protocol's config and event stream; the Debate screen and the headless runs only ever see the stream, so
every protocol is run, shown and journalled the same way. The specs themselves, one per
protocol, are in :mod:`tui.protocol_catalog`. Also here: the defaults profile a debate's models
call for, and class sets read from a built-in name or a file (the form's and ``--labels``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from backends.registry import Registry
from protocols.core.agents import Agent
from protocols.core.definition import EVIDENCE, Edit, Input, InputError, Person, ProtocolDefinition, Role
from protocols.core.documents import gather
from protocols.core.events import Event
from protocols.core.moderation import CommandChannel
from protocols.core.params import PROFILES, REPLY_LENGTHS, ParamError, Profile, params_of, profile_overrides
from protocols.core.roles import SIDE_PANEL, list_of
from protocols.measures.labels import BUILTIN_LABEL_SETS, LABEL_SOURCES, LabelSet, read_label_set  # noqa: F401 - LABEL_SOURCES: the form's choices, kept importable here
from store.evidence import grounding_of
from tui.evidence import EvidenceError, paths_of, read_evidence, settings_of, with_evidence
from tui.titles import automatic_title

FieldKind = Literal["text", "textarea", "select", "model", "models", "int", "float", "files"]

#: The person's seat in protocols that have one: the app asks in a dialog, the command line on stdin.
PersonSeat = Callable[[str], Awaitable["str | None"]]

SYMPTOM_LABELS = BUILTIN_LABEL_SETS["symptom2disease"]


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
    #: A text input's example (the demo's case): the form shows it greyed in the empty field and
    #: a first debate starts with the field empty, so that what is typed is all there is.
    example: str = ""
    #: A select that also takes a value typed in (a path to a labels file: ``--labels FILE``).
    open_choice: bool = False
    #: Kept for the next form (settings, choices, numbers); never the debate's text (see
    #: :attr:`protocols.core.definition.Input.remembered`).
    remember: bool = True
    #: Where the form shows it: "" among the few fields a person decides for every debate (the
    #: case, the models, the rounds, the title, the evidence); else the group of the "Advanced"
    #: fold it belongs to (a step of the protocol: "When the debate stops").
    step: str = ""


#: The debate's title, for every protocol: what Home, the headers and the report show. Empty, the
#: debate gets :func:`tui.titles.automatic_title` (the form fills it in as the case is typed).
TITLE_FIELD = Field("title", "Title", "text", "", help="shown on Home, in the debate's header and in reports",
                    optional=True, remember=False)

#: The groups of the "Advanced" fold that are not a protocol's own steps, in the order shown
#: around them: the defaults first; other models, sampling, other settings and reply lengths last.
DEFAULTS, OTHER_MODELS, SAMPLING, OTHER = "Defaults", "Other models", "Sampling", "Other settings"

#: The form's choice of defaults (see ``protocols/core/params.py``); "auto" follows the models.
PROFILE_FIELD = Field("profile", "Defaults suited to", "select", "auto",
                      (("auto", "auto: as the models' registry entries say"),
                       ("standard", "standard: real instruction models (7B and up)"),
                       ("small", "small: the bundled tiny models")),
                      help="every setting left empty below takes this profile's default", step=DEFAULTS)


#: Every protocol's evidence: files or folders the agents argue from and cite (one field, a path
#: or several separated by ';', with a file picker beside it). Never remembered: a case's files.
EVIDENCE_FIELD = Field(EVIDENCE.name, EVIDENCE.label, "files", "", help=EVIDENCE.help, optional=True, remember=False)


def param_fields(config_cls: type, skip: Iterable[str] = ()) -> tuple[Field, ...]:
    """The form fields of a protocol's parameters, generated from its config (one definition),
    less ``skip`` (offered elsewhere: a role that turns one on). They start empty: an empty field
    takes the profile's default, shown in it. The help is the parameter's description in plain
    words with its range; the paper's section is the command line's to cite, not the form's."""
    small = profile_overrides(config_cls, "small")
    fields = []
    for p in params_of(config_cls):
        if p.name in skip:
            continue
        shown = "none" if p.default is None else ("yes" if p.default is True else "no" if p.default is False else p.default)
        default = f"default {shown}" + (f" (small: {small[p.name]})" if p.name in small else "")
        help_text = p.description + (f". Allowed: {p.bounds()}" if p.bounds() else "")
        step = "" if p.essential else (p.step or OTHER)
        if p.kind in ("bool", "choice"):
            values = ("yes", "no") if p.kind == "bool" else p.choices
            fields.append(Field(p.name, p.label, "select", "", (("", default), *((v, v) for v in values)),
                                help=help_text, optional=True, placeholder=default, step=step))
        else:
            kind: FieldKind = p.kind if p.kind in ("int", "float") else "text"
            fields.append(Field(p.name, p.label, kind, "", help=help_text, optional=True, placeholder=default, step=step))
    return tuple(fields)


def steps_in_order(config_cls: type, fields: Iterable[Field]) -> list[str]:
    """The "Advanced" fold's groups for ``fields``: the defaults, then the protocol's steps in
    the order its config declares them (``STEPS``), then any other step as it first appears,
    then the groups every protocol may have (other models, sampling, other settings, reply
    lengths)."""
    present = list(dict.fromkeys(f.step for f in fields if f.step))
    last = [OTHER_MODELS, SAMPLING, OTHER, REPLY_LENGTHS]
    declared = [s for s in getattr(config_cls, "STEPS", ()) if s in present]
    rest = [s for s in present if s not in declared and s not in last and s != DEFAULTS]
    return [s for s in (DEFAULTS, *declared, *rest, *last) if s in present]


def input_field(i: Input) -> Field:
    """The form field of a protocol input (see :class:`protocols.core.definition.Input`): among
    the first fields, but a sampling option (a temperature) in the "Advanced" fold."""
    shown = i.example if i.example is not None else (i.default if i.default is not None else "")
    step = i.step or (SAMPLING if i.sampling is not None else "")
    match i.kind:
        case "bool":
            choices: tuple[tuple[str, str], ...] = (("yes", "yes"), ("no", "no"))
            return Field(i.name, i.label, "select", shown or "no", choices, help=i.help, optional=True, remember=i.remembered,
                         step=step)
        case "select":
            return Field(i.name, i.label, "select", shown, i.choices, help=i.help, optional=not i.required,
                         open_choice=i.open_choice, remember=i.remembered, step=step)
        case "int" | "float":
            return Field(i.name, i.label, i.kind, shown, help=i.help, optional=not i.required, remember=i.remembered,
                         step=step)
        case _:  # text(area), a file's path, a list (items separated as the input says)
            example = str(i.example) if i.example is not None and i.required else ""  # what the user must give
            return Field(i.name, i.label, "textarea" if i.kind == "textarea" else "text", shown, help=i.help,
                         optional=not i.required, example=example, remember=i.remembered, step=step)


def role_fields(role: Role, definition: ProtocolDefinition) -> tuple[Field, ...]:
    """The form field of a role: a model (a select), models (ids, comma separated), the person's
    seat (yes/no when optional; a required seat needs no field: the app always asks)."""
    if role.kind == "person":
        if not role.optional:
            return ()
        return (Field(role.name, role.label, "select", role.example or "no",
                      (("yes", "at the table"), ("no", "none (AI only)")), help=role.help),)
    fallback = ""
    if role.fallback is not None:
        fallback = f"same as {definition.role(role.fallback).label.split(' (')[0].lower()}"
    # a role that has a model whatever is chosen is decided first; one that may be left out, or
    # falls back on another's model, waits in the "Advanced" fold (with the step it turns on)
    step = ""
    if role.optional or role.fallback is not None:
        enabled = next((p for p in params_of(definition.config_cls) if p.name == role.enables), None)
        step = (enabled.step or OTHER) if enabled is not None else OTHER_MODELS
    if role.kind == "models":
        helps = "; ".join(h for h in (role.help, f"empty: {fallback}" if fallback else "") if h)
        return (Field(role.name, role.label, "models", role.example, help=helps, optional=role.optional, step=step),)
    choices: tuple[tuple[str, str], ...] = ()
    if role.optional:  # a role that turns a step on is played only when given a model: empty is none
        choices = (("", "none" if role.enables else fallback or "none"),)
        if role.disable:
            choices += ((DISABLED, f"none: {role.disable_help}"),)
    return (Field(role.name, role.label, "model", "" if role.optional else role.example, choices,
                  help=role.help, optional=role.optional, step=step),)


#: A disabled optional role's value in the form (the command line's ``--no-…`` switch).
DISABLED = "none"


@dataclass(frozen=True)
class ProtocolSpec:
    """A protocol as the app offers it, generated from its :class:`ProtocolDefinition`: its
    inputs' and roles' fields, its parameters' fields (from the config), and how to start a run."""

    definition: ProtocolDefinition

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def title(self) -> str:
        return self.definition.title

    @property
    def summary(self) -> str:
        return self.definition.summary

    @property
    def config_cls(self) -> type:
        return self.definition.config_cls

    @property
    def subject(self) -> str | None:
        """The input the debate is about (the case, the subject, the question): the first text
        the protocol requires. Its first words may become the title."""
        return next((i.name for i in self.definition.inputs if i.kind in ("text", "textarea") and i.required), None)

    @property
    def inputs(self) -> tuple[Field, ...]:
        """The fields of the protocol's inputs and roles, the title after the subject (its
        parameters' fields follow them)."""
        d = self.definition
        own = [input_field(i) for i in d.inputs if i.form and i.sampling is None]
        at = next((n + 1 for n, f in enumerate(own) if f.name == self.subject), 0)
        return (*own[:at], TITLE_FIELD, *own[at:],
                *(f for r in d.roles for f in role_fields(r, d)),
                *(input_field(i) for i in d.inputs if i.form and i.sampling is not None))

    def title_for(self, values: Mapping[str, Any]) -> str:
        """The title typed, or the automatic one (see :func:`tui.titles.automatic_title`)."""
        typed = " ".join(str(values.get(TITLE_FIELD.name) or "").split())
        subject = str(values.get(self.subject) or "") if self.subject else ""
        return typed or automatic_title(subject, self.title)

    def titled(self, config: Any, values: Mapping[str, Any]) -> Any:
        """``config`` with its title (:meth:`title_for`), for a protocol whose config has one:
        the form and the command line title a debate alike."""
        if TITLE_FIELD.name not in {f.name for f in dataclasses.fields(config)}:
            return config
        return dataclasses.replace(config, title=self.title_for(values))

    @property
    def fields(self) -> tuple[Field, ...]:
        """Every field of the form, in order (see :attr:`first_fields` and :attr:`groups`)."""
        enabled = {r.enables for r in self.definition.roles if r.enables}
        return (*self.inputs, EVIDENCE_FIELD, PROFILE_FIELD, *param_fields(self.config_cls, skip=enabled))

    @property
    def first_fields(self) -> tuple[Field, ...]:
        """The few fields a person decides for every debate, shown first: the case (or subject),
        the title, the models, the rounds, the evidence."""
        fields = [f for f in self.fields if not f.step]
        evidence = [f for f in fields if f.name == EVIDENCE_FIELD.name]
        return (*(f for f in fields if f.name != EVIDENCE_FIELD.name), *evidence)

    @property
    def groups(self) -> list[tuple[str, tuple[Field, ...]]]:
        """The "Advanced" fold: ``(step, fields)`` per group, in :func:`steps_in_order`."""
        folded = [f for f in self.fields if f.step]
        return [(step, tuple(f for f in folded if f.step == step)) for step in steps_in_order(self.config_cls, folded)]

    def label_of(self, name: str) -> str:
        """The field ``name`` as the form labels it (a numbered role's by its list: ``judge-2`` is
        "Judges …"); the name itself where no field has it."""
        labels = {f.name: f.label for f in self.fields}
        return labels.get(name) or labels.get(list_of(name)) or name

    def _error(self, exc: InputError | ParamError) -> FormError:
        """``exc`` as the form says it: the field by its label, the problem in plain words."""
        return FormError(f"{self.label_of(exc.name)}: {plain_problem(exc.problem)}", field=exc.name)

    def remembered(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The part of a form's ``values`` the app may keep for the next form: every field but
        the debate's text (the case, the subject …: the journal holds those), and the side panel's
        analyzer. Applied when saving and when reading, so a case an older version saved is
        neither shown nor kept."""
        kept = {f.name for f in self.fields if f.remember} | {SIDE_PANEL}
        return {k: v for k, v in values.items() if k in kept}

    def values_for(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The form's values as the definition reads them: a disabled role's switch set."""
        out = dict(values)
        for role in self.definition.roles:
            if role.disable and str(values.get(role.name) or "") == DISABLED:
                out[role.name], out[role.disable] = "", True
        return out

    def prepare(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Form values → the config's non-parameter values (case, labels …); FormError."""
        try:
            return self.definition.prepared(self.values_for(values))
        except InputError as exc:
            raise self._error(exc) from None

    def profile(self, values: Mapping[str, Any], registry: Registry | None) -> Profile:
        """The defaults profile the form asks for; "auto" follows the models' registry entries."""
        requested = str(values.get("profile") or "auto")
        if requested != "auto":
            if requested not in PROFILES:
                raise FormError(f"{PROFILE_FIELD.label}: {requested!r} is not one of auto, {', '.join(PROFILES)}",
                                field=PROFILE_FIELD.name)
            return requested
        return choose_profile(registry, self.roles_for(values).values()) if registry is not None else "standard"

    def configure(self, values: Mapping[str, Any], registry: Registry | None = None) -> Any:
        """Form values → the protocol's config, validated by the config itself (as on the
        command line); raises :class:`FormError` naming the field."""
        try:
            config = self.definition.configure(self.values_for(values), profile=self.profile(values, registry))
            return self.titled(config, values)
        except (InputError, ParamError) as exc:
            raise self._error(exc) from None

    def build(self, values: Mapping[str, Any], agents: Mapping[str, Agent], debate_id: str,
              channel: CommandChannel, person: PersonSeat, registry: Registry | None = None,
              edit: Edit | None = None) -> AsyncIterator[Event]:
        """The run's events. With ``edit`` (an interface that can ask the moderator), the run
        offers what its protocol proposes for editing (see ``ProtocolDefinition.editable``)."""
        d = self.definition
        config = self.configure(values, registry)
        if edit is not None and d.editable is not None:
            config = d.editable(config, edit)
        try:
            team = d.team(d.tune(agents, values))
        except InputError as exc:
            raise self._error(exc) from None
        seat = Person(person) if d.person_role() is not None else None
        try:
            paths = paths_of(values.get(EVIDENCE.name))
        except InputError as exc:
            raise self._error(exc) from None
        if not paths:
            return d.run(config, team, debate_id=debate_id, channel=channel, person=seat)
        settings = settings_of(values, self.profile(values, registry))

        def load() -> Any:
            try:
                return read_evidence(paths, settings)
            except EvidenceError as exc:
                raise FormError(f"{EVIDENCE.label}: {exc}", field=EVIDENCE.name) from None

        return with_evidence(load, lambda found: d.run(config, team, debate_id=debate_id, channel=channel, person=seat,
                                                       evidence=found))

    def evidence_paths(self, values: Mapping[str, Any]) -> list[str]:
        """The evidence's paths, each there and of a kind Symposium reads (a folder: holding
        one); nothing is read yet. FormError naming the field."""
        try:
            paths = paths_of(values.get(EVIDENCE.name))
            gather(paths)
        except (InputError, EvidenceError) as exc:
            raise FormError(f"{EVIDENCE.label}: {exc.problem if isinstance(exc, InputError) else exc}",
                            field=EVIDENCE.name) from None
        return paths

    def roles_for(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Role → model id (see :meth:`ProtocolDefinition.role_models`); FormError naming the field."""
        try:
            return self.definition.role_models(self.values_for(values))
        except InputError as exc:
            raise self._error(exc) from None

    def resume(self, debate: dict[str, Any], agents: Mapping[str, Agent], channel: CommandChannel,
               person: PersonSeat) -> AsyncIterator[Event]:
        """The continuation of a journalled debate (:meth:`ProtocolDefinition.resume`), the
        person seated as the interface seats them, its evidence the passages its journal holds."""
        return self.definition.resume(debate, agents, channel=channel, person=Person(person), evidence=grounding_of(debate))

    def defaults(self) -> dict[str, Any]:
        """Every field's default, examples included: values a debate can start from (the demo's)."""
        return {f.name: f.default for f in self.fields}

    def blank(self) -> dict[str, Any]:
        """What a new form starts from: :meth:`defaults` with the text examples left out (the
        form shows them as placeholders), so that a case typed in is not added to the demo's."""
        return {**self.defaults(), **{f.name: "" for f in self.fields if f.example}}


def choose_profile(registry: Registry, model_ids: Iterable[str]) -> Profile:
    """``small`` when any of the debate's models is marked ``profile = "small"`` in the registry
    (a tiny model cannot use a real model's turn lengths), else ``standard``."""
    entries = [registry.entries[m] for m in model_ids if m in registry.entries]
    return "small" if any(e.profile == "small" for e in entries) else "standard"


class FormError(ValueError):
    """A form value is invalid; the message names the field as the form labels it, and
    ``field`` is its name (the form shows that field), where one is at fault."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


#: Pydantic's bounds messages and their plain words.
_BOUNDS = ((r"input should be less than or equal to (\S+)", r"at most \1"),
           (r"input should be greater than or equal to (\S+)", r"at least \1"),
           (r"input should be less than (\S+)", r"less than \1"),
           (r"input should be greater than (\S+)", r"more than \1"))


def plain_problem(problem: str) -> str:
    """A value's problem in plain words ("at most 1" for pydantic's "input should be less than
    or equal to 1")."""
    for pattern, words in _BOUNDS:
        problem = re.sub(pattern, words, problem)
    return problem


def load_labels(source: str) -> LabelSet | None:
    """A class set C (see :func:`protocols.measures.labels.read_label_set`); errors name the field."""
    try:
        return read_label_set(source)
    except ValueError as exc:
        raise FormError(f"labels: {exc}", field="labels") from None
