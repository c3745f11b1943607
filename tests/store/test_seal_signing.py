"""The seal's signature (store/signing.py): an editor of the journal cannot re-seal it.

The attack the chain alone cannot stop: edit a turn, recompute every hash after it and the head,
and the journal agrees with itself again. Done here exactly so, with plain SQL and the seal's own
functions, it must fail ``symposium verify`` on the signature; re-signed with the editor's own
key it is signed by a key that is not the user's, which ``verify`` says and never calls ok.
Also: the key file (0600 in a 0700 folder, made once even by racing writers, a link or another
account's file refused), what the signature covers, and ``--head``/``--key`` taking whole values.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from protocols.core.events import ModeratorActed
from store import seal, signing
from store.journal import Journal, JournalError
from tests.helpers.sealed_journal import ID, record_every_kind, reseal, run_sql, verify_cli
from tui.cli.parser import main


def test_an_edit_re_sealed_through_the_whole_chain_fails_on_the_signature(
        sealed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    own = signing.own_public_key()
    assert own is not None
    turn_id = sqlite3.connect(sealed).execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0]
    run_sql(sealed, "UPDATE turns SET text = 'Clearly malaria; no tests needed.' WHERE seq = 2")
    head = reseal(sealed, "turns", str(turn_id))
    with Journal(sealed) as j:
        verdict = seal.verify(j.conn, ID)
    assert [(p.table, p.what) for p in verdict.problems] == [("debates", "signature")]  # the chain itself holds again
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 1 and out.startswith(f"FAILED {ID}: first debates row {ID} (written time unknown): signature — the "
                                        "head's signature does not hold: the chain was recomputed after it was signed")
    editor = signing.user_signer(tmp_path / "editor" / "seal-key.pem")
    run_sql(sealed, f"UPDATE debates SET seal_signature = '{editor.sign(signing.message(ID, head, 1, None))}', "
                 f"seal_key = '{editor.public}' WHERE id = '{ID}'")
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 3 and out.startswith(f"NOT VERIFIABLE {ID}: it is signed by key {editor.fingerprint}, which is not "
                                        f"yours: if its owner confirms that fingerprint, run again with --key")
    assert verify_cli(sealed, "--key", signing.fingerprint(own), capsys=capsys)[0] == 1


@pytest.mark.parametrize(("column", "value"), [
    ("seal_signed_from", 5),  # claims the links before were written before signing
    ("seal_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA=="),  # a key that does not parse
    ("seal_signature", "not base64!"),
    ("sealed_on_migration_at", 1_700_000_000.0),  # claims a migration
    ("seal_signed_from", None),  # says nothing of where signing began
    ("seal_signature", None),  # half the signature removed: an edit, not an unsigned record
    ("seal_key", None),
])
def test_what_the_signature_covers_cannot_be_changed(sealed: Path, column: str, value: object) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    conn.execute(f"UPDATE debates SET {column} = ? WHERE id = ?", (value, ID))
    verdict = seal.verify(conn, ID)
    assert verdict.problems == (seal.Problem(
        ID, "debates", ID, "signature", "the head's signature does not hold: the chain was recomputed after it was signed, "
        "or the signature, its key or what it covers was changed", None, 0),)  # n 0: before every link's finding
    assert verdict.signature is not None and not verdict.signature.valid
    own = signing.own_public_key()
    assert own is not None  # a key that does not parse has no fingerprint (--json: null)
    assert verdict.signature.fingerprint == (None if column == "seal_key" else signing.fingerprint(own))


def test_a_signature_copied_from_another_debate_does_not_hold(tmp_path: Path) -> None:
    """Both debates signed by the same key: the signature covers the debate's id too."""
    path = tmp_path / "two.db"
    with Journal(path) as j:
        record_every_kind(j, ID)
        record_every_kind(j, "other0000001")
        other = seal.summary(j.conn, "other0000001")
    run_sql(path, f"UPDATE debates SET seal_signature = '{other['signature']}', seal_head = '{other['head']}' WHERE id = '{ID}'")
    problems = seal.verify(sqlite3.connect(path), ID).problems
    assert "signature" in [p.what for p in problems] and "chain" in [p.what for p in problems]


def test_the_key_is_made_once_0600_in_a_0700_folder_even_by_racing_writers(tmp_path: Path) -> None:
    path = tmp_path / "config" / "symposium" / signing.KEY_FILE
    publics: list[str] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        publics.append(signing.user_signer(path).public)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(publics) == 8 and len(set(publics)) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == [signing.KEY_FILE]  # no temporary file left behind
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert signing.own_public_key(path) == publics[0]
    assert signing.own_public_key(tmp_path / "nowhere" / signing.KEY_FILE) is None
    assert not (tmp_path / "nowhere").exists()  # reading never makes a key


def test_an_existing_key_is_read_and_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Signing with the key already there writes nothing in the config folder: a folder the
    user may read but not write (a read-only home, a managed profile) still signs."""
    path = tmp_path / "config" / signing.KEY_FILE
    made = signing.user_signer(path).public

    def no_writes(where: Path) -> None:
        raise AssertionError(f"a key was made at {where} although one is there")

    monkeypatch.setattr(signing, "_create", no_writes)
    assert signing.user_signer(path).public == made


def test_the_journal_signs_with_the_users_key_made_at_its_first_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "fresh-config"
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(config))
    db = tmp_path / "j.db"
    with Journal(db) as j:
        assert not config.exists()  # opening writes nothing
        record_every_kind(j)
    key = config / signing.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(config.stat().st_mode) == 0o700
    with Journal(db) as j:
        assert seal.summary(j.conn, ID)["key"] == signing.own_public_key(key)
    key.rename(tmp_path / "elsewhere.pem")  # another user's account, or a new machine: no key of their own
    code, out = verify_cli(db, capsys=capsys)
    assert code == 3 and "which is not yours" in out and not key.exists()
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "elsewhere"))
    paths = tmp_path / "paths.json"
    capsys.readouterr()
    assert main(["paths", "--json"]) == 0
    paths.write_text(capsys.readouterr().out)
    assert json.loads(paths.read_text())["seal key"] == str(tmp_path / "elsewhere" / signing.KEY_FILE)


def test_a_key_file_that_cannot_be_trusted_is_refused_with_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(config))
    key = config / signing.KEY_FILE
    key.write_text("not a key")
    with Journal(tmp_path / "j.db") as j, pytest.raises(JournalError, match=(
            rf"j.db: cannot sign the journal's seal: {key}: not a readable signing key .*move it aside and a new key is "
            "made")):
        record_every_kind(j)
    capsys.readouterr()
    assert main(["verify", "--db", str(tmp_path / "j.db")]) == 1
    assert f"error: {key}: not a readable signing key" in capsys.readouterr().err
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    key.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    with pytest.raises(signing.KeyFileError, match="the signing key is not an Ed25519 key"):
        signing.user_signer()
    key.unlink()
    real = tmp_path / "real.pem"
    signing.user_signer(real)
    key.symlink_to(real)
    with pytest.raises(signing.KeyFileError, match=r"cannot read the signing key .*it must be a file of your own \(a link is not followed\)"):
        signing.user_signer()
    key.unlink()
    signing.user_signer()
    key.chmod(0o644)  # left readable by a copy or a restore: narrowed when read
    signing.user_signer()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another account needs root")
def test_a_key_file_of_another_account_is_refused(tmp_path: Path) -> None:
    key = tmp_path / signing.KEY_FILE
    signing.user_signer(key)
    os.chown(key, 12345, 12345)
    with pytest.raises(signing.KeyFileError) as refused:
        signing.user_signer(key)
    assert str(refused.value) == (f"{key}: the signing key belongs to another account, which could sign in your name; "
                                  "move it aside (a new key is made) or fix its owner")


@pytest.mark.parametrize("head", ["abc123def456", "a" * 63, "g" * 64, ""])
def test_head_takes_the_whole_digest_only(sealed: Path, head: str, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    capsys.readouterr()
    assert main(["verify", ID, "--head", head, "--db", str(sealed)]) == 1
    assert "--head takes the whole head, 64 hex digits" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["SHA256:abc", "ssh-ed25519 AAAA", "sha256:" + "A" * 43])
def test_key_takes_a_whole_fingerprint_only(sealed: Path, key: str, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    capsys.readouterr()
    assert main(["verify", ID, "--key", key, "--db", str(sealed)]) == 1
    assert "--key takes a whole key fingerprint" in capsys.readouterr().err


def test_fingerprints_are_openssh_ones_and_keys_parse_strictly() -> None:
    """The public key line is the one OpenSSH writes and the fingerprint what ``ssh-keygen -lf``
    prints for it (both pinned here for a fixed key, as ssh-keygen and ``openssl pkey`` gave them),
    so two people can compare a fingerprint by any means they trust."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    signer = signing.Signer(key)
    assert signer.public == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"
    assert signer.public == key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()
    assert signer.fingerprint == "SHA256:lbmsoA0yIEcEiVDRnMWuzm+nV+3ZEEpVIURqFoeSspg"
    assert signing.raw_public(signer.public) == bytes.fromhex(
        "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
    for bad in ("ssh-rsa AAAA", signer.public + " comment", signer.public[:-4], "ssh-ed25519 !!!!"):
        with pytest.raises(ValueError):
            signing.raw_public(bad)
    signed = signing.message(ID, "ab" * 32, 1, None)
    signature = signer.sign(signed)
    assert signing.valid(signer.public, signature, signed)
    assert not signing.valid(signer.public, signature, signed + b" ")
    assert not signing.valid(signer.public, signature[:-4] + "AAA=", signed)
    assert not signing.valid(signer.public, signature[:40] + "!" + signature[40:], signed)  # only canonical base64
    assert not signing.valid("ssh-ed25519 broken", signature, signed)


def test_every_event_leaves_the_head_signed(sealed: Path) -> None:  # noqa: F811
    """The signature moves with the head in the same transaction, so no committed state of the
    journal has a head its signature does not cover (a crash included)."""
    with Journal(sealed) as j:
        for n in range(3):
            j.record(ModeratorActed(ID, "interject", {"text": f"note {n}"}, 2, checkpoint=30 + n))
            found = seal.summary(j.conn, ID)
            assert signing.valid(found["key"], found["signature"], signing.message(ID, found["head"], 1, None))
