"""The person's seat on the command line: stdin or a script file (the app asks in a dialog).

Deliberation's seat reads one line per turn (:class:`StdinSeat`, :class:`ScriptSeat`); the
humanloop panel's reads an opinion of several lines ended by an empty line (:func:`stdin_turn`).
Which one a protocol gets is declared on its person role (``reads``, ``script_flag``,
``confirms``) in its definition; :func:`headless_person` seats it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from protocols.core.definition import Confirm, Person, Role, Speak, confirm_from_lines, read_file
from tui.errors import UserError
from tui.sanitize import terminal_safe

END = "/end"


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of the file ``path`` (the one reader every input's ``@FILE`` uses,
    :func:`protocols.core.definition.read_file`), its error as one line naming the file."""
    try:
        return read_file(path, what)
    except ValueError as exc:
        raise UserError(str(exc)) from None


class ScriptSeat:
    """The person's turns from a file: one line per turn; blank passes; ``/end`` or EOF ends."""

    def __init__(self, path: str | Path, console: Console | None = None) -> None:
        self.lines = read_text(str(path), "script of your turns").splitlines()
        self.console = console or Console(stderr=True, highlight=False)

    async def __call__(self, prompt: str) -> str | None:
        if not self.lines:
            self.console.print(Text("  (the script has run out: you end the deliberation)", style="dim"))
            return None
        line = self.lines.pop(0)
        return None if line.strip() == END else line


class StdinSeat:
    """The person's turns typed on stdin: one line per turn; empty passes; ``/end`` or EOF ends."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)

    async def __call__(self, prompt: str) -> str | None:
        self.console.print(Text(f"{terminal_safe(prompt)} (Enter: pass, {END}: finish)", style="bold green"))
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or line.strip() == END:
            return None
        return line.rstrip("\n")


async def stdin_turn(prompt: str) -> str | None:
    """The person's opinion from stdin: lines up to an empty line (or the end of input)."""
    Console(stderr=True, highlight=False).print(Text("type the opinion; an empty line ends it", style="yellow"))
    lines: list[str] = []
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or (not line.strip() and lines):
            return "\n".join(lines)
        if line.strip():
            lines.append(line.rstrip("\n"))


async def ask_confirm(stance: str | None, text: str) -> str | None:
    """Confirm a stance on the terminal: Enter keeps it, a label replaces it."""
    shown = terminal_safe(stance or "?")
    prompt = Text(f"  stance [{shown}]: Enter to accept, or type a label: ", style="yellow")
    Console(stderr=True, highlight=False).print(prompt, end="")
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
    return answer or stance


def confirm_mode(spec: str) -> Confirm | None:
    """``--confirm``: ``accept`` (labels stand as read), ``ask`` (on the terminal), or a FILE of
    answers, one line per step (blank keeps the extracted label)."""
    if spec == "accept":
        return None
    if spec == "ask":
        return ask_confirm
    return confirm_from_lines(read_text(spec, "stance confirmations").splitlines())


def headless_person(role: Role, script: str | None, confirm: str | None) -> Person:
    """The person's seat as ``role`` declares it: a script file's turns, else stdin (a line per
    turn, or a paragraph); stances confirmed as ``--confirm`` says where the role confirms."""
    speak: Speak
    if script:
        speak = ScriptSeat(script)
    elif role.reads == "paragraph":
        speak = stdin_turn
    else:
        speak = StdinSeat()
    return Person(speak, confirm_mode(confirm or "accept") if role.confirms else None)
