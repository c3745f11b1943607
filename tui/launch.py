"""The protocols the app can start, described as forms, and how to start one.

Each :class:`ProtocolSpec` lists the fields of its New-debate form and builds the protocol's
event stream from the submitted values. The Debate screen only ever sees the stream, so every
protocol is run, shown and journalled the same way.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backends.base import Backend
from backends.factory import load_backend
from backends.registry import Registry
from protocols import conference, d3, deliberation, evince, humanloop, socrasynth
from protocols.agents import Agent
from protocols.events import Event
from protocols.labels import LabelSet, normalize_label
from protocols.moderation import CommandChannel
from protocols.params import PROFILES, ParamError, Profile, build, params_of, profile_overrides

FieldKind = Literal["text", "textarea", "select", "model", "models", "int", "float"]

#: The person's seat in protocols that have one: the app asks in a dialog, the command line on stdin.
PersonSeat = Callable[[str], Awaitable["str | None"]]

SYMPTOM_LABELS = Path(__file__).parent / "data" / "symptom2disease_labels.txt"
LABEL_SOURCES = {
    "symptom2disease": "Symptom2Disease: 41 diseases",
    "open": "Open set: the agents name the labels",
}

DEMO_CASE = (
    "A patient presents with itching, vomiting, fatigue, weight loss, high fever, yellowish skin, "
    "dark urine and abdominal pain."
)


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
    #: A journalled debate cut off early and its agents → the events of its continuation.
    resume: Callable[[dict[str, Any], Mapping[str, Agent], CommandChannel], AsyncIterator[Event]] | None = None

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


def _text(values: Mapping[str, Any], name: str) -> str:
    text = str(values.get(name) or "").strip()
    if not text:
        raise FormError(f"{name}: required")
    return text


def _evince_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    case = str(values["case"]).strip()
    if not case:
        raise FormError("case: describe the case (symptoms, facts) to debate")
    return {"case": case, "labels": load_labels(str(values["labels"]))}


def _start_evince(config: evince.EvinceConfig, agents: Mapping[str, Agent], debate_id: str,
                  channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    return evince.run(config, evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"]),
                      debate_id=debate_id, channel=channel)


EVINCE = ProtocolSpec(
    name="evince",
    title="EVINCE",
    summary="Two agents argue over a class set until their distributions converge (seed 004, ch. 7).",
    config_cls=evince.EvinceConfig,
    inputs=(
        Field("case", "Case (information set S)", "textarea", DEMO_CASE),
        Field("labels", "Class labels C", "select", "symptom2disease", tuple(LABEL_SOURCES.items()),
              help="or type a path to a file with one label per line"),
        Field("agent-a", "Agent A (confirmatory)", "model", "smollm2-135m"),
        Field("agent-b", "Agent B (explorer)", "model", "gemma3-270m"),
        Field("judge", "CRIT judge", "model", "smollm2-135m"),
    ),
    prepare=_evince_inputs,
    start=_start_evince,
    resume=lambda debate, agents, channel: evince.resume(
        debate, evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"]), channel=channel),
)


def _socrasynth_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    model_list(values["judge"], "judge")
    return {"subject": _text(values, "subject")}


def _start_socrasynth(config: socrasynth.SocraSynthConfig, agents: Mapping[str, Agent], debate_id: str,
                      channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    judges = [agent for role, agent in agents.items() if role.startswith("judge-")]
    return socrasynth.run(config, socrasynth.SocraSynthAgents(agents["agent-a"], agents["agent-b"], judges),
                          debate_id=debate_id, channel=channel)


SOCRASYNTH = ProtocolSpec(
    name="socrasynth",
    title="SocraSynth",
    summary="For and against a subject, judged with CRIT, then a joint proposal (seed 004, ch. 6).",
    config_cls=socrasynth.SocraSynthConfig,
    inputs=(
        Field("subject", "Subject", "textarea", "Should hospitals let AI systems triage emergency patients?"),
        Field("agent-a", "Agent A (argues for)", "model", "smollm2-135m"),
        Field("agent-b", "Agent B (argues against)", "model", "gemma3-270m"),
        Field("judge", "Judges (model ids, comma separated)", "models", "smollm2-135m",
              help="ideally models that do not debate (section 6.2.2.1)"),
    ),
    prepare=_socrasynth_inputs,
    start=_start_socrasynth,
)


def _conference_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    model_list(values["participant"], "participant")
    topics = [t.strip() for t in str(values.get("topics") or "").split(";") if t.strip()] or None
    return {"issue": _text(values, "issue"), "topics": topics}


def _start_conference(config: conference.ConferenceConfig, agents: Mapping[str, Agent], debate_id: str,
                      channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    participants = [agent for role, agent in agents.items() if role.startswith("participant-")]
    if len(participants) < 2:
        raise FormError("participant: a conference needs at least two participants")
    judge = agents["judge"]  # the form's one model judges and evaluates, each with its own role and KV cache
    evaluator = dataclasses.replace(judge, role=conference.EVALUATOR)
    return conference.run(config, conference.ConferenceAgents(participants, judge, evaluator),
                          debate_id=debate_id, channel=channel)


CONFERENCE = ProtocolSpec(
    name="agreement",
    title="Decision conference",
    summary="Stages that advance only when an agreement judge says AGREEMENT (seed 000).",
    config_cls=conference.ConferenceConfig,
    inputs=(
        Field("issue", "Issue", "textarea", "Should our town build a new library or repair the old one?"),
        Field("topics", "Stages (separated by ;)", "text", "", optional=True,
              help="empty: issue discussion; model building; results exploration"),
        Field("participant", "Participants (model ids, comma separated)", "models", "smollm2-135m, gemma3-270m"),
        Field("judge", "Agreement judge and evaluator", "model", "smollm2-135m"),
    ),
    prepare=_conference_inputs,
    start=_start_conference,
)


def _deliberation_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    model_list(values["deliberator"], "deliberator")
    return {"topic": _text(values, "topic")}


def _start_deliberation(config: deliberation.DeliberationConfig, agents: Mapping[str, Agent], debate_id: str,
                        channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    deliberators = [agent for role, agent in agents.items() if role.startswith("deliberator-")]
    if len(deliberators) < 2:
        raise FormError("deliberator: a deliberation needs at least two deliberators")
    moderator = agents["moderator"]  # the form's one model moderates and analyzes, each with its own role and KV cache
    analyzer = dataclasses.replace(moderator, role="analyzer")
    return deliberation.run(config, deliberation.DeliberationAgents(moderator, deliberators, analyzer),
                            person, debate_id=debate_id, channel=channel)


DELIBERATION = ProtocolSpec(
    name="deliberation",
    title="Moderated deliberation",
    summary="A moderator model, deliberator models and you; turn rules enforced (seed 002).",
    config_cls=deliberation.DeliberationConfig,
    inputs=(
        Field("topic", "Topic", "textarea", "Should phones be banned in schools?"),
        Field("moderator", "Moderator and analyzer", "model", "smollm2-135m"),
        Field("deliberator", "Deliberators (model ids, comma separated)", "models", "smollm2-135m, gemma3-270m"),
    ),
    prepare=_deliberation_inputs,
    start=_start_deliberation,
)


def _humanloop_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    model_list(values["agent"], "agent")
    seat = None if values["seat"] == "none" else humanloop.HumanSeat(blind=values["seat"] == "blind")
    return {"case": _text(values, "case"), "human": seat}


def _start_humanloop(config: humanloop.HumanloopConfig, agents: Mapping[str, Agent], debate_id: str,
                     channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    panel = [agent for role, agent in agents.items() if role.startswith("agent-")]

    async def human_turn(prompt: str) -> str:
        return (await person(prompt)) or ""

    return humanloop.run(config, humanloop.HumanloopAgents(panel, agents["clerk"]), debate_id=debate_id,
                         channel=channel, human_turn=human_turn)


HUMANLOOP = ProtocolSpec(
    name="humanloop",
    title="Human judge in the loop",
    summary="A panel of model judges, you optionally in one seat; stances tracked per step (seed 001).",
    config_cls=humanloop.HumanloopConfig,
    inputs=(
        Field("case", "Case", "textarea", "The appellant was convicted under a statute that never defines 'consent'. "
              "On appeal he argues the statute is void for vagueness."),
        Field("agent", "Panel (model ids, comma separated)", "models", "smollm2-135m, gemma3-270m"),
        Field("clerk", "Stance clerk", "model", "smollm2-135m"),
        Field("seat", "Your seat", "select", "shown",
              (("shown", "at the table, shown as Human"), ("blind", "at the table, shown as another judge"),
               ("none", "none (AI only)"))),
    ),
    prepare=_humanloop_inputs,
    start=_start_humanloop,
)


def _d3_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    model_list(values["juror"], "juror")
    try:
        budget = d3.parse_budget(str(values.get("budget") or ""))
    except ValueError as exc:
        raise FormError(f"budget: {exc}") from None
    return {"question": _text(values, "question"), "answer_a": _text(values, "answer_a"),
            "answer_b": _text(values, "answer_b"), "budget": budget}


def _start_d3(config: d3.D3Config, agents: Mapping[str, Agent], debate_id: str,
              channel: CommandChannel, person: PersonSeat) -> AsyncIterator[Event]:
    jurors = [agent for role, agent in agents.items() if role.startswith("juror-")]
    return d3.run(config, d3.D3Agents(agents["advocate"], agents["judge"], jurors), debate_id=debate_id, channel=channel)


D3 = ProtocolSpec(
    name="d3",
    title="D3 jury",
    summary="Advocates defend two answers, a judge scores, a jury votes; swap audit (seed 003).",
    config_cls=d3.D3Config,
    inputs=(
        Field("question", "Question", "textarea", "At what temperature does water boil at sea level?"),
        Field("answer_a", "Answer A", "text", "100 degrees Celsius."),
        Field("answer_b", "Answer B", "text", "About 50 degrees Celsius."),
        Field("advocate", "Advocates", "model", "smollm2-135m"),
        Field("judge", "Judge", "model", "gemma3-270m"),
        Field("juror", "Jurors (model ids, comma separated)", "models", "smollm2-135m, gemma3-270m"),
        Field("budget", "Token budget", "text", "6000", optional=True, help="e.g. 6000 or 6000,judge=2000"),
    ),
    prepare=_d3_inputs,
    start=_start_d3,
)

PROTOCOLS: dict[str, ProtocolSpec] = {spec.name: spec for spec in (EVINCE, SOCRASYNTH, CONFERENCE, DELIBERATION, HUMANLOOP, D3)}


async def load_agents(registry: Registry, roles: Mapping[str, str], stack: AsyncExitStack, *,
                      seed: int | None = None, on_progress: Callable[[str], None] = lambda _: None,
                      on_warning: Callable[[str], None] = lambda _: None) -> dict[str, Agent]:
    """Load each distinct model once (in a worker thread) and give every role its own agent
    (its own KV cache); the backends are closed when ``stack`` closes."""
    backends: dict[str, Backend] = {}
    for model_id in dict.fromkeys(roles.values()):
        entry = registry.get(model_id)
        on_progress(f"loading {entry.name} …")
        backend = await load_backend(entry, lambda stage, name=entry.name: on_progress(f"loading {name}: {stage}"))
        stack.push_async_callback(backend.aclose)
        if backend.privacy_warning:  # a server off this machine: the user must know
            on_warning(backend.privacy_warning)
        backends[model_id] = backend
    return {role: Agent(role, backends[mid], registry.get(mid).default_options().merged(seed=seed))
            for role, mid in roles.items()}


def resumable(debate: dict[str, Any]) -> tuple[ProtocolSpec, dict[str, str]]:
    """The spec that can continue ``debate`` and its roles' models; raises FormError if none."""
    if debate["status"] in ("finished", "stopped"):
        raise FormError(f"debate {debate['id']} is {debate['status']}; only an unfinished debate can be resumed")
    spec = PROTOCOLS.get(debate["protocol"])
    if spec is None or spec.resume is None:
        raise FormError(f"debate {debate['id']}: resuming a {debate['protocol']} debate is not supported yet")
    roles = {p["role"]: p["model_id"] for p in debate["participants"] if p["backend"] != "human"}
    return spec, roles
