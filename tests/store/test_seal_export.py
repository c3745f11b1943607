"""``symposium verify --export``, played as an attacker: no forged export may say "ok".

An export verifies only when everything it shows is what its signed chain holds
(store/export_check.py). Each forgery here is done to a real export of a real journal, the way
someone holding the file would: rewrite what it says and empty or strip its seal; drop a row
from a section and from the chain, keeping the hashes; remove or add a field; recompute the
whole chain after an edit (and re-sign it with a key of their own); smuggle in a duplicate key,
a second copy of a row, escape sequences for the reader's terminal. Each must be "FAILED"
(exit 1) or "NOT VERIFIABLE" (exit 3), and say what it found.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store import export_check, seal, signing
from store.journal import Journal
from store.schema import LATEST
from tests.helpers.sealed_journal import ID, export_of
from tui.cli.parser import main

Document = dict[str, Any]


def _check(document: Document, tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``symposium verify --export`` of the document written to a file: exit status and output."""
    path = tmp_path / "received.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    code = main(["verify", "--export", str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _entry(document: Document, table: str, key: str) -> dict[str, Any]:
    """The chain entry that carries a row (its latest)."""
    return [e for link in document["seal"]["chain"] for e in link["rows"] if (e["table"], e["key"]) == (table, key)][-1]


def test_the_export_as_written_verifies_without_the_journal(sealed: Path, tmp_path: Path,  # noqa: F811
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "debate.json"
    assert main(["export", ID, "--format", "json", "--out", str(out_file), "--db", str(sealed)]) == 0
    sealed.unlink()
    capsys.readouterr()
    assert main(["verify", "--export", str(out_file)]) == 0
    out = capsys.readouterr().out
    document = json.loads(out_file.read_text())
    fingerprint = signing.fingerprint(document["seal"]["key"])
    assert out.startswith(f"ok {ID}: {document['seal']['rows']} rows in {document['seal']['links']} links, "
                          f"head {document['seal']['head']}\n  signed by your key {fingerprint}\n")
    assert not set(document) & {"updated_at", "events_recorded", "seal_head", "seal_signature"}  # bookkeeping stays home


def test_the_issues_forgery_is_not_verifiable(sealed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Turn 0 rewritten, every judgement deleted, the seal emptied: never "ok"."""
    document = export_of(sealed)
    document["turns"][0]["text"] = "The patient clearly has malaria; no liver tests are needed."
    document["judgements"] = []
    for forged in ({"chain": [], "head": None, "rows_included": False}, {**document["seal"], "chain": [], "head": None},
                   None):
        document["seal"] = forged
        if forged is None:
            del document["seal"]
        code, out = _check(document, tmp_path, capsys)
        assert code == 3 and out.startswith(f"NOT VERIFIABLE {ID}: "), out
        assert "ok " not in out
    document["seal"] = {"format": 1, "head": "ab" * 32, "chain": [{}], "rows_included": True}
    code, out = _check(document, tmp_path, capsys)
    assert code == 3 and "its seal is not of format 2 (it says 1): exports made before Symposium signed" in out


def test_a_judgement_dropped_with_its_chain_row_fails(sealed: Path, tmp_path: Path,  # noqa: F811
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """One judgement taken out of the section and its row out of the chain, hashes kept."""
    document = export_of(sealed)
    keys = sorted({e["key"] for link in document["seal"]["chain"] for e in link["rows"] if e["table"] == "judgements"},
                  key=int)
    del document["judgements"][2]
    del _entry(document, "judgements", keys[2])["row"]
    code, out = _check(document, tmp_path, capsys)
    assert code == 1, out
    assert f"judgements row {keys[2]} (written " in out and "deleted — the row is gone" in out
    assert f"judgements row - (written time unknown): changed — the export shows {len(keys) - 1} judgements, " \
           f"the seal holds {len(keys) - 1}" not in out  # the rows the chain still carries agree with the section


@pytest.mark.parametrize(("name", "edit", "detail"), [
    ("text removed", lambda d: d["turns"][0].pop("text"), "the export leaves out the sealed field 'text'"),
    ("summary added", lambda d: d.__setitem__("summary", "Malaria, as agreed."),
     "the export shows 'summary', which the seal does not hold"),
    ("field added to a turn", lambda d: d["turns"][1].__setitem__("verdict", "correct"),
     "the export shows a field 'verdict' the sealed row does not hold"),
    ("title removed", lambda d: d.pop("title"), "the export leaves out the sealed 'title'"),
    ("section removed", lambda d: d.pop("notices"), "the export does not show its notices, the seal holds 1"),
    ("turns swapped", lambda d: d["turns"].insert(0, d["turns"].pop(1)), "the export's 'created_at' differs from the sealed row"),
    ("integer shown as a real", lambda d: d["turns"][0].__setitem__("seq", 1.0),
     "the export's 'seq' differs from the sealed row"),
    ("number shown as true", lambda d: d["turns"][0].__setitem__("seq", True),
     "the export's 'seq' differs from the sealed row"),
    ("provenance", lambda d: d["provenance"].__setitem__("symposium_version", "9.9"),
     "the export's 'provenance' differs from the sealed row"),
])
def test_a_field_changed_removed_or_added_is_named(sealed: Path, name: str, edit: Callable[[Document], Any],  # noqa: F811
                                                   detail: str) -> None:
    document = export_of(sealed)
    edit(document)
    verdict = export_check.verify_export(document)
    assert verdict.status == "tampered" and {p.detail for p in verdict.problems} == {detail}, (name, verdict.problems)


def test_an_edit_recomputed_through_the_whole_chain_fails_on_its_signature(sealed: Path, tmp_path: Path,  # noqa: F811
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The editor changes a turn in the section and in its sealed row, recomputes the row's
    hash, every link after it and the head: the chain holds, the signature does not. Re-signed
    with the editor's own key it is signed by a key the reader does not know (not verifiable),
    and fails against the key the reader names."""
    document = export_of(sealed)
    genuine = signing.fingerprint(document["seal"]["key"])
    turn = document["turns"][1]
    turn["text"] = "Forged: the patient refused all tests."
    _reseal(document, "turns", str(turn["id"]), {"text": turn["text"]})
    verdict = export_check.verify_export(document)
    assert [p.what for p in verdict.problems] == ["signature"]
    code, out = _check(document, tmp_path, capsys)
    assert code == 1 and f"FAILED {ID}: first debates row {ID} (written time unknown): signature — the head's " \
                         "signature does not hold: the chain was recomputed after it was signed" in out
    editor = signing.user_signer(tmp_path / "editor" / "seal-key.pem")
    s = document["seal"]
    s["key"], s["signature"] = editor.public, editor.sign(signing.message(ID, s["head"], s["signed_from"], None))
    assert export_check.verify_export(document).ok  # intact as the editor signed it …
    code, out = _check(document, tmp_path, capsys)
    assert code == 3 and f"it is signed by key {editor.fingerprint}, which is not yours" in out  # … by a stranger
    code, out = _check(document, tmp_path, capsys, "--key", genuine)
    assert code == 1 and f"it is signed by key {editor.fingerprint}, not by the key {genuine} you named" in out
    code, out = _check(document, tmp_path, capsys, "--key", editor.fingerprint)
    assert code == 0 and f"  signed by key {editor.fingerprint}, the key you named" in out


def _reseal(document: Document, table: str, key: str, change: dict[str, Any]) -> None:
    """What an editor does: change a sealed row, then recompute its hash, every link from there
    on, the head (and nothing they cannot: the signature)."""
    entry = _entry(document, table, key)
    entry["row"].update(change)
    columns = document["seal"]["columns"][table]
    entry["row_sha256"] = seal.row_sha256(table, tuple(entry["row"][c] for c in columns))
    previous = seal.genesis(document["id"])
    for link in document["seal"]["chain"]:
        rows = seal.rows_json([(e["table"], e["key"], e["row_sha256"]) for e in link["rows"]])
        link["chain_sha256"] = previous = seal.link_sha256(previous, link["n"], rows, link["at"])
    document["seal"]["head"] = previous


def test_a_stripped_signature_leaves_it_not_verifiable_unless_the_head_was_noted(
        sealed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    document = export_of(sealed)
    head = document["seal"]["head"]
    document["seal"]["signature"] = document["seal"]["key"] = None
    code, out = _check(document, tmp_path, capsys)
    assert code == 3 and "it is not signed (written before Symposium signed its records, or its signature was removed)" in out
    assert _check(document, tmp_path, capsys, "--head", head)[0] == 0
    assert _check(document, tmp_path, capsys, "--head", "0" * 64)[0] == 1


@pytest.mark.parametrize(("name", "edit", "detail"), [
    ("row carried twice", lambda d: d["seal"]["chain"][0]["rows"][0].__setitem__("row", {}),
     "link 1 carries debates row sample0001ab, which a later link seals again"),
    ("unknown seal key", lambda d: d["seal"].__setitem__("note", "trust me"),
     "the seal holds 'note', which no export's seal carries"),
    ("seal key left out", lambda d: d["seal"].pop("signed_from"), "the seal leaves out its 'signed_from'"),
    ("columns renamed", lambda d: d["seal"]["columns"]["turns"].reverse(),
     f"the seal's column lists are not those of journal layout v{LATEST}"),
    ("row count", lambda d: d["seal"].__setitem__("rows", 3), "the seal says it holds 3 rows, its chain holds"),
    ("migration time", lambda d: d["seal"].__setitem__("sealed_on_migration_at", "yesterday"),
     "the seal's migration time is not a number"),
])
def test_the_seal_object_itself_is_checked(sealed: Path, name: str, edit: Callable[[Document], Any],  # noqa: F811
                                           detail: str) -> None:
    document = export_of(sealed)
    edit(document)
    verdict = export_check.verify_export(document)
    assert verdict.status == "tampered" and any(p.detail.startswith(detail) for p in verdict.problems), (
        name, verdict.problems)


def test_a_sealed_row_with_a_field_removed_or_of_another_type_fails(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    turn = document["turns"][0]
    entry = _entry(document, "turns", str(turn["id"]))
    for change in (lambda row: row.pop("raw"), lambda row: row.__setitem__("seq", [1]),
                   lambda row: row.__setitem__("seq", True)):
        edited = copy.deepcopy(document)
        change(_entry(edited, "turns", entry["key"])["row"])
        problems = export_check.verify_export(edited).problems
        assert ("turns", entry["key"], "changed", "its content differs from what was sealed") in [
            (p.table, p.key, p.what, p.detail) for p in problems], problems


def test_an_export_moved_to_another_debate_id_fails(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    document["id"] = "another00001"
    verdict = export_check.verify_export(document)
    assert verdict.status == "tampered"
    assert {p.what for p in verdict.problems} >= {"chain", "signature"}


def test_rows_resealed_with_values_no_journal_writes_are_named_not_a_crash() -> None:
    """An editor who re-seals turns whose order cannot be read (a number and a text)."""
    rows = {("turns", "1"): {"seq": 1, "debate_id": ID, "id": 1}, ("turns", "2"): {"seq": "two", "debate_id": ID, "id": 2}}
    [problem] = export_check.compare(ID, {"id": ID}, rows, {}, evidence=True, costs=True)
    assert (problem.table, problem.key, problem.what) == ("seal", "-", "changed")
    assert problem.detail.startswith("its sealed rows cannot be read as an export reads a journal (TypeError(")


def test_a_duplicate_key_is_refused(sealed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Python keeps the last copy of a key, other readers the first: a file that says two things
    at once is refused, whichever copy is the sealed one."""
    text = json.dumps(export_of(sealed))
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"title": ', '"title": "Forged title", "title": ', 1))
    capsys.readouterr()
    assert main(["verify", "--export", str(path)]) == 1
    assert "the key 'title' appears twice in one object" in capsys.readouterr().err


def test_a_malformed_link_is_an_error_naming_it(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    del document["seal"]["chain"][4]["at"]
    with pytest.raises(export_check.ExportError, match=r"^seal link 5 is malformed \(its keys are \['chain_sha256', 'n', "
                                                       r"'rows'\]\)$"):
        export_check.verify_export(document)
    with pytest.raises(export_check.ExportError, match="names no debate"):
        export_check.verify_export({"seal": {}})


def test_nothing_from_the_file_reaches_the_terminal_raw(sealed: Path, tmp_path: Path,  # noqa: F811
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A crafted file's id and head carry an OSC 52 clipboard write, a screen clear, a bidi
    override and a forged line: the output holds none of them, in text or JSON."""
    document = export_of(sealed)
    hostile = "x\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202e\nok sample0001ab: 52 rows"
    document["id"] = hostile
    document["seal"]["head"] = hostile
    for args in ((), ("--json",)):
        code, out = _check(document, tmp_path, capsys, *args)
        assert code == 1
        assert not any(c in out for c in "\x1b\x07\u202e"), repr(out)
        assert not any(line.startswith("ok ") for line in out.splitlines())
    code, out = _check({"id": hostile, "seal": {"redacted": True}}, tmp_path, capsys)
    assert code == 3 and not any(c in out for c in "\x1b\x07\u202e") and "\nok " not in out


@pytest.mark.parametrize("kept", [3, 0])
def test_an_export_with_turns_removed_says_how_many_it_shows_and_the_seal_holds(sealed: Path, kept: int) -> None:  # noqa: F811
    document = export_of(sealed)
    held = len(document["turns"])
    document["turns"] = document["turns"][:kept]
    problems = export_check.verify_export(document).problems
    assert problems[0] == seal.Problem(ID, "turns", "-", "changed" if kept else "deleted",
                                       f"the export shows {kept} turns, the seal holds {held}", None, 0)


def _sealed_keys(document: Document, table: str) -> list[str]:
    keys = {r["key"] for link in document["seal"]["chain"] for r in link["rows"] if r["table"] == table}
    return sorted(keys, key=lambda k: int(k) if k.lstrip("-").isdigit() else 0)


def _last_link(document: Document, table: str, key: str) -> tuple[int, float]:
    """(n, at) of the newest link that seals the row: the one a problem with it must name."""
    link = [x for x in document["seal"]["chain"] if any((r["table"], r["key"]) == (table, key) for r in x["rows"])][-1]
    return link["n"], link["at"]


@pytest.mark.parametrize(("section", "index", "field", "value"), [
    ("participants", 1, "model_id", "llama31-70b-instruct"),
    ("turns", 2, "text", "A sentence nobody wrote."),
    ("judgements", 3, "score", 1.0),
    ("moderator_events", 1, "payload", {"kappa": 0.1}),
    ("notices", 0, "text", "Nothing to see."),
    ("phases", 1, "kappa", 0.11),
    ("model_calls", 0, "prompt_tokens", 1),
    ("replies", 0, "reply", "Something else."),
    (None, 0, "title", "Another title"),
])
def test_an_edited_export_names_the_row_its_field_and_the_link_that_sealed_it(
        sealed: Path, section: str | None, index: int, field: str, value: object) -> None:  # noqa: F811
    """What ``verify --export`` says of an edit is what a person acts on: the table, the row,
    the field, and when the row was sealed (its link's number and time), exactly."""
    document = export_of(sealed)
    table = section or "debates"
    key = ID if section is None else _sealed_keys(document, table)[index]
    (document if section is None else document[section][index])[field] = value
    [problem] = export_check.verify_export(document).problems
    n, at = _last_link(document, table, key)
    assert problem == seal.Problem(ID, table, key, "changed", f"the export's {field!r} differs from the sealed row", at, n)


def test_a_metric_altered_in_the_export_is_named_by_round_and_name(sealed: Path, tmp_path: Path,  # noqa: F811
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    document = export_of(sealed)
    document["metrics"][1]["jsd"] = 0.01
    key = next(r["key"] for link in document["seal"]["chain"] for r in link["rows"]
               if r["table"] == "metrics" and r.get("row", {}).get("name") == "jsd" and r["row"]["round"] == 1)
    code, out = _check(document, tmp_path, capsys)
    assert code == 1 and f"first metrics row {key} (written " in out
    assert "round 1 jsd: the export shows 0.01, the seal holds 0.25" in out
    for edit, detail in ((lambda m: m[0].__setitem__("kappa", 0.5), "round 0 kappa: the export shows 0.5"),
                         (lambda m: m[0].__setitem__("phase", "x"), "round 0 phase: the export shows 'x'"),
                         (lambda m: m[0].pop("wd"), "round 0 wd: the export shows None, the seal holds"),
                         (lambda m: m.reverse(), "the export's metrics are not in the order or number the seal holds"),
                         (lambda m: m.append(dict(m[0])), "the export's metrics are not in the order or number")):
        edited = export_of(sealed)
        edit(edited["metrics"])
        details = [p.detail for p in export_check.verify_export(edited).problems]
        assert any(d.startswith(detail) for d in details), details


def test_an_edited_distribution_is_named_by_its_turn(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    turn = next(t for t in document["turns"] if t.get("distribution"))
    first = next(iter(turn["distribution"]))
    turn["distribution"][first] += 0.125
    [problem] = export_check.verify_export(document).problems
    assert (problem.table, problem.key, problem.what) == ("distributions", f"turn {turn['id']}", "changed")


def test_a_changed_link_is_named_by_its_first_row_its_number_and_its_time(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    link = document["seal"]["chain"][2]
    link["chain_sha256"] = "0" * 64
    [problem] = export_check.verify_export(document).problems
    first = link["rows"][0]
    assert problem == seal.Problem(ID, first["table"], first["key"], "chain",
                                   "seal link 3 does not follow link 2: a link was changed, removed, inserted or "
                                   "reordered", link["at"], 3)


def test_a_chain_cut_short_of_its_head_names_the_last_link_left(sealed: Path) -> None:  # noqa: F811
    """The newest link removed from an export: the chain still holds from its genesis, so only
    the head can tell, and the problem names the last link left, its last row and its time."""
    with Journal(sealed) as j:
        head, links = j.conn.execute("SELECT seal_head, seal_links FROM debates WHERE id = ?", (ID,)).fetchone()
    document = export_of(sealed)
    chain = document["seal"]["chain"]
    last = chain[-2]
    verdict = export_check.verify_export({**document, "seal": {**document["seal"], "chain": chain[:-1]}})
    [problem] = [p for p in verdict.problems if p.what == "chain"]
    tip = last["chain_sha256"]
    where = last["rows"][-1]
    assert problem == seal.Problem(ID, where["table"], where["key"], "chain",
                                   f"the chain ends at link {len(chain) - 1} ({tip[:12]}…) but its head says "
                                   f"{links} links ({head[:12]}…): links were removed from the end or added",
                                   last["at"], len(chain))


def test_an_export_from_a_newer_symposium_says_so(sealed: Path) -> None:  # noqa: F811
    document = export_of(sealed)
    document["seal"]["layout"] = 99
    [why] = export_check.verify_export(document).unverifiable
    assert why.startswith("it was made by a newer Symposium (journal layout v99; this one knows up to v")
    document["seal"]["layout"] = 5
    assert export_check.verify_export(document).unverifiable == ("its seal names no journal layout this check knows (5)",)


def test_each_difference_is_named_by_table_row_and_kind(sealed: Path) -> None:  # noqa: F811
    """The exact problem for each way a list item can differ (what ``verify --export`` prints)."""
    base = export_of(sealed)
    turn_key = str(base["turns"][0]["id"])
    judgement_key = _sealed_keys(base, "judgements")[0]
    cases: list[tuple[Callable[[Document], Any], tuple[str, str, str, str]]] = [
        (lambda d: d.__setitem__("judgements", "none"),
         ("judgements", "-", "deleted", f"the export does not show its judgements, the seal holds {len(base['judgements'])}")),
        (lambda d: d["judgements"].__setitem__(0, "a judgement"),
         ("judgements", judgement_key, "changed", "the export shows str, not the sealed row")),
        (lambda d: d["turns"][0].__setitem__("zz", 1),
         ("turns", turn_key, "changed", "the export shows a field 'zz' the sealed row does not hold")),
        (lambda d: d["turns"][0].pop("raw"), ("turns", turn_key, "changed", "the export leaves out the sealed field 'raw'")),
        (lambda d: d["turns"][0].__setitem__("distribution", {"Malaria": 1.0}),
         ("distributions", f"turn {turn_key}", "changed", "the export's distribution differs from the sealed rows")),
        (lambda d: d["metrics"][0].__setitem__("kappa", 0.5),
         ("rounds", "0", "changed", f"round 0 kappa: the export shows 0.5, the seal holds {base['metrics'][0]['kappa']!r}")),
        (lambda d: d["metrics"].pop(1), ("metrics", _metric_key(base, 1, "crit"), "changed",
                                         f"round 1 crit: the export shows None, the seal holds {base['metrics'][1]['crit']!r}")),
        (lambda d: d.__setitem__("metrics", "none"), ("metrics", "-", "changed",
                                                     "the export's metrics are not in the order or number the seal holds")),
    ]
    for edit, expected in cases:
        document = copy.deepcopy(base)
        edit(document)
        found = [(p.table, p.key, p.what, p.detail) for p in export_check.verify_export(document).problems]
        assert expected in found, (expected, found)
        assert all(p[0] is not None and p[1] is not None for p in found)
    empty = export_check.verify_export({"id": ID})
    assert (empty.rows, empty.head, empty.problems, empty.status) == (0, None, (), "not verifiable")


def _metric_key(document: Document, number: int, name: str) -> str:
    return next(e["key"] for link in document["seal"]["chain"] for e in link["rows"]
                if e["table"] == "metrics" and e.get("row", {}).get("name") == name and e["row"]["round"] == number)


def test_the_order_of_an_objects_keys_does_not_matter(sealed: Path) -> None:  # noqa: F811
    """JSON objects have no order: an export whose keys another tool wrote in another order
    (not the sorted order Symposium writes) still verifies."""
    document = export_of(sealed)

    def reordered(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        return [reordered(v) for v in value] if isinstance(value, list) else value

    assert export_check.verify_export(reordered(document)).ok


def test_the_phase_of_a_round_is_read_by_row_order_past_nine_phases(tmp_path: Path) -> None:
    """Twelve phase changes: a round's phase is the latest begun at or before it, by the rows'
    ids as numbers (an export sorted "10" before "9" would name the wrong phase)."""
    from protocols.core.events import DebateStarted, MetricsComputed, Participant, PhaseChanged

    path = tmp_path / "phases.db"
    with Journal(path) as j:
        j.record(DebateStarted(ID, "evince", "t", "s", {}, (Participant("agent-a", "m", "llamacpp"),)))
        for r in range(12):
            j.record(PhaseChanged(ID, f"phase-{r}", r, 0.5))
            j.record(MetricsComputed(ID, r, {"jsd": 0.1}, 0.5))
    document = export_of(path)
    assert [m["phase"] for m in document["metrics"]] == [f"phase-{r}" for r in range(12)]
    assert export_check.verify_export(document).ok


def test_each_refusal_names_the_debate_and_says_what_to_do(sealed: Path) -> None:  # noqa: F811
    """What ``verify --export`` says of a seal it cannot check, whole, and for which debate."""
    document = export_of(sealed)
    cases: list[tuple[Callable[[Document], Any], str]] = [
        (lambda s: s.__setitem__("format", 1), "its seal is not of format 2 (it says 1): exports made before Symposium "
                                               "signed its records cannot be checked whole; export it again from the journal"),
        (lambda s: s.__setitem__("layout", "8"), "its seal names no journal layout this check knows ('8')"),
        (lambda s: s.__setitem__("layout", 99), f"it was made by a newer Symposium (journal layout v99; this one knows up "
                                                f"to v{LATEST}): upgrade Symposium to check it"),
        (lambda s: s.__setitem__("chain", "every row, trust me"), "its seal holds no chain or no head"),
    ]
    for edit, why in cases:
        edited = copy.deepcopy(document)
        edit(edited["seal"])
        verdict = export_check.verify_export(edited)
        assert (verdict.debate_id, verdict.unverifiable, verdict.problems) == (ID, (why,), ()), why


def test_the_seal_objects_own_problems_are_named_as_the_seals(sealed: Path) -> None:  # noqa: F811
    """A problem with the seal object itself belongs to no row: table "seal", key "-", no link."""
    document = export_of(sealed)
    document["seal"]["note"] = "trust me"
    assert export_check.verify_export(document).problems == (
        seal.Problem(ID, "seal", "-", "changed", "the seal holds 'note', which no export's seal carries", None, 0),)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda chain: chain.__setitem__(0, "a link"), r"its keys are str"),
    (lambda chain: chain[0]["rows"][0].__setitem__("note", "x"), r"a row entry is \{'key': "),
    (lambda chain: chain[0]["rows"].__setitem__(0, "r" * 100), r"a row entry is " + "r" * 80 + r"\)$"),
    (lambda chain: chain[0].__setitem__("at", "noon"), r"its number or time is not a number"),
    (lambda chain: chain[0].__setitem__("n", "1"), r"its number or time is not a number"),
])
def test_a_link_of_another_shape_is_named_with_what_is_wrong(sealed: Path, edit: Callable[[list[Any]], Any],  # noqa: F811
                                                             message: str) -> None:
    document = export_of(sealed)
    edit(document["seal"]["chain"])
    with pytest.raises(export_check.ExportError, match=r"^seal link 1 is malformed \(" + message):
        export_check.verify_export(document)


def test_the_verdict_counts_the_links_the_head_claims_or_those_found(sealed: Path) -> None:  # noqa: F811
    """``--json``'s ``links``: the seal's own count, or the chain's length when the count is not a number."""
    document = export_of(sealed)
    claimed, found = document["seal"]["links"], len(document["seal"]["chain"])
    cut = export_check.verify_export({**document, "seal": {**document["seal"], "chain": document["seal"]["chain"][:-1]}})
    assert cut.links == claimed == found
    document["seal"]["links"] = "many"
    verdict = export_check.verify_export(document)
    assert verdict.links == found and verdict.status == "tampered"


def test_a_debate_row_changed_in_the_seal_is_named_not_a_crash(sealed: Path) -> None:  # noqa: F811
    """The debate's own sealed row carried without a column (so it cannot be hashed): the row is
    named as changed, and the fields it held are named as not held; the rest is still read."""
    document = export_of(sealed)
    del _entry(document, "debates", ID)["row"]["title"]
    found = [(p.table, p.key, p.what, p.detail) for p in export_check.verify_export(document).problems]
    assert ("debates", ID, "changed", "its content differs from what was sealed") in found
    assert ("debates", ID, "inserted", "the export shows 'title', which the seal does not hold") in found
    assert not any(p[0] == "seal" for p in found), found


def test_every_list_item_is_checked_past_one_that_differs(sealed: Path) -> None:  # noqa: F811
    """A judgement replaced by text and two others edited: each is named, not only the first."""
    document = export_of(sealed)
    keys = _sealed_keys(document, "judgements")
    document["judgements"][0] = "a judgement"
    document["judgements"][1]["score"] = 0.0
    document["judgements"][2]["score"] = 0.0
    found = [(p.table, p.key, p.detail) for p in export_check.verify_export(document).problems]
    assert found == [("judgements", keys[0], "the export shows str, not the sealed row"),
                     ("judgements", keys[1], "the export's 'score' differs from the sealed row"),
                     ("judgements", keys[2], "the export's 'score' differs from the sealed row")]


def test_each_section_outside_the_lists_is_named_by_its_table(sealed: Path) -> None:  # noqa: F811
    base = export_of(sealed)
    held = base["metrics"][0]["phase"]
    cases: list[tuple[Callable[[Document], Any], tuple[str, str, str, str]]] = [
        (lambda d: d.__setitem__("summary", "Malaria."),
         ("debates", ID, "inserted", "the export shows 'summary', which the seal does not hold")),
        (lambda d: d.pop("title"), ("debates", ID, "deleted", "the export leaves out the sealed 'title'")),
        (lambda d: d["evidence"]["passages"][0].__setitem__("text", "Bilirubin normal."),
         ("evidence_passages", ID, "changed", "the export's 'evidence' differs from the sealed row")),
        (lambda d: d["metrics"][0].__setitem__("phase", "x"),
         ("phases", "-", "changed", f"round 0 phase: the export shows 'x', the seal holds {held!r}")),
        (lambda d: d.__setitem__("metrics", None),
         ("metrics", "-", "changed", "the export's metrics are not in the order or number the seal holds")),
        (lambda d: d["metrics"].append({"round": 99, "jsd": 0.5}),
         ("metrics", "-", "changed", "round 99 jsd: the export shows 0.5, the seal holds None")),
        (lambda d: d["metrics"].append({"round": "x", "jsd": 0.5}),
         ("metrics", "-", "changed", "round x jsd: the export shows 0.5, the seal holds None")),
        (lambda d: d["metrics"].append({**d["metrics"][0], "kappa": 0.5}),  # round 0 twice, the second changed
         ("metrics", "-", "changed", "the export's metrics are not in the order or number the seal holds")),
    ]
    for edit, expected in cases:
        document = copy.deepcopy(base)
        edit(document)
        found = [(p.table, p.key, p.what, p.detail) for p in export_check.verify_export(document).problems]
        assert expected in found, (expected, found)


def test_a_round_before_the_first_phase_has_no_phase(tmp_path: Path) -> None:
    """Metrics of a round before any phase began: the export shows no phase, and verifies."""
    from protocols.core.events import DebateStarted, MetricsComputed, Participant, PhaseChanged

    path = tmp_path / "early.db"
    with Journal(path) as j:
        j.record(DebateStarted(ID, "evince", "t", "s", {}, (Participant("agent-a", "m", "llamacpp"),)))
        j.record(MetricsComputed(ID, 0, {"jsd": 0.1}, 0.5))
        j.record(PhaseChanged(ID, "exploitative", 1, 0.4))
        j.record(MetricsComputed(ID, 1, {"jsd": 0.05}, 0.4))
    document = export_of(path)
    assert [m["phase"] for m in document["metrics"]] == [None, "exploitative"]
    assert export_check.verify_export(document).ok


def test_two_sealed_rows_that_cannot_be_hashed_are_each_named_not_a_crash(sealed: Path) -> None:  # noqa: F811
    """Two turns' sealed rows edited in the chain, one to a value SQLite never returns (a list):
    each is named as changed; neither is read as the other's moved content."""
    document = export_of(sealed)
    first, second = (str(t["id"]) for t in document["turns"][:2])
    _entry(document, "turns", first)["row"]["seq"] = [1]
    _entry(document, "turns", second)["row"]["text"] = "Forged."
    found = [(p.table, p.key, p.what) for p in export_check.verify_export(document).problems]
    assert ("turns", first, "changed") in found and ("turns", second, "changed") in found, found
