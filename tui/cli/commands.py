"""The top-level commands: which module defines each, and its one-line help.

Kept apart from the modules so that ``symposium --help`` (and any one command) can list every
command without importing the others and what they need (numpy, scipy, llama.cpp …).
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "models": Command("tui.cli.models", "list the models in the registries and whether they can run here"),
    "chat": Command("tui.cli.chat", "ask one model one question; the reply streams and is journalled"),
    "demo": Command("tui.cli.chat", "a first look: the app with a demo debate ready to start (on a terminal), "
                                    "else a streamed reply from a bundled model (SmolLM2, else Gemma 3 270M)"),
    "run": Command("tui.cli.run", "run a debate headless (streamed, journalled)"),
    "resume": Command("tui.cli.resume", "continue an interrupted debate from its last finished turn"),
    "bench": Command("tui.cli.bench", "benchmarks on your own models and cases"),
    "history": Command("tui.cli.journal", "recent debates, newest first"),
    "show": Command("tui.cli.journal", "one debate in full"),
    "export": Command("tui.cli.journal", "export a debate as Markdown or JSON"),
    "report": Command("tui.cli.report", "one debate as a self-contained HTML report (plots, judges' tables, provenance, "
                                        "seal) to keep, print or share"),
    "study": Command("tui.cli.study", "an analysis across the journal's debates of one protocol (as its paper "
                                      "evaluates it: `symposium study --help` lists them)"),
    "serve": Command("tui.cli.serve", "serve a model from the registry over HTTP on 127.0.0.1 (OpenAI-compatible)"),
    "verify": Command("tui.cli.verify", "check that journalled debates (or a JSON export) were not changed after "
                                        "they were written: recompute each hash chain, name the first row that differs"),
    "paths": Command("tui.cli.paths", "where the journal, registries, settings and logs live"),
}


def help_for(name: str) -> str:
    return COMMANDS[name].help
