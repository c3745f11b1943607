"""Exporting one debate as Markdown (to read or share) or JSON (to analyse), whole or redacted.

In the Markdown, everything the debate holds (the title, the case, every turn, verdict, label,
name and note) is shown as written and never read as Markdown (:mod:`outputs.markdown_text`): a
reply cannot draw a heading of the transcript's own, a hidden link or a table cell."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from backends.private import write_private  # noqa: F401 - every export is written through it (0600, in 0700 folders)
from outputs.markdown_sections import sections_markdown
from outputs.markdown_text import block, code, inline
from outputs.redact import redact_debate
from outputs.sources import markdown as sources_markdown
from outputs.sources import turn_markdown
from protocols.core.costs import cost_section, journal_calls
from protocols.core.events import about_context
from protocols.core.outcome import outcome_in_words
from protocols.registry import BY_NAME
from store import seal


def _when(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts, tz=UTC).astimezone().strftime("%Y-%m-%d %H:%M")


def to_json(debate: dict[str, Any]) -> str:
    """The JSON export: every section, without the debate row's bookkeeping (``updated_at``, the
    head's own columns: :data:`store.seal.UNSEALED`), which no hash covers and the ``seal``
    object states where it matters; so everything the file shows can be checked against it."""
    shown = {k: v for k, v in debate.items() if ("debates", k) not in seal.UNSEALED}
    return json.dumps(shown, ensure_ascii=False, indent=2, sort_keys=True)


def redacted_copy(debate: dict[str, Any]) -> dict[str, Any]:
    """A debate to share with its identifiers masked (:func:`outputs.redact.redact_debate`) and
    nothing from which the masked text could be recomputed: no seal (its hashes cover the
    unredacted rows: :func:`store.seal.redacted` says so in the copy) and no hash of a prompt
    the model was sent (a reader who can rebuild the prompt could test guesses of it)."""
    copy = redact_debate({k: v for k, v in debate.items() if k != "seal"})
    for reply in copy.get("replies") or []:
        reply.pop("prompt_sha256", None)
    copy["seal"] = seal.redacted()
    return copy


def to_markdown(debate: dict[str, Any], *, redacted: bool = False) -> str:
    """A readable transcript: header, participants, turns (with their checked citations),
    metrics table, judgements, outcome, the evidence's sources."""
    out: list[str] = [f"# {inline(debate['title'])}", ""]
    out.append(f"- **Protocol:** {inline(debate['protocol'])}")
    out.append(f"- **Debate id:** {code(debate['id'])}")
    out.append(f"- **Started:** {_when(debate['created_at'])}; **status:** {inline(debate['status'])}"
               + (f" ({inline(debate['stop_reason'])})" if debate.get("stop_reason") else ""))
    if debate.get("subject"):
        out += ["", "## Subject", "", block(debate["subject"])]
    out += ["", "## Participants", "", "| role | model | backend |", "| --- | --- | --- |"]
    out += [f"| {inline(p['role'])} | {inline(p['model_id'])} | {inline(p['backend'])} |" for p in debate["participants"]]

    out += ["", "## Transcript"]
    for t in debate["turns"]:
        kappa = f", κ={t['kappa']:.2f}" if t.get("kappa") is not None else ""
        # the turn's kind ("opening", "refutation"), as the app's transcript names it; the phase is the metrics table's
        out += ["", f"### {inline(t['role'])} ({inline(t['model_id'])}) — {inline(t['kind'])}, round {t['round']}{kappa}", "",
                block(t["text"].strip()) or "_(empty reply)_"]
        if t.get("distribution"):  # headed: a list right after the text would read as more of its arguments
            out += ["", "_The turn's probabilities:_", ""]
            out += [f"- {inline(label)}: {p:.0%}" for label, p in t["distribution"].items()]
        if t.get("parse_notes"):  # the parse's repairs, and what the speaker's window had to leave out
            out += ["", "> notes: " + inline("; ".join(t["parse_notes"]))]
        out += turn_markdown(t)

    if debate.get("metrics"):
        names = sorted({k for row in debate["metrics"] for k in row} - {"round", "phase", "kappa"})
        out += ["", "## Metrics per round", "", "| round | phase | κ | " + " | ".join(map(inline, names)) + " |",
                "| --- " * (3 + len(names)) + "|"]
        for row in debate["metrics"]:
            cells = [_num(row.get(n)) for n in names]
            out.append(f"| {row['round']} | {inline(row.get('phase') or '')} | {_num(row.get('kappa'))} | " + " | ".join(cells) + " |")

    if debate.get("judgements"):
        out += ["", "## Judgements", "", "| round | judge | kind | target | subject | score | verdict |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for j in debate["judgements"]:
            out.append(f"| {j['round'] if j['round'] is not None else ''} | {inline(j['judge_role'])} ({inline(j['judge_model'])}) | "
                       f"{inline(j['kind'])} | {inline(j['target'] or '')} | {inline(j['subject'] or '')} | {_num(j['score'])} | "
                       f"{inline(j['verdict'] or '')} |")
        unseen = _context_notes(debate["judgements"])
        if unseen:
            out += ["", "What the judges' context windows left out:", ""] + unseen

    said = outcome_in_words(debate)
    if said.moderator:
        out += ["", "## Moderator", ""]
        out += [f"- {inline(line)}" for line in said.moderator]

    out += ["", "## Outcome", "", block(said.ending)]
    if said.conclusion:
        out += ["", block(said.conclusion)]
    definition = BY_NAME.get(str(debate.get("protocol", "")))
    if definition is not None and definition.present is not None and isinstance(debate.get("outcome"), dict):
        out += sections_markdown(definition.present(debate["outcome"], debate), level=3)
    if debate.get("outcome"):
        out += ["", f"_Every figure of the outcome: {code('symposium export ' + debate['id'][:8] + ' --format json')}._"]
    out += sources_markdown(debate, redacted=redacted)
    cost = cost_section(journal_calls(debate))
    if cost is not None:
        out += sections_markdown([cost])
    out += provenance_lines(debate.get("provenance"))
    out += seal_lines(debate.get("seal"))
    return "\n".join(out) + "\n"


def _context_notes(judgements: list[dict[str, Any]]) -> list[str]:
    """One line per judge call whose prompt had to be fitted to its window (an older exchange
    dropped, material shortened): a reader of the export must know the judge did not see
    everything. A call judged twice (D3's judge scores both sides at once) is listed once."""
    lines: list[str] = []
    for j in judgements:
        notes = [n for n in (j.get("reasons") or {}).get("notes") or [] if isinstance(n, str) and about_context(n)]
        if notes:
            line = (f"- round {j['round'] if j['round'] is not None else '—'}, {inline(j['judge_role'])} ({inline(j['kind'])}): "
                    + inline("; ".join(notes)))
            if line not in lines:
                lines.append(line)
    return lines


def provenance_lines(prov: dict[str, Any] | None) -> list[str]:
    """What produced the run (``store/provenance.py``), as Markdown."""
    if not prov:
        return ["", "## Provenance", "", "_Not recorded (a debate journalled before Symposium kept provenance)._"]
    if "error" in prov:
        return ["", "## Provenance", "", f"_Incomplete: {inline(prov['error'])}_"]
    host = prov.get("host") or {}
    protocol = prov.get("protocol") or {}
    out = ["", "## Provenance", "",
           f"- **Symposium:** {inline(prov.get('symposium_version'))}",
           f"- **Protocol:** {inline(protocol.get('name'))} (profile {inline(protocol.get('profile') or 'standard')}); parameters "
           f"{code(json.dumps(protocol.get('parameters'), ensure_ascii=False, sort_keys=True))}",
           f"- **Host:** {inline(host.get('os'))} on {inline(host.get('machine'))}, {inline(host.get('cpu'))} "
           f"({inline(host.get('cpu_count'))} hardware threads)"
           + (f", GPU {inline(', '.join(host['gpu']))}" if host.get("gpu") else ", no GPU"),
           f"- **Started:** {inline(prov.get('started_at'))}; **ended:** {inline(prov.get('ended_at') or 'not yet')}", ""]
    # A list, not a table: a table's cells fold a hash or a path, and both must be copied whole.
    for p in prov.get("participants") or []:
        if p["backend"] in ("human", "code"):
            out.append(f"- **{inline(p['role'])}:** {inline(p['model_id'])} ({inline(p['backend'])})")
            continue
        server = p.get("server")
        backend = inline(f"{p['backend']} {p.get('backend_version') or ''}".strip())
        if server:
            backend += f" at {inline(server.get('url'))} (reports {inline(server.get('reported_model'))})"
        sampling = inline(", ".join(f"{k}={v}" for k, v in sorted((p.get("sampling") or {}).items()) if k not in ("seed", "stop")))
        facts = [f"quantization {p.get('quantization') or 'unknown'}", f"context {p.get('context_size') or 'unknown'}",
                 f"seed {p.get('seed') if p.get('seed') is not None else 'none'}"]
        if p.get("threads"):
            facts.append(f"threads {p['threads']}")
        out.append(f"- **{inline(p['role'])}:** {inline(p['model_id'])} on {backend}; " + inline(", ".join(facts))
                   + f"; sampling {sampling}")
        if p.get("file"):
            out.append(f"  - file {code(p['file'])}, SHA-256 {code(p.get('file_sha256') or 'not computed')}")
    repro = prov.get("reproducibility") or {}
    out += ["", "**Reproducible bit for bit:** " + ("yes, under these conditions:" if repro.get("bit_for_bit")
                                                     else "no:")]
    out += [f"- {inline(reason)}" for reason in repro.get("reasons") or []]
    return out


def seal_lines(found: dict[str, Any] | None) -> list[str]:
    """The chain's head and who signed it: a reader who keeps them can later run ``symposium
    verify ID --head HEAD`` or ``symposium verify --export FILE --key FINGERPRINT``."""
    if found and found.get("redacted"):
        return ["", "## Seal", "", f"_{found.get('note')}_"]
    if not found or not found.get("head"):
        return ["", "## Seal", "", "_Not sealed._"]
    out = ["", "## Seal", "", f"- **Chain head:** `{found['head']}` ({found['rows']} rows)"]
    if found.get("signature"):
        out.append(f"- **Signed by key:** `{found.get('fingerprint')}` (`{found.get('key')}`)")
        out.append(f"- **Signature:** `{found['signature']}`")
        if (found.get("signed_from") or 1) > 1:
            out.append(f"- signed from link {found['signed_from']} on: the links before were written before Symposium "
                       "signed its records")
    else:
        out.append("- not signed: written before Symposium signed its records; only a head noted earlier can vouch for it")
    if found.get("sealed_on_migration_at"):
        out.append(f"- sealed on migration at {found['sealed_on_migration_at']}: the chain vouches for the rows "
                   "from then on, not for what happened to them before")
    out.append("- check it with `symposium verify <id> --head <head>`, or an export with `symposium verify --export FILE`")
    return out


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return inline(value)
