"""One definition per protocol: the command line, the app's form and the
protocol's config are generated from it and must agree on every input, role and parameter.

For every protocol (and every variant, such as ``d3-more``):

* each input, role and parameter has its flag on ``symposium run <name>`` and its field on the
  New-debate form, under the same name, and nothing else is offered;
* the same values given through the form and through the command line build the same config
  and the same roles (so a parser that reads a value differently in one place fails here);
* a bad input is refused by both with a message naming it (the flag, or the field);
* the generated command starts the protocol: a whole run on a scripted backend, journalled with
  the roles the definition names.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core import roles as R
from protocols.core.agents import Agent
from protocols.core.definition import EVIDENCE, InputError, ProtocolDefinition, Variant
from protocols.core.evidence import EvidenceSettings
from protocols.core.moderation import Honoured
from protocols.core.params import params_of
from protocols.measures.labels import LabelSet
from protocols.registry import BY_NAME, PROTOCOLS
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tui.cli import main
from tui.cli import run as cli_run
from tui.cli.params import build_config
from tui.cli.parser import build_parser
from tui.errors import UserError
from tui.forms import DISABLED, TITLE_FIELD, FormError
from tui.protocol_catalog import SPECS

COMMANDS = [(d, None) for d in PROTOCOLS] + [(d, v) for d in PROTOCOLS for v in d.variants]


def _id(value: Any) -> str:
    return value.name if isinstance(value, (ProtocolDefinition, Variant)) else "-"


def run_parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    run = next(a for a in parser._subparsers._group_actions if a.dest == "command").choices["run"]  # type: ignore[union-attr]
    return next(a for a in run._subparsers._group_actions if a.dest == "protocol").choices[command]  # type: ignore[union-attr]


def dests(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.option_strings}


GENERIC = {"help", "seed", "title", "profile", "db", "models", "log_file", "verbose", cli_run.PERSON_SCRIPT, cli_run.PERSON_CONFIRM,
           # every protocol's evidence: the files, masking them first, and how many passages and claims
           EVIDENCE.name, "redact_evidence", *(p.name for p in params_of(EvidenceSettings))}


@pytest.mark.parametrize(("d", "variant"), COMMANDS, ids=_id)
def test_the_command_line_offers_exactly_the_definition(d: ProtocolDefinition, variant: Variant | None) -> None:
    """Each input, role, role switch and parameter is one flag with its name as dest; nothing else."""
    parser = run_parser(variant.name if variant else d.name)
    found = dests(parser)
    skip = set(variant.skip) if variant else set()
    expected = ({i.name for i in d.inputs} | {r.name for r in d.roles if r.kind != "person" or r.optional}
                | {r.disable for r in d.roles if r.disable} | {p.name for p in params_of(d.config_cls)} - skip)
    assert set(found) - GENERIC == expected
    for i in d.inputs:
        assert found[i.name].option_strings[0] == i.cli_flag and found[i.name].required == i.required, i.name
    for r in d.roles:
        if r.kind != "person":
            assert found[r.name].option_strings[0] == r.cli_flag, r.name


@pytest.mark.parametrize("d", PROTOCOLS, ids=_id)
def test_the_form_offers_exactly_the_definition(d: ProtocolDefinition) -> None:
    """Each input (bar headless-only ones), model role, optional seat and parameter is one field;
    a switch that a role's model turns on (SocraSynth's comparison with one answer) is that role's
    field alone: one option, one place."""
    spec = SPECS[d.name]
    names = [f.name for f in spec.fields]
    assert len(names) == len(set(names)), names
    switched_by_a_role = {r.enables for r in d.roles if r.enables}
    expected = ({i.name for i in d.inputs if i.form} | {r.name for r in d.roles if r.kind != "person" or r.optional}
                | {p.name for p in params_of(d.config_cls)} - switched_by_a_role
                | {"profile", TITLE_FIELD.name, EVIDENCE.name})
    assert set(names) == expected
    for f in spec.fields:
        if f.name in {i.name for i in d.inputs}:
            assert f.optional == (not d.input(f.name).required), f.name


#: Values that exercise every kind of input (a list, a switch, a number, a choice) beyond the form's examples.
#: A protocol not listed is checked with its form's defaults.
EXTRA: dict[str, dict[str, str]] = {
    "evince": {"top_k": "4", "scoring": "scored"},
    "socrasynth": {"temperature_a": "0.3", "judge": "m3, m4", "qa": "m5", "subtopics": "2"},
    "agreement": {"topics": "cost; who pays ; ", "evaluator": DISABLED, "max_rounds": "2"},
    "deliberation": {"analyzer": "m9", "person_name": "Ada"},
    "humanloop": {"labels": "guilty, not guilty, guilty", "human_seat": "1", "blind": "yes", "rounds": "2"},
    "d3": {"budget": "5000,judge=2000", "juror": "", "variant": "more", "k": "2"},
}


def form_values(d: ProtocolDefinition) -> dict[str, Any]:
    return {**SPECS[d.name].defaults(), "profile": "standard", **EXTRA.get(d.name, {})}


def argv_for(d: ProtocolDefinition, values: Mapping[str, Any]) -> list[str]:
    """The command line a person would type for the same ``values`` as the form holds."""
    argv = ["run", d.name]
    for i in d.inputs:
        value = str(values.get(i.name) or "")
        if i.kind == "bool":
            argv += [i.cli_flag] if value == "yes" else []
        elif value.strip():
            argv += [i.cli_flag, value]
    for r in d.roles:
        value = str(values.get(r.name) or "")
        if r.kind == "person":
            argv += [r.cli_flag] if r.optional and value == "yes" else []
        elif r.disable and value == DISABLED:
            argv += ["--" + r.disable.replace("_", "-")]
        elif value.strip():
            argv += [r.cli_flag, value]
    for p in params_of(d.config_cls):
        value = str(values.get(p.name) or "")
        if p.kind == "bool" and value:
            argv += [p.flag if value == "yes" else "--no-" + p.flag[2:]]
        elif value:
            argv += [p.flag, value]
    return argv


@pytest.mark.parametrize("d", PROTOCOLS, ids=_id)
def test_the_form_and_the_command_line_build_the_same_config_and_roles(d: ProtocolDefinition) -> None:
    values = form_values(d)
    spec = SPECS[d.name]
    from_form = spec.configure(values)
    args = build_parser().parse_args(argv_for(d, values))
    from_cli = build_config(d.config_cls, args, "standard", **d.prepared(cli_run.values_from(args, d)), **args.preset)
    from_cli = spec.titled(from_cli, {**cli_run.values_from(args, d), "title": getattr(args, "title", None)})
    assert from_cli.describe() == from_form.describe()
    assert d.role_models(cli_run.values_from(args, d)) == spec.roles_for(values)
    for name, value in EXTRA.get(d.name, {}).items():  # the extra values reached the config (or the roles)
        if name in d.parameter_names:
            assert str(getattr(from_form, name)) == {"yes": "True", "no": "False"}.get(value, value), name


def test_a_list_uses_one_convention_in_the_form_and_on_the_command_line() -> None:
    """The conference's stages: ';' between them in both, or the flag repeated on the command line."""
    d = BY_NAME["agreement"]
    typed = build_parser().parse_args(["run", "agreement", "--issue", "x", "--topics", "a; b", "--participants", "m1,m2", "--judge", "j"])
    repeated = build_parser().parse_args(["run", "agreement", "--issue", "x", "--topic", "a", "--topic", "b",
                                          "--participant", "m1", "--participant", "m2", "--judge", "j"])
    form = SPECS["agreement"].configure({**SPECS["agreement"].defaults(), "issue": "x", "topics": "a; b"})
    for args in (typed, repeated):
        assert d.prepared(cli_run.values_from(args, d))["topics"] == ["a", "b"] == form.topics
        assert d.role_models(cli_run.values_from(args, d)) == {"participant-1": "m1", "participant-2": "m2",
                                                                "judge": "j", "evaluator": "j"}


@pytest.mark.parametrize(("protocol", "changes", "name", "flag"), [
    ("evince", {"labels": "/nonexistent/labels.txt"}, "labels", "--labels"),
    ("agreement", {"participant": "only-one"}, "participant", "--participants"),
    ("d3", {"budget": "lots"}, "budget", "--budget"),
    ("humanloop", {"human": "no", "blind": "yes"}, "blind", "--blind"),
    ("socrasynth", {"agenda_file": "/nonexistent/agenda.txt"}, "agenda_file", "--agenda-file"),
])
def test_a_bad_input_is_refused_by_both_naming_it(protocol: str, changes: dict[str, str], name: str, flag: str) -> None:
    d = BY_NAME[protocol]
    values = {**SPECS[protocol].defaults(), **changes}
    label = next(f.label for f in SPECS[protocol].fields if f.name == name)  # the form names it as it labels it
    with pytest.raises(FormError, match=rf"^{re.escape(label)}: ") as refused:
        SPECS[protocol].roles_for(values)
        SPECS[protocol].configure(values)
    assert refused.value.field == name
    args = build_parser().parse_args(argv_for(d, values))
    with pytest.raises(UserError, match=rf"^{flag}: "):
        cli_run.run_protocol(args)


def test_roles_are_named_constants() -> None:
    assert (R.AGENT_A, R.AGENT_B, R.JUDGE, R.numbered(R.JUROR, 2)) == ("agent-a", "agent-b", "judge", "juror-2")
    assert R.in_order(["juror-10", "judge", "juror-2", "juror-1"], R.JUROR) == ["juror-1", "juror-2", "juror-10"]
    assert R.number_of("juror-x", R.JUROR) is None and R.number_of("judge-3", R.JUDGE) == 3


def test_moderator_commands_are_declared_per_protocol() -> None:
    """Contentiousness only where it is conditioned (EVINCE, SocraSynth); interjections to roles
    that read them."""
    honoured: dict[str, Honoured] = {d.name: d.commands for d in PROTOCOLS}
    assert {n for n, h in honoured.items() if h.contentiousness} == {"evince", "socrasynth"}
    assert honoured["evince"].interject == honoured["socrasynth"].interject == (R.AGENT_A, R.AGENT_B)


# -- each protocol starts from its generated command -----------------------------------------------

#: The smallest run of each protocol: (extra arguments, roles the journal must name).
RUNS: dict[str, list[str]] = {
    "evince": ["--case", "fever and a rash", "--labels", "open", "--agent-a", "m1", "--agent-b", "m2", "--judge", "m1",
               "--max-rounds", "0"],
    "socrasynth": ["--subject", "Ban cars downtown?", "--agent-a", "m1", "--agent-b", "m2", "--judges", "m1,m2",
                   "--max-rounds", "0", "--subtopics", "1", "--no-case-check", "--temperature-a", "0.2"],
    "agreement": ["--issue", "A library?", "--topic", "cost", "--participant", "m1", "--participant", "m2",
                  "--judge", "m1", "--max-rounds", "1"],
    "deliberation": ["--topic", "Phones at school?", "--moderator", "m1", "--deliberators", "m1,m2", "--max-turns", "2",
                     "--no-analysis"],
    "humanloop": ["--case", "A vague statute.", "--agents", "m1,m2", "--rounds", "1"],
    "d3-samre": ["--question", "Boiling point?", "--answer-a", "100 C", "--answer-b", "50 C", "--advocate", "m1",
                 "--judge", "m2", "--jurors", "m1", "--max-rounds", "1", "--jury-size", "1"],
    "d3": ["--question", "Boiling point?", "--answer-a", "100 C", "--answer-b", "50 C", "--advocate", "m1",
           "--judge", "m2", "--variant", "samre", "--max-rounds", "1", "--jury-size", "1"],
    "d3-more": ["--question", "Boiling point?", "--answer-a", "100 C", "--answer-b", "50 C", "--advocate", "m1",
                "--judge", "m2", "--k", "1", "--jury-size", "1"],
}


@pytest.fixture
def scripted_agents(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``symposium run`` on scripted models (every reply ``{}``): fast, and what was loaded is kept."""
    loaded: dict[str, str] = {}

    @asynccontextmanager
    async def fake(registry: Any, roles: Mapping[str, str], *, seed: int | None = None,
                   console: Any = None) -> AsyncIterator[dict[str, Agent]]:
        loaded.update(roles)
        backends = {m: ScriptedBackend(m, []) for m in set(roles.values())}
        yield {role: Agent(role, backends[m], SamplingOptions(seed=seed)) for role, m in roles.items()}

    monkeypatch.setattr(cli_run, "loaded_agents", fake)
    return loaded


@pytest.mark.parametrize("command", list(RUNS))
def test_each_protocol_starts_from_the_generated_command(command: str, tmp_path: Path, scripted_agents: dict[str, str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "turns.txt"
    script.write_text("I would keep phones out of class.\n/end\n", encoding="utf-8")
    extra = ["--human-script", str(script)] if command == "deliberation" else []
    db = tmp_path / "j.db"
    code = main(["--db", str(db), "run", command, *RUNS[command], *extra, "--seed", "1"])
    d = BY_NAME[command]
    with Journal(db) as journal:
        queries = Queries(journal)
        debate = queries.debate(queries.debates()[0]["id"])
    assert debate is not None and debate["protocol"].startswith(d.name if d.name != "agreement" else "")
    assert debate["status"] in ("finished", "stopped", "failed"), debate["status"]
    assert code == (0 if debate["status"] in ("finished", "stopped") else 1)
    participants = {p["role"] for p in debate["participants"]}
    expected = set(d.role_models(cli_run.values_from(build_parser().parse_args(["run", command, *RUNS[command]]), d)))
    assert set(scripted_agents) == expected
    named = {r for r in expected if not any(r.startswith(p) for p in ("advocate", "judge-", "clerk", "juror-", R.QA))}
    assert named <= participants | {"analyzer", "evaluator", R.JUDGE, R.MODERATOR}, (named, participants)
    if command == "socrasynth":  # a sampling input reached its role's agent
        a = next(p for p in debate["participants"] if p["role"] == R.AGENT_A)
        assert a["options"]["temperature"] == 0.2


def test_a_bad_input_on_the_command_line_is_one_line_naming_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     scripted_agents: dict[str, str]) -> None:
    args = ["--db", str(tmp_path / "j.db"), "run", "agreement", "--issue", "x", "--participants", "m1", "--judge", "j"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.strip() == "error: --participants: name 2 or more models, separated by commas", err
    assert scripted_agents == {}  # refused before any model was loaded


def test_input_errors_name_the_input() -> None:
    with pytest.raises(InputError, match="^case: required$"):
        BY_NAME["evince"].input("case").value("  ")


def test_an_agenda_file_is_journalled_with_the_config_and_edits_the_agenda(tmp_path: Path, scripted_agents: dict[str, str]) -> None:
    """SocraSynth's ``--agenda-file`` is part of the config (so a resumed run can rebuild it from
    the journal) and replaces the agreed subtopics, as the moderator's edit would."""
    agenda = tmp_path / "agenda.txt"
    agenda.write_text("Cost: who pays\nAir quality\n", encoding="utf-8")
    db = tmp_path / "j.db"
    main(["--db", str(db), "run", "socrasynth", *RUNS["socrasynth"], "--agenda-file", str(agenda)])
    with Journal(db) as journal:
        queries = Queries(journal)
        debate = queries.debate(queries.debates()[0]["id"])
    assert debate is not None
    expected = [{"title": "Cost", "description": "who pays"}, {"title": "Air quality", "description": ""}]
    assert debate["config"]["agenda"] == expected
    edits = [m for m in debate["moderator_events"] if m["kind"] == "edit_agenda"]
    assert edits and edits[0]["payload"]["after"] == expected
    rebuilt = BY_NAME["socrasynth"].config_cls(subject=debate["config"]["subject"], agenda=debate["config"]["agenda"])
    assert [s.title for s in rebuilt.agenda] == ["Cost", "Air quality"]


@pytest.mark.parametrize("d", PROTOCOLS, ids=_id)
def test_each_config_is_rebuilt_from_what_it_journals(d: ProtocolDefinition, tmp_path: Path) -> None:
    """A resume runs ``definition.run`` again under the journalled config: it must come back
    equal, every input included (a script, an agenda, a budget, a class set)."""
    values = form_values(d)
    if d.name == "humanloop":
        script = tmp_path / "script.txt"
        script.write_text("stance: guilty\nI would convict.\n---\nStill guilty.\n", encoding="utf-8")
        values |= {"human": "no", "human_script": str(script), "binary_label": "guilty"}
    if d.name == "socrasynth":
        agenda = tmp_path / "agenda.txt"
        agenda.write_text("Cost: who pays\n", encoding="utf-8")
        values |= {"agenda_file": str(agenda)}
    config = SPECS[d.name].configure(values)
    stored = json.loads(json.dumps(config.describe(), ensure_ascii=False, default=str))  # as store.journal keeps it
    rebuilt = d.config_from_journal(stored)
    assert rebuilt.describe() == config.describe()
    for f in dataclasses.fields(config):  # field by field too: describe() may leave a value out
        mine, again = getattr(config, f.name), getattr(rebuilt, f.name)
        if isinstance(mine, LabelSet):
            assert isinstance(again, LabelSet) and again.labels == mine.labels, f.name
        elif not callable(mine):
            assert again == mine, f.name
    assert json.loads(json.dumps(rebuilt.describe(), default=str)) == stored
