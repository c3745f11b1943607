"""Retrieval over a debate's evidence: SQLite's FTS5 and its BM25 ranking, offline.

Why FTS5: the journal already uses it for search, so retrieval needs no server, no model and no
download. Why an index of its own per debate, in memory, rather than a table in the journal:
BM25 weighs a word by how many passages hold it, so one index over every debate's passages
would rank a debate's passages differently as other debates come and go, and a resumed debate
would be shown other passages than the run it continues. Built from the same passages in the
same order, this index gives the same ids for the same query, every time (ties go to the
earlier passage); building it takes milliseconds for thousands of passages
(``benchmarks/evidence.py``).

A query is the words of what a turn is about (its case, its subtopic, the opponent's points):
each distinct word, up to :data:`MAX_TERMS` of them, quoted (so nothing a model or a file wrote
is read as FTS5 syntax) and joined by OR; BM25 ranks the passages that hold any of them.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from protocols.core.evidence import Evidence, EvidenceSettings, Grounding, Retrieve, evidence_of
from protocols.core.passages import Passage

#: The most distinct words of a query that are searched (the first ones in the query).
MAX_TERMS = 96
_WORD = re.compile(r"\w+")


def _function_words() -> frozenset[str]:
    """English words that say nothing of what a passage is about. BM25 weighs a word by how few
    passages hold it, so in a short evidence file "the" or "why", in one passage only, would
    outrank the word the turn is about (a test found "why did the creatinine rise" ranking "The
    patient lives alone" first)."""
    return frozenset("""
        a about above after again against all also am an and any are as at be because been before being below
        between both but by can could did do does doing down during each few for from further had has have having
        he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
        nor not now of off on once only or other our ours ourselves out over own same she should so some such than
        that the their theirs them themselves then there these they this those through to too under until up very
        was we were what when where which while who whom why will with would you your yours yourself yourselves
        one two give given make your let please may might must shall say says said
    """.split())


_FUNCTION_WORDS = _function_words()


def terms(query: str) -> list[str]:
    """The words searched for ``query``: distinct (case folded), two characters or more, not a
    function word ("the", "why"), in the order they first appear, at most :data:`MAX_TERMS`."""
    out: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(query.casefold()):
        if len(word) < 2 or word in seen or word in _FUNCTION_WORDS:
            continue
        seen.add(word)
        out.append(word)
        if len(out) == MAX_TERMS:
            break
    return out


def retriever(passages: Sequence[Passage]) -> Retrieve:
    """A BM25 retriever over ``passages`` (an in-memory FTS5 index, see the module docstring)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    # Porter's stemmer: "kidneys" finds "kidney", "doubling" "doubled" (English suffixes only).
    conn.execute("CREATE VIRTUAL TABLE passages USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    with conn:
        conn.executemany("INSERT INTO passages(rowid, text) VALUES (?, ?)", ((p.number, p.text) for p in passages))
    lock = threading.Lock()

    def retrieve(query: str, k: int) -> list[str]:
        words = terms(query)
        if not words or k < 1:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        with lock:
            rows = conn.execute("SELECT rowid FROM passages WHERE passages MATCH ? ORDER BY bm25(passages), rowid LIMIT ?",
                                (match, k)).fetchall()
        return [f"E{r[0]}" for r in rows]

    return retrieve


def grounding(evidence: Evidence, settings: EvidenceSettings) -> Grounding:
    """What a new debate's protocol is given: the evidence read from the files, indexed."""
    return Grounding(evidence, settings, retriever(evidence.passages))


def grounding_of(debate: Mapping[str, Any]) -> Grounding | None:
    """What a resumed (or replayed) debate's protocol is given: the passages its journal holds
    (``Queries.debate``'s ``evidence``), indexed again; ``None`` when it has no evidence."""
    journalled = debate.get("evidence")
    if not journalled:
        return None
    evidence, settings = evidence_of(journalled)
    return grounding(evidence, settings)


__all__ = ["MAX_TERMS", "grounding", "grounding_of", "retriever", "terms"]
