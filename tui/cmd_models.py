"""``symposium models``: list the registry with availability; ``pull`` one from Hugging Face;
``test`` one: load it and try a reply, a structured reply and a scoring call."""

from __future__ import annotations

import argparse
import asyncio
import json
import os

import socket
from pathlib import Path
from urllib.parse import urlsplit

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.registry import HubSource, load_registry, shipped_registry_path
from backends.sources import hub_target, status

from .errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the models in models.toml and whether they can run here")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=list_models)
    msub = p.add_subparsers(dest="models_command", metavar="ACTION")
    pull = msub.add_parser("pull", help="download a model named in models.toml from Hugging Face")
    pull.add_argument("model_id")
    pull.set_defaults(handler=pull_model)
    test = msub.add_parser("test", help="health check: load, one reply, one structured reply, one scoring call")
    test.add_argument("model_id")
    test.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for each check")
    test.set_defaults(handler=test_model)


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


def test_model(args: argparse.Namespace) -> int:
    """Print what works for one entry; exit 1 if loading, a reply or a structured reply fails."""
    from .health import check_model

    entry = load_registry(args.models).get(args.model_id)
    console = Console(highlight=False)
    console.print(f"testing {entry.id} ({entry.backend}) …", style="dim", markup=False)
    report = asyncio.run(check_model(entry, timeout=args.timeout))
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
    return 0 if report.usable else 1


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
    console.print(f"ready: {path}", markup=False)
    return 0


def _unreachable(endpoint: str, timeout: float = 5.0) -> str | None:
    """Why ``endpoint`` cannot be reached, or ``None``. A quick check before the hub client's
    own retries, which take half a minute to give up on a machine with no network."""
    url = urlsplit(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
