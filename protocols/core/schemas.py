"""Shaping JSON schemas so a small model's structured reply fits its token budget.

A grammar-constrained reply that runs out of tokens is cut off mid-JSON; bounding every list
and string in the schema (which becomes the grammar) makes a complete reply fit. The lenient
pydantic models still validate what comes back.
"""

from __future__ import annotations

from typing import Any


def fit_schema(schema: dict[str, Any], *, items: int, chars: int, min_items: int = 0) -> dict[str, Any]:
    """``schema`` with lists of ``min_items``..``items`` entries and strings of at most ``chars``
    characters (enums, being fixed strings, are left alone)."""

    def tighten(node: Any) -> Any:
        if isinstance(node, list):
            return [tighten(v) for v in node]
        if not isinstance(node, dict):
            return node
        node = {k: tighten(v) for k, v in node.items()}
        if node.get("type") == "array":
            node["maxItems"] = min(node.get("maxItems", items), items)
            if min_items:
                node["minItems"] = min_items
        elif node.get("type") == "string" and "enum" not in node:
            node["maxLength"] = min(node.get("maxLength", chars), chars)
        return node

    tightened: dict[str, Any] = tighten(schema)
    return tightened


def chars_for(tokens: int, fields: int) -> int:
    """Characters per string field so ``fields`` of them fit ``tokens`` (≈3 characters a
    token, less JSON's own punctuation), never under 24."""
    return max(24, (tokens * 3 - 40) // max(1, fields) - 12)
