"""``symposium run PROTOCOL …``: a whole debate, headless, streamed to the terminal and journalled.

Every sub-command and every flag is generated from the protocols' definitions
(:data:`protocols.registry.PROTOCOLS`), and one handler, :func:`run_protocol`, runs them all:

* each input is a flag ``--name`` (``--answer-a``); text inputs take ``@FILE`` too, and ``-``
  for standard input (:func:`read_stdin_inputs`: a case kept out of the command line); a list input
  takes its items separated as the input says (the conference's topics: ``;``) or the flag
  repeated (``--topic A --topic B``); a yes/no input is a switch;
* each model role is ``--role MODEL`` (``--agent-a``); a list of models is one flag with model
  ids separated by commas, which may also be repeated (``--judges M1,M2`` or
  ``--participant M1 --participant M2``); an optional role left out takes the model of the
  role it falls back on, and ``--no-…`` leaves it out (``--no-evaluation``);
* the person's seat reads stdin, or a script where the role declares a ``--…-script`` flag;
  an optional seat is taken with its switch (``--human``);
* the parameters come from the config (see :mod:`tui.cli.params`), with ``--profile``;
  ``--seed`` seeds sampling;
* ``--evidence PATH`` (repeatable; a file or a folder) grounds the debate in the user's files,
  read before any model loads so that an unreadable file stops it with its reason
  (:mod:`tui.evidence`); ``--redact-evidence`` masks identifiers before indexing.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from backends.registry import load_registry
from protocols.core.definition import EVIDENCE, Input, InputError, ProtocolDefinition, Role, Variant
from protocols.core.evidence import EvidenceSettings
from protocols.core.params import ParamError, params_of
from protocols.registry import PROTOCOLS, definition
from store.journal import new_debate_id
from tui.cli.commands import help_for
from tui.cli.params import add_param_flags, build_config, given, param_help
from tui.cli.seats import headless_person
from tui.errors import UserError
from tui.evidence import EvidenceError, read_evidence, summary
from tui.headless.session import loaded_agents, resolve_profile, run_headless
from tui.headless.signals import run_command
from tui.protocol_catalog import SPECS

#: Where the person's script and confirmation flags land in the parsed arguments.
PERSON_SCRIPT, PERSON_CONFIRM = "person_script", "person_confirm"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help=help_for("run"))
    protocols = run.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)
    for d in PROTOCOLS:
        add_protocol(protocols, d)
        for variant in d.variants:
            add_protocol(protocols, d, variant)


def add_protocol(protocols: argparse._SubParsersAction, d: ProtocolDefinition,
                 variant: Variant | None = None) -> argparse.ArgumentParser:
    """The sub-command of ``d`` (or of one of its variants), its flags generated from ``d``."""
    p = protocols.add_parser(variant.name if variant else d.name, help=variant.help if variant else d.summary,
                             description=d.summary)
    for i in d.inputs:
        if i.sampling is None:
            _add_input(p, i)
    for role in d.roles:
        _add_role(p, role)
    for i in d.inputs:
        if i.sampling is not None:
            _add_input(p, i)
    p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    if "title" in {f.name for f in dataclasses.fields(d.config_cls)}:
        p.add_argument("--title", metavar="TEXT", help="the debate's title in `symposium history`, the app and reports "
                                                       "(default: the case's first words when they hold no identifier, "
                                                       "else a neutral title)")
    add_evidence_flags(p)
    add_param_flags(p, d.config_cls, skip=variant.skip if variant else ())
    p.set_defaults(handler=run_protocol, definition=variant.name if variant else d.name,
                   preset=dict(variant.values) if variant else {})
    return p


def add_evidence_flags(p: argparse.ArgumentParser) -> None:
    """``--evidence`` (every protocol's, declared once: :data:`protocols.core.definition.EVIDENCE`),
    ``--redact-evidence`` and the evidence settings' parameters."""
    group = p.add_argument_group("evidence", "the user's own files, which the agents argue from and cite; every citation "
                                             "is checked against the passage it names")
    group.add_argument(EVIDENCE.cli_flag, dest=EVIDENCE.name, action="append", metavar="PATH",
                       help=_help(EVIDENCE.help + REPEATED))
    group.add_argument("--redact-evidence", action="store_true",
                       help="mask identifiers (names, dates, numbers …: see --redact) in the evidence before it is indexed, "
                            "so the journal never holds them; the counts are printed")
    small = EvidenceSettings.SMALL_MODEL_PROFILE
    for info in params_of(EvidenceSettings):
        group.add_argument(info.flag, dest=info.name, default=None, metavar="N", help=param_help(info, small))


#: Said after the help of a flag that may be given more than once (the help texts are shared
#: with the app's form, where there are no flags).
REPEATED = "; the flag may be repeated"


def _help(text: str, default: Any = None) -> str:
    extra = f" (default: {default})" if default not in (None, "") else ""
    return (text + extra).replace("%", "%%")


def _add_input(p: argparse.ArgumentParser, i: Input) -> None:
    flags = (i.cli_flag, *i.aliases)
    if i.kind == "bool":
        p.add_argument(*flags, dest=i.name, action="store_true", default=None, help=_help(i.help))
    elif i.kind == "list":
        p.add_argument(*flags, dest=i.name, action="append", metavar=i.metavar or "ITEMS", required=i.required,
                       help=_help(i.help + REPEATED, i.default))
    else:
        metavar = i.metavar or {"int": "N", "float": "X", "file": "FILE"}.get(i.kind, "TEXT")
        text = i.help + ("; - reads it from standard input (kept out of the command line, which other accounts "
                         "can read)" if i.kind in ("text", "textarea") else "")
        p.add_argument(*flags, dest=i.name, metavar=metavar, required=i.required, default=None,
                       help=_help(text, i.default))


def _add_role(p: argparse.ArgumentParser, role: Role) -> None:
    flags = (role.cli_flag, *role.aliases)
    if role.kind == "person":
        if role.optional:
            p.add_argument(*flags, dest=role.name, action="store_true", default=None, help=_help(role.help))
        if role.script_flag:
            p.add_argument(role.script_flag, dest=PERSON_SCRIPT, metavar="FILE", help=_help(role.script_help))
        if role.confirms:
            p.add_argument("--confirm", dest=PERSON_CONFIRM, default="accept", metavar="accept|ask|FILE",
                           help="labels read from your words: accept as extracted, ask on the terminal, or take "
                                "answers from a file (one line per step: blank keeps the extracted label)")
        return
    required = not role.optional and role.fallback is None
    if role.kind == "models":
        p.add_argument(*flags, dest=role.name, action="append", metavar="M1,M2,…", required=required,
                       help=_help(role.help + REPEATED))
    else:
        p.add_argument(*flags, dest=role.name, metavar="MODEL", required=required, help=_help(role.help))
    if role.disable:
        p.add_argument("--" + role.disable.replace("_", "-"), dest=role.disable, action="store_true",
                       help=_help(role.disable_help))


def flag_for(d: ProtocolDefinition, name: str) -> str:
    """The command-line flag of an input, a role or a role's ``--no-…`` switch named ``name``."""
    for i in d.inputs:
        if i.name == name:
            return i.cli_flag
    for role in d.roles:
        if role.name == name:
            return role.cli_flag
        if role.disable == name:
            return "--" + name.replace("_", "-")
    return name


def values_from(args: argparse.Namespace, d: ProtocolDefinition) -> dict[str, Any]:
    """The inputs' and roles' values as argparse read them, by their names in ``d`` (and the
    switches that decide whether a role is played)."""
    given = vars(args)
    names = ([i.name for i in d.inputs] + [r.name for r in d.roles] + [r.disable for r in d.roles if r.disable]
             + [r.enables for r in d.roles if r.enables])
    return {name: given.get(name) for name in names}


#: A text input's value that means "read it from standard input" (``--case -``).
STDIN = "-"


def read_stdin_inputs(d: ProtocolDefinition, args: argparse.Namespace, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with a text input given as ``-`` read from standard input, where no one else
    reads it. Why offer it: a case typed as ``--case "…"`` is in the command line, which every
    account on the machine can read (``/proc/PID/cmdline``, ``ps``) and the shell keeps in its
    history; from standard input (or ``@FILE``) it is in neither."""
    asked = [i for i in d.inputs if i.kind in ("text", "textarea") and values.get(i.name) == STDIN]
    if not asked:
        return values
    if len(asked) > 1:
        raise UserError(f"{' and '.join(i.cli_flag for i in asked)}: only one input can be read from standard input "
                        "(-); give the others as @FILE")
    flag = asked[0].cli_flag
    person = d.person_role()
    if person is not None and (not person.optional or values.get(person.name)) and not getattr(args, PERSON_SCRIPT, None):
        raise UserError(f"{flag} -: standard input is where you take your turns in this debate; give the text as @FILE")
    if sys.stdin is None or sys.stdin.isatty():
        Console(stderr=True, highlight=False).print(f"{flag}: type or paste the text, then Ctrl-D on a line of its own",
                                                   style="dim")
    text = sys.stdin.read() if sys.stdin is not None else ""
    if not text.strip():
        raise UserError(f"{flag} -: standard input was empty; pipe the text in (symposium run … {flag} - < case.txt) "
                        "or give it as @FILE")
    return values | {asked[0].name: text}


def run_protocol(args: argparse.Namespace) -> int:
    """The one handler of ``symposium run``: values → roles and config → agents → team → run."""
    d = definition(args.definition)
    values = read_stdin_inputs(d, args, values_from(args, d))
    try:
        roles = d.role_models(values)
        prepared = d.prepared(values)
    except InputError as exc:
        raise UserError(f"{flag_for(d, exc.name)}: {exc.problem}") from None
    registry = load_registry(args.models)
    profile = resolve_profile(args, registry, roles.values())
    config = build_config(d.config_cls, args, profile, **prepared, **args.preset)
    config = SPECS[d.name].titled(config, {**values, "title": getattr(args, "title", None)})
    grounding = None
    if getattr(args, EVIDENCE.name, None):
        try:
            settings = EvidenceSettings.of(given(args, EvidenceSettings), profile)
        except ParamError as exc:
            raise UserError(f"--{exc.name.replace('_', '-')}: {exc.problem}") from None
        try:
            grounding, notes = read_evidence(EVIDENCE.value(getattr(args, EVIDENCE.name)), settings,
                                             redact=bool(getattr(args, "redact_evidence", False)))
        except (EvidenceError, InputError) as exc:
            raise UserError(f"{EVIDENCE.cli_flag}: {exc}") from None
        said = Console(stderr=True, highlight=False)
        for line in [*notes, summary(grounding)]:
            said.print(Text(line, style="dim"), soft_wrap=True)
    if d.warnings is not None:
        for warning in d.warnings(roles):
            Console(stderr=True, highlight=False).print(Text(f"warning: {warning}", style="yellow"), soft_wrap=True)
    person_role = d.person_role()
    person = None
    if person_role is not None:
        person = headless_person(person_role, getattr(args, PERSON_SCRIPT, None), getattr(args, PERSON_CONFIRM, None))

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            debate_id = new_debate_id()
            team = d.team(d.tune(agents, values))
            return await run_headless(args.db, debate_id, d.run(config, team, debate_id=debate_id, person=person,
                                                                evidence=grounding))

    return run_command(run())  # SIGTERM and SIGHUP end it as Ctrl-C does (resumable)
