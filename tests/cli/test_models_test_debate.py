"""``symposium models test ID --debate``: the per-step tallies against a
scripted backend (exact bad replies: prose, a label outside the class set, an unparseable CRIT,
a reply cut off), then the real check on the bundled SmolLM2."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from backends.base import SamplingOptions
from protocols import evince
from protocols.core.events import CallRecord, TurnFinished
from protocols.core.params import defaults
from protocols.measures.labels import LabelSet
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli.health_debate import LABELS, DebateCheck, _record, debate_check


def _reply(*labels: str) -> str:
    share = round(1 / len(labels), 3)
    return json.dumps({"predictions": [{"label": l, "probability": share, "argument": f"fits {l}"} for l in labels],
                       "arguments": ["fever every other day after travel"]})


async def test_tallies_count_what_went_wrong() -> None:
    # EVINCE judges each turn right after it (its quality gate), and a turn without a prediction
    # is not judged.
    replies = [_reply("Malaria", "Dengue"),        # A's opening: valid, both labels in the set
               "no", "no",                          # CRIT of A, retried once: no score
               "It is malaria, surely.",            # B's opening: prose (not judged)
               _reply("Malaria", "Cholera"),        # A's refutation: one label outside the class set
               "no", "no",                          # its CRIT: no score
               _reply("Typhoid")]                   # B's refutation: valid
    backend = ScriptedBackend("scripted", replies)  # then "{}" for every later call: a CRIT without a score
    report = await debate_check(backend, SamplingOptions(max_tokens=64))
    assert report.error is None, report.error
    steps = report.steps
    assert list(steps) == ["opening turns", "refutation turns", "CRIT judgements"]
    assert (steps["opening turns"].calls, steps["opening turns"].valid_json) == (2, 1)
    assert (steps["opening turns"].labels_named, steps["opening turns"].labels_inside) == (2, 2)
    assert (steps["refutation turns"].calls, steps["refutation turns"].valid_json) == (2, 2)
    assert (steps["refutation turns"].labels_named, steps["refutation turns"].labels_inside) == (3, 2)
    assert (steps["CRIT judgements"].calls, steps["CRIT judgements"].valid_json) == (6, 0)  # 3 judged turns, each retried
    assert not report.usable


@pytest.mark.parametrize("profile", ["standard", "small"])
async def test_the_check_runs_at_the_token_limits_of_the_models_profile(profile: str) -> None:
    """A debate with a bundled (``small``) model uses the small profile's limits, and so must
    its check; a 7-70B model's check uses the full ones."""
    backend = ScriptedBackend("scripted", [_reply("Malaria")] * 2)
    await debate_check(backend, SamplingOptions(max_tokens=64), profile=profile)  # type: ignore[arg-type]
    expected = defaults(evince.EvinceConfig, profile)["turn_tokens"]  # type: ignore[arg-type]
    assert backend.options[0].max_tokens == expected


def test_a_reply_cut_off_by_the_token_limit_is_counted() -> None:
    report = DebateCheck()
    call = CallRecord("agent-a", "m", "turn", {}, prompt_tokens=100, prompt_tokens_evaluated=30, completion_tokens=11,
                      duration_s=1.5, first_token_s=0.5, finish_reason="length")
    event = TurnFinished("d", "agent-a", "m", "p", 1, "refutation", text="", raw='{"predictions": [', call=call)
    _record(report, event, LabelSet(LABELS))
    step = report.steps["refutation turns"]
    assert (step.cut_off, step.valid_json, step.prompt_reused, step.tokens_per_s) == (1, 0, 70, pytest.approx(10.0))


@pytest.mark.model
async def test_debate_check_on_the_bundled_model(registry) -> None:
    """The real check: every step reported, and the refutations (each agent's second turn,
    which extends its first) take most of their prompt from the KV cache, the per-agent reuse
    every debate relies on."""
    from tui.cli.health_debate import check_debate
    from tui.cli.models import print_debate_check

    report = await check_debate(registry.get("smollm2-135m"), timeout=120)
    assert report.error is None, report.error
    refutations = report.steps["refutation turns"]
    assert refutations.calls == 2 and refutations.prompt_reused > refutations.prompt_tokens / 2
    # Only turns that name a prediction are judged, and a 135M model does not always name one:
    # a CRIT step with calls whenever some turn was valid (the exact tallies: the scripted test).
    crit = report.steps.get("CRIT judgements")
    valid = report.steps["opening turns"].valid_json + refutations.valid_json
    assert report.steps["opening turns"].calls == 2 and ((crit is not None and crit.calls >= 1) or valid == 0)
    assert report.steps["opening turns"].tokens_per_s
    out = io.StringIO()
    print_debate_check(Console(file=out, width=200), "smollm2-135m", report, 1.0)
    text = out.getvalue()
    for header in ("valid JSON", "labels in class set", "cut off by token limit", "prompt reused", "tok/s",
                   "opening turns", "refutation turns", "the debate ended", *(["CRIT judgements"] if crit else [])):
        assert header in text
