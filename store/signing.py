"""The user's signing key: an Ed25519 key kept outside the journal, which signs each debate's seal.

Why: a hash chain stored in the file it protects proves only that the file agrees with itself;
whoever can edit the journal can recompute the chain. A signature over the chain's head, made
with a key the journal does not hold, is something an editor of the journal cannot make again.

Where: ``seal-key.pem`` in the config folder (``$SYMPOSIUM_CONFIG_DIR``, else the platform's,
as the settings and the model registry use), PKCS#8 PEM (``openssl pkey -in seal-key.pem
-pubout`` reads it), mode 0600 in a 0700 folder, made the first time a journal seals a row.
Two processes making it at once keep one key: each writes its own temporary file and links it
to the name, which fails for the second, who reads the first's.

What a signature covers (:func:`message`, bytes a recipient can rebuild in any language): the
debate's id, its chain head, the link from which the debate was signed (1 unless it was written
before Symposium signed), and the time its chain was built on migration (``-`` if it was not).
Keys travel as an OpenSSH public key line (``ssh-ed25519 AAAA…``) and are named by their
OpenSSH fingerprint (``SHA256:…``, what ``ssh-keygen -lf`` prints for the same line), so a
person can compare fingerprints over the phone. The library is ``cryptography`` (pinned in
pyproject.toml); nothing here implements a signature itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import stat
import struct
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from backends.private import FILE_MODE, config_dir, private_dir

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_FILE = "seal-key.pem"
_ALGORITHM = b"ssh-ed25519"


class KeyFileError(RuntimeError):
    """The key file cannot be read, made or trusted. ``str()`` names the file and what to do."""


def key_path() -> Path:
    """Where this user's signing key lives (``symposium paths`` lists it)."""
    return config_dir() / KEY_FILE


def message(debate_id: str, head: str, signed_from: int, migrated: float | None) -> bytes:
    """The bytes a debate's signature covers, one field a line (UTF-8): a fixed tag, the
    debate's id, its chain head, the first link signed, and the migration time as Python's
    ``repr`` of the float (the shortest text that reads back as the same double) or ``-``."""
    when = "-" if migrated is None else repr(float(migrated))
    return f"symposium seal signature v1\n{debate_id}\n{head}\n{signed_from}\n{when}".encode()


def _blob(raw: bytes) -> bytes:
    """The OpenSSH wire form of an Ed25519 public key: the algorithm's name, then the key."""
    return struct.pack(">I", len(_ALGORITHM)) + _ALGORITHM + struct.pack(">I", len(raw)) + raw


def public_text(raw: bytes) -> str:
    """A raw 32-byte public key as an OpenSSH public key line."""
    return f"{_ALGORITHM.decode()} {base64.b64encode(_blob(raw)).decode()}"


def raw_public(text: str) -> bytes:
    """The 32 raw bytes of an OpenSSH Ed25519 public key line; ValueError for anything else."""
    parts = text.split(" ")
    if len(parts) != 2 or parts[0] != _ALGORITHM.decode():
        raise ValueError("not an ssh-ed25519 public key line")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except binascii.Error:
        raise ValueError("the key is not base64") from None
    raw = blob[-32:]
    if len(blob) != 51 or blob != _blob(raw):
        raise ValueError("not an Ed25519 key of 32 bytes")
    return raw


def fingerprint(text: str) -> str:
    """The OpenSSH fingerprint of a public key line (``SHA256:`` and 43 base64 characters)."""
    digest = hashlib.sha256(_blob(raw_public(text))).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def valid(text: str, signature: str, signed: bytes) -> bool:
    """Whether ``signature`` (base64) is the key's signature of ``signed``. Anything malformed
    (a key or signature that does not parse) is simply not a valid signature."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(raw_public(text))
        key.verify(base64.b64decode(signature, validate=True), signed)
    except (ValueError, binascii.Error, InvalidSignature):
        return False
    return True


class Signer:
    """A private key that signs seals, with its public key line and fingerprint."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public = public_text(key.public_key().public_bytes_raw())
        self.fingerprint = fingerprint(self.public)

    def sign(self, signed: bytes) -> str:
        """The signature of ``signed``, base64 (88 characters)."""
        return base64.b64encode(self._key.sign(signed)).decode()


def user_signer(path: Path | None = None) -> Signer:
    """This user's signer, its key made now (0600, in a 0700 folder) if there is none yet."""
    path = key_path() if path is None else path
    key = _read(path)
    if key is None:
        _create(path)
        key = _read(path)
        assert key is not None  # made just now, by this process or by one that raced it
    return Signer(key)


def own_public_key(path: Path | None = None) -> str | None:
    """This user's public key line, or ``None`` when no key was made yet (reading never makes one)."""
    key = _read(key_path() if path is None else path)
    return None if key is None else Signer(key).public


def _create(path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    pem = Ed25519PrivateKey.generate().private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".seal-key-")  # O_EXCL, 0600, a random name
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot make the signing key ({exc.strerror}); check the folder's "
                           "permissions, or point SYMPOSIUM_CONFIG_DIR at a folder you own") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)  # fails, replacing nothing, where another process made the key first
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def _read(path: Path) -> Ed25519PrivateKey | None:
    """The key in ``path``; ``None`` when there is none. A key file another account owns
    is refused (it could sign in this user's name); one of ours readable by others is narrowed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a planted link is not followed
    except (FileNotFoundError, NotADirectoryError):
        return None  # no key there (making one says why it cannot be made)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the signing key ({exc.strerror}); it must be a file of your own "
                           "(a link is not followed)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyFileError(f"{path}: the signing key is not a regular file; move it aside")
        if st.st_uid != os.getuid():
            raise KeyFileError(f"{path}: the signing key belongs to another account, which could sign in your name; "
                               "move it aside (a new key is made) or fix its owner")
        if stat.S_IMODE(st.st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read()
    finally:
        os.close(fd)
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: not a readable signing key ({exc}); restore it from a backup, or move it "
                           "aside and a new key is made (records it signed then show as signed by another key)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: the signing key is not an Ed25519 key; move it aside and a new key is made")
    return key
