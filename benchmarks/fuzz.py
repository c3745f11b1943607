"""Fuzzing, measured: ≥ 10,000 strings through every parser, the metrics and the terminal sanitizer.

    python benchmarks/fuzz.py [--strings 12000] [--seed S]

Each parser gets replies drawn from its own schema, valid and then cut, re-quoted,
reordered, padded, fenced or injected (``tests/helpers/fuzzing.py``), and is held to the
contract of ``tests/guarantees/test_fuzz_schemas.py``. The metrics get near-degenerate and sparse
distributions with arbitrary cost matrices; the terminal sanitizer gets every mangled reply
plus hostile text. An *escape* is an exception that got out, a broken contract, or a control
character left in sanitized text. Prints the seed (fresh by default) and one row per target.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from protocols import metrics as M  # noqa: E402
from tests.helpers.fuzzing import INJECTIONS, TARGETS, mangled  # noqa: E402
from tests.guarantees.test_fuzz_schemas import check  # noqa: E402
from tui.sanitize import terminal_safe  # noqa: E402

CONTROLS = {chr(c) for c in range(32) if chr(c) not in "\n\t"} | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)}


def _settings(n: int, s: int):  # type: ignore[no-untyped-def]
    def wrap(fn):  # type: ignore[no-untyped-def]
        return seed(s)(settings(max_examples=n, database=None, deadline=None, derandomize=False,
                                suppress_health_check=list(HealthCheck))(fn))
    return wrap


def run_parser(name: str, n: int, s: int, stats: Counter, failures: list[str]) -> None:
    @_settings(n, s)
    @given(mangled(name))
    def one(case: tuple[str, str, object]) -> None:
        stats[(name, "strings")] += 1
        try:
            check(name, *case)
            stats[(name, "accepted" if TARGETS[name][1](case[1]).accepted else "rejected")] += 1
        except Exception:  # noqa: BLE001 - counted and shown: an escape is the figure
            stats[(name, "escapes")] += 1
            failures.append(f"{name}: {case[1][:80]!r}\n{traceback.format_exc(limit=2)}")

    one()


MASS = st.one_of(st.just(0.0), st.floats(1e-300, 1e-6), st.floats(1e-6, 1.0))


def run_metrics(n: int, s: int, stats: Counter, failures: list[str]) -> None:
    @_settings(n, s)
    @given(st.integers(2, 6).flatmap(lambda k: st.tuples(st.lists(MASS, min_size=k, max_size=k),
                                                          st.lists(MASS, min_size=k, max_size=k),
                                                          st.lists(st.floats(0, 50), min_size=k * k, max_size=k * k))))
    def one(case: tuple[list[float], list[float], list[float]]) -> None:
        stats[("metrics", "strings")] += 1
        a, b, cost = (np.array(x) for x in case)
        a[0] += 1e-9 if a.sum() == 0 else 0
        b[-1] += 1e-9 if b.sum() == 0 else 0
        try:
            snap = M.compute_all({f"L{i}": float(x) for i, x in enumerate(a)}, {f"L{i}": float(x) for i, x in enumerate(b)})
            w = M.wasserstein(a, b, cost.reshape(a.size, a.size))
            assert all(np.isfinite(v) for v in vars(snap).values()) and np.isfinite(w) and w >= 0
            stats[("metrics", "accepted")] += 1
        except Exception:  # noqa: BLE001
            stats[("metrics", "escapes")] += 1
            failures.append(f"metrics: {case}\n{traceback.format_exc(limit=2)}")

    one()


def run_sanitizer(n: int, s: int, stats: Counter, failures: list[str]) -> None:
    names = sorted(TARGETS)

    @_settings(n, s)
    @given(st.one_of(st.sampled_from(names).flatmap(lambda nm: mangled(nm).map(lambda c: c[1])),
                     st.text(max_size=200), st.lists(st.sampled_from(INJECTIONS), max_size=6).map("".join)))
    def one(text: str) -> None:
        stats[("terminal sanitizer", "strings")] += 1
        try:
            safe = terminal_safe(text)
            left = {ch for ch in safe if ch in CONTROLS}
            assert not left, f"control characters left: {sorted(left)!r}"
            stats[("terminal sanitizer", "accepted")] += 1
        except Exception:  # noqa: BLE001
            stats[("terminal sanitizer", "escapes")] += 1
            failures.append(f"sanitizer: {text[:80]!r}\n{traceback.format_exc(limit=2)}")

    one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strings", type=int, default=12_000, help="in all, shared out over the targets")
    parser.add_argument("--seed", type=int, default=None, help="default: a fresh one, printed")
    args = parser.parse_args()
    s = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    console = Console(width=max(160, Console().width))  # the table whole, also when piped
    console.print(f"seed {s}")
    per = -(-args.strings // (len(TARGETS) + 2))
    stats: Counter = Counter()
    failures: list[str] = []
    started = time.perf_counter()
    for name in sorted(TARGETS):
        run_parser(name, per, s, stats, failures)
    run_metrics(per, s, stats, failures)
    run_sanitizer(per, s, stats, failures)
    table = Table(title=f"fuzzed strings (seed {s})")
    for col in ("target", "strings", "accepted", "rejected", "escapes"):
        table.add_column(col, justify="right")
    targets = [*sorted(TARGETS), "metrics", "terminal sanitizer"]
    for t in targets:
        table.add_row(t, *(str(stats[(t, k)]) for k in ("strings", "accepted", "rejected", "escapes")))
    total = {k: sum(stats[(t, k)] for t in targets) for k in ("strings", "accepted", "rejected", "escapes")}
    table.add_row("all", *(str(total[k]) for k in ("strings", "accepted", "rejected", "escapes")), style="bold")
    console.print(table)
    for f in failures[:10]:
        console.print(f, markup=False, highlight=False)
    console.print(f"{total['strings']} strings, {total['escapes']} escapes; {time.perf_counter() - started:.0f} s; "
                  f"command: python benchmarks/fuzz.py {' '.join(sys.argv[1:])}")
    sys.exit(1 if total["escapes"] else 0)


if __name__ == "__main__":
    main()
