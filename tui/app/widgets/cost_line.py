"""The debate's running cost under its status line: tokens a second being written now, the
tokens and model time spent so far, and each agent's share.

The figures are :class:`protocols.core.costs.Ledger`'s, the same sums ``show`` and the report
table; the line holds a frozen snapshot of them (:class:`Spent`) and the live rate in reactives,
so a finished call or a tick of the rate repaints it once. The agents that do not fit the
terminal's width go on a second line, and the rest is cut with "…" rather than wrapped mid-agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.reactive import reactive
from textual.widget import Widget

from protocols.core.costs import Cost, Ledger, seconds, shown, tokens
from tui.sanitize import plain, terminal_safe


@dataclass(frozen=True)
class Share:
    """One agent's calls so far."""

    role: str
    prompt: int
    generated: int
    seconds: float


@dataclass(frozen=True)
class Spent:
    """What a debate's calls cost so far, as the line shows it."""

    calls: int
    prompt: int
    cached: str  # "—" where no call measured it, "≥n" where only some did
    generated: int
    seconds: float
    rate: float | None  # tokens generated per second of decoding, over the whole debate
    agents: tuple[Share, ...]

    @classmethod
    def of(cls, ledger: Ledger) -> Spent:
        total: Cost = ledger.total
        return cls(total.calls, total.prompt_tokens, shown(total.cached_tokens, tokens), total.completion_tokens,
                   total.duration_s, total.decode_rate,
                   tuple(Share(role, c.prompt_tokens, c.completion_tokens, c.duration_s) for role, c in ledger.agents.items()))


#: Between the totals and each agent's share.
_GAP = " │ "
#: The widest rate the line makes room for.
_WIDEST_RATE = "9999 tok/s now · "


class CostLine(Widget):
    """One or two lines: the live rate and the totals, then each agent's tokens and time."""

    spent: reactive[Spent | None] = reactive(None, layout=True)
    #: Tokens a second the replies being written now come at; ``None`` while none is written.
    live_rate: reactive[float | None] = reactive(None)

    def rate(self) -> str:
        """The live rate ("now"), else the debate's mean decode rate ("avg"), with the gap after
        it; nothing where neither is known (no reply written yet, no decoding timed)."""
        live = self.live_rate
        rate, kind = (live, "now") if live is not None else (self.spent.rate if self.spent else None, "avg")
        return "" if rate is None else f"{rate:.0f} tok/s {kind} · "

    def totals(self) -> str:
        spent = self.spent
        if spent is None:
            return f"cost: {self.rate()}no model call finished yet"
        cached = "" if spent.cached == "—" else f" ({spent.cached} cached)"
        return (f"cost: {self.rate()}{tokens(spent.prompt)} in{cached} · {tokens(spent.generated)} out · "
                f"{seconds(spent.seconds)} s in {spent.calls} call{'s' if spent.calls != 1 else ''}")

    def agent_parts(self) -> list[str]:
        if self.spent is None:
            return []
        return [f"{terminal_safe(a.role)} {tokens(a.prompt)} in · {tokens(a.generated)} out · {seconds(a.seconds)} s"
                for a in self.spent.agents]

    def lines(self, width: int) -> list[str]:
        """The text in lines of at most ``width`` cells: the totals, then as many agents as fit
        on the same line, the others on a second line, cut with "…" when even that is full.
        Room is kept for the widest rate, so the rate ticking never moves an agent to another
        line (which would change the line's height and lay the screen out again)."""
        out = [self.totals()]
        spare = max(0, len(_WIDEST_RATE) - len(self.rate()))
        for part in self.agent_parts():
            if len(out[-1]) + (spare if len(out) == 1 else 0) + len(_GAP) + len(part) <= width:
                out[-1] += _GAP + part
            elif len(out) == 1:
                out.append(part)
            else:
                out[-1] = (out[-1] + _GAP + part)[: max(1, width - 1)] + "…"
                break
        return [line if len(line) <= width else line[: max(1, width - 1)] + "…" for line in out]

    @property
    def line(self) -> str:
        """Everything on one line (for tests and the width the screen does not limit)."""
        return _GAP.join([self.totals(), *self.agent_parts()])

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return len(self.lines(width))

    def render(self) -> Any:
        return plain("\n".join(self.lines(self.size.width or 10_000)))
