"""``symposium models``: list the registry with availability; ``pull`` one from Hugging Face;
``test`` one: load it and try a reply, a structured reply and a scoring call."""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.discovery import DiscoveryError, Found, entry_toml, hf_cache_root, lmstudio_roots, locate, ollama_root, scan_all, suggest_id
from backends.gguf_meta import GGUFError, GGUFInfo, read_gguf
from backends.private import narrow_tree
from backends.registry import HubSource, LocalSource, ModelEntry, Registry, add_user_entry, load_registry, shipped_registry_path
from backends.sources import hub_target, status
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.headless.signals import run_command

if TYPE_CHECKING:
    from tui.cli.health_debate import DebateCheck


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help=help_for("models"))
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=list_models)
    msub = p.add_subparsers(dest="models_command", metavar="ACTION")
    pull = msub.add_parser("pull", help="download a model named in models.toml from Hugging Face")
    pull.add_argument("model_id")
    pull.set_defaults(handler=pull_model)
    test = msub.add_parser("test", help="health check: load, one reply, one structured reply, one scoring call")
    test.add_argument("model_id")
    test.add_argument("--timeout", type=float, default=120.0,
                      help="seconds allowed for each call to the model (loading it, which can take minutes, is not limited)")
    test.add_argument("--debate", action="store_true",
                      help="also run one short EVINCE round and one CRIT judgement and report how the model copes")
    test.set_defaults(handler=test_model)
    add = msub.add_parser("add", help="add a model you already have to your registry: PATH.gguf, ollama:NAME[:TAG] or hf:ORG/REPO/FILE")
    add.add_argument("ref")
    add.add_argument("--id", dest="new_id", help="registry id (default: made from the file or model name)")
    add.set_defaults(handler=add_model)
    scan = msub.add_parser("scan", help="list GGUF models in Ollama's store, LM Studio's folders and the Hugging Face cache")
    scan.add_argument("--add-all", action="store_true", help="add every model found that is not in the registry yet")
    scan.add_argument("--add", nargs="+", type=int, metavar="N", help="add the models with these numbers")
    scan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    scan.set_defaults(handler=scan_models)


def list_models(args: argparse.Namespace) -> int:
    registry = load_registry(args.models)
    rows = []
    for entry in registry:
        st = status(entry)
        rows.append({
            "id": entry.id, "name": entry.name, "backend": entry.backend, "family": entry.family,
            "size_gb": entry.size_gb, "bundled": entry.bundled, "availability": st.availability, "detail": st.detail,
            "from": str(registry.origin(entry.id)),
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    files = {Path(r["from"]) for r in rows}
    labels = {registry.path: "shipped" if registry.path == shipped_registry_path() else "--models"}
    if registry.user_path is not None:
        labels[registry.user_path] = "user"
    table = Table(title="Models")
    for col in ("id", "name", "backend", "size", "status", "from"):
        table.add_column(col)
    for r in rows:
        colour = "green" if r["availability"] in ("ready", "server") else "yellow"
        size = f"{r['size_gb']:g} GB" if r["size_gb"] else ""
        table.add_row(Text(r["id"]), Text(r["name"]), r["backend"], size, f"[{colour}]{r['availability']}[/]",
                      labels.get(Path(r["from"]), r["from"]))
    console = Console()
    console.print(table)
    for path, label in labels.items():
        present = "" if path in files or path.exists() else " (not created yet: `symposium models add` or `scan --add-all`)"
        console.print(f"  {label}: {path}{present}", markup=False, highlight=False)
    for r in rows:
        if r["availability"] not in ("ready", "server"):
            console.print(f"  {r['id']}: {r['detail']}", markup=False, highlight=False)
    return 0


def add_model(args: argparse.Namespace) -> int:
    """``models add REF``: one entry in the user registry, filled from the GGUF header."""
    registry = load_registry(args.models)
    try:
        found = locate(args.ref)
    except DiscoveryError as exc:
        raise UserError(str(exc)) from None
    model_id = _add(registry, found, args.new_id)
    Console(highlight=False).print(f"added {model_id!r} to {registry.user_path}; try `symposium models test {model_id} --debate`",
                                   markup=False)
    return 0


def _add(registry: Registry, found: Found, model_id: str | None) -> str:
    try:
        info = read_gguf(found.path)
    except GGUFError as exc:
        raise UserError(str(exc)) from None
    if model_id is None:  # a made-up id never replaces an entry: only an explicit --id does
        base = suggest_id(found, info)
        taken = set(registry.entries)
        model_id = next(c for c in (base, f"{base}-{found.origin}", *(f"{base}-{n}" for n in range(2, 1000))) if c not in taken)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", model_id):
        raise UserError(f"model id {model_id!r}: use letters, digits, '.', '_' and '-' only")
    if model_id in registry.entries and registry.origin(model_id) != registry.user_path:
        Console(stderr=True, highlight=False).print(
            f"note: {model_id!r} replaces the entry of that id in {registry.origin(model_id)}", markup=False)
    assert registry.user_path is not None
    add_user_entry(model_id, entry_toml(model_id, found, info), registry.user_path)
    return model_id


def _registered_paths(registry: Registry) -> dict[Path, str]:
    """Resolved local file → id, to mark found models that are already in the registry."""
    known: dict[Path, str] = {}
    for entry in registry:
        if isinstance(entry.source, LocalSource):
            known[entry.source.resolved.resolve()] = entry.id
    return known


def scan_models(args: argparse.Namespace) -> int:
    """``models scan``: number what was found; add some (``--add N``, ``--add-all``, or asked)."""
    registry = load_registry(args.models)
    known = _registered_paths(registry)
    found = scan_all()
    rows = []
    for number, item in enumerate(found, 1):
        try:
            info: GGUFInfo | None = read_gguf(item.path)
            problem = None
        except GGUFError as exc:
            info, problem = None, str(exc)
        rows.append({
            "number": number, "origin": item.origin, "ref": item.ref, "path": str(item.path),
            "size_gb": round(item.size_bytes / 1e9, 2), "name": info.name if info else None,
            "architecture": info.architecture if info else None, "registered_as": known.get(item.path.resolve()),
            "problem": problem,
        })
    if args.json and not (args.add or args.add_all):
        print(json.dumps(rows, indent=2))
        return 0
    console = Console(highlight=False)
    _print_found(console, rows)
    wanted = _choose(console, rows, args)
    for number in wanted:
        if not 1 <= number <= len(rows):
            raise UserError(f"--add {number}: there is no model number {number} (1 to {len(rows)})")
    added = []
    for number in wanted:
        row = rows[number - 1]
        if row["registered_as"] or row["problem"]:
            continue
        added.append(_add(registry, found[number - 1], None))
        registry = load_registry(args.models)  # the next suggested id must see this one
    if added:
        console.print(f"added {', '.join(added)} to {registry.user_path}", markup=False)
    return 0


def _print_found(console: Console, rows: list[dict]) -> None:
    if not rows:
        console.print(f"no GGUF models found in {ollama_root()}, {' or '.join(map(str, lmstudio_roots()))} "
                      f"or {hf_cache_root()}", markup=False)
        return
    table = Table(title="GGUF models on this machine")
    for col in ("#", "from", "reference", "name", "size", "registry"):
        table.add_column(col, overflow="fold")
    for r in rows:
        state = r["registered_as"] or ("unreadable" if r["problem"] else "")
        table.add_row(str(r["number"]), r["origin"], Text(r["ref"]), Text(r["name"] or r["architecture"] or ""),
                      f"{r['size_gb']:g} GB", Text(state))
    console.print(table)
    for r in rows:
        if r["problem"]:
            console.print(f"  {r['number']}: {r['problem']}", markup=False)


def _choose(console: Console, rows: list[dict], args: argparse.Namespace) -> list[int]:
    """The numbers to add: from the flags, else asked on a terminal, else none."""
    new = [r["number"] for r in rows if not r["registered_as"] and not r["problem"]]
    if args.add_all:
        return new
    if args.add:
        return list(dict.fromkeys(args.add))
    if not new:
        return []
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        console.print("add some with `symposium models scan --add N …` or `--add-all`", markup=False)
        return []
    answer = console.input("add which? (numbers separated by spaces, 'all', or Enter for none) ").strip().lower()
    if answer == "all":
        return new
    try:
        return [int(token) for token in answer.split()]
    except ValueError:
        raise UserError(f"{answer!r}: type model numbers separated by spaces, or 'all'") from None


def test_model(args: argparse.Namespace) -> int:
    """Print what works for one entry; exit 1 if loading, a reply or a structured reply fails."""
    from tui.cli.health import check_model

    entry = load_registry(args.models).get(args.model_id)
    console = Console(highlight=False)
    console.print(f"testing {entry.id} ({entry.backend}) …", style="dim", markup=False)
    with console.status(f"{entry.id}: loading …") as working:
        report = run_command(check_model(entry, timeout=args.timeout,
                                         on_progress=lambda stage: working.update(f"{entry.id}: {stage}")))
    if report.warning:
        console.print(f"warning: {report.warning}", style="yellow", markup=False)
    table = Table(title=f"{entry.id}: {entry.name}")
    for col in ("check", "result", "time", "detail"):
        table.add_column(col, overflow="fold")
    marks = {"ok": "[green]✓[/]", "failed": "[red]✗[/]", "not supported": "[yellow]not supported[/]", "skipped": "[dim]skipped[/]"}
    for check in report.checks:
        seconds = f"{check.seconds:.1f} s" if check.seconds is not None else ""
        table.add_row(check.name, marks[check.outcome], seconds, Text(check.detail))
    console.print(table)
    if entry.backend == "llamacpp" and report.usable:
        from backends.kv_memory import memory_advice
        from backends.sources import resolve_path

        console.print(memory_advice(resolve_path(entry), entry.context_length, entry.kv_cache_type), markup=False)
    if not args.debate:
        return 0 if report.usable else 1
    if not report.usable:
        console.print("skipping the debate check: the basic checks failed", style="yellow", markup=False)
        return 1
    return 0 if _debate_check(console, entry, args.timeout) else 1


def _debate_check(console: Console, entry: ModelEntry, timeout: float) -> bool:
    """Print ``models test --debate``'s table; true when the model looks fit for a debate."""
    from tui.cli.health_debate import check_debate  # the protocols are imported only when asked

    console.print("one short EVINCE debate (openings, one refutation round, CRIT after each) …", style="dim", markup=False)
    started = time.perf_counter()
    debate = run_command(check_debate(entry, timeout=timeout))
    print_debate_check(console, entry.id, debate, time.perf_counter() - started)
    return debate.usable


def print_debate_check(console: Console, model_id: str, debate: DebateCheck, seconds: float) -> None:
    table = Table(title=f"{model_id} in a debate ({seconds:.0f} s)")
    for col in ("step", "replies", "valid JSON", "labels in class set", "cut off by token limit", "prompt reused", "tok/s"):
        table.add_column(col, justify="right" if col != "step" else "left")
    for step in debate.steps.values():
        labels = f"{step.labels_inside}/{step.labels_named}" if step.labels_named else "—"
        reused = f"{step.prompt_reused / step.prompt_tokens:.0%}" if step.prompt_tokens else "—"
        rate = f"{step.tokens_per_s:.1f}" if step.tokens_per_s else "—"
        table.add_row(step.name, str(step.calls), f"{step.valid_json}/{step.calls}", labels,
                      f"{step.cut_off}/{step.calls}", reused, rate)
    console.print(table)
    if debate.error:
        console.print(f"the debate failed: {debate.error}", style="red", markup=False)
    elif debate.stop_reason:
        console.print(f"the debate ended: {debate.stop_reason}", style="dim", markup=False)
    verdict = ("looks fit for a debate" if debate.usable else
               "not fit as is: too many replies are not valid JSON, name labels outside the class set or are cut off")
    console.print(f"{model_id}: {verdict}", style="green" if debate.usable else "yellow", markup=False)


def pull_model(args: argparse.Namespace) -> int:
    """Fetch a ``hub`` source into the models folder. The only command that goes online."""
    entry = load_registry(args.models).get(args.model_id)
    source = entry.source
    if not isinstance(source, HubSource):
        raise UserError(f"model {entry.id!r} has a {source.kind!r} source; only Hugging Face ('hub') sources are pulled")
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        raise UserError("HF_HUB_OFFLINE is set in your environment; unset it to allow `symposium models pull`")
    try:
        import huggingface_hub
        from huggingface_hub import hf_hub_download, snapshot_download
    except ImportError:
        raise UserError("pulling needs huggingface_hub: pip install 'symposium-tui[hub]'") from None

    target = hub_target(entry, source)
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    problem = _unreachable(endpoint)
    if problem:
        raise UserError(
            f"cannot download {entry.id!r}: {endpoint} is not reachable from this machine ({problem}). "
            f"Connect to the network and retry, or copy the file to {target} by hand."
        )
    console = Console(stderr=True)
    console.print(f"pulling {entry.id} from huggingface.co/{source.repo} into {target}", markup=False)
    try:
        if source.file:
            path = hf_hub_download(source.repo, source.file, revision=source.revision, local_dir=target.parent)
        else:
            path = snapshot_download(source.repo, revision=source.revision, local_dir=target)
    except huggingface_hub.errors.GatedRepoError:
        raise UserError(f"huggingface.co/{source.repo} is gated: accept its licence on the website and run `hf auth login`") from None
    except huggingface_hub.errors.RepositoryNotFoundError:
        raise UserError(f"huggingface.co/{source.repo} was not found (check source.repo of {entry.id!r} in models.toml)") from None
    except (huggingface_hub.errors.LocalEntryNotFoundError, huggingface_hub.errors.OfflineModeIsEnabled, OSError) as exc:
        # LocalEntryNotFoundError subclasses EntryNotFoundError: it must be caught first.
        raise UserError(
            f"cannot download {entry.id!r}: the download failed ({type(exc).__name__}: {exc}). "
            f"Check the network and retry, or copy the file to {target} by hand."
        ) from None
    except huggingface_hub.errors.EntryNotFoundError:
        raise UserError(f"{source.file!r} is not in huggingface.co/{source.repo} (check source.file of {entry.id!r})") from None
    narrow_tree(target if target.is_dir() else target.parent)  # the hub writes with the usual umask: 0600 like every file of ours
    console.print(f"ready: {path}", markup=False)
    return 0


def _unreachable(endpoint: str, timeout: float = 5.0) -> str | None:
    """Why ``endpoint`` cannot be reached, or ``None``. A quick check before the hub client's
    own retries, which take half a minute to give up on a machine with no network.

    The hub client honours the proxy variables (``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``):
    the one request of Symposium's meant to leave the machine goes the way the network asks,
    so where a proxy carries it, the proxy is what must answer."""
    import urllib.request

    url = urlsplit(endpoint)
    proxy = urllib.request.getproxies().get(url.scheme) or urllib.request.getproxies().get("all")
    if proxy and not urllib.request.proxy_bypass(url.hostname or ""):
        url = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
