"""The journal's schema, as an ordered list of migrations.

Each migration runs once, inside a transaction, and is recorded in ``migrations``. A journal
whose highest migration is newer than this code knows is refused (with a message saying so)
rather than written to: an older Symposium must not scribble on a newer layout.

The layout is plain tables with readable names so the file opens as it is in Datasette or the
``sqlite-utils`` command line.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from .seal import seal_existing


@dataclass(frozen=True)
class Migration:
    """One step of the layout; ``sql`` runs inside the journal's migration transaction, then
    ``then`` (when a step needs Python, such as hashing), in the same transaction."""

    version: int
    name: str
    sql: str
    then: Callable[[sqlite3.Connection], object] | None = None


_V1_INITIAL = """
        CREATE TABLE debates (
            id            TEXT PRIMARY KEY,
            protocol      TEXT NOT NULL,
            title         TEXT NOT NULL,
            subject       TEXT NOT NULL,
            config_json   TEXT NOT NULL DEFAULT '{}',
            status        TEXT NOT NULL DEFAULT 'running',
            stop_reason   TEXT,
            outcome_json  TEXT,
            created_at    REAL NOT NULL,
            updated_at    REAL NOT NULL,
            finished_at   REAL
        );
        CREATE INDEX debates_created ON debates(created_at);

        CREATE TABLE participants (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            role          TEXT NOT NULL,
            model_id      TEXT NOT NULL,
            backend       TEXT NOT NULL,
            options_json  TEXT NOT NULL DEFAULT '{}',
            details_json  TEXT NOT NULL DEFAULT '{}',
            UNIQUE (debate_id, role)
        );

        CREATE TABLE phases (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            name          TEXT NOT NULL,
            round         INTEGER NOT NULL,
            kappa         REAL,
            started_at    REAL NOT NULL
        );
        CREATE INDEX phases_debate ON phases(debate_id);

        CREATE TABLE rounds (
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER NOT NULL,
            phase         TEXT,
            kappa         REAL,
            PRIMARY KEY (debate_id, round)
        );

        CREATE TABLE turns (
            id                       INTEGER PRIMARY KEY,
            debate_id                TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            seq                      INTEGER NOT NULL,
            round                    INTEGER NOT NULL,
            phase                    TEXT NOT NULL,
            role                     TEXT NOT NULL,
            model_id                 TEXT NOT NULL,
            kind                     TEXT NOT NULL,
            kappa                    REAL,
            text                     TEXT NOT NULL,
            raw                      TEXT NOT NULL,
            parsed_json              TEXT,
            parse_notes_json         TEXT NOT NULL DEFAULT '[]',
            prompt_tokens            INTEGER NOT NULL,
            prompt_tokens_evaluated  INTEGER NOT NULL,
            completion_tokens        INTEGER NOT NULL,
            duration_s               REAL NOT NULL,
            finish_reason            TEXT NOT NULL,
            created_at               REAL NOT NULL,
            UNIQUE (debate_id, seq)
        );
        CREATE INDEX turns_debate ON turns(debate_id, seq);

        CREATE TABLE distributions (
            id            INTEGER PRIMARY KEY,
            turn_id       INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER NOT NULL,
            role          TEXT NOT NULL,
            rank          INTEGER NOT NULL,
            label         TEXT NOT NULL,
            probability   REAL NOT NULL
        );
        CREATE INDEX distributions_debate ON distributions(debate_id, round);

        CREATE TABLE metrics (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER NOT NULL,
            name          TEXT NOT NULL,
            value         REAL,
            UNIQUE (debate_id, round, name)
        );

        CREATE TABLE judgements (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER,
            judge_role    TEXT NOT NULL,
            judge_model   TEXT NOT NULL,
            kind          TEXT NOT NULL,
            target        TEXT,
            subject       TEXT,
            score         REAL,
            verdict       TEXT,
            reasons_json  TEXT NOT NULL DEFAULT '{}',
            raw           TEXT NOT NULL,
            created_at    REAL NOT NULL
        );
        CREATE INDEX judgements_debate ON judgements(debate_id);

        CREATE TABLE moderator_events (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER,
            kind          TEXT NOT NULL,
            payload_json  TEXT NOT NULL DEFAULT '{}',
            created_at    REAL NOT NULL
        );

        CREATE TABLE model_calls (
            id                       INTEGER PRIMARY KEY,
            debate_id                TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            turn_id                  INTEGER REFERENCES turns(id) ON DELETE CASCADE,
            round                    INTEGER,
            role                     TEXT NOT NULL,
            model_id                 TEXT NOT NULL,
            purpose                  TEXT NOT NULL,
            options_json             TEXT NOT NULL,
            prompt_tokens            INTEGER NOT NULL,
            prompt_tokens_evaluated  INTEGER NOT NULL,
            completion_tokens        INTEGER NOT NULL,
            duration_s               REAL NOT NULL,
            first_token_s            REAL,
            finish_reason            TEXT NOT NULL,
            error                    TEXT,
            created_at               REAL NOT NULL
        );
        CREATE INDEX model_calls_debate ON model_calls(debate_id);

        -- Full-text search over what was said (external content: no second copy of the text).
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, content='turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER turns_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER turns_au AFTER UPDATE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, new.text);
        END;
"""


# v2: what each agent was asked, so a turn can be audited and a debate resumed exactly.
_V2_TURN_REQUESTS = "ALTER TABLE turns ADD COLUMN request TEXT;"

# v3: the speaker's stated 0-100 confidence per turn (Triem, Appendix i), and
# notices about a run (e.g. a judge that is a debater's own model, Chang, section 6.3.1.3).
# Self-contained: adds one column and one table, touches nothing else.
_V3_CONFIDENCE_AND_NOTICES = """
        ALTER TABLE turns ADD COLUMN confidence REAL CHECK (confidence IS NULL OR confidence BETWEEN 0 AND 100);
        CREATE TABLE notices (
            id            INTEGER PRIMARY KEY,
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            round         INTEGER,
            kind          TEXT NOT NULL,
            text          TEXT NOT NULL,
            details_json  TEXT NOT NULL DEFAULT '{}',
            created_at    REAL NOT NULL
        );
        CREATE INDEX notices_debate ON notices(debate_id);
"""

# v4: the messages a turn added to its speaker's conversation when they are more than
# the request and one reply (EVINCE's parse retry: the reply that did not parse, the ask to try
# again, the retry's reply), so a resumed agent is sent exactly what an uninterrupted one is.
_V4_TURN_EXCHANGES = "ALTER TABLE turns ADD COLUMN exchange_json TEXT;"

# v5: what a resumed run replays (protocols/core/replay.py). Every model reply and every
# answer of the person, kept the moment it exists with the hash of the prompt it answered; the
# checkpoint at which each moderator command took effect; and how many of a debate's events are
# journalled (NULL for debates written before v5: they cannot be replayed).
_V5_REPLAY = """
        CREATE TABLE replies (
            id             INTEGER PRIMARY KEY,
            debate_id      TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            role           TEXT NOT NULL,
            kind           TEXT NOT NULL CHECK (kind IN ('chat', 'score', 'person')),
            prompt_sha256  TEXT NOT NULL,
            reply          TEXT,
            details_json   TEXT NOT NULL DEFAULT '{}',
            created_at     REAL NOT NULL
        );
        CREATE INDEX replies_debate ON replies(debate_id, id);
        ALTER TABLE moderator_events ADD COLUMN checkpoint INTEGER;
        ALTER TABLE debates ADD COLUMN events_recorded INTEGER;
"""

# v6: the seal (store/seal.py) and each run's provenance (store/provenance.py). Every
# transaction that writes sealed rows appends one link to ``seal`` (the rows' tables, keys and
# hashes, chained to the link before; WITHOUT ROWID: the key is the only b-tree, one page less
# to write per event). The debate's row holds its newest chain hash (``seal_head``, with the
# link and row counts), moved by the UPDATE of that row each event runs anyway. Debates already
# in the journal are sealed from the rows they hold, marked with the migration's time
# (``_seal_on_migration``).
_V6_SEAL = """
        CREATE TABLE seal (
            debate_id     TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            n             INTEGER NOT NULL,
            rows_json     TEXT NOT NULL,
            chain_sha256  TEXT NOT NULL,
            at            REAL NOT NULL,
            PRIMARY KEY (debate_id, n)
        ) WITHOUT ROWID;
        ALTER TABLE debates ADD COLUMN seal_head TEXT;
        ALTER TABLE debates ADD COLUMN seal_links INTEGER;
        ALTER TABLE debates ADD COLUMN seal_rows INTEGER;
        ALTER TABLE debates ADD COLUMN sealed_on_migration_at REAL;
        CREATE TABLE provenance (
            debate_id        TEXT PRIMARY KEY REFERENCES debates(id) ON DELETE CASCADE,
            provenance_json  TEXT NOT NULL,
            created_at       REAL NOT NULL
        );
"""


# v7: each debate's head is signed by the user's key (store/signing.py), kept outside the
# journal: the signature (base64), the public key that made it (an OpenSSH line) and the first
# link it vouches for, moved with the head. Debates already in the journal stay unsigned until
# their next write, from which link on they are signed (``seal_signed_from``).
_V7_SIGNED_HEADS = """
        ALTER TABLE debates ADD COLUMN seal_signature TEXT;
        ALTER TABLE debates ADD COLUMN seal_key TEXT;
        ALTER TABLE debates ADD COLUMN seal_signed_from INTEGER;
"""


# v8: a debate's evidence (the user's files, cut into passages: protocols/core/evidence.py) and
# the verdict on each claim a turn cited (protocols/measures/citations.py). A resumed run reads the
# passages from here, never the files. Every table is sealed; each row goes with its debate.
_V8_EVIDENCE = """
        CREATE TABLE evidence (
            debate_id      TEXT PRIMARY KEY REFERENCES debates(id) ON DELETE CASCADE,
            settings_json  TEXT NOT NULL DEFAULT '{}',
            created_at     REAL NOT NULL
        );
        CREATE TABLE evidence_files (
            id               INTEGER PRIMARY KEY,
            debate_id        TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            number           INTEGER NOT NULL,
            name             TEXT NOT NULL,
            kind             TEXT NOT NULL,
            size             INTEGER NOT NULL,
            sha256           TEXT NOT NULL,
            pages            INTEGER,
            first_passage    INTEGER NOT NULL,
            passages         INTEGER NOT NULL,
            redactions_json  TEXT NOT NULL DEFAULT '{}',
            notes_json       TEXT NOT NULL DEFAULT '[]',
            UNIQUE (debate_id, number)
        );
        CREATE INDEX evidence_files_name ON evidence_files(name);
        CREATE TABLE evidence_passages (
            id          INTEGER PRIMARY KEY,
            debate_id   TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            number      INTEGER NOT NULL,
            file        INTEGER NOT NULL,
            page        INTEGER,
            paragraph   INTEGER NOT NULL,
            part        INTEGER NOT NULL,
            parts       INTEGER NOT NULL,
            text        TEXT NOT NULL,
            UNIQUE (debate_id, number)
        );
        CREATE TABLE citations (
            id          INTEGER PRIMARY KEY,
            debate_id   TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            turn_id     INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            claim_no    INTEGER NOT NULL,
            role        TEXT NOT NULL,
            claim       TEXT NOT NULL,
            source      TEXT NOT NULL,
            quote       TEXT NOT NULL,
            status      TEXT NOT NULL CHECK (status IN ('supported', 'not_found', 'uncited')),
            passage     TEXT,
            match       TEXT NOT NULL DEFAULT '',
            problem     TEXT NOT NULL DEFAULT '',
            label       TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX citations_debate ON citations(debate_id, turn_id);
"""


# v9: what each model call cost beyond its tokens (protocols.core.events.CallRecord): the prompt's
# tokens taken from a cache instead of run, the time waited for the model, the prompt's
# evaluation and the decoding. NULL: the backend does not measure it. One row per call, in a table
# of its own rather than new columns of ``model_calls``: a row's seal hash covers every column its
# table has, so a column added to a sealed table would change the hash of every call sealed before.
_V9_CALL_COSTS = """
        CREATE TABLE call_costs (
            id             INTEGER PRIMARY KEY,
            call_id        INTEGER NOT NULL UNIQUE REFERENCES model_calls(id) ON DELETE CASCADE,
            debate_id      TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
            cached_tokens  INTEGER,
            wait_s         REAL,
            prefill_s      REAL,
            decode_s       REAL
        );
        CREATE INDEX call_costs_debate ON call_costs(debate_id);
"""


# v10: search over what the moderator and the judges said, beside the turns: the moderator's
# interjections, verdict notes and agenda edits (their payloads' words, not their settings), and
# every text of a judgement's reasons. One FTS5 table holding the words (they are read out of JSON,
# so there is no column to point an external-content index at); its rowid names the source row
# (a moderator event's id × 2, a judgement's id × 2 + 1), so that the rows' own triggers, the
# cascade of a debate's delete included, remove its words. Rows already in the journal are indexed.
_SAID_MODERATOR = """(SELECT group_concat(value, ' ') FROM json_tree(m.payload_json) WHERE type = 'text' AND (
            (m.kind = 'interject' AND fullkey = '$.text') OR (m.kind = 'verdict' AND fullkey = '$.note')
            OR (m.kind = 'edit_agenda' AND fullkey LIKE '$.after[%')))"""
_SAID_JUDGE = "(SELECT group_concat(value, ' ') FROM json_tree(j.reasons_json) WHERE type = 'text')"
_V10_SAID_SEARCH = f"""
        CREATE VIRTUAL TABLE said_fts USING fts5(
            text, debate_id UNINDEXED, tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER said_moderator_ai AFTER INSERT ON moderator_events BEGIN
            INSERT INTO said_fts(rowid, text, debate_id)
                SELECT m.id * 2, {_SAID_MODERATOR}, m.debate_id FROM moderator_events m
                WHERE m.id = new.id AND {_SAID_MODERATOR} IS NOT NULL;
        END;
        CREATE TRIGGER said_moderator_ad AFTER DELETE ON moderator_events BEGIN
            DELETE FROM said_fts WHERE rowid = old.id * 2;
        END;
        CREATE TRIGGER said_judge_ai AFTER INSERT ON judgements BEGIN
            INSERT INTO said_fts(rowid, text, debate_id)
                SELECT j.id * 2 + 1, {_SAID_JUDGE}, j.debate_id FROM judgements j
                WHERE j.id = new.id AND {_SAID_JUDGE} IS NOT NULL;
        END;
        CREATE TRIGGER said_judge_ad AFTER DELETE ON judgements BEGIN
            DELETE FROM said_fts WHERE rowid = old.id * 2 + 1;
        END;
        INSERT INTO said_fts(rowid, text, debate_id)
            SELECT m.id * 2, {_SAID_MODERATOR}, m.debate_id FROM moderator_events m WHERE {_SAID_MODERATOR} IS NOT NULL;
        INSERT INTO said_fts(rowid, text, debate_id)
            SELECT j.id * 2 + 1, {_SAID_JUDGE}, j.debate_id FROM judgements j WHERE {_SAID_JUDGE} IS NOT NULL;
"""


def _seal_on_migration(conn: sqlite3.Connection) -> int:
    return seal_existing(conn, time.time())


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial layout", _V1_INITIAL),
    Migration(2, "turn requests", _V2_TURN_REQUESTS),
    Migration(3, "turn confidence and notices", _V3_CONFIDENCE_AND_NOTICES),
    Migration(4, "turn exchanges", _V4_TURN_EXCHANGES),
    Migration(5, "replies for resuming", _V5_REPLAY),
    Migration(6, "seal and provenance", _V6_SEAL, _seal_on_migration),
    Migration(7, "signed seal heads", _V7_SIGNED_HEADS),
    Migration(8, "evidence and citations", _V8_EVIDENCE),
    Migration(9, "call costs", _V9_CALL_COSTS),
    Migration(10, "search over the moderator's and judges' words", _V10_SAID_SEARCH),
)

LATEST = MIGRATIONS[-1].version
