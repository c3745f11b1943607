"""Every file Symposium writes is the user's alone, and the case is written only where it belongs.

Clinicians type real cases. The journal holds them, and the exports the user asks for; nothing
else may. Here a whole app session (the New-debate form, an EVINCE debate to its end, an export,
the theme switched, the form opened again) and command-line work (a SocraSynth debate with a log
file, ``export`` to a folder that does not exist yet, ``export --redact``) run as a user runs
them, in a home folder of their own: ``HOME`` and every XDG folder point into a fresh tree and
no ``SYMPOSIUM_*`` path is set, so each file lands where it lands on a user's machine
(``tests/helpers/private_session.py``; the models are scripted, see there). The process runs
under the usual umask 022, so a file created without an explicit mode shows as ``0644``.

Then every file and folder in that tree is walked:

* each file is ``0600`` (owner read/write, nothing for group or others; the one program file,
  vLLM's spawn wrapper, may be ``0700``) and each folder ``0700``;
* the case's and the subject's words are found only in the journal (its WAL and shared memory
  included) and in the exports the user asked for: not in the settings (the form does not
  remember them: the journal holds them), not in a log written without ``--verbose``;
* the New-debate form opened again after the debate is not filled with the last case.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

#: The case and the subject, with words found nowhere else (not in Symposium's prompts, not in
#: the scripted replies): where these bytes are, the user's text is.
CASE = ("Quillon Farraday-Ostrowski, 47, MRN 00482913: fever, chills and night sweats ten days "
        "after a trip to Belize; itching rash on the forearms.")
SUBJECT = "Should the Vantongeren family's clinic share Orla's scans with the insurer?"
MARKERS = (b"Farraday-Ostrowski", b"00482913", b"Vantongeren")
#: What a file or folder may allow besides its owner: nothing.
OTHERS = stat.S_IRWXG | stat.S_IRWXO


def _env(home: Path) -> dict[str, str]:
    """The test process's environment with every per-user place moved under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYMPOSIUM_", "XDG_"))}
    env.update(HOME=str(home), PYTHONPATH=str(REPO), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_DOCUMENTS_DIR=str(home / "Documents"))
    return env


def _run(home: Path, *argv: str) -> str:
    run = subprocess.run([sys.executable, "-m", "tests.helpers.private_session", *argv], cwd=REPO, env=_env(home),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{argv[:3]} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The home folder after the app session and the command-line work, and the app's output."""
    root = tmp_path_factory.mktemp("private")
    home, inputs = root / "home", root / "inputs"
    home.mkdir(mode=0o700)
    inputs.mkdir()
    (inputs / "case.txt").write_text(CASE, encoding="utf-8")
    os.umask(old := os.umask(0o022))  # the usual umask, whatever the harness had: see the module's docstring
    try:
        app = _run(home, "app", str(inputs / "case.txt"), "--log-file", str(home / "logs" / "app.log"))
        _run(home, "cli", "--log-file", str(home / ".local" / "state" / "symposium" / "log" / "cli.log"),
             "run", "socrasynth", "--subject", SUBJECT, "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m",
             "--judges", "smollm2-135m", "--max-rounds", "1", "--subtopics", "1", "--profile", "small")
        history = json.loads(_run(home, "cli", "history", "--json"))
        assert {d["protocol"] for d in history} == {"evince", "socrasynth"}, history
        cli_debate = next(d["id"] for d in history if d["protocol"] == "socrasynth")
        _run(home, "cli", "export", cli_debate, "--out", str(home / "shared" / "case-notes" / "debate.md"))
        _run(home, "cli", "export", cli_debate, "--redact", "--format", "json",
             "--out", str(home / "shared" / "case-notes" / "redacted.json"))
    finally:
        os.umask(old)
    return home, app


def _written(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*"))


def _allowed(home: Path, path: Path) -> bool:
    """The journal (and its WAL, shared memory) and the exports the user asked for."""
    name = path.name
    journal = home / ".local" / "share" / "symposium"
    if path.parent == journal and name.startswith("journal.db"):
        return True
    app_exports = home / "Documents" / "symposium"
    return (path.parent == app_exports and name.startswith("symposium-")) or path.parent == home / "shared" / "case-notes"


@pytest.mark.model
def test_every_file_written_is_0600_and_every_folder_0700(session: tuple[Path, str]) -> None:
    home, _ = session
    written = _written(home)
    names = {str(p.relative_to(home)) for p in written}
    # What the session must have written (so the walk below checked something real):
    for expected in (".config/symposium/tui.json", ".local/share/symposium/journal.db", "logs/app.log",
                     ".local/state/symposium/log/cli.log", "shared/case-notes/debate.md",
                     "shared/case-notes/redacted.json"):
        assert expected in names, f"{expected} was not written; written: {sorted(names)}"
    assert any(n.startswith("Documents/symposium/symposium-") for n in names), sorted(names)
    loose = []
    for path in written:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            ok = mode == 0o700
        else:
            ok = mode & OTHERS == 0 and mode in (0o600, 0o700 if path.name == "vllm-python.sh" else 0o600)
        if not ok:
            loose.append(f"{path.relative_to(home)} {mode:04o}")
    assert not loose, "readable by others: " + ", ".join(loose)


@pytest.mark.model
def test_the_case_is_written_only_to_the_journal_and_the_exports_asked_for(session: tuple[Path, str]) -> None:
    home, _ = session
    found: dict[str, list[str]] = {}
    for path in _written(home):
        if path.is_file():
            data = path.read_bytes()
            hits = [m.decode() for m in MARKERS if m in data]
            if hits:
                found[str(path.relative_to(home))] = hits
    stray = {p: hits for p, hits in found.items() if not _allowed(home, home / p)}
    assert not stray, f"the case or the subject written outside the journal and the exports: {stray}"
    # And the walk saw them where they belong (so a marker that never reached a file cannot pass).
    assert any(p.startswith(".local/share/symposium/journal.db") and "Farraday-Ostrowski" in h for p, h in found.items()), found
    assert any(p.startswith(".local/share/symposium/journal.db") and "Vantongeren" in h for p, h in found.items()), found
    assert "Vantongeren" in found.get("shared/case-notes/debate.md", []), found
    assert any(p.startswith("Documents/symposium/") and "Farraday-Ostrowski" in h for p, h in found.items()), found


@pytest.mark.model
def test_the_form_does_not_come_back_with_the_last_case(session: tuple[Path, str]) -> None:
    home, app = session
    prefilled = json.loads(next(line for line in app.splitlines() if line.startswith("@prefilled ")).split(" ", 1)[1])
    assert "Farraday" not in prefilled and "00482913" not in prefilled
    saved = json.loads((home / ".config" / "symposium" / "tui.json").read_text(encoding="utf-8"))
    remembered = saved.get("defaults", {}).get("evince", {})
    assert "case" not in remembered, remembered
    assert remembered.get("max_rounds") == "1", remembered  # the settings are still remembered


def test_no_protocol_s_form_remembers_its_text() -> None:
    """Every protocol's text inputs (case, subject, issue, topic, question, answers, lists, file
    paths) are left out of what the form keeps; its choices and numbers are kept."""
    from tui.protocol_catalog import SPECS

    for name, spec in SPECS.items():
        inputs = {i.name: i for i in spec.definition.inputs if i.form}
        values = {f.name: "Farraday-Ostrowski" for f in spec.fields}
        kept = spec.remembered(values)
        for field, i in inputs.items():
            if field in values:
                assert (field in kept) == (i.kind in ("select", "bool", "int", "float")), (name, field, i.kind)
        assert any(i.kind == "textarea" for i in inputs.values()), name  # each has its material: a case, a subject …
        assert "profile" in kept and any(r.name in kept for r in spec.definition.roles if r.kind != "person"), name


async def test_a_case_an_older_version_saved_is_dropped_and_its_file_narrowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings written by an older version (``tui.json`` 0644 in a 0755 folder, the last case in
    it): the app's start narrows both and drops every protocol's text; the form shows no old case."""
    from textual.widgets import TextArea

    from backends.registry import load_registry
    from store.journal import Journal
    from tui.app.app import SymposiumApp
    from tui.app.screens.new_debate import NewDebateScreen

    config = tmp_path / "config"
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(config))
    config.mkdir(mode=0o755)
    os.chmod(config, 0o755)
    old = config / "tui.json"
    old.write_text(json.dumps({"theme": "textual-dark", "defaults": {
        "evince": {"case": CASE, "max_rounds": "3", "agent-a": "smollm2-135m"},
        "socrasynth": {"subject": SUBJECT, "subtopics": "2"}}}), encoding="utf-8")
    os.chmod(old, 0o644)
    app = SymposiumApp(journal=Journal(tmp_path / "journal.db"), registry=load_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert stat.S_IMODE(config.stat().st_mode) == 0o700 and stat.S_IMODE(old.stat().st_mode) == 0o600
        saved = old.read_bytes()
        assert not any(m in saved for m in MARKERS), saved
        assert json.loads(saved)["defaults"] == {"evince": {"max_rounds": "3", "agent-a": "smollm2-135m"},
                                                 "socrasynth": {"subtopics": "2"}}
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        assert "Farraday" not in form.query_one("#field-case", TextArea).text
        assert form.query_one("#field-max_rounds").value == "3"  # type: ignore[attr-defined]  # an Input
