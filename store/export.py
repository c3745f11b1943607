"""Exporting one debate as Markdown (to read or share) or JSON (to analyse)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from protocols.outcome import outcome_in_words


def _when(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts, tz=timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M")


def to_json(debate: dict[str, Any]) -> str:
    return json.dumps(debate, ensure_ascii=False, indent=2, sort_keys=True)


def to_markdown(debate: dict[str, Any]) -> str:
    """A readable transcript: header, participants, turns, metrics table, judgements, outcome."""
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
        if t.get("parse_notes"):
            out += ["", "> parse notes: " + "; ".join(t["parse_notes"])]

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
    return "\n".join(out) + "\n"


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


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only (0600), replacing any old file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
