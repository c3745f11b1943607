"""The report as a document model: sections of typed blocks, built from a debate's export dict.

The dict is the JSON export's (:meth:`store.queries.Queries.debate`, plus ``provenance`` and
``seal`` where the journal keeps them), so a report can also be made from an exported file.
Nothing here writes HTML: :mod:`outputs.report.render` does, escaping every value it did not
build. Each protocol adds the sections its paper reports (SocraSynth's judges' tables and Γ,
D3's passes and audits, humanloop's stance analysis, the conference's stages); what no section
claims of the outcome is still shown, generically, so a new outcome key is never lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from protocols.core.outcome import outcome_in_words
from store import signing
from outputs.report.safe import Markup
from outputs.report.svg import bars, line_chart

# -- blocks ---------------------------------------------------------------------------------------


@dataclass
class Para:
    text: Any
    kind: str = ""  # a CSS class: "note", "warn", "lead"


@dataclass
class DefList:
    items: list[tuple[str, Any]]  # a value is a block or a scalar


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Any]]
    caption: str = ""
    numeric: bool = True  # right-align numbers


@dataclass
class Bullets:
    items: list[Any]


@dataclass
class Figures:
    charts: list[Markup]
    caption: str = ""


@dataclass
class Turn:
    heading: str
    meta: str
    text: str
    request: str | None
    distribution: dict[str, float] | None
    notes: list[tuple[str, list[str]]]  # ("parse notes", [...]), ("fit notes", [...])


@dataclass
class Section:
    id: str
    title: str
    blocks: list[Any] = field(default_factory=list)


@dataclass
class Document:
    title: str
    subtitle: str
    sections: list[Section]
    redaction: dict[str, int] | None = None


Block = Para | DefList | Table | Bullets | Figures | Turn

# -- helpers ---------------------------------------------------------------------------------------


def when(ts: Any) -> str:
    """A journal time (seconds since the epoch, or an ISO string) in UTC, to the second."""
    if ts is None or ts == "":
        return "—"
    if isinstance(ts, int | float):
        return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(ts)


def num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.3g}"
    return str(value)


def value_block(value: Any, depth: int = 0) -> Any:
    """Any JSON value as blocks: a dict a definition list, a list of like dicts a table, a list
    of scalars a bullet list (or one line when short), a scalar its text. Generic on purpose:
    provenance and outcome keys added later show without code here."""
    if isinstance(value, Mapping):
        if not value:
            return "—"
        return DefList([(str(k), value_block(v, depth + 1) if v is not None else "—") for k, v in value.items()])
    if isinstance(value, list | tuple):
        if not value:
            return "—"
        if all(isinstance(v, Mapping) for v in value) and depth < 4:
            keys = list(dict.fromkeys(k for v in value for k in v))
            if len(keys) <= 9 and all(not isinstance(v.get(k), Mapping | list) or len(json.dumps(v.get(k))) < 80
                                      for v in value for k in keys):
                return Table(keys, [[_cell(v.get(k)) for k in keys] for v in value], numeric=False)
            if len(value) <= 8:  # a few wide records (participants): one column each, one row per field
                heads = [str(v.get("role") or v.get("name") or v.get("id") or f"#{i + 1}") for i, v in enumerate(value)]
                return Table(["", *heads], [[k, *(_cell(v.get(k)) for v in value)] for k in keys], numeric=False)
            return Bullets([value_block(v, depth + 1) for v in value])
        if all(not isinstance(v, Mapping | list) for v in value):
            joined = ", ".join(num(v) for v in value)
            return joined if len(joined) <= 100 else Bullets([num(v) for v in value])
        return Bullets([value_block(v, depth + 1) for v in value])
    return num(value)


def _cell(value: Any) -> str:
    """A value in one table cell: a flat record as ``key=value, …``, deeper ones as JSON."""
    def flat(v: Any) -> bool:
        return not isinstance(v, Mapping | list) or (isinstance(v, list) and all(not isinstance(x, Mapping | list) for x in v))

    if isinstance(value, Mapping) and all(flat(v) for v in value.values()):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items()) or "—"
    if isinstance(value, list) and flat(value):
        return "[" + ", ".join(num(v) for v in value) + "]"
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False)
    return "—" if value is None else num(value)


def roles_in_order(debate: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys([p["role"] for p in debate.get("participants", [])] + [t["role"] for t in debate.get("turns", [])]))


# -- sections shared by every protocol ----------------------------------------------------------


def _said(debate: Mapping[str, Any]) -> str:
    """What the debate concluded (``protocols.core.outcome``: the same words as ``show``, the export
    and Home); when it concluded nothing, how it ended."""
    words = outcome_in_words(debate)
    return words.conclusion or words.ending


def _header(debate: Mapping[str, Any]) -> Section:
    items: list[tuple[str, Any]] = [
        ("Protocol", debate.get("protocol", "")),
        ("Debate id", debate.get("id", "")),
        ("Status", debate.get("status", "")),
        ("Why it ended", debate.get("stop_reason") or "—"),
        ("Outcome", _said(debate)),
        ("Started", when(debate.get("created_at"))),
        ("Finished", when(debate.get("finished_at"))),
        ("Last change", when(debate.get("updated_at"))),
    ]
    section = Section("summary", "Summary", [DefList(items)])
    if debate.get("subject"):
        section.blocks += [Para("Subject", "h"), Para(debate["subject"], "subject")]
    participants = debate.get("participants") or []
    if participants:
        section.blocks.append(Table(["role", "model", "backend", "sampling"], [
            [p["role"], p["model_id"], p["backend"], _sampling(p.get("options"))] for p in participants],
            caption="Participants", numeric=False))
    events = debate.get("moderator_events") or []
    section.blocks.append(Para("The moderator's actions", "h"))
    if events:
        section.blocks.append(Table(["round", "when", "action", "details"], [
            [m.get("round"), when(m.get("created_at")), m.get("kind"), _details(m.get("payload"))] for m in events],
            numeric=False))
    else:
        section.blocks.append(Para("None: the debate ran as configured.", "note"))
    notices = debate.get("notices") or []
    if notices:
        section.blocks.append(Para("Notices", "h"))
        section.blocks.append(Bullets([f"round {n.get('round') if n.get('round') is not None else '—'}: {n.get('text')}"
                                       for n in notices]))
    return section


def _parameters(debate: Mapping[str, Any]) -> Section | None:
    config = debate.get("config") or {}
    return Section("parameters", "Parameters", [value_block(config)]) if config else None


def _sampling(options: Any) -> str:
    if not isinstance(options, Mapping):
        return ""
    keys = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "max_tokens", "seed")
    return ", ".join(f"{k}={num(options[k])}" for k in keys if options.get(k) is not None)


def _details(payload: Any) -> str:
    if isinstance(payload, Mapping):
        return "; ".join(f"{k}: {num(v) if not isinstance(v, Mapping | list) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in payload.items())
    return num(payload)


def _transcript(debate: Mapping[str, Any]) -> Section:
    section = Section("transcript", "Transcript")
    turns = debate.get("turns") or []
    if not turns:
        section.blocks.append(Para("No turn was journalled.", "note"))
    for t in turns:
        kappa = f", κ = {t['kappa']:.2f}" if isinstance(t.get("kappa"), int | float) else ""
        confidence = f", confidence {num(t['confidence'])}" if t.get("confidence") is not None else ""
        meta = f"{t.get('phase') or ''} · round {t.get('round')} · {t.get('kind') or ''}{kappa}{confidence}"
        tokens = t.get("completion_tokens")
        if tokens:
            meta += f" · {tokens} tokens in {num(t.get('duration_s'))} s"
        notes = [(name.replace("_", " "), [str(n) for n in t[name]]) for name in sorted(t)
                 if name.endswith("notes") and isinstance(t.get(name), list) and t[name]]
        section.blocks.append(Turn(f"{t['role']} ({t.get('model_id', '')})", meta, t.get("text") or "",
                                   t.get("request"), t.get("distribution"), notes))
    return section


#: The metrics plotted for every protocol that journals them, in this order (name, label).
PLOTTED = (("jsd", "Jensen–Shannon divergence (JSD)"), ("wd", "Wasserstein distance (WD)"),
           ("mi", "mutual information (MI)"), ("crit", "CRIT (mean, 0–1)"), ("kappa", "contentiousness κ"),
           ("delta", "Δ (SocraSynth)"))


def _metrics(debate: Mapping[str, Any]) -> Section | None:
    rows = debate.get("metrics") or []
    if not rows:
        return None
    section = Section("metrics", "Metrics per round")
    charts = []
    for name, label in PLOTTED:
        series = {label: [(float(r["round"]), _float(r.get(name))) for r in rows]}
        charts.append(line_chart(label, series))
    crit_parts = {f"{key[-1].upper()} (agent-{key[-1]})": [(float(r["round"]), _float(r.get(key))) for r in rows]
                  for key in ("crit_a", "crit_b") if any(r.get(key) is not None for r in rows)}
    if crit_parts:
        charts.append(line_chart("CRIT per agent (0–1)", crit_parts))
    section.blocks.append(Figures([c for c in charts if c], "Each metric over the rounds (round 0 is the opening)."))
    names = sorted({k for r in rows for k in r} - {"round", "phase"})
    # one row per metric, one column per round: a protocol records a dozen metrics and few rounds,
    # and the page must stay as wide as the text (and the paper) however many metrics there are
    section.blocks.append(Table(["metric", *(f"round {r['round']}" for r in rows)],
                                [["phase", *(r.get("phase") or "" for r in rows)],
                                 *([n, *(num(r.get(n)) for r in rows)] for n in names)], caption="All metrics"))
    return section


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _distributions(debate: Mapping[str, Any]) -> Section | None:
    turns = [t for t in debate.get("turns") or [] if t.get("distribution")]
    final = (debate.get("outcome") or {}).get("final_distribution") if isinstance(debate.get("outcome"), Mapping) else None
    if not turns and not final:
        return None
    section = Section("distributions", "Distributions")
    by_round: dict[Any, dict[str, dict[str, float]]] = {}
    for t in turns:
        by_round.setdefault(t.get("round"), {})[t["role"]] = t["distribution"]
    charts = [bars(f"Round {r}", groups) for r, groups in by_round.items()]
    if charts:
        section.blocks.append(Figures(charts, "Each agent's distribution per round."))
    if final:
        section.blocks.append(Figures([bars("Final distribution", {"final": final})], "The debate's final distribution."))
    return section


def _judgements(debate: Mapping[str, Any]) -> Section | None:
    judgements = debate.get("judgements") or []
    if not judgements:
        return None
    section = Section("judgements", "Judgements")
    rows, reasons_given = [], []
    for j in judgements:
        judge = f"{j.get('judge_role')} ({j.get('judge_model')})"
        rows.append([j.get("round"), judge, j.get("kind"), j.get("target") or "", j.get("subject") or "", num(j.get("score")),
                     j.get("verdict") or ""])
        said = _reason_summary(j.get("reasons") or {})
        if said:
            about = " of ".join(str(x) for x in (j.get("kind"), j.get("target")) if x)
            reasons_given.append((f"round {j.get('round')} · {judge} · {about}"
                                  + (f" · score {num(j.get('score'))}" if j.get("score") is not None else ""), said))
    section.blocks.append(Table(["round", "judge", "kind", "target", "subject", "score", "verdict"], rows, numeric=False))
    if reasons_given:
        section.blocks.append(Para("The judges' reasons", "h"))
        for heading, said in reasons_given:
            section.blocks += [Para(heading, "sub"), said]
    return section


def _reason_summary(reasons: Any) -> Any:
    """A judgement's reasons: its claim and justification first, the rated reasons as a list."""
    if not isinstance(reasons, Mapping):
        return num(reasons)
    items: list[tuple[str, Any]] = []
    for key in ("claim", "justification", "feedback", "evidence", "rationale", "comment"):
        if reasons.get(key):
            items.append((key, str(reasons[key])))
    for key in ("reasons", "rival_reasons"):
        rated = reasons.get(key)
        if isinstance(rated, list) and rated:
            items.append((key.replace("_", " "), Bullets([
                f"{r.get('reason', '')} (validity {r.get('validity')}, credibility {r.get('credibility')})"
                if isinstance(r, Mapping) else str(r) for r in rated])))
    notes = reasons.get("notes")
    if isinstance(notes, list) and notes:
        items.append(("notes", "; ".join(str(n) for n in notes)))
    return DefList(items) if items else ""


def _recommendations(outcome: Mapping[str, Any]) -> Section | None:
    recs = outcome.get("recommendations")
    if not recs:
        return None
    return Section("recommendations", "Recommendations", [value_block(recs)])


# -- each protocol's own sections -------------------------------------------------------------------


def _evince(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"final_distribution", "recommendations", "top", "crit", "weights", "improvement", "agreed", "ending"}
    items = [("Top label", outcome.get("top") or "—"), ("Agents agreed", num(outcome.get("agreed"))),
             ("Ending", outcome.get("ending") or "—")]
    section = Section("evince", "EVINCE's result", [DefList(items)])
    if outcome.get("weights") or outcome.get("crit"):
        section.blocks.append(Figures([bars("CRIT weight per agent (1–10)", {"CRIT": outcome.get("weights") or outcome["crit"]},
                                            scale=10, percent=False)]))
    if outcome.get("improvement"):
        section.blocks.append(Table(["measure", "change from the first to the last round (%)"],
                                    [[k, num(v)] for k, v in outcome["improvement"].items()], caption="Improvement"))
    return [section]


def _socrasynth(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"agenda", "rounds", "evaluation", "joint", "stances", "case_checks"}
    out = []
    agenda = outcome.get("agenda") or []
    stances = outcome.get("stances") or {}
    first = Section("socrasynth", "SocraSynth: agenda and rounds")
    if stances:
        first.blocks.append(DefList([(role, stance) for role, stance in stances.items()]))
    if agenda:
        first.blocks.append(Table(["#", "subtopic", "scope"], [[i + 1, a.get("title", ""), a.get("description", "")]
                                                             for i, a in enumerate(agenda)], caption="Agenda", numeric=False))
    rounds = outcome.get("rounds") or []
    if rounds:
        first.blocks.append(Figures([
            line_chart("Γ (CRIT, 1–10) per round", {"Γ": [(float(r["round"]), _float(r.get("gamma"))) for r in rounds]}),
            line_chart("Δ (contentiousness) per round", {"Δ": [(float(r["round"]), _float(r.get("delta"))) for r in rounds]}),
        ], "Table 6.2: Γ and Δ at each round."))
        first.blocks.append(Table(["round", "kind", "Δ", "Γ"], [[r.get("round"), r.get("kind"), num(r.get("delta")), num(r.get("gamma"))]
                                                                 for r in rounds]))
    if outcome.get("case_checks"):
        first.blocks.append(Para("Case checks (6.3.1.2)", "h"))
        first.blocks.append(value_block(outcome["case_checks"]))
    out.append(first)
    evaluation = outcome.get("evaluation") or {}
    if evaluation:
        section = Section("judges", "The judges' tables (Table 6.3): Γ per subtopic")
        alignments = evaluation.get("alignments") or {}
        totals = evaluation.get("totals") or {}
        judges = evaluation.get("judges") or {}
        for alignment, per_judge in alignments.items():
            for judge, per_subtopic in per_judge.items():
                agents = list(dict.fromkeys(a for scores in per_subtopic.values() for a in scores))
                rows = [[subtopic, *(num(scores.get(a)) for a in agents)] for subtopic, scores in per_subtopic.items()]
                total = (totals.get(alignment) or {}).get(judge) or {}
                rows.append(["total", *(num(total.get(a)) for a in agents)])
                caption = f"{judge} ({judges.get(judge, '')}), {alignment.replace('_', ' ')}"
                section.blocks.append(Table(["subtopic", *agents], rows, caption=caption))
                section.blocks.append(Figures([bars(f"Γ per subtopic: {caption}",
                                                    {a: {s: v.get(a) for s, v in per_subtopic.items() if v.get(a) is not None}
                                                     for a in agents}, scale=10, percent=False)]))
        winners = evaluation.get("winners") or {}
        section.blocks.append(DefList([("Winner", evaluation.get("winner") or "—"),
                                       *((f"{judge}'s verdict", w) for judge, w in winners.items()),
                                       ("Gaps", num(evaluation.get("gaps")))]))
        reasons = evaluation.get("reasons") or {}
        for judge, given in reasons.items():
            section.blocks.append(Para(f"{judge}'s reasons", "h"))
            section.blocks.append(Table(["subtopic", "alignment", "claim", "justification"],
                                        [[r.get("subtopic", ""), r.get("alignment", ""), r.get("claim", ""), r.get("justification", "")]
                                         for r in given if isinstance(r, Mapping)], numeric=False))
        out.append(section)
    joint = outcome.get("joint") or {}
    if joint:
        section = Section("joint", "The joint proposal")
        if joint.get("proposal"):
            section.blocks.append(Para(joint["proposal"], "lead"))
        for key in ("pros", "cons"):
            if joint.get(key):
                section.blocks += [Para(key.capitalize(), "h"), Bullets(list(joint[key]))]
        if joint.get("written_by"):
            section.blocks.append(Para("Written by " + ", ".join(joint["written_by"]), "note"))
        out.append(section)
    return out


def _d3(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"passes", "swap_audit", "verdict", "variant", "usage"}
    section = Section("d3", "D3: passes and audits",
                      [DefList([("Verdict", outcome.get("verdict") or "—"), ("Variant", outcome.get("variant") or "—")])])
    for i, p in enumerate(outcome.get("passes") or [], start=1):
        section.blocks.append(Para(f"Pass {i} (answers shown as {p.get('order', '?')})", "h"))
        section.blocks.append(DefList([("Verdict", p.get("verdict") or "—"), ("Decided by", p.get("decided_by") or "—"),
                                       ("Why it stopped", p.get("stop_reason") or "—"),
                                       ("Tally", _details(p.get("tally"))), ("Cumulative scores", _details(p.get("cumulative")))]))
        rounds = p.get("rounds") or []
        if rounds:
            section.blocks.append(Figures([line_chart(f"Pass {i}: the judge's scores", {
                "A": [(float(r["round"]), _float(r.get("score_a"))) for r in rounds],
                "B": [(float(r["round"]), _float(r.get("score_b"))) for r in rounds]})]))
            section.blocks.append(value_block(rounds))
        votes = p.get("votes") or []
        if votes:
            section.blocks.append(Table(["juror", "model", "persona", "vote", "scores", "rationale"], [
                [v.get("juror"), v.get("model"), v.get("persona") or "", v.get("vote") or "—", _details(v.get("scores")),
                 v.get("rationale") or ""] for v in votes], caption="The jury", numeric=False))
        budget = p.get("budget")
        if budget:
            section.blocks.append(Para("Budget", "h"))
            section.blocks.append(value_block(budget))
    audit = outcome.get("swap_audit")
    section.blocks.append(Para("Position-swap audit", "h"))
    section.blocks.append(value_block(audit) if audit else Para("Not run (swap_audit off).", "note"))
    if outcome.get("usage"):
        section.blocks.append(Table(["role", *(k for k in next(iter(outcome["usage"].values())))],
                                    [[role, *(num(v) for v in u.values())] for role, u in outcome["usage"].items()],
                                    caption="Tokens used per role"))
    return [section]


def _humanloop(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"analysis", "decision", "condition", "labels", "seats"}
    analysis = outcome.get("analysis") or {}
    section = Section("stances", "Stance analysis (seed 001)",
                      [DefList([("Decision", outcome.get("decision") or "—"), ("Condition", outcome.get("condition") or "—"),
                                ("Labels", ", ".join(outcome.get("labels") or []))])])
    table = analysis.get("table") or {}
    rounds = analysis.get("rounds") or []
    if table:
        confidence = analysis.get("confidence") or {}
        rows = [[role, *(f"{s}" + (f" ({num(c)})" if c is not None else "") for s, c in
                         zip(stances, (confidence.get(role) or []) + [None] * len(stances)))]
                for role, stances in table.items()]
        section.blocks.append(Table(["seat", *(f"round {r}" for r in rounds)], rows,
                                    caption="Each seat's stance per round (stated confidence)", numeric=False))
        if confidence:
            section.blocks.append(Figures([line_chart("Stated confidence per round", {
                role: [(float(r), _float(c)) for r, c in zip(rounds, values)] for role, values in confidence.items()})]))
    triem = analysis.get("triem")
    measures = [("changes", analysis.get("changes")), ("opportunities", analysis.get("opportunities")),
                ("change rate", analysis.get("change_rate")), ("toward the person", analysis.get("toward_human")),
                ("away from the person", analysis.get("away_from_human"))]
    section.blocks.append(DefList([(k, num(v) if v is not None else "—") for k, v in measures]))
    if triem:
        section.blocks.append(Para("Triem et al.'s measures (a change through “no stance” counts)", "h"))
        section.blocks.append(value_block(triem))
    by_role = analysis.get("by_role") or {}
    rates = {"changes of stance (seed 001)": {role: m["change_rate"] for role, m in by_role.items()
                                               if isinstance(m.get("change_rate"), int | float)},
             "Triem et al. (through “no stance”)": {role: (m.get("triem") or {})["change_rate"] for role, m in by_role.items()
                                                     if isinstance((m.get("triem") or {}).get("change_rate"), int | float)}}
    if any(rates.values()):
        section.blocks.append(Figures([bars("Stance change rate per seat", rates)],
                                      "Share of a seat's opportunities at which its stance changed, by both measures."))
    if by_role:
        section.blocks.append(Table(["seat", "changes", "opportunities", "change rate", "toward", "away", "Triem changes",
                                     "Triem rate"], [
            [role, num(m.get("changes")), num(m.get("opportunities")), num(m.get("change_rate")), num(m.get("toward_human")),
             num(m.get("away_from_human")), num((m.get("triem") or {}).get("changes")),
             num((m.get("triem") or {}).get("change_rate"))] for role, m in by_role.items()], caption="Per seat"))
    if analysis.get("transitions"):
        section.blocks.append(Para("Transitions", "h"))
        section.blocks.append(value_block(analysis["transitions"]))
    return [section]


def _conference(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"stages", "agreed_stages"}
    stages = outcome.get("stages") or []
    section = Section("stages", "The conference's stages",
                      [DefList([("Stages agreed", f"{num(outcome.get('agreed_stages'))} of {len(stages)}")])])
    if stages:
        section.blocks.append(Table(["stage", "task", "agreed", "closed by", "rounds", "verdicts", "evaluation (mean)"], [
            [s.get("stage"), s.get("name") or s.get("task"), num(s.get("agreed")), s.get("closed_by") or "", s.get("rounds"),
             ", ".join(str(v) for v in s.get("verdicts") or []), num((s.get("evaluation") or {}).get("mean"))]
            for s in stages], numeric=False))
        factors = {f"stage {s.get('stage')}": (s.get("evaluation") or {}).get("factors") or {} for s in stages}
        if any(factors.values()):
            section.blocks.append(Figures([bars("The evaluator's factors (1–10)", factors, scale=10, percent=False)]))
        for s in stages:
            comment = (s.get("evaluation") or {}).get("comment")
            if comment:
                section.blocks.append(DefList([(f"Evaluator on stage {s.get('stage')}", comment)]))
    return [section]


def _deliberation(debate: Mapping[str, Any], outcome: Mapping[str, Any], claimed: set[str]) -> list[Section]:
    claimed |= {"analysis"}
    analysis = outcome.get("analysis") or {}
    section = Section("analysis", "The analyzer's map of the deliberation")
    for claim in analysis.get("claims") or []:
        section.blocks.append(Para(f"{claim.get('id', '')} ({claim.get('speaker', '')}): {claim.get('text', '')}", "lead"))
        for key, label in (("supports", "supported by"), ("attacks", "attacked by")):
            if claim.get(key):
                section.blocks.append(DefList([(label, Bullets([f"{x.get('id', '')}: {x.get('text', '')}" for x in claim[key]]))]))
    for key in ("agreements", "open_questions", "summary", "links", "notes"):
        if analysis.get(key):
            section.blocks += [Para(key.replace("_", " ").capitalize(), "h"), value_block(analysis[key])]
    if not section.blocks:
        section.blocks.append(Para("No analysis was made in this debate.", "note"))
    return [section]


#: Protocol name (or its prefix, for variants such as ``d3-samre``) → its own sections.
PROTOCOL_SECTIONS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], set[str]], list[Section]]] = {
    "evince": _evince, "socrasynth": _socrasynth, "d3": _d3, "humanloop": _humanloop, "agreement": _conference,
    "deliberation": _deliberation,
}


def protocol_sections(protocol: str) -> Callable[[Mapping[str, Any], Mapping[str, Any], set[str]], list[Section]] | None:
    return PROTOCOL_SECTIONS.get(protocol) or PROTOCOL_SECTIONS.get(protocol.split("-", 1)[0])


# -- provenance and seal ----------------------------------------------------------------------------


def _provenance(debate: Mapping[str, Any]) -> Section:
    provenance = debate.get("provenance")
    if not provenance:
        return Section("provenance", "Provenance", [Para(
            "This journal keeps no provenance for the debate (it was recorded before provenance was journalled).", "note")])
    return Section("provenance", "Provenance", [value_block(provenance)])


def _seal(debate: Mapping[str, Any], redacted: bool) -> Section:
    """The seal: the chain's head, who signed it, and how to check it; a redacted copy shows
    none of it (every hash of the seal is of the unredacted text: ``store.seal.redacted``)."""
    found = debate.get("seal")
    title = "The journal's seal"
    if redacted or (isinstance(found, Mapping) and found.get("redacted")):
        return Section("seal", title, [Para(
            "This copy is redacted, so it carries no seal: the seal's hashes (of each row, each link and the head) are "
            "of the unredacted text and would let a reader test guesses of what was masked. To check the record, "
            f"verify the journal it was made from: symposium verify {debate.get('id', '')}.", "warn")])
    if not isinstance(found, Mapping) or not found.get("head"):
        return Section("seal", title, [Para(
            "This journal keeps no hash chain for the debate, so this report cannot be checked against it.", "warn")])
    chain = found.get("chain")
    links = found.get("links") or (len(chain) if isinstance(chain, list) else None)
    items: list[tuple[str, Any]] = [("Chain head (SHA-256)", Para(str(found["head"]), "hash")),
                                    ("Rows sealed", num(found.get("rows")))]
    if links:
        items.append(("Links", num(links)))
    if found.get("signature"):
        items += [("Signed by key", Para(str(found.get("fingerprint") or _fingerprint(found.get("key"))), "hash")),
                  ("Public key", Para(str(found.get("key")), "hash")),
                  ("Signature (Ed25519)", Para(str(found["signature"]), "hash"))]
        if isinstance(found.get("signed_from"), int) and found["signed_from"] > 1:
            items.append(("Signed from", f"link {found['signed_from']} on: the links before were written before "
                                         "Symposium signed its records"))
    else:
        items.append(("Signature", "none: written before Symposium signed its records, so only a head noted earlier "
                                   "can vouch for it"))
    migrated = found.get("sealed_on_migration_at")
    if migrated:
        items.append(("Sealed on migration at", when(migrated)))
        items.append(("Note", "rows recorded before the journal was sealed were chained as they stood at the migration"))
    known = {"head", "rows", "links", "sealed_on_migration_at", "chain", "key", "fingerprint", "signature",
             "signed_from", "format", "layout", "columns"}
    items += [(str(k), value_block(v)) for k, v in found.items() if k not in known and v is not None]
    items.append(("To check", f"symposium verify {debate.get('id', '')} --head {found['head']} (the journal), or "
                              "symposium verify --export FILE (a JSON export)"))
    return Section("seal", title, [DefList(items)])


def _fingerprint(key: Any) -> str:
    try:
        return signing.fingerprint(str(key))
    except ValueError:
        return "(a key that does not parse)"


# -- the whole document ----------------------------------------------------------------------------


def build(debate: Mapping[str, Any], *, redaction: Mapping[str, int] | None = None) -> Document:
    """The report's document for one debate (the export dict; ``redaction`` = items masked per
    kind when the text was redacted, else None)."""
    outcome = debate.get("outcome") if isinstance(debate.get("outcome"), Mapping) else {}
    assert outcome is not None
    # the findings first (as a paper puts its results before its appendix), the record after
    sections = [_header(debate)]
    sections += [s for s in (_metrics(debate), _distributions(debate)) if s is not None]
    claimed: set[str] = {"final_distribution", "recommendations"}
    own = protocol_sections(str(debate.get("protocol", "")))
    if own is not None:
        sections += own(debate, outcome, claimed)
    sections += [s for s in (_judgements(debate), _recommendations(outcome)) if s is not None]
    rest = {k: v for k, v in outcome.items() if k not in claimed}
    if rest:
        sections.append(Section("outcome", "Outcome (every other recorded value)", [value_block(rest)]))
    sections += [s for s in (_transcript(debate), _parameters(debate)) if s is not None]
    sections += [_provenance(debate), _seal(debate, redacted=redaction is not None)]
    subtitle = f"{debate.get('protocol', '')} · {debate.get('status', '')} · {when(debate.get('created_at'))}"
    return Document(str(debate.get("title") or debate.get("id") or "debate"), subtitle, sections,
                    dict(redaction) if redaction is not None else None)


def blocks_of(document: Document) -> Iterable[Any]:
    """Every block of ``document``, nested ones included (tests walk them)."""
    def walk(block: Any) -> Iterable[Any]:
        yield block
        if isinstance(block, DefList):
            for _, v in block.items:
                yield from walk(v)
        elif isinstance(block, Bullets):
            for v in block.items:
                yield from walk(v)
        elif isinstance(block, Table):
            for row in block.rows:
                for v in row:
                    yield from walk(v)
    for section in document.sections:
        for block in section.blocks:
            yield from walk(block)


__all__: Sequence[str] = ("Document", "Section", "build", "value_block", "PROTOCOL_SECTIONS", "blocks_of")
