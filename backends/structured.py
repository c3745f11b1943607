"""Structured replies where decoding cannot be constrained: ask for JSON, check it, retry once.

Servers without a structured-output dialect (and runtimes without a grammar engine) still
have to return JSON for a schema. The reply is requested in the prompt, checked here against
the schema, and asked for once more with the problem named. Protocols repair or reject what
still does not fit, so this never raises on a bad reply: it reports the problem.

The checker covers the JSON-schema subset pydantic emits (types, properties, required, enum,
const, bounds, lengths, items, anyOf, ``$ref`` into ``$defs``); unknown keywords are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from .base import Message

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def closed(node: Any) -> Any:
    """``node`` with ``additionalProperties: false`` on every object that lists its properties
    and says nothing else: as llama.cpp's grammars do, so every engine writes only the keys the
    protocol asked for instead of inventing more until the token limit."""
    if isinstance(node, list):
        return [closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: {name: closed(sub) for name, sub in value.items()}
           if key in ("properties", "$defs", "definitions") and isinstance(value, dict) else closed(value)
           for key, value in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def instruction(json_schema: dict[str, Any]) -> str:
    """The request for JSON appended to the last user message."""
    return ("Reply with only one JSON object, no other text, that matches this JSON schema:\n"
            + json.dumps(json_schema, separators=(",", ":")))


def with_instruction(messages: Sequence[Message], json_schema: dict[str, Any]) -> list[Message]:
    """``messages`` with the JSON request added to the last user turn (or as a new one)."""
    out = list(messages)
    ask = instruction(json_schema)
    if out and out[-1].role == "user":
        out[-1] = Message("user", f"{out[-1].content}\n\n{ask}")
    else:
        out.append(Message("user", ask))
    return out


def retry_messages(messages: Sequence[Message], reply: str, problem: str) -> list[Message]:
    """The conversation for the second attempt: the bad reply and what is wrong with it."""
    return [*messages, Message("assistant", reply),
            Message("user", f"That reply is not valid: {problem}. Reply again with only the corrected JSON object.")]


def problem(text: str, schema: type[BaseModel] | dict[str, Any]) -> str | None:
    """Why ``text`` is not a JSON value valid for ``schema``, or ``None`` when it is."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(reply)"
            return f"{where}: {first['msg']}"
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg} at character {exc.pos})"
    return _check(value, schema, schema, "$")


def _check(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = {**root.get("$defs", root.get("definitions", {})).get(name, {}), **{k: v for k, v in node.items() if k != "$ref"}}
    if "anyOf" in node or "oneOf" in node:
        options = node.get("anyOf") or node.get("oneOf") or []
        if all(_check(value, option, root, path) for option in options):
            return f"{path} matches none of the allowed forms"
    if "const" in node and value != node["const"]:
        return f"{path} must be {node['const']!r}"
    if "enum" in node and value not in node["enum"]:
        return f"{path} must be one of {node['enum']}"
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(isinstance(value, _TYPES.get(k, object)) and not (isinstance(value, bool) and k in ("integer", "number"))
                         for k in kinds):
        return f"{path} must be of type {kind}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in node and value < node["minimum"] or "maximum" in node and value > node["maximum"]:
            return f"{path} must be between {node.get('minimum')} and {node.get('maximum')}"
    if isinstance(value, str) and not node.get("minLength", 0) <= len(value) <= node.get("maxLength", len(value)):
        return f"{path} has the wrong length"
    if isinstance(value, list):
        if not node.get("minItems", 0) <= len(value) <= node.get("maxItems", len(value)):
            return f"{path} has the wrong number of items"
        for i, item in enumerate(value):
            if (found := _check(item, node.get("items", {}), root, f"{path}[{i}]")) is not None:
                return found
    if isinstance(value, dict):
        missing = [k for k in node.get("required", []) if k not in value]
        if missing:
            return f"{path} lacks {', '.join(missing)}"
        props = node.get("properties", {})
        if node.get("additionalProperties") is False and (extra := sorted(set(value) - set(props))):
            return f"{path} has unexpected keys {', '.join(extra)}"
        for key, item in value.items():
            if key in props and (found := _check(item, props[key], root, f"{path}.{key}")) is not None:
                return found
    return None


#: The longest string bound a grammar keeps. llama.cpp writes a bound of n characters as n
#: nested optional rules and refuses a grammar past about a thousand of them in all; a longer
#: string is bounded by the reply's token limit instead, and checked against its schema after.
GRAMMAR_MAX_STRING = 800


def long_strings_unbounded(node: Any) -> Any:
    """The schema with every string's ``maxLength`` above :data:`GRAMMAR_MAX_STRING` left out
    (for the grammar only: the reply is still validated against the full schema)."""
    if isinstance(node, list):
        return [long_strings_unbounded(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: long_strings_unbounded(value) for key, value in node.items()}
    if out.get("type") == "string" and isinstance(out.get("maxLength"), int) and out["maxLength"] > GRAMMAR_MAX_STRING:
        del out["maxLength"]
    return out


def bounded_ints_as_enums(node: Any) -> Any:
    """Rewrite small bounded integers (``1 <= score <= 10``) as enums.

    llama.cpp's schema-to-grammar converter ignores ``minimum``/``maximum``, so without this a
    judge constrained to "an integer from 1 to 10" could still write 0 or 4000.
    """
    if isinstance(node, list):
        return [bounded_ints_as_enums(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: bounded_ints_as_enums(value) for key, value in node.items()}
    low, high = out.get("minimum"), out.get("maximum")
    if out.get("type") == "integer" and isinstance(low, int) and isinstance(high, int) and 0 <= high - low <= 100:
        out = {k: v for k, v in out.items() if k not in ("type", "minimum", "maximum")}
        out["enum"] = list(range(low, high + 1))
    return out
