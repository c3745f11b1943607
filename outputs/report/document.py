"""The report as a document model: sections of typed blocks, built from a debate's export dict.

The dict is the JSON export's (:meth:`store.queries.Queries.debate`, plus ``provenance`` and
``seal`` where the journal keeps them), so a report can also be made from an exported file.
Nothing here writes HTML: :mod:`outputs.report.render` does, escaping every value it did not
build. Each protocol adds the sections its definition presents (``present``: SocraSynth's judges'
tables and Γ, D3's passes and audits, …, as neutral blocks of :mod:`protocols.core.present`); what
no section claims of the outcome is still shown, generically, so a new outcome key is never lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from outputs.sources import cited_passages, location, per_agent, share
from protocols.core.costs import cost_section, journal_calls
from protocols.core.evidence import cited_line
from protocols.core.outcome import outcome_in_words
from protocols.core.present import (
    BarChart,
    Bullets,
    DefList,
    Figures,
    LineChart,
    Para,
    Section,
    Table,
    num,
    value_block,
)
from protocols.core.present import (
    details as _details,
)
from protocols.core.present import (
    number as _float,
)
from protocols.registry import BY_NAME
from store import signing

# -- blocks: the neutral ones every protocol presents with, and the report's own ---------------------


@dataclass
class Turn:
    heading: str
    meta: str
    text: str
    request: str | None
    distribution: dict[str, float] | None
    notes: list[tuple[str, list[str]]]  # ("parse notes", [...]), ("fit notes", [...])
    #: The turn's checked claims: (status, the claim in words, the id of the passage a supported
    #: citation links to, or ``None``: a citation that did not check links nowhere).
    citations: list[tuple[str, str, str | None]] = field(default_factory=list)


@dataclass
class Cited:
    """A passage of the evidence that a supported citation names: the target of its links."""

    passage: str  # "E7"
    label: str  # "E7 p.4 ¶3 · labs.pdf"
    text: str


@dataclass
class Document:
    title: str
    subtitle: str
    sections: list[Section]
    redaction: dict[str, int] | None = None


Block = Para | DefList | Table | Bullets | Figures | Turn | Cited


def when(ts: Any) -> str:
    """A journal time (seconds since the epoch, or an ISO string) in UTC, to the second."""
    if ts is None or ts == "":
        return "—"
    if isinstance(ts, int | float):
        return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(ts)


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
        cited = [(str(c.get("status")), cited_line(c), c.get("passage") if c.get("status") == "supported" else None)
                 for c in t.get("citations") or []]
        section.blocks.append(Turn(f"{t['role']} ({t.get('model_id', '')})", meta, t.get("text") or "",
                                   t.get("request"), t.get("distribution"), notes, cited))
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
        charts.append(LineChart(label, series))
    crit_parts = {f"{key[-1].upper()} (agent-{key[-1]})": [(float(r["round"]), _float(r.get(key))) for r in rows]
                  for key in ("crit_a", "crit_b") if any(r.get(key) is not None for r in rows)}
    if crit_parts:
        charts.append(LineChart("CRIT per agent (0–1)", crit_parts))
    section.blocks.append(Figures(charts, "Each metric over the rounds (round 0 is the opening)."))
    names = sorted({k for r in rows for k in r} - {"round", "phase"})
    # one row per metric, one column per round: a protocol records a dozen metrics and few rounds,
    # and the page must stay as wide as the text (and the paper) however many metrics there are
    section.blocks.append(Table(["metric", *(f"round {r['round']}" for r in rows)],
                                [["phase", *(r.get("phase") or "" for r in rows)],
                                 *([n, *(num(r.get(n)) for r in rows)] for n in names)], caption="All metrics"))
    return section


def _distributions(debate: Mapping[str, Any]) -> Section | None:
    turns = [t for t in debate.get("turns") or [] if t.get("distribution")]
    final = (debate.get("outcome") or {}).get("final_distribution") if isinstance(debate.get("outcome"), Mapping) else None
    if not turns and not final:
        return None
    section = Section("distributions", "Distributions")
    by_round: dict[Any, dict[str, dict[str, float]]] = {}
    for t in turns:
        by_round.setdefault(t.get("round"), {})[t["role"]] = t["distribution"]
    charts = [BarChart(f"Round {r}", groups) for r, groups in by_round.items()]
    if charts:
        section.blocks.append(Figures(charts, "Each agent's distribution per round."))
    if final:
        section.blocks.append(Figures([BarChart("Final distribution", {"final": final})], "The debate's final distribution."))
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


def _sources(debate: Mapping[str, Any], redacted: bool) -> Section | None:
    """The evidence: each file with its SHA-256, each agent's claims counted by verdict, and the
    passages that supported citations name (each citation in the transcript links to its own)."""
    evidence = debate.get("evidence")
    if not isinstance(evidence, Mapping):
        return None
    files = list(evidence.get("files") or [])
    section = Section("sources", "Sources")
    section.blocks.append(Para("The files the debate argued from, read and cut into passages before its first turn. Each "
                               "claim an agent cited was checked: the passage must exist and a quote must be in it. A "
                               "citation that did not check is never shown as a source.", "lead"))
    section.blocks.append(Table(["#", "file", "kind", "size (bytes)", "pages", "passages", "SHA-256"], [
        [f.get("number"), f.get("name"), f.get("kind"), f.get("size"), f.get("pages") if f.get("pages") is not None else "—",
         f.get("passages"), "withheld (redacted copy)" if redacted else Para(str(f.get("sha256")), "hash")] for f in files],
        numeric=False))
    notes = [f"{f.get('name')}: {n}" for f in files for n in f.get("notes") or []]
    notes += [f"{f.get('name')}: masked before indexing: " + ", ".join(f"{n} {k}" for k, n in sorted(f["redactions"].items()))
              for f in files if f.get("redactions")]
    if notes:
        section.blocks.append(Bullets(notes))
    counts = per_agent(debate)
    if counts:
        section.blocks.append(Table(["agent", "claims", "supported", "cited, not found", "uncited", "citation precision"],
                                    [[role, t["claims"], t["supported"], t["not_found"], t["uncited"], share(t["precision"])]
                                     for role, t in counts.items()], caption="Claims per agent"))
    else:
        section.blocks.append(Para("No agent listed a claim.", "note"))
    cited = cited_passages(debate)
    if cited:
        section.blocks.append(Para("The passages cited", "h"))
        section.blocks += [Cited(f"E{p.get('number')}", location(p, files), str(p.get("text") or "")) for p in cited]
    section.blocks.append(Para(f"All {len(evidence.get('passages') or [])} passages are in the journal and the JSON export.",
                               "note"))
    return section


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
    claimed: set[str] = {"final_distribution"}
    definition = BY_NAME.get(str(debate.get("protocol", "")))
    if definition is not None and definition.present is not None:
        own = definition.present(outcome, debate)
        claimed.update(*(s.claims for s in own))
        sections += own
    sections += [s for s in (_judgements(debate),) if s is not None]
    rest = {k: v for k, v in outcome.items() if k not in claimed}
    if rest:
        sections.append(Section("outcome", "Outcome (every other recorded value)", [value_block(rest)]))
    sections += [s for s in (_sources(debate, redaction is not None), _transcript(debate), _parameters(debate),
                             cost_section(journal_calls(debate))) if s is not None]
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


__all__: Sequence[str] = ("Cited", "Document", "Section", "build", "value_block", "blocks_of")
