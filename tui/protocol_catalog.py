"""The protocols the app and the command line can start, as New-debate forms, and which of
them can resume a journalled debate.

One :class:`~tui.forms.ProtocolSpec` per protocol: its inputs (what it works on, which model
plays which role), how the form's values become its config, and how agents by role start (or
resume) its run. The order of :data:`PROTOCOLS` is the order the New-debate form lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any

from protocols import conference, d3, deliberation, evince, humanloop, socrasynth
from protocols.agents import Agent
from protocols.events import Event
from protocols.moderation import CommandChannel

from tui.forms import LABEL_SOURCES, Field, FormError, PersonSeat, ProtocolSpec, load_labels, model_list

DEMO_CASE = (
    "A patient presents with itching, vomiting, fatigue, weight loss, high fever, yellowish skin, "
    "dark urine and abdominal pain."
)


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


def resumable(debate: dict[str, Any]) -> tuple[ProtocolSpec, dict[str, str]]:
    """The spec that continues ``debate`` and its roles' models (in the form's roles); raises
    FormError, naming the debate, when it cannot be resumed. Every protocol can: a run is resumed
    by replaying its journal (:mod:`protocols.replay`)."""
    if debate["status"] in ("finished", "stopped"):
        raise FormError(f"debate {debate['id']} is {debate['status']}; only an unfinished debate can be resumed")
    # A protocol may journal its variant too (D3: "d3-samre", "d3-more").
    spec = PROTOCOLS.get(debate["protocol"]) or PROTOCOLS.get(debate["protocol"].split("-", 1)[0])
    if spec is None:
        raise FormError(f"debate {debate['id']}: its protocol {debate['protocol']!r} is not one this Symposium runs "
                        f"({', '.join(PROTOCOLS)}); open it with `symposium show` instead")
    if debate.get("events_recorded") is None:
        raise FormError(f"debate {debate['id']} was journalled before Symposium kept its models' replies (journal "
                        "layout v5), so it cannot be resumed exactly; start it again")
    return spec, spec.roles_from(debate["participants"])
