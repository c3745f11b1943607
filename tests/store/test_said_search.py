"""Search finds what the moderator and the judges said, not only the turns: an interjection, a
verdict's note, an agenda edit, a judge's reasons. A real SQLite journal; deleting a debate
removes those words from the files as it does its turns'."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from protocols.core.events import DebateStarted, JudgementMade, ModeratorActed, Participant
from store.journal import Journal
from store.queries import Queries
from store.schema import MIGRATIONS
from tests.helpers.journal_rows import start, turn

INTERJECTION = "Consider acute myocardial infarction before anything else."


def _moderated(journal: Journal, debate_id: str = "d1", marker: str = "") -> None:
    journal.record(turn(debate_id, text="Chest pain with sweating."))
    journal.record(ModeratorActed(debate_id, "interject", {"to": "agent-a", "text": f"{INTERJECTION} {marker}"}, 1))
    journal.record(ModeratorActed(debate_id, "verdict", {"accept": False, "note": f"Troponin was never measured {marker}"}, 2))
    journal.record(ModeratorActed(debate_id, "edit_agenda", {
        "before": [{"title": "Cost", "description": "what it costs"}],
        "after": [{"title": "Pericarditis", "description": f"the friction rub {marker}"}]}, 0))
    journal.record(ModeratorActed(debate_id, "set_contentiousness", {"value": 0.3}, 1))
    journal.record(JudgementMade(debate_id, "judge", "smollm2-135m", "crit", "agent-a", None, 7.0, None,
                                 {"claim": "an infarct", "reasons": [{"reason": f"ST elevation in leads II and III {marker}",
                                                                     "validity": 8}]}, "{}", 1))


def test_search_finds_the_moderators_and_judges_words(journal: Journal) -> None:
    start(journal)
    _moderated(journal)
    q = Queries(journal)
    found = {word: [(h["role"], h["round"]) for h in q.search(word)] for word in
             ("infarction", "troponin", "pericarditis", "friction", "elevation")}
    assert found == {"infarction": [("moderator", 1)], "troponin": [("moderator", 2)],
                     "pericarditis": [("moderator", 0)], "friction": [("moderator", 0)],
                     "elevation": [("judge", 1)]}
    assert "[infarction]" in q.search("infarction")[0]["snippet"]
    assert q.search("cost") == [], "the agenda before the moderator's edit is the agents', not the moderator's"
    assert q.search("agent") == [] and q.search("accept") == [], "a payload's settings are not words said"
    assert [h["role"] for h in q.search("sweating")] == ["agent-a"], "the turns are still found"
    assert q.search('"unbalanced AND (') == []


#: The journal layout that added the search over the moderator's and judges' words.
SAID = next(m.version for m in MIGRATIONS if "said_fts" in m.sql)


def test_a_journal_from_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    """A journal of the layout before the search over what was said (its migration taken back
    out) gains the index, with the rows already journalled, when it is opened."""
    path = tmp_path / "old.db"
    with Journal(path) as j:
        start(j)
        _moderated(j)
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(f"""DROP TABLE said_fts; DROP TRIGGER said_moderator_ai; DROP TRIGGER said_moderator_ad;
                              DROP TRIGGER said_judge_ai; DROP TRIGGER said_judge_ad; DELETE FROM migrations WHERE version = {SAID};""")
    conn.close()
    with Journal(path) as j:
        assert [h["role"] for h in Queries(j).search("infarction")] == ["moderator"]
        assert [h["role"] for h in Queries(j).search("elevation")] == ["judge"]


def test_a_deleted_debates_moderator_and_judge_words_are_gone_from_the_files(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    marker = "Zanzibarite"
    with Journal(path) as j:
        start(j, "keep", title="A debate that stays")
        _moderated(j, "keep")
        j.record(DebateStarted("gone", "evince", "gone", "gone", {}, (Participant("agent-a", "smollm2-135m", "llamacpp"),)))
        for n in range(3):
            _moderated(j, "gone", f"{marker} {n}")
        assert Queries(j).search(marker)
        assert j.delete_debate("gone")
        leftovers = [f.name for f in tmp_path.iterdir() if marker.encode() in f.read_bytes()
                     or marker.lower().encode() in f.read_bytes()]
        assert leftovers == []
        assert Queries(j).search("infarction") and not Queries(j).search(marker)


