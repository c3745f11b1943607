"""A working skeleton of a protocol, to copy. It is not registered: Symposium does not offer it.

To add a protocol:

1. ``cp -r protocols/_template protocols/yours`` and rename ``template`` throughout (the
   definition's ``name`` is the command ``symposium run yours`` and the journal's protocol).
2. Write what the protocol does in ``run.py`` (an async generator of events, as the paper's
   pseudo-code reads), its settings in ``config.py``, what a model's reply must look like in
   ``schemas.py``, what it found in ``present.py`` and a small run in ``sample.py``.
3. Add ``yours.DEFINITION`` to ``PROTOCOLS`` in ``protocols/registry.py`` and write
   ``docs/protocols/yours.md`` (the paper says | Symposium does | why).

Then ``symposium run yours``, the app's New-debate form, resume, the moderator's commands, the
report and ``show`` all offer it, and the contract tests (every one generated from the
registry) say what is left: resume at every cut with the prompts of an uninterrupted run, each
moderator command it declares through the app, crashes at any turn, every context drop
journalled, its report in a real browser.

This skeleton: each agent answers the question once, in turn; the outcome lists the answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from protocols._template.config import TemplateConfig
from protocols._template.present import present
from protocols._template.run import Template
from protocols._template.sample import SAMPLES
from protocols.core.agents import Agent
from protocols.core.definition import Conclusion, Input, ProtocolDefinition, Role
from protocols.core.events import Event
from protocols.core.evidence import Grounding
from protocols.core.moderation import CommandChannel, Honoured

#: The roles: a numbered list of agents (``agent-1``, ``agent-2`` …). Use the shared names of
#: ``protocols/core/roles.py`` where one fits.
AGENT = "agent"

#: The moderator's commands the protocol honours: every interface offers exactly these.
HONOURED = Honoured(interject=(f"{AGENT}-",), skip_to="the end: the agents not yet heard are skipped")


def conclude(outcome: Mapping[str, Any]) -> Conclusion:
    """What the run concluded, in words (Home's outcome column, ``show``, the report)."""
    answers = outcome.get("answers") or {}
    return Conclusion(f"{len(answers)} agent(s) answered.", f"{len(answers)} answer(s)")


def _start(config: TemplateConfig, team: list[Agent], debate_id: str, channel: CommandChannel, person: Any,
           evidence: Grounding) -> AsyncIterator[Event]:
    return Template(config, team, debate_id=debate_id, channel=channel, evidence=evidence).run()


DEFINITION = ProtocolDefinition(
    name="template",
    title="Template",
    summary="A skeleton to copy: each agent answers the question once.",
    config_cls=TemplateConfig,
    inputs=(Input("question", "Question", "textarea", example="Should the clinic open on Sundays?",
                  help="what the agents answer: text, or @FILE"),),
    roles=(Role(AGENT, "Agents", "models", minimum=1, example="smollm2-135m, gemma3-270m",
                help="one or more models, separated by commas"),),
    prepare=lambda v: {"question": v["question"]},
    team=lambda agents: [agents[role] for role in sorted(agents)],
    start=_start,
    commands=HONOURED,
    conclude=conclude,
    present=present,
    samples=SAMPLES,
)
