"""Files another account planted, or left readable, do not become a way into the user's cases.

An attacker who can write to a folder Symposium writes in (a shared, group-writable export
folder) or who set up a file before the user did (a journal restored ``0644``, a config folder
of their own) tries, here, what a hostile local account would:

* a symbolic link planted at the temporary name a write would use, pointing at a file of the
  user's: the write must not follow it (the file pointed to keeps its bytes);
* a journal (and its WAL and shared memory) copied or restored ``0644``: opening it narrows all
  three to ``0600``; one owned by another account is opened with a warning naming the owner;
* a config folder owned by another account, with a ``models.toml`` in it: refused, never read;
* the model file Symposium assembles into its data folder is ``0600`` like every other file.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from backends.private import (
    append_private,
    create_private,
    foreign_owner,
    narrow_own,
    narrow_tree,
    private_dir,
    refuse_foreign,
    write_private,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(tmp_path: Path) -> None:
    """Every name a predictable temporary file could have (``.report.html.tmp``, with or without
    the process id) is a link to the user's own file; the write lands in the report alone."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # a folder others can write to
    victim = tmp_path / "notes.txt"
    victim.write_text("the user's own notes\n", encoding="utf-8")
    for name in (".report.html.tmp", f".report.html.{os.getpid()}.tmp", "report.html.tmp"):
        (shared / name).symlink_to(victim)
    target = shared / "report.html"
    write_private(target, "<p>the debate</p>")
    assert victim.read_text(encoding="utf-8") == "the user's own notes\n"
    assert target.read_text(encoding="utf-8") == "<p>the debate</p>" and not target.is_symlink()
    assert _mode(target) == 0o600
    # nothing of the write is left behind but the report and the planted links
    assert sorted(p.name for p in shared.iterdir() if not p.is_symlink()) == ["report.html"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    write_private(target, "old")
    with pytest.raises(UnicodeEncodeError):  # a text that cannot be written: nothing is touched
        write_private(target, "new \udc80")
    assert target.read_text(encoding="utf-8") == "old"
    folder = tmp_path / "a-folder-in-the-way"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):  # the replace fails: its temporary file goes too
        write_private(folder, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder-in-the-way", "settings.json"]
    write_private(target, "ünïcode ✓")
    assert target.read_bytes() == "ünïcode ✓".encode()


def test_private_dir_makes_each_missing_folder_0700_and_narrows_only_its_own(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        made = private_dir(tmp_path / "a" / "b" / "c")
    finally:
        os.umask(old)
    assert made == tmp_path / "a" / "b" / "c"
    assert [_mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
    theirs = tmp_path / "named-by-the-user"
    theirs.mkdir(mode=0o755)
    os.chmod(theirs, 0o755)
    private_dir(theirs, ours=False)
    assert _mode(theirs) == 0o755  # a folder the user named is left as it is
    private_dir(theirs)
    assert _mode(theirs) == 0o700  # Symposium's own is narrowed


def test_a_private_file_is_0600_from_its_creation_and_its_named_folder_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Created ``0600`` (not created wider and narrowed after: another account could open it in
    between), in a folder the user named and left as it is."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    write_private(shared / "notes.md", "x")
    append_private(shared / "cache.jsonl", "x")
    assert _mode(shared) == 0o755
    monkeypatch.setattr("backends.private.os.fchmod", lambda fd, mode: None)  # no narrowing after the fact
    old = os.umask(0o022)
    try:
        create_private(shared / "new.log")
    finally:
        os.umask(old)
    assert _mode(shared / "new.log") == 0o600


def test_create_and_append_private_make_0600_files_and_narrow_a_wider_one(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "app.log"
    append_private(log, "one\n")
    append_private(log, "twö\n")
    assert log.read_bytes() == "one\ntwö\n".encode() and _mode(log) == 0o600 and _mode(log.parent) == 0o700
    os.chmod(log, 0o644)
    create_private(log)
    assert _mode(log) == 0o600 and log.read_bytes() == "one\ntwö\n".encode()  # kept whole


def test_narrow_own_and_narrow_tree_narrow_the_user_s_files_and_follow_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours to change", encoding="utf-8")
    os.chmod(outside, 0o644)
    model = tmp_path / "models" / "m"
    (model / "sub").mkdir(parents=True)
    for folder in (model, model / "sub"):
        os.chmod(folder, 0o755)
    for name in ("weights.gguf", "sub/config.json"):
        (model / name).write_text("x", encoding="utf-8")
        os.chmod(model / name, 0o644)
    (model / "sub" / "link").symlink_to(outside)
    (model / "linked-folder").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o755)
    os.chmod(tmp_path / "elsewhere", 0o755)
    narrow_tree(model)
    assert {p: _mode(model / p) for p in (".", "sub", "weights.gguf", "sub/config.json")} == \
        {".": 0o700, "sub": 0o700, "weights.gguf": 0o600, "sub/config.json": 0o600}
    assert _mode(outside) == 0o644 and _mode(tmp_path / "elsewhere") == 0o755  # links are not followed
    single = tmp_path / "single.gguf"
    single.write_text("x", encoding="utf-8")
    os.chmod(single, 0o644)
    narrow_tree(single)
    assert _mode(single) == 0o600
    assert narrow_own(tmp_path / "absent") is None and foreign_owner(tmp_path / "absent") is None
    assert narrow_own(single) is None and foreign_owner(single) is None


def _as_other_account(*paths: Path) -> None:
    """Give ``paths`` to another account (nobody, uid 65534): root only."""
    if os.getuid() != 0:
        pytest.skip("giving a file to another account needs root")
    for path in paths:
        os.chown(path, 65534, 65534)


def test_a_journal_restored_readable_by_all_is_narrowed_on_open_with_its_wal_and_shm(tmp_path: Path) -> None:
    from store.journal import Journal

    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        journal.conn.execute("CREATE TABLE IF NOT EXISTS probe(x)")
    # a copy from a backup, a crash that left the WAL and shared memory: all readable by everyone
    conn = sqlite3.connect(path, isolation_level=None)  # kept open: its WAL and shared memory stay
    conn.execute("INSERT INTO probe VALUES (1)")
    sides = [path.with_name("journal.db-wal"), path.with_name("journal.db-shm")]
    assert all(p.exists() for p in sides)
    for p in (path, *sides):
        os.chmod(p, 0o644)
    with Journal(path):
        assert {p.name: _mode(p) for p in (path, *sides)} == {p.name: 0o600 for p in (path, *sides)}
    conn.close()


def test_a_journal_of_another_account_is_opened_with_a_warning_naming_the_owner(tmp_path: Path) -> None:
    from store.journal import ForeignJournal, Journal

    path = tmp_path / "journal.db"
    Journal(path).close()
    os.chmod(path, 0o644)
    _as_other_account(path)
    with pytest.warns(ForeignJournal, match=r"account nobody \(uid 65534\)"):
        Journal(path).close()
    assert _mode(path) == 0o644  # not the user's to change


def test_a_config_folder_of_another_account_is_refused_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted registry names a 'local' model on a server of the attacker's choosing: it must
    not be read (the attacker owns the folder, so could make the file say anything)."""
    from backends.registry import RegistryError, load_registry
    from tui import settings

    config = tmp_path / "config"
    config.mkdir(mode=0o755)
    planted = config / "models.toml"
    planted.write_text('[models.planted]\nname = "Planted"\nfamily = "x"\nbackend = "openai"\ncontext_length = 2048\n'
                       'source = { kind = "server", base_url = "http://127.0.0.1:9/v1", model = "x" }\n', encoding="utf-8")
    (config / "tui.json").write_text('{"theme": "planted"}', encoding="utf-8")
    (config / "keymap.toml").write_text('quit = "x"\n', encoding="utf-8")
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(config))
    monkeypatch.delenv("SYMPOSIUM_USER_MODELS", raising=False)
    assert "planted" in load_registry().entries  # the user's own folder: read
    assert settings.load() == {"theme": "planted"} and settings.keymap()[0] == {"quit": "x"}
    _as_other_account(config)
    with pytest.raises(RegistryError, match=r"refused to read your model registry: it belongs to account nobody"):
        load_registry()
    assert settings.load() == {}
    keys, problem = settings.keymap()
    assert keys == {} and problem is not None and "belongs to account nobody" in problem


def test_the_model_file_assembled_into_the_data_folder_is_0600() -> None:
    """Gemma 3 270M arrives as package chunks joined into Symposium's models folder (the session's
    own, tests/conftest.py): the joined file is ``0600``, and one a version left ``0644`` is
    narrowed when it is next used."""
    from backends.registry import load_registry
    from backends.sources import resolve_path

    entry = load_registry().get("gemma3-270m")
    path = resolve_path(entry)
    assert Path(os.environ["SYMPOSIUM_MODELS_DIR"]) in path.parents
    assert _mode(path) == 0o600
    os.chmod(path, 0o644)
    assert resolve_path(entry) == path and _mode(path) == 0o600


def test_another_account_s_files_are_named_and_left_alone() -> None:
    """What the journal's warning and the config folder's refusal say, and that nothing of
    another account's is narrowed (it is not the user's to change)."""
    import tempfile

    folder = Path(tempfile.mkdtemp())
    try:
        theirs, unnamed = folder / "theirs", folder / "unnamed"
        for path in (theirs, unnamed):
            path.write_text("x", encoding="utf-8")
            os.chmod(path, 0o644)
        _as_other_account(theirs)
        os.chown(unnamed, 54321, 54321)  # a uid no account has
        assert foreign_owner(theirs) == "account nobody (uid 65534)" and foreign_owner(unnamed) == "uid 54321"
        assert narrow_own(theirs) == "account nobody (uid 65534)" and _mode(theirs) == 0o644
        with pytest.raises(PermissionError, match=rf"{theirs}: refused to read the thing: it belongs to account nobody "
                                                  r"\(uid 65534\), not to you"):
            refuse_foreign(theirs, "the thing")
        refuse_foreign(folder / "absent", "the thing")  # the user's folder, nothing there: no complaint
        os.chmod(folder, 0o755)
        _as_other_account(folder)
        private_dir(folder)
        assert _mode(folder) == 0o755  # another account's folder is not narrowed, even one Symposium calls its own
        with pytest.raises(PermissionError, match="refused to read the thing: it belongs to account nobody"):
            refuse_foreign(folder / "absent", "the thing")
    finally:
        os.chown(folder, 0, 0)
        shutil.rmtree(folder)


def test_the_temporary_file_is_made_beside_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the target's own folder: a rename there is atomic (one across file systems is a copy),
    and the unfinished text sits in the folder the user chose, not in a shared /tmp."""
    moved: list[tuple[str, str]] = []
    real = os.replace
    monkeypatch.setattr("backends.private.os.replace", lambda src, dst: moved.append((src, str(dst))) or real(src, dst))
    write_private(tmp_path / "out" / "report.html", "x")
    assert [Path(src).parent for src, _ in moved] == [tmp_path / "out"]


def test_a_folder_made_meanwhile_by_another_process_does_not_stop_the_rest(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes making the same folders at once (the app and a command): the one that loses
    the race to make ``a`` still makes ``a/b/c``."""
    real = Path.mkdir

    def raced(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == "a":
            real(self)  # the other process was first
            raise FileExistsError(str(self))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", raced)
    assert private_dir(tmp_path / "a" / "b" / "c").is_dir()
