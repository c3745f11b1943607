"""A debate's evidence and citations as the exports and the report show them.

What a reader of a grounded debate needs beside the transcript: which files it argued from (each
with its SHA-256, so the file can be matched), which passages the agents cited and whether each
citation checked, and per agent how many claims were supported, cited but not found (fabricated
or misquoted) or made without a source. A citation that did not check is shown with what was
wrong and never with a passage: it is not a source.

Passage and claim texts come from the user's files and the models: in Markdown they go through
:func:`outputs.markdown_text.inline`, so a file's ``# heading``, ``<script>`` or ``[link](…)`` is
shown as the text it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from outputs.markdown_text import inline
from protocols.core.evidence import cited_line
from protocols.measures.citations import tally


def citations_of(debate: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every journalled citation with its speaker's role, in turn order."""
    return [(str(t.get("role")), c) for t in debate.get("turns") or [] for c in t.get("citations") or []]


def per_agent(debate: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Role → the counts of :func:`protocols.measures.citations.tally` over its claims."""
    by_role: dict[str, list[Mapping[str, Any]]] = {}
    for role, c in citations_of(debate):
        by_role.setdefault(role, []).append(c)
    return {role: tally(cs) for role, cs in by_role.items()}


def cited_passages(debate: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The passages some supported citation names, in passage order."""
    evidence = debate.get("evidence") or {}
    wanted = {c.get("passage") for _, c in citations_of(debate) if c.get("status") == "supported"}
    return [p for p in evidence.get("passages") or [] if f"E{p.get('number')}" in wanted]


def location(passage: Mapping[str, Any], files: Sequence[Mapping[str, Any]]) -> str:
    """``E7 p.4 ¶3 · labs.pdf`` for a journalled passage."""
    parts = int(passage.get("parts") or 1)
    paragraph = f"¶{passage.get('paragraph')}" + (f".{passage.get('part')}" if parts > 1 else "")
    where = paragraph if passage.get("page") is None else f"p.{passage.get('page')} {paragraph}"
    name = next((str(f.get("name")) for f in files if f.get("number") == passage.get("file")), "?")
    return f"E{passage.get('number')} {where} · {name}"


def share(value: Any) -> str:
    return "—" if value is None else f"{value:.0%}"


def markdown(debate: Mapping[str, Any], *, redacted: bool = False) -> list[str]:
    """The Markdown export's (and ``show``'s) Sources section; nothing when the debate has no
    evidence. A redacted copy names no file hash: a hash of a short file would let a reader test
    guesses of what was masked."""
    evidence = debate.get("evidence")
    if not evidence:
        return []
    files = evidence.get("files") or []
    out = ["", "## Sources", "", "| # | file | kind | size | pages | passages | SHA-256 |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for f in files:
        digest = "withheld (redacted copy)" if redacted else f"`{f.get('sha256')}`"
        out.append(f"| {f.get('number')} | {inline(str(f.get('name')))} | {f.get('kind')} | {f.get('size')} | "
                   f"{f.get('pages') if f.get('pages') is not None else '—'} | {f.get('passages')} | {digest} |")
    for f in files:
        masked = f.get("redactions") or {}
        notes = [*(f.get("notes") or []), *([f"masked before indexing: {', '.join(f'{n} {k}' for k, n in sorted(masked.items()))}"]
                                            if masked else [])]
        out += [f"- {inline(str(f.get('name')))}: {inline(str(n))}" for n in notes]
    counts = per_agent(debate)
    if counts:
        out += ["", "| agent | claims | supported | cited, not found | uncited | citation precision |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {role} | {t['claims']} | {t['supported']} | {t['not_found']} | {t['uncited']} | {share(t['precision'])} |"
                for role, t in counts.items()]
    cited = cited_passages(debate)
    if cited:
        out += ["", "Passages cited (each supported citation names one):", ""]
        out += [f"- **{inline(location(p, files))}**: {inline(str(p.get('text')))}" for p in cited]
    out += ["", f"_All {len(evidence.get('passages') or [])} passages are in the journal and the JSON export._"]
    return out


def turn_markdown(turn: Mapping[str, Any]) -> list[str]:
    """A turn's checked citations under it in the Markdown transcript."""
    cited = turn.get("citations") or []
    return ["", "Citations:", "", *(f"- {inline(cited_line(c))}" for c in cited)] if cited else []


__all__ = ["cited_passages", "citations_of", "location", "markdown", "per_agent", "share", "turn_markdown"]
