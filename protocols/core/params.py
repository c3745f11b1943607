"""Protocol parameters, each defined once: on the protocol's config.

Every protocol's config is a pydantic dataclass. Its tunable parameters are declared with
:func:`param`: the type comes from the annotation; default, bounds, description and the paper's
section come from here. Everything else is generated from that one declaration:

- the command line's flags (``tui/cli/params.py``: ``--max-rounds`` for ``max_rounds``),
- the app's New-debate form fields (``tui/forms.py``),
- the validation: constructing the config validates it, so the command line, the app and code
  that calls a protocol directly all get the same check and the same message.

Profiles. Defaults suit real 7-70B instruction models (profile ``standard``): turns of a
paragraph or more, the paper's round counts and thresholds. A config class may declare
``SMALL_MODEL_PROFILE``, overrides for the bundled 135M/270M models and the tests (profile
``small``). Which profile applies is chosen per model in the registry (``profile = "small"``);
a value the user gives explicitly always wins over both.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar

import annotated_types
from pydantic import ConfigDict, Field, ValidationError

Profile = Literal["standard", "small"]
PROFILES: tuple[Profile, ...] = ("standard", "small")

#: The pydantic config every protocol config uses (labels, agents' hooks … are plain objects).
#: An unknown keyword is an error, not ignored: a misspelt parameter must not run at its default.
CONFIG = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

Kind = Literal["int", "float", "bool", "choice", "text"]
C = TypeVar("C")


def param(default: Any, *, description: str, section: str = "", label: str = "",
          ge: float | None = None, le: float | None = None, gt: float | None = None,
          lt: float | None = None, choices: Iterable[str] = (), step: str = "", essential: bool = False) -> Any:
    """A protocol parameter: its default, bounds, one-line description in plain words (the
    form shows it under the field, the command line after the flag) and the section of the paper
    it comes from (or "Symposium" where the paper is silent). ``label`` is the form's short
    caption (the description by default); ``choices`` lists a text parameter's valid values when
    they are not a ``Literal`` (the config still checks them). ``step``: the step of the protocol
    it belongs to, under which the form groups it ("When to stop"); ``essential``: one of the few
    a person decides for every debate (the round cap), shown before the form's "Advanced" fold."""
    return Field(default, ge=ge, le=le, gt=gt, lt=lt, description=description,
                 json_schema_extra={"param": True, "section": section, "label": label or description,
                                    "choices": list(choices), "step": step, "essential": essential})


#: The words a person may type for a yes/no value (a flag's, a form field's), lower-cased.
YES = ("yes", "true", "on", "1")
NO = ("no", "false", "off", "0")

#: The step under which the form groups every reply length limit.
REPLY_LENGTHS = "Reply lengths"


def token_limit(default: int, description: str, *, label: str = "Reply length limit (tokens)") -> Any:
    """A reply length limit in tokens: Symposium's own parameter (the papers set none), at least
    one token and no more than a context can hold."""
    return param(default, ge=1, le=8192, section="Symposium", label=label, description=description, step=REPLY_LENGTHS)


@dataclass(frozen=True)
class ParamInfo:
    """One parameter as the interfaces see it."""

    name: str
    kind: Kind
    default: Any
    description: str
    section: str
    label: str
    optional: bool = False  # None is a valid value ("not set")
    choices: tuple[str, ...] = ()
    #: The protocol's step the form groups it under; ``essential``: shown before "Advanced".
    step: str = ""
    essential: bool = False
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def bounds(self) -> str:
        """The valid range in words, e.g. ``1 to 20`` or ``> 0``; empty when unbounded."""
        low = f"{self.ge:g}" if self.ge is not None else (f"> {self.gt:g}" if self.gt is not None else None)
        high = f"{self.le:g}" if self.le is not None else (f"< {self.lt:g}" if self.lt is not None else None)
        if low and high and not low.startswith(">") and not high.startswith("<"):
            return f"{low} to {high}"
        parts = [p if p.startswith((">", "<")) else (f"≥ {p}" if p == low else f"≤ {p}")
                 for p in (low, high) if p]
        return ", ".join(parts)

    def parse(self, raw: Any) -> Any:
        """A value typed by a person (a form field, a flag) in this parameter's type; raises
        :class:`ParamError` naming the parameter. Bounds are checked by the config itself."""
        if not isinstance(raw, str):
            return raw
        text = raw.strip()
        if text == "" and self.optional:
            return None
        try:
            match self.kind:
                case "int":
                    return int(text)
                case "float":
                    return float(text)
                case "bool":
                    lowered = text.lower()
                    if lowered in YES:
                        return True
                    if lowered in NO:
                        return False
                    raise ValueError
                case "choice":
                    if text not in self.choices:
                        raise ValueError
                    return text
                case _:
                    return text
        except ValueError:
            wanted = {"int": "a whole number", "float": "a number", "bool": "yes or no",
                      "choice": "one of " + ", ".join(self.choices)}.get(self.kind, "text")
            raise ParamError(self.name, f"{raw!r} is not {wanted}") from None


class ParamError(ValueError):
    """A parameter value is invalid; the message starts with the parameter's name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


def _kind(annotation: Any) -> tuple[Kind, tuple[str, ...], bool]:
    """(kind, choices, optional) of a parameter's resolved annotation."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        kind, choices, _ = _kind(next(a for a in args if a is not type(None)))
        return kind, choices, True
    if origin is Literal:
        return "choice", tuple(str(a) for a in args), False
    if annotation is bool:
        return "bool", (), False
    if annotation is int:
        return "int", (), False
    if annotation is float:
        return "float", (), False
    return "text", (), False


@cache
def params_of(config_cls: type) -> tuple[ParamInfo, ...]:
    """The parameters :func:`param` declared on a protocol's config, in declaration order."""
    infos = []
    for name, field in config_cls.__pydantic_fields__.items():  # type: ignore[attr-defined]  # a pydantic dataclass's, known at run time
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if not extra.get("param"):
            continue
        kind, choices, optional = _kind(field.annotation)
        if extra.get("choices"):
            kind, choices = "choice", tuple(extra["choices"])
        bounds: dict[str, float] = {}
        for meta in field.metadata:
            for key, cls in (("ge", annotated_types.Ge), ("le", annotated_types.Le),
                             ("gt", annotated_types.Gt), ("lt", annotated_types.Lt)):
                if isinstance(meta, cls):
                    bounds[key] = getattr(meta, key)
        infos.append(ParamInfo(name=name, kind=kind, default=field.default, description=field.description or "",
                               section=str(extra.get("section", "")), label=str(extra.get("label", "")),
                               optional=optional, choices=choices, step=str(extra.get("step", "")),
                               essential=bool(extra.get("essential", False)), **bounds))
    return tuple(infos)


def profile_overrides(config_cls: type, profile: Profile) -> dict[str, Any]:
    """The defaults a profile changes (none for ``standard``)."""
    if profile == "standard":
        return {}
    if profile not in PROFILES:
        raise ParamError("profile", f"{profile!r} is not one of {', '.join(PROFILES)}")
    return dict(getattr(config_cls, "SMALL_MODEL_PROFILE", {}))


def defaults(config_cls: type, profile: Profile = "standard") -> dict[str, Any]:
    """Each parameter's default under ``profile``."""
    overrides = profile_overrides(config_cls, profile)
    return {p.name: overrides.get(p.name, p.default) for p in params_of(config_cls)}


def build(config_cls: type[C], values: Mapping[str, Any], *, profile: Profile = "standard") -> C:
    """The config from ``values`` (given values win over the profile's defaults, which win over
    the standard ones); any invalid value raises :class:`ParamError` naming the field."""
    overrides = profile_overrides(config_cls, profile)
    merged = {**overrides, **values}
    if "profile" in {f.name for f in dataclasses.fields(config_cls)}:  # type: ignore[arg-type]  # config classes are (pydantic) dataclasses
        merged["profile"] = profile
    try:
        return config_cls(**merged)
    except ValidationError as exc:
        raise validation_problem(exc) from None


def from_description(config_cls: type[C], data: Mapping[str, Any], **converted: Any) -> C:
    """The config a debate journalled (its ``describe()``), to resume it: every field of
    ``config_cls`` found in ``data``, and ``converted`` values for those ``describe()`` writes in
    another form (a label set as a list, a budget as its limits). Keys that are not fields
    (values ``describe()`` derives for readers) are left out."""
    names = {f.name for f in dataclasses.fields(config_cls) if f.init}  # type: ignore[arg-type]  # config classes are (pydantic) dataclasses
    values = {k: v for k, v in data.items() if k in names and k not in converted}
    try:
        return config_cls(**values, **converted)
    except ValidationError as exc:
        raise validation_problem(exc) from None


def validation_problem(exc: ValidationError) -> ParamError:
    """The first problem pydantic found, as ``name: what is wrong``."""
    error = exc.errors()[0]
    name = ".".join(str(part) for part in error["loc"]) or "config"
    message = error["msg"]
    if error["type"] in ("value_error", "assertion_error"):
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        field, sep, rest = message.partition(": ")  # a check across fields names its field first
        if name == "config" and sep and field.isidentifier():
            name, message = field, rest
    return ParamError(name, message[:1].lower() + message[1:])
