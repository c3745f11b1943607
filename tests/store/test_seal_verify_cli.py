"""``symposium verify``'s own words, exactly: what a person reads and what a script parses.

A journal holding one debate of each kind (intact and signed, edited, unsigned) checked whole:
each line, the summary, the JSON, the exit status; and the words of every refusal (a short
``--head``, ``--head`` without one debate, a key file that cannot be used), so that a change to
what ``verify`` says is a decision, not an accident.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import struct
from pathlib import Path

import pytest

from outputs.export import to_json
from store import export_check, seal, signing
from store.journal import Journal
from store.queries import Queries
from tests.helpers.sealed_journal import ID, record_every_kind, run_sql, v5_journal, verify_cli
from tui.cli.parser import build_parser, main

EDITED = "edited000001"
OLD = "unsigned0001"


@pytest.fixture
def three(tmp_path: Path) -> Path:
    """An intact debate, one edited after it was written, one whose signature was taken off."""
    path = tmp_path / "three.db"
    with Journal(path) as j:
        for debate_id in (ID, EDITED, OLD):
            record_every_kind(j, debate_id)
    run_sql(path, f"UPDATE turns SET text = 'x' WHERE debate_id = '{EDITED}' AND seq = 1",
         f"UPDATE debates SET seal_signature = NULL, seal_key = NULL, seal_signed_from = NULL WHERE id = '{OLD}'")
    return path


def test_a_whole_journal_is_reported_line_by_line_with_a_summary(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = verify_cli(three, capsys=capsys)
    assert code == 1  # one failed: that outranks one not verifiable
    lines = out.splitlines()
    at = {line.split(":")[0].split()[-1]: i for i, line in enumerate(lines) if not line.startswith(" ")}
    assert lines[at[ID]].startswith(f"ok {ID}: ") and lines[at[ID] + 1].startswith("  signed by your key SHA256:")
    assert lines[at[EDITED]].startswith(f"FAILED {EDITED}: first turns row ")
    assert lines[at[OLD]].startswith(f"NOT VERIFIABLE {OLD}: it is not signed")
    assert lines[-2] == "1 of 3 debates verified; 1 failed; 1 not verifiable"
    assert lines[-1] == (f"cannot show: an edit re-signed by whoever else holds your key ({signing.key_path()}); a record "
                         "put back to an earlier signed state (compare the head you noted: --head); a debate deleted whole")
    run_sql(three, f"DELETE FROM debates WHERE id = '{EDITED}'")
    code, out = verify_cli(three, capsys=capsys)
    assert code == 3 and "1 of 2 debates verified; 1 not verifiable\n" in out


def test_the_json_names_every_finding(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = verify_cli(three, "--json", capsys=capsys)
    assert code == 1
    found = {v["debate_id"]: v for v in json.loads(out)}
    own = signing.own_public_key()
    assert own is not None
    ok, edited, old = found[ID], found[EDITED], found[OLD]
    with Journal(three) as j:
        summary = seal.summary(j.conn, ID)
    assert ok == {"debate_id": ID, "status": "ok", "ok": True, "rows": summary["rows"], "links": summary["links"],
                  "head": summary["head"], "sealed_on_migration_at": None,
                  "signature": {"fingerprint": signing.fingerprint(own), "valid": True, "signed_from": 1},
                  "not_verifiable": [], "notes": [f"signed by your key {signing.fingerprint(own)}"], "problems": []}
    [problem] = edited["problems"]
    assert edited["status"] == "tampered" and set(problem) == {"table", "key", "what", "detail", "at"}
    assert (problem["table"], problem["what"], problem["detail"]) == ("turns", "changed",
                                                                      "its content differs from what was sealed")
    assert old["status"] == "not verifiable" and old["signature"] is None and old["not_verifiable"][0].startswith(
        "it is not signed")


def test_one_line_per_finding_whatever_the_file_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line break in a received id prints as ``\\n``, a tab as a space; the JSON escapes every
    character outside ASCII."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"id": "a\nok b\tc é", "seal": {"redacted": True}}))
    capsys.readouterr()
    assert main(["verify", "--export", str(path)]) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("NOT VERIFIABLE a\\nok b c é: it is a redacted copy, which carries no seal: the seal's "
                                   "hashes would let a reader test guesses of the masked text")
    assert main(["verify", "--export", str(path), "--json"]) == 3
    out = capsys.readouterr().out
    assert '"debate_id": "a\\nok b\\tc \\u00e9"' in out and out.isascii()


def test_every_refusal_says_what_to_do(three: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["verify", "--head", "ab" * 32, "--db", str(three)]) == 1
    assert capsys.readouterr().err.strip() == "error: --head checks one debate: name its id (or --export FILE)"
    run_sql(three, "INSERT INTO debates(id, protocol, title, subject, created_at, updated_at) "
                "VALUES ('forged000001', 'evince', 't', 's', 0, 0)")
    code, out = verify_cli(three, "forged000001", "--head", "ab" * 32, capsys=capsys)
    assert code == 1 and (f"also seal row head (written time unknown): chain — the head is missing, not the {'ab' * 32} "
                          "you gave") in out
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert "3 none failed but one is not verifiable" in " ".join(capsys.readouterr().out.split())


def test_the_words_of_a_seal_that_cannot_be_checked(three: Path) -> None:
    """Each reason an export is not verifiable, exactly as ``verify --export`` prints it."""
    with Journal(three) as j:
        document = json.loads(to_json(Queries(j).debate(ID, chain=True) or {}))
    assert export_check.verify_export({**document, "seal": {**document["seal"], "head": None}}).unverifiable == (
        "its seal holds no chain or no head",)
    assert export_check.verify_export({**document, "seal": "gone"}).unverifiable == (
        "it carries no seal (the debate was journalled without one, or the seal was taken out)",)
    assert seal.redacted() == {"redacted": True, "note": (
        "A redacted copy carries no seal: the seal's hashes would let a reader test guesses of the masked text. It "
        "cannot be checked against the journal; check the unredacted record with `symposium verify` instead.")}
    with Journal(three) as j:
        j.conn.execute("INSERT INTO debates(id, protocol, title, subject, created_at, updated_at) "
                       "VALUES ('nochain00001', 'evince', 't', 's', 0, 0)")
        assert seal.summary(j.conn, "nochain00001") == {
            "head": None, "rows": 0, "links": 0, "sealed_on_migration_at": None, "key": None, "fingerprint": None,
            "signature": None, "signed_from": None}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda link: link["rows"][0].__setitem__("table", "secrets"), r"seal link 1 is malformed \(a row entry is "),
    (lambda link: link.__setitem__("chain_sha256", 7), r"seal link 1 is malformed \(its chain hash is not text\)"),
    (lambda link: link.__setitem__("n", True), r"seal link 1 is malformed \(its number or time is not a number\)"),
])
def test_a_malformed_link_is_named(three: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    with Journal(three) as j:
        document = json.loads(to_json(Queries(j).debate(ID, chain=True) or {}))
    edit(document["seal"]["chain"][0])
    with pytest.raises(export_check.ExportError, match=message):
        export_check.verify_export(document)


def test_the_readable_provenance_and_metrics_are_named_by_their_tables(three: Path) -> None:
    with Journal(three) as j:
        document = json.loads(to_json(Queries(j).debate(ID, chain=True) or {}))
    document["provenance"]["started_at"] = "yesterday"
    document["metrics"].append(dict(document["metrics"][0]))
    problems = {(p.table, p.key, p.what, p.detail) for p in export_check.verify_export(document).problems}
    assert ("provenance", ID, "changed", "the export's 'provenance' differs from the sealed row") in problems
    assert ("metrics", "-", "changed", "the export's metrics are not in the order or number the seal holds") in problems


def test_a_key_line_parses_strictly_with_its_reasons() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = signing.Signer(Ed25519PrivateKey.from_private_bytes(bytes(32))).public
    with pytest.raises(ValueError, match="^not an ssh-ed25519 public key line$"):
        signing.raw_public("ssh-rsa " + public.split()[1])
    with pytest.raises(ValueError, match="^the key is not base64$"):
        signing.raw_public(public[:30] + "!" + public[30:])  # a lenient decoder would skip the "!"
    with pytest.raises(ValueError, match="^not an ssh-ed25519 public key line$"):
        signing.raw_public(public.replace(" ", "\t"))
    with pytest.raises(ValueError, match="^not an ssh-ed25519 public key line$"):
        signing.raw_public(public.replace(" ", "  "))
    with pytest.raises(ValueError, match="^not an Ed25519 key of 32 bytes$"):
        signing.raw_public("ssh-ed25519 " + public.split()[1][:-8] + "AAAAAAA=")
    raw = signing.raw_public(public)
    for header in (b"ssh-ed25518", b"ssh-ed25519"[:-1] + b"\x00"):  # the same length, another algorithm's name
        blob = struct.pack(">I", len(header)) + header + struct.pack(">I", 32) + raw
        with pytest.raises(ValueError, match="^not an Ed25519 key of 32 bytes$"):
            signing.raw_public("ssh-ed25519 " + base64.b64encode(blob).decode())


def test_the_key_is_written_only_inside_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The private key never exists outside its 0700 folder, not even as a temporary file."""
    made: list[Path] = []
    link = os.link
    monkeypatch.setattr(os, "link", lambda src, dst: (made.append(Path(src)), link(src, dst))[1])
    key = tmp_path / "config" / signing.KEY_FILE
    signing.user_signer(key)
    assert [p.parent for p in made] == [key.parent] and made[0].name.startswith(".seal-key-")


def test_a_key_that_cannot_be_made_or_is_not_a_file_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    key = blocker / "config" / signing.KEY_FILE
    with pytest.raises(signing.KeyFileError) as made:
        signing.user_signer(key)
    assert str(made.value) == (f"{key}: cannot make the signing key (Not a directory); check the folder's permissions, "
                               "or point SYMPOSIUM_CONFIG_DIR at a folder you own")
    folder = tmp_path / signing.KEY_FILE
    folder.mkdir()
    with pytest.raises(signing.KeyFileError) as odd:
        signing.user_signer(folder)
    assert str(odd.value) == f"{folder}: the signing key is not a regular file; move it aside"


def test_a_head_checked_against_a_sealed_debate_row_by_row(three: Path) -> None:
    """The chain's verdict for the edited debate names the row (a regression guard for the
    per-debate columns read once for the whole journal)."""
    conn = sqlite3.connect(three)
    verdicts = {v.debate_id: v for v in seal.verify_all(conn)}
    assert verdicts[ID].ok and not verdicts[EDITED].ok and verdicts[OLD].signature is None


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["verify", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_one_debate_prints_no_summary_and_every_refusal_its_words(three: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ID, "--db", str(three))
    assert code == 0 and len(out.splitlines()) == 3 and "debates verified" not in out  # ok, signed by, cannot show
    empty = tmp_path / "empty.db"
    Journal(empty).close()
    assert _run(capsys, "--db", str(empty))[1] == "the journal holds no debates: nothing to verify\n"
    received = tmp_path / "r.json"
    for text, error in (
            (None, f"error: {received}: cannot read it (No such file or directory)"),
            ("[1]", f"error: {received}: not a JSON export of one debate; export one with `symposium export ID --format json`"),
            ("{", f"error: {received}: not a JSON export (Expecting property name enclosed in double quotes: line 1 column 2 "
                  "(char 1)); export one with `symposium export ID --format json`"),
            ('{"id": 1}', f'error: {received}: it names no debate ("id"); export one with `symposium export ID --format json`'),
            ('{"id": "a", "id": "b"}', f"error: {received}: the key 'id' appears twice in one object, so readers would "
                                       "disagree on what the file says; it is not an export Symposium wrote"),
            ('{"id": "é"}'.encode("latin-1"), None)):
        if isinstance(text, bytes):
            received.write_bytes(text)
        elif text is not None:
            received.write_text(text)
        code, _, err = _run(capsys, "--export", str(received))
        assert code == 1, text
        if error is not None:
            assert " ".join(err.split()) == error, text
        else:
            assert "not a JSON export ('utf-8' codec can't decode" in err  # read as UTF-8, whatever the locale
    assert _run(capsys, ID, "--export", str(received))[2].strip() == (
        "error: give either a debate id (to check the journal) or --export FILE, not both")
    assert " ".join(_run(capsys, "nosuch", "--db", str(three))[2].split()) == (
        "error: no debate 'nosuch' in the journal (or the prefix is ambiguous); see `symposium history`")
    assert " ".join(_run(capsys, ID, "--head", "ab", "--db", str(three))[2].split()) == (
        "error: --head takes the whole head, 64 hex digits (`symposium show ID` prints it); got 2 characters: a part "
        "of a head can be matched by grinding, so it proves nothing")
    assert " ".join(_run(capsys, ID, "--key", "SHA256:x", "--db", str(three))[2].split()) == (
        "error: --key takes a whole key fingerprint, SHA256: and 43 characters, as `symposium verify` prints it for a "
        "debate the key signed")


def test_the_json_is_indented_and_dates_are_iso(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, EDITED, "--json", "--db", str(three))[1]
    assert out.startswith('[\n  {\n    "debate_id": "edited000001",\n')
    [found] = json.loads(out)
    assert found["problems"][0]["at"].startswith("2026-") and found["problems"][0]["at"].endswith("+00:00")
    path = _v5(three.parent)
    found = json.loads(_run(capsys, "--json", "--db", str(path))[1])[0]
    assert found["sealed_on_migration_at"].endswith("+00:00") and found["not_verifiable"]


def _v5(folder: Path) -> Path:
    (folder / "v5").mkdir()
    return v5_journal(folder / "v5")


def test_on_a_terminal_the_verdicts_are_coloured_and_nothing_else(three: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """What a person sees: the verdict word coloured (green ok, bold red FAILED, bold yellow NOT
    VERIFIABLE, a dim "cannot show"), and no colour guessed into the ids, numbers and hashes."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "400")
    out = _run(capsys, "--db", str(three))[1]
    assert f"\x1b[32mok \x1b[0m{ID}: " in out
    assert f"\x1b[1;31mFAILED \x1b[0m{EDITED}: " in out
    assert f"\x1b[1;33mNOT VERIFIABLE \x1b[0m{OLD}: " in out
    assert "\x1b[2mcannot show: \x1b[0man edit" in out
    assert out.count("\x1b[") == 8  # the four verdict words (and their resets), nothing highlighted
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(three.parent / "no-key-here"))
    out = _run(capsys, ID, "--db", str(three))[1]
    assert "an edit re-signed by whoever else holds the signing key;" in out


def test_every_option_says_what_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    for phrase in (
            "debate_id id or unique prefix (default: every debate in the journal)",
            "--export FILE check a JSON export (`symposium export ID --format json`) instead of the journal; no journal "
            "is needed",
            "--head HEAD the whole chain head you noted earlier (64 hex digits, from a report or `show`): it must still be "
            "the head",
            "--key FINGERPRINT the fingerprint (SHA256:…) of the key that must have signed, as its owner gave it to you",
            "--json print the findings as JSON",
            "Exit status: 0 every debate ok; 1 one failed (was changed) or an error; 3 none failed but one is not "
            "verifiable (no seal, redacted, unsigned, or signed by a key you did not name)."):
        assert phrase in said, phrase


def test_the_help_says_what_the_seal_proves_and_what_it_cannot(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``symposium --help`` names what ``verify`` checks (as the parser that defines every command
    does too); ``symposium verify --help`` says what each verdict means and the three things no
    verdict can show, each claim whole."""
    monkeypatch.setenv("COLUMNS", "400")  # one claim per line: a hyphen is not where a line breaks
    with pytest.raises(SystemExit):
        main(["--help"])
    summary = ("verify check that journalled debates (or a JSON export) were not changed after they were written: "
               "recompute each hash chain, name the first row that differs")
    assert summary in " ".join(capsys.readouterr().out.split())
    assert summary in " ".join(build_parser().format_help().split())  # the whole parser, every command defined
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    claims = (
            "ok: the debate's rows are the ones written, vouched for by your key, the key you named or the head you "
            "noted.",
            "FAILED: a row was changed, deleted, inserted or reordered after it was written, or the signature or head "
            "does not match.",
            "NOT VERIFIABLE: nothing you hold vouches for it.",
            "It cannot show an edit re-signed by someone else who holds the signing key, a record put back to an "
            "earlier signed state (compare the head you noted: --head), or a debate deleted whole.")
    assert f"[debate_id] {' '.join(claims)} positional arguments:" in said, said  # these claims and nothing between


def test_the_summary_names_only_the_kinds_of_verdict_it_found(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(three, f"DELETE FROM debates WHERE id = '{OLD}'")
    code, out = verify_cli(three, capsys=capsys)
    assert code == 1 and out.splitlines()[-2] == "1 of 2 debates verified; 1 failed"


def test_an_export_is_read_as_utf_8_whatever_the_locale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A person whose locale is not UTF-8 (``LANG=C`` on a server) checks an export naming a
    patient "José": the file is read as the UTF-8 Symposium wrote, not in the locale's encoding
    (which could not read it, or would read other text than was sealed). The command runs in a
    process of its own, with the ASCII C locale and Python's UTF-8 mode and locale coercion off."""
    import subprocess
    import sys

    path = tmp_path / "josé.json"
    path.write_text(json.dumps({"id": "abc", "title": "José", "seal": {"redacted": True}}, ensure_ascii=False),
                    encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", "--export", str(path)]) == 3  # in this process too
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run([sys.executable, "-m", "tui.cli", "verify", "--export", str(path)], env=env,
                         capture_output=True, text=True, encoding="utf-8", check=False)
    assert run.returncode == 3, run.stderr
    assert run.stdout.startswith("NOT VERIFIABLE abc: it is a redacted copy"), run.stdout
