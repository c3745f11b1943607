"""Exporting one debate as Markdown (to read or share) or JSON (to analyse)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from backends.private import write_private  # noqa: F401 - every export is written through it (0600, in 0700 folders)


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

    if debate.get("moderator_events"):
        out += ["", "## Moderator", ""]
        out += [f"- round {m['round']}: {m['kind']} {json.dumps(m['payload'], ensure_ascii=False)}" for m in debate["moderator_events"]]

    if debate.get("outcome"):
        out += ["", "## Outcome", "", "```json", json.dumps(debate["outcome"], ensure_ascii=False, indent=2), "```"]
    return "\n".join(out) + "\n"


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
