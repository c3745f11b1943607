"""Exporting one debate as Markdown (to read or share) or JSON (to analyse)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from outputs.sources import markdown as sources_markdown, turn_markdown
from protocols.core.outcome import outcome_in_words
from protocols.core.events import about_context
from backends.private import write_private  # noqa: F401 - every export is written through it (0600, in 0700 folders)


def _when(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts, tz=timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M")


def to_json(debate: dict[str, Any]) -> str:
    return json.dumps(debate, ensure_ascii=False, indent=2, sort_keys=True)


def to_markdown(debate: dict[str, Any], *, redacted: bool = False) -> str:
    """A readable transcript: header, participants, turns (with their checked citations),
    metrics table, judgements, outcome, the evidence's sources."""
    out: list[str] = [f"# {debate['title']}", ""]
    out.append(f"- **Protocol:** {debate['protocol']}")
    out.append(f"- **Debate id:** `{debate['id']}`")
    out.append(f"- **Started:** {_when(debate['created_at'])}; **status:** {debate['status']}"
               + (f" ({debate['stop_reason']})" if debate.get("stop_reason") else ""))
    if debate.get("subject"):
        out += ["", "## Subject", "", debate["subject"]]
    out += ["", "## Participants", "", "| role | model | backend |", "| --- | --- | --- |"]
    out += [f"| {p['role']} | {p['model_id']} | {p['backend']} |" for p in debate["participants"]]

    out += ["", "## Transcript"]
    for t in debate["turns"]:
        kappa = f", κ={t['kappa']:.2f}" if t.get("kappa") is not None else ""
        out += ["", f"### {t['role']} ({t['model_id']}) — {t['phase']}, round {t['round']}{kappa}", "", t["text"].strip() or "_(empty reply)_"]
        if t.get("distribution"):
            out.append("")
            out += [f"- {label}: {p:.0%}" for label, p in t["distribution"].items()]
        if t.get("parse_notes"):  # the parse's repairs, and what the speaker's window had to leave out
            out += ["", "> notes: " + "; ".join(t["parse_notes"])]
        out += turn_markdown(t)

    if debate.get("metrics"):
        names = sorted({k for row in debate["metrics"] for k in row} - {"round", "phase", "kappa"})
        out += ["", "## Metrics per round", "", "| round | phase | κ | " + " | ".join(names) + " |",
                "| --- " * (3 + len(names)) + "|"]
        for row in debate["metrics"]:
            cells = [_num(row.get(n)) for n in names]
            out.append(f"| {row['round']} | {row.get('phase') or ''} | {_num(row.get('kappa'))} | " + " | ".join(cells) + " |")

    if debate.get("judgements"):
        out += ["", "## Judgements", "", "| round | judge | kind | target | subject | score | verdict |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for j in debate["judgements"]:
            out.append(f"| {j['round'] if j['round'] is not None else ''} | {j['judge_role']} ({j['judge_model']}) | "
                       f"{j['kind']} | {j['target'] or ''} | {j['subject'] or ''} | {_num(j['score'])} | {j['verdict'] or ''} |")
        unseen = _context_notes(debate["judgements"])
        if unseen:
            out += ["", "What the judges' context windows left out:", ""] + unseen

    said = outcome_in_words(debate)
    if said.moderator:
        out += ["", "## Moderator", ""]
        out += [f"- {line}" for line in said.moderator]

    out += ["", "## Outcome", "", said.ending]
    if said.conclusion:
        out += ["", said.conclusion]
    out += _lists(debate.get("outcome") or {})
    if debate.get("outcome"):
        out += ["", f"_Every figure of the outcome: `symposium export {debate['id'][:8]} --format json`._"]
    out += sources_markdown(debate, redacted=redacted)
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
            line = f"- round {j['round'] if j['round'] is not None else '—'}, {j['judge_role']} ({j['kind']}): " + "; ".join(notes)
            if line not in lines:
                lines.append(line)
    return lines


def provenance_lines(prov: dict[str, Any] | None) -> list[str]:
    """What produced the run (``store/provenance.py``), as Markdown."""
    if not prov:
        return ["", "## Provenance", "", "_Not recorded (a debate journalled before Symposium kept provenance)._"]
    if "error" in prov:
        return ["", "## Provenance", "", f"_Incomplete: {prov['error']}_"]
    host = prov.get("host") or {}
    protocol = prov.get("protocol") or {}
    out = ["", "## Provenance", "",
           f"- **Symposium:** {prov.get('symposium_version')}",
           f"- **Protocol:** {protocol.get('name')} (profile {protocol.get('profile') or 'standard'}); parameters "
           f"`{json.dumps(protocol.get('parameters'), ensure_ascii=False, sort_keys=True)}`",
           f"- **Host:** {host.get('os')} on {host.get('machine')}, {host.get('cpu')} ({host.get('cpu_count')} hardware threads)"
           + (f", GPU {', '.join(host['gpu'])}" if host.get("gpu") else ", no GPU"),
           f"- **Started:** {prov.get('started_at')}; **ended:** {prov.get('ended_at') or 'not yet'}", ""]
    # A list, not a table: a table's cells fold a hash or a path, and both must be copied whole.
    for p in prov.get("participants") or []:
        if p["backend"] in ("human", "code"):
            out.append(f"- **{p['role']}:** {p['model_id']} ({p['backend']})")
            continue
        server = p.get("server")
        backend = f"{p['backend']} {p.get('backend_version') or ''}".strip()
        if server:
            backend += f" at {server.get('url')} (reports {server.get('reported_model')})"
        sampling = ", ".join(f"{k}={v}" for k, v in sorted((p.get("sampling") or {}).items()) if k not in ("seed", "stop"))
        facts = [f"quantization {p.get('quantization') or 'unknown'}", f"context {p.get('context_size') or 'unknown'}",
                 f"seed {p.get('seed') if p.get('seed') is not None else 'none'}"]
        if p.get("threads"):
            facts.append(f"threads {p['threads']}")
        out.append(f"- **{p['role']}:** {p['model_id']} on {backend}; " + ", ".join(facts) + f"; sampling {sampling}")
        if p.get("file"):
            out.append(f"  - file `{p['file']}`, SHA-256 `{p.get('file_sha256') or 'not computed'}`")
    repro = prov.get("reproducibility") or {}
    out += ["", "**Reproducible bit for bit:** " + ("yes, under these conditions:" if repro.get("bit_for_bit")
                                                     else "no:")]
    out += [f"- {reason}" for reason in repro.get("reasons") or []]
    return out


def seal_lines(seal: dict[str, Any] | None) -> list[str]:
    """The chain's head: a reader who keeps it can later run ``symposium verify ID --head HEAD``."""
    if not seal or not seal.get("head"):
        return ["", "## Seal", "", "_Not sealed._"]
    out = ["", "## Seal", "", f"- **Chain head:** `{seal['head']}` ({seal['rows']} rows)"]
    if seal.get("sealed_on_migration_at"):
        out.append(f"- sealed on migration at {seal['sealed_on_migration_at']}: the chain vouches for the rows "
                   "from then on, not for what happened to them before")
    out.append("- check it with `symposium verify <id> --head <head>`, or an export with `symposium verify --export FILE`")
    return out


def _lists(outcome: dict[str, Any]) -> list[str]:
    """The outcome's recommendations or joint text as Markdown lists (the words of the agents)."""
    out: list[str] = []
    for key, title in (("recommendations", "Recommendations"), ("joint", "Joint text")):
        value = outcome.get(key)
        if not isinstance(value, dict):
            continue
        lines = []
        for name, item in value.items():
            if name == "written_by":
                continue
            for entry in item if isinstance(item, list) else [item]:
                if isinstance(entry, str | int | float) and str(entry).strip():
                    lines.append(f"- {name}: {entry}")
        if lines:
            out += ["", f"### {title}", "", *lines]
    return out


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
