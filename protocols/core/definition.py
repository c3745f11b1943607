"""One definition per protocol, from which every interface is generated.

A :class:`ProtocolDefinition` says, once, what a protocol needs to start: its config class (the
parameters, declared with :func:`~protocols.core.params.param`), its **inputs** (what it works on: a
case, a subject, a file …), its **roles** (who plays: one model, a numbered list of models, or
the person), how input values become the config's non-parameter values, how its team is built
from agents by role, how a run starts, and which moderator commands it honours. The command
line (``symposium run <name>``), the app's New-debate form, the benchmarks and the tests are all
generated from it, so they cannot drift apart: a flag, a form field and the config's field are
one declaration.

Nothing here knows argparse, Textual or SQL. Values arrive as the interfaces hold them (strings
from a flag or a form field, ``True`` from a switch, a list from a repeated flag) and are parsed
here; a bad value raises :class:`InputError` naming the input, which each interface words in its
own terms (a flag, a field).

``run(config, team, *, debate_id, channel, person)`` is a pure function of its arguments: the
config holds everything that was chosen (and is journalled), the team holds the agents, the
person is the live seat. A resume re-runs it under a replay of the journal.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backends.values import SamplingOptions
from protocols.core import replay
from protocols.core.agents import Agent
from protocols.core.events import Event
from protocols.core.evidence import NO_EVIDENCE, Grounding, attach
from protocols.core.moderation import CommandChannel, Honoured
from protocols.core.params import NO, YES, ParamError, Profile, build, from_description, params_of
from protocols.core.present import Section
from protocols.core.roles import numbered
from protocols.core.sample import Sample

InputKind = Literal["text", "textarea", "select", "file", "list", "int", "float", "bool"]
RoleKind = Literal["model", "models", "person"]

#: The person's voice: given the prompt, their words; ``None`` leaves (ends their part).
Speak = Callable[[str], Awaitable["str | None"]]
#: The person confirming a label read from a statement: ``(label, statement) -> label``.
Confirm = Callable[["str | None", str], Awaitable["str | None"]]
#: The moderator editing what a protocol proposes (SocraSynth's agreed agenda): ``(question,
#: text, check)`` -> the edited text, or ``None`` to keep the proposal. ``check(text)`` says what
#: is wrong with an edit (``None``: nothing), so the interface can ask again before it answers.
Edit = Callable[[str, str, Callable[[str], "str | None"]], Awaitable["str | None"]]


class InputError(ValueError):
    """An input's (or a role's) value is invalid. ``name`` is the input's name; each interface
    turns it into its own word for it (``--judges``, the form's "Judges" field)."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass(frozen=True)
class Person:
    """The person at the table, as an interface seats them: the app's dialog, stdin, a script.

    ``confirm`` (optional) lets the person confirm a label a clerk read from their statement
    (humanloop's stances); interfaces that cannot ask leave it ``None`` (labels stand as read).
    """

    speak: Speak
    confirm: Confirm | None = None


def confirm_from_lines(lines: Iterable[str]) -> Confirm:
    """A scripted person confirming labels: each step consumes one line. A blank line, ``=`` or
    ``accept`` keeps the label read; anything else is the label to record (checked as a
    clerk's answer is). When the lines run out, every later label is accepted."""
    answers: Iterator[str] = iter(list(lines))

    async def confirm(label: str | None, text: str) -> str | None:
        answer = next(answers, "").strip()
        return label if answer.casefold() in ("", "=", "accept") else answer

    return confirm


def read_file(path: str, what: str) -> str:
    """The UTF-8 text of ``path`` (``~`` expanded); ``ValueError`` saying why it cannot be read."""
    file = Path(path).expanduser()
    try:
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{file}: cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{file}: cannot read the {what} (not UTF-8 text)") from None


@dataclass(frozen=True)
class Input:
    """One thing a protocol works on, offered as a flag (``--name``) and as a form field.

    ``default`` is the value when none is given (both interfaces); ``None`` with
    ``optional=False`` makes the input required. ``example`` is what the app's form shows
    filled in for a first debate (the demo); it is never used as a value the user did not see.

    Kinds: ``text``/``textarea`` (``@FILE`` reads the text from a file, in every interface),
    ``select`` (one of ``choices``, unless ``open_choice``: e.g. a file path), ``file`` (a path,
    read by ``parse``), ``list`` (items separated by ``separator``; on the command line the flag
    may also be repeated), ``int``/``float``, ``bool`` (a switch: ``--name``; in the form yes/no).

    ``parse`` turns the value (after the kind's own reading) into what the config holds and
    validates it; it raises ``ValueError`` whose message says what is wrong, and the input's
    name is put in front. ``sampling``: ``(role, option)`` when the value is not the config's but
    a sampling option of one role's agent (SocraSynth's ``--temperature-a``).
    """

    name: str
    label: str
    kind: InputKind = "text"
    default: Any = None
    choices: tuple[tuple[str, str], ...] = ()  # (value, shown text)
    help: str = ""
    optional: bool = False
    parse: Callable[[Any], Any] | None = None
    example: Any = None
    separator: str = ";"
    open_choice: bool = False
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    metavar: str | None = None
    sampling: tuple[str, str] | None = None
    #: Offered on the app's form (some inputs only make sense headless, e.g. a script of turns).
    form: bool = True
    #: Where the form shows it: "" among the fields decided for every debate, else the group
    #: (a step of the protocol) of the "Advanced" fold it belongs to.
    step: str = ""

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def required(self) -> bool:
        return self.default is None and not self.optional

    @property
    def remembered(self) -> bool:
        """Whether the app's form keeps this input's last value for the next debate: choices and
        numbers are kept; text never is (a case, a subject, a question, an answer, a list, a
        file's path: the debate's material, which the journal holds, and which a settings file
        would otherwise show in the next form to whoever sits at the machine)."""
        return self.kind in ("select", "bool", "int", "float")

    def value(self, raw: Any) -> Any:
        """``raw`` (a flag's or a field's value) parsed and validated; :class:`InputError`."""
        if isinstance(raw, (list, tuple)) and self.kind == "list":
            raw = self.separator.join(str(r) for r in raw)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if self.default is not None:
                raw = self.default
            elif self.optional:
                return None
            else:
                raise InputError(self.name, "required")
        try:
            value = self._read(raw)
            return self.parse(value) if self.parse is not None else value
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(self.name, str(exc)) from None

    def _read(self, raw: Any) -> Any:
        match self.kind:
            case "text" | "textarea":
                text = str(raw)
                text = read_file(text[1:], self.label.lower()) if text.startswith("@") else text
                if not text.strip() and self.required:
                    raise ValueError("required")
                return text.strip() if self.kind == "text" else text
            case "select":
                value = str(raw)
                if self.choices and not self.open_choice and value not in {v for v, _ in self.choices}:
                    raise ValueError(f"{value!r} is not one of {', '.join(v for v, _ in self.choices)}")
                return value
            case "list":
                items = raw if isinstance(raw, (list, tuple)) else str(raw).split(self.separator)
                return [s.strip() for s in (str(i) for i in items) if s.strip()]
            case "int":
                try:
                    return int(str(raw).strip())
                except ValueError:
                    raise ValueError(f"{raw!r} is not a whole number") from None
            case "float":
                try:
                    return float(str(raw).strip())
                except ValueError:
                    raise ValueError(f"{raw!r} is not a number") from None
            case "bool":
                if isinstance(raw, bool):
                    return raw
                text = str(raw).strip().casefold()
                if text in YES:
                    return True
                if text in NO:
                    return False
                raise ValueError(f"{raw!r}: say yes or no")
            case "file":
                return str(Path(str(raw)).expanduser())
        raise ValueError(f"unknown input kind {self.kind!r}")  # pragma: no cover - Literal guards it


#: The input every protocol offers (declared once: the command line's ``--evidence``, the form's
#: field): files or folders of the user's own documents that the debate argues from and cites.
#: Interfaces read them (:mod:`protocols.core.documents`) and hand the protocol a
#: :class:`~protocols.core.evidence.Grounding`; the value never enters a protocol's config.
EVIDENCE = Input("evidence", "Evidence files", "list", optional=True, metavar="PATH",
                 help="a file (.txt, .md, .pdf, .docx, .html) or a folder of them that the agents argue from and "
                      "cite, each citation checked; several: separate them with ';'")


def switched_on(value: Any) -> bool:
    """A yes/no value as an interface holds it (a switch's ``True``, a form's "yes")."""
    return value is True or str(value or "").strip().casefold() in YES


@dataclass(frozen=True)
class Role:
    """A part in the debate: one model (``kind="model"``), a list of models that become numbered
    roles ``name-1``, ``name-2`` … (``"models"``, at least ``minimum``), or the person.

    A model role may be ``optional``; left out it takes the model of ``fallback`` (another role:
    the first model of a list role), or is absent when there is no fallback. ``disable`` names
    a switch (``"no_evaluation"``) that leaves the role out altogether, fallback or not.
    ``enables`` names a yes/no parameter that choosing a model for the role turns on
    (SocraSynth's Q&A baseline): the role is played only then, or when the parameter is given
    (on its fallback's model); the form offers the role alone, one option in one place.

    The person (``kind="person"``) is seated by the interface: the app asks in a dialog, the
    command line reads stdin (``reads``: one ``line`` per turn, or a ``paragraph`` ended by an
    empty line) or a ``script`` file given with ``script_flag``. An optional person is seated
    when the switch ``--<name>`` (the form: yes) is given; ``confirms``: the person may also
    confirm labels read from their words (see :class:`Person`).
    """

    name: str
    label: str
    kind: RoleKind = "model"
    help: str = ""
    optional: bool = False
    fallback: str | None = None
    disable: str | None = None
    disable_help: str = ""
    enables: str | None = None
    minimum: int = 1
    example: str = ""
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    reads: Literal["line", "paragraph"] = "line"
    script_flag: str | None = None
    script_help: str = ""
    confirms: bool = False

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    def models(self, raw: Any) -> list[str]:
        """A list role's model ids: comma-separated, or several values (a repeated flag)."""
        parts = raw if isinstance(raw, (list, tuple)) else [raw]
        return [m.strip() for p in parts if p is not None for m in str(p).split(",") if m.strip()]


@dataclass(frozen=True)
class Variant:
    """Another name the command line offers the protocol under, with some parameters fixed
    (``d3-more`` is D3 with ``variant="more"``); ``skip``: parameters it has no use for."""

    name: str
    help: str
    values: Mapping[str, Any]
    skip: tuple[str, ...] = ()


@dataclass(frozen=True)
class Study:
    """An analysis across the journalled debates of one protocol: the evaluation its paper
    reports (D3's agreement with reference verdicts, Triem's stance change rates), run by
    ``symposium study NAME``. ``inputs`` are its own flags, read as a protocol's inputs are;
    ``run(debates, values)`` gets every debate of the protocol (the export dicts, oldest first)
    and the parsed values, and returns a JSON-able result (``--json`` prints it);
    ``present(result)`` says it in sections (:mod:`protocols.core.present`)."""

    name: str
    help: str
    inputs: tuple[Input, ...]
    run: Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], dict[str, Any]]
    present: Callable[[Mapping[str, Any]], list[Section]]

    def values(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Every input's value parsed (:class:`InputError` naming the input)."""
        return {i.name: i.value(raw.get(i.name)) for i in self.inputs}


PanelKind = Literal["distributions", "metrics", "judgements", "agenda", "judge_tables"]


@dataclass(frozen=True)
class Panel:
    """One panel of the debate screen's side column, declared with the protocol so that each
    protocol shows its own record (EVINCE its distributions and WD/MI/JSD, SocraSynth its
    agenda, Γ per round and the judges' tables) and none shows another's empty panels.

    Kinds: ``distributions`` (each agent's latest distribution as bars), ``metrics`` (a table
    of ``columns`` per round, ``(heading, key)``, the most telling first: a narrow panel cuts the
    last off; ``round``, ``phase`` and ``kappa`` are the round's own keys, the others its metrics;
    and ``curves`` drawn per round), ``judgements`` (the latest judgements,
    one line each), ``agenda`` (the latest agenda a turn or the moderator set: a turn's parsed
    ``subtopics``/``agreed``), ``judge_tables`` (each judge's scores per subtopic and side, in
    each role alignment, with totals and winners once the debate is over: Tables 6.5, 6.6).
    """

    kind: PanelKind
    title: str
    columns: tuple[tuple[str, str], ...] = ()
    curves: tuple[tuple[str, str], ...] = ()


#: What a protocol that declares nothing shows: its judges' judgements, nothing of EVINCE's.
DEFAULT_PANELS: tuple[Panel, ...] = (Panel("judgements", "Judgements"),)
#: What a journalled run of no registered protocol shows (a benchmark's single prediction): the
#: distributions its turns carry, and its judgements.
UNREGISTERED_PANELS: tuple[Panel, ...] = (Panel("distributions", "Distributions"), Panel("judgements", "Judgements"))


@dataclass(frozen=True)
class Conclusion:
    """What one debate concluded, in words (see :func:`protocols.core.outcome.outcome_in_words`):
    ``sentence`` for a report (one or two sentences), ``short`` for a table's outcome column (a
    few words that never claim more than the sentence: "no agreement (leaning X)", not "X")."""

    sentence: str
    short: str


Team = Any
Start = Callable[..., AsyncIterator[Event]]


@dataclass(frozen=True)
class Diagnosis:
    """How the diagnosis benchmark runs a protocol as one of its arms, beside EVINCE's debate and
    the single models (``symposium bench diagnosis --protocol NAME``): the protocol must end with
    a ``final_distribution`` over the case's labels, which the benchmark scores.

    ``config(case, labels, profile)`` is the protocol's config for one case's text and the
    benchmark's label set (a :class:`~protocols.measures.labels.LabelSet`) at a profile;
    ``seats(a, b)`` puts the benchmark's two models in the protocol's roles (role → model id,
    numbered roles as ``agent-1`` …), the way a person would fill the form."""

    config: Callable[[str, Any, Profile], Any]
    seats: Callable[[str, str], dict[str, str]]


@dataclass(frozen=True)
class ProtocolDefinition:
    """A protocol, defined once. See the module's docstring; ``README.md`` "Adding a protocol".

    ``prepare(values)`` gets every input's and role's parsed value by name (a list role as its
    list of model ids, a person as ``True``/``False``) and returns the config's non-parameter
    values (``case``, ``labels``, ``human`` …). ``team(agents)`` builds the protocol's team from
    the agents by role (numbered roles as ``juror-1`` …). ``start(config, team, debate_id,
    channel, person)`` returns the run's events.
    """

    name: str
    title: str
    summary: str
    config_cls: type
    inputs: tuple[Input, ...]
    roles: tuple[Role, ...]
    prepare: Callable[[Mapping[str, Any]], dict[str, Any]]
    team: Callable[[Mapping[str, Agent]], Team]
    start: Start
    commands: Honoured = field(default_factory=Honoured)
    variants: tuple[Variant, ...] = ()
    #: The inputs of small runs from which every contract test is generated (resume at every
    #: cut, moderation, crashes, context drops, the report): one per variant worth covering.
    samples: tuple[Sample, ...] = ()
    #: Analyses across this protocol's journalled debates (``symposium study``).
    studies: tuple[Study, ...] = ()
    #: Warnings about a choice of models (role → model id) that is allowed but unwise.
    warnings: Callable[[Mapping[str, str]], list[str]] | None = None
    #: The journalled config (``config.describe()`` as stored) → the config, where the generic
    #: reading (the config's own fields, by name) is not enough (see :meth:`config_from_journal`).
    rebuild: Callable[[dict[str, Any]], Any] | None = None
    #: The debate screen's side panels, in order (see :class:`Panel`).
    panels: tuple[Panel, ...] = DEFAULT_PANELS
    #: The journalled outcome (``DebateFinished.outcome``) → what it concluded, in words; ``None``:
    #: only the status and stop reason are said (see :mod:`protocols.core.outcome`).
    conclude: Callable[[Mapping[str, Any]], Conclusion] | None = None
    #: The journalled outcome and the debate (its export dict) → its findings as neutral blocks,
    #: which the report, the terminal and the app's outcome panel render
    #: (:mod:`protocols.core.present`); ``None``: the outcome is shown generically.
    present: Callable[[Mapping[str, Any], Mapping[str, Any]], list[Section]] | None = None
    #: How the diagnosis benchmark runs it as an arm (see :class:`Diagnosis`); ``None``: it is
    #: not offered there.
    diagnosis: Diagnosis | None = None
    #: ``(config, edit) -> config``: the config of a run that asks the moderator, through an
    #: interface's ``edit``, to edit what the protocol proposes (SocraSynth: the agreed agenda).
    #: Interfaces that can ask (the app) apply it; ``None``: nothing is proposed for editing.
    editable: Callable[[Any, Edit], Any] | None = None

    # -- one run --------------------------------------------------------------------------------

    def run(self, config: Any, team: Team, *, debate_id: str, channel: CommandChannel | None = None,
            person: Person | None = None, evidence: Grounding | None = None) -> AsyncIterator[Event]:
        """The run's events: a pure function of its arguments (nothing read from an interface).
        With ``evidence``, its passages are journalled right after the start
        (:class:`~protocols.core.events.EvidenceAttached`) and the protocol grounds its turns in them."""
        if any(r.kind == "person" and not r.optional for r in self.roles) and person is None:
            raise ValueError(f"{self.name}: the person's seat is required (give a Person)")
        grounding = evidence or NO_EVIDENCE
        events = self.start(config, team, debate_id, channel or CommandChannel(), person, grounding)
        return attach(events, grounding) if grounding else events

    def resume(self, debate: Mapping[str, Any], agents: Mapping[str, Agent], *, channel: CommandChannel | None = None,
               person: Person | None = None, evidence: Grounding | None = None) -> AsyncIterator[Event]:
        """The continuation of a journalled debate (``store.queries.Queries.debate``'s dict) cut
        off early: the same :meth:`run`, under the config it journalled and with each agent
        sampling as it did, replayed from the journal up to where it was cut
        (:mod:`protocols.core.replay`), then live. Every protocol resumes this way, so none
        writes a resume of its own. ``agents``: by role (:meth:`roles_from` says which model each
        role played). ``evidence``: the debate's journalled evidence, indexed again
        (``store.evidence.grounding_of``), never the files on disk."""
        config = self.config_from_journal(debate["config"])
        recorded = self.recorded_options(debate["participants"])
        agents = {role: dataclasses.replace(agent, options=recorded.get(role, agent.options)) for role, agent in agents.items()}
        team = self.team(agents)
        seat = person if self.person_role() is not None else None
        return replay.resume(dict(debate), lambda ch: self.run(config, team, debate_id=debate["id"], channel=ch, person=seat,
                                                               evidence=evidence),
                             channel=channel or CommandChannel())

    def roles_from(self, participants: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """Role → model id of a journalled debate, in this definition's roles (the inverse of
        :meth:`role_models`). A ``model`` role the protocol journals per seat (D3's advocates,
        ``advocate-1`` and ``advocate-2``) takes the model of its first seat."""
        played = {p["role"]: p["model_id"] for p in participants if p["backend"] != "human"}
        roles: dict[str, str] = {}
        for role in self.roles:
            if role.kind == "model":
                seat = role.name if role.name in played else next((r for r in played if r.startswith(f"{role.name}-")), None)
                if seat is not None:
                    roles[role.name] = played[seat]
            elif role.kind == "models":
                for i in itertools.count(1):
                    if numbered(role.name, i) not in played:
                        break
                    roles[numbered(role.name, i)] = played[numbered(role.name, i)]
        return roles

    def recorded_options(self, participants: Iterable[Mapping[str, Any]]) -> dict[str, SamplingOptions]:
        """Each role's sampling options as journalled (a seed, a temperature given for one
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

    def config_from_journal(self, described: Mapping[str, Any]) -> Any:
        """The config of a journalled debate (``debate["config"]``): what a resume runs under.
        Every config journals everything its run depends on, so this gives back an equal config
        (tests/protocols/test_definitions.py checks it for every protocol): the definition's
        ``rebuild``, else the config's own ``from_description``, else its fields by name."""
        if self.rebuild is not None:
            return self.rebuild(dict(described))
        own = getattr(self.config_cls, "from_description", None)
        if own is not None:
            return own(dict(described))
        return from_description(self.config_cls, described)

    # -- values → config, roles -----------------------------------------------------------------

    def input(self, name: str) -> Input:
        return next(i for i in self.inputs if i.name == name)

    def role(self, name: str) -> Role:
        return next(r for r in self.roles if r.name == name)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in params_of(self.config_cls))

    def parsed(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Every input's and role's value parsed (see ``prepare``); :class:`InputError`."""
        out: dict[str, Any] = {i.name: i.value(values.get(i.name)) for i in self.inputs}
        for role in self.roles:
            raw = values.get(role.name)
            if role.kind == "person":
                out[role.name] = (not role.optional) or bool(raw) and str(raw).strip().casefold() not in ("no", "false", "0")
            elif role.kind == "models":
                out[role.name] = role.models(raw)
            else:
                out[role.name] = str(raw).strip() if raw is not None and str(raw).strip() else None
            if role.disable:
                out[role.disable] = bool(values.get(role.disable))
        return out

    def prepared(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The config's non-parameter values from the interface's ``values``."""
        return self.prepare(self.parsed(values))

    def configure(self, values: Mapping[str, Any], *, profile: Profile = "standard") -> Any:
        """The config from ``values``: the inputs (see :meth:`prepared`) and the parameters given
        (raw, as a flag or a field holds them; empty or absent: the profile's default). Raises
        :class:`InputError` for an input, :class:`~protocols.core.params.ParamError` for a parameter."""
        params: dict[str, Any] = {}
        for p in params_of(self.config_cls):
            raw = values.get(p.name)
            if raw is None or (isinstance(raw, str) and raw.strip() == ""):
                continue
            params[p.name] = p.parse(raw)
        return build(self.config_cls, {**self.prepared(values), **params}, profile=profile)

    def role_models(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Role → model id for every model the debate needs: numbered roles expanded, optional
        roles given their fallback or left out, disabled ones left out. :class:`InputError`."""
        parsed = self.parsed({k: v for k, v in values.items()})
        models: dict[str, str] = {}
        for role in self.roles:
            if role.kind == "models":
                ids = parsed[role.name]
                if not ids and role.fallback is not None:
                    ids = [models[role.fallback]] if role.fallback in models else []
                if len(ids) < role.minimum:
                    many = "one model" if role.minimum == 1 else f"{role.minimum} or more models"
                    raise InputError(role.name, f"name {many}, separated by commas")
                models |= {numbered(role.name, i): m for i, m in enumerate(ids, 1)}
            elif role.kind == "model":
                if role.disable and parsed.get(role.disable):
                    continue
                model = parsed[role.name]
                if model is None and role.enables and not switched_on(values.get(role.enables)):
                    continue  # played only when what it enables is asked for (its own model given, or the switch)
                if model is None and role.fallback is not None:
                    model = models.get(role.fallback) or models.get(numbered(role.fallback, 1))
                if model is None and not role.optional:
                    raise InputError(role.name, "name a model")
                if model is not None:
                    models[role.name] = model
        return models

    def tune(self, agents: Mapping[str, Agent], values: Mapping[str, Any]) -> dict[str, Agent]:
        """``agents`` with the sampling options the inputs set (see :attr:`Input.sampling`)."""
        tuned = dict(agents)
        for i in self.inputs:
            if i.sampling is None:
                continue
            role, option = i.sampling
            value = i.value(values.get(i.name))
            if value is not None and role in tuned:
                agent = tuned[role]
                tuned[role] = dataclasses.replace(agent, options=agent.options.merged(**{option: value}))
        return tuned

    def person_role(self) -> Role | None:
        return next((r for r in self.roles if r.kind == "person"), None)

    def seats_person(self, values: Mapping[str, Any]) -> bool:
        """Whether the person takes a seat with these values."""
        role = self.person_role()
        return role is not None and bool(self.parsed(values)[role.name])


def check_unique(definitions: tuple[ProtocolDefinition, ...]) -> dict[str, ProtocolDefinition]:
    """Name → definition, refusing two definitions (or variants) under one name."""
    by_name: dict[str, ProtocolDefinition] = {}
    for d in definitions:
        for name in (d.name, *(v.name for v in d.variants)):
            if name in by_name:
                raise ValueError(f"two protocols are called {name!r}")
            by_name[name] = d
    return by_name


__all__ = ["Conclusion", "Confirm", "DEFAULT_PANELS", "Diagnosis", "EVIDENCE", "Input", "Panel", "InputError", "ParamError", "Person",
           "ProtocolDefinition", "Role", "Speak", "Study", "UNREGISTERED_PANELS", "Variant", "check_unique", "confirm_from_lines",
           "read_file"]
