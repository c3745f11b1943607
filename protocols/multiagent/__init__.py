"""Multiagent debate (Du, Li, Torralba, Tenenbaum and Mordatch, "Improving Factuality and
Reasoning in Language Models through Multiagent Debate", 2023, arXiv:2305.14325).

The paper's procedure, as :mod:`protocols.multiagent.run` runs it::

    each of n agents answers the question on its own                    (round 0)
    for r in 1 … R:                                                     (debate rounds)
        each agent reads the other agents' latest answers and, "using the reasoning from
        other agents as additional advice", gives an updated answer
    the final answer is the majority of the agents' last answers

The paper ran 3 agents and 2 debate rounds (its section 3) and reports accuracy rising with
both; those are the defaults. Where the paper is silent, Symposium decides (each a parameter
or written here): answers are read as JSON (``answer``, ``reasoning``); with a class set the
answer is mapped to its label (as EVINCE's are) and the vote's shares are the debate's
distribution, so the diagnosis benchmark can score it; a tie has no majority (said, not
broken at random); the moderator may interject, pause, skip to the vote or stop; with the
user's evidence, each answer is shown the passages most relevant to the question and to the
other agents' answers, and lists its claims with their sources, each checked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from protocols.core.agents import Agent
from protocols.core.definition import Conclusion, Diagnosis, Input, ProtocolDefinition, Role
from protocols.core.events import Event
from protocols.core.evidence import Grounding
from protocols.core.moderation import CommandChannel, Honoured
from protocols.core.params import Profile, build
from protocols.core.roles import numbered
from protocols.measures.labels import LABEL_SOURCES, LabelSet, read_label_set
from protocols.multiagent.config import AGENT, MultiagentConfig
from protocols.multiagent.present import present
from protocols.multiagent.run import Multiagent
from protocols.multiagent.sample import SAMPLES

HONOURED = Honoured(interject=(f"{AGENT}-",), skip_to="the vote: no further rounds")


def conclude(outcome: Mapping[str, Any]) -> Conclusion:
    """What the debate concluded: the majority answer and its votes, or that there was none."""
    votes = outcome.get("votes") or {}
    total = sum(votes.values())
    majority = outcome.get("majority")
    rounds = outcome.get("rounds")
    after = f" after {rounds} debate round{'s' if rounds != 1 else ''}" if isinstance(rounds, int) else ""
    if majority:
        unanimous = " unanimously" if votes.get(majority) == total else ""
        return Conclusion(f"The agents answered {majority}{unanimous}{after} ({votes.get(majority)} of {total} votes).",
                          f"{majority} ({votes.get(majority)}/{total})")
    if not total:
        return Conclusion(f"No agent gave a readable answer{after}.", "no answer")
    return Conclusion(f"The agents did not agree on a majority answer{after}: {', '.join(f'{a} {n}' for a, n in votes.items())}.",
                      "no majority")


def _team(agents: Mapping[str, Agent]) -> list[Agent]:
    count = sum(1 for role in agents if role.startswith(f"{AGENT}-"))
    return [agents[numbered(AGENT, i)] for i in range(1, count + 1)]


def _start(config: MultiagentConfig, team: list[Agent], debate_id: str, channel: CommandChannel, person: Any,
           evidence: Grounding) -> AsyncIterator[Event]:
    return Multiagent(config, team, debate_id=debate_id, channel=channel, evidence=evidence).run()


def _diagnosis(case: str, labels: LabelSet | None, profile: Profile) -> MultiagentConfig:
    """The diagnosis benchmark's question for one case: the case, then the paper's kind of
    question, answered from the benchmark's label set."""
    return build(MultiagentConfig, {"question": f"{case.strip()}\n\nWhat is the most likely diagnosis?", "labels": labels},
                 profile=profile)


#: In the diagnosis benchmark, three agents as the paper ran: the two models, and model A again.
DIAGNOSIS = Diagnosis(_diagnosis, lambda a, b: {numbered(AGENT, 1): a, numbered(AGENT, 2): b, numbered(AGENT, 3): a})


DEFINITION = ProtocolDefinition(
    name="multiagent",
    title="Multiagent debate",
    summary="Agents answer, read each other's answers for a few rounds, and the majority answer wins (Du et al. 2023).",
    config_cls=MultiagentConfig,
    inputs=(
        Input("question", "Question", "textarea", example="A patient presents with fever, a rash and pain behind the eyes "
                                                          "after a trip to the tropics. What is the most likely diagnosis?",
              help="the question every agent answers: text, or @FILE"),
        Input("labels", "Answers allowed", "select", default="open", choices=tuple(LABEL_SOURCES.items()), open_choice=True,
              parse=read_label_set, help="a class set the answer must come from (a built-in set or a file), or 'open'"),
    ),
    roles=(Role(AGENT, "Agents", "models", minimum=2, example="smollm2-135m, gemma3-270m, smollm2-135m",
                help="two or more models, separated by commas (the paper: three)"),),
    prepare=lambda v: {"question": v["question"], "labels": v["labels"]},
    team=_team,
    start=_start,
    commands=HONOURED,
    conclude=conclude,
    present=present,
    samples=SAMPLES,
    diagnosis=DIAGNOSIS,
)
