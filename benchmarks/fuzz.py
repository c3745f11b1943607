"""Fuzzing, measured: ≥ 10,000 replies through the 14 parsers of model output, each accepted value held to the reply.

    python benchmarks/fuzz.py [--strings 10500] [--metric-cases 750] [--sanitizer-strings 750] [--seed S]

Each parser gets replies drawn from its own schema, valid and then cut, re-quoted,
reordered, padded, fenced or injected (``tests/helpers/fuzzing.py``), and is held to the
contract of ``tests/guarantees/test_fuzz_schemas.py``: a value it accepts must be what the
reply says (compared with the reply's own JSON under the parser's rules, not re-validated
from the parser's own output); a valid reply must be accepted; a repair must be noted; a
rejection must give its reason. ``--strings`` is the parsers' total, shared evenly; the
metrics (near-degenerate and sparse distributions, arbitrary cost matrices) and the terminal
sanitizer (every mangled reply plus hostile text) get their own counts and their own table,
outside the parsers' total. Prints the seed (fresh by default); exits 1 on any escape.
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

from protocols.measures import metrics as M  # noqa: E402
from tests.helpers.fuzzing import ACCEPTED, ESCAPES, INJECTIONS, MANGLES, REJECTED, TARGETS, check, mangled  # noqa: E402
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
        how = case[0]
        verdict = check(name, *case)
        stats[(name, "strings")] += 1
        stats[(name, verdict.kind)] += 1
        stats[(how, "strings")] += 1
        stats[(how, verdict.kind)] += 1
        stats[(name, "repaired")] += verdict.noted
        if verdict.kind in ESCAPES:
            failures.append(verdict.detail)

    one()


MASS = st.one_of(st.just(0.0), st.floats(1e-300, 1e-6), st.floats(1e-6, 1.0))


def run_metrics(n: int, s: int, stats: Counter, failures: list[str]) -> None:
    @_settings(n, s)
    @given(st.integers(2, 6).flatmap(lambda k: st.tuples(st.lists(MASS, min_size=k, max_size=k),
                                                          st.lists(MASS, min_size=k, max_size=k),
                                                          st.lists(st.floats(0, 50), min_size=k * k, max_size=k * k))))
    def one(case: tuple[list[float], list[float], list[float]]) -> None:
        stats[("metrics", "tried")] += 1
        a, b, cost = (np.array(x) for x in case)
        a[0] += 1e-9 if a.sum() == 0 else 0
        b[-1] += 1e-9 if b.sum() == 0 else 0
        try:
            snap = M.compute_all({f"L{i}": float(x) for i, x in enumerate(a)}, {f"L{i}": float(x) for i, x in enumerate(b)})
            w = M.wasserstein(a, b, cost.reshape(a.size, a.size))
            assert all(np.isfinite(v) for v in vars(snap).values()) and np.isfinite(w) and w >= 0
            stats[("metrics", "held")] += 1
        except Exception:  # noqa: BLE001 - counted and shown: an escape is the figure
            stats[("metrics", "escapes")] += 1
            failures.append(f"metrics: {case}\n{traceback.format_exc(limit=2)}")

    one()


def run_sanitizer(n: int, s: int, stats: Counter, failures: list[str]) -> None:
    names = sorted(TARGETS)

    @_settings(n, s)
    @given(st.one_of(st.sampled_from(names).flatmap(lambda nm: mangled(nm).map(lambda c: c[1])),
                     st.text(max_size=200), st.lists(st.sampled_from(INJECTIONS), max_size=6).map("".join)))
    def one(text: str) -> None:
        stats[("terminal sanitizer", "tried")] += 1
        try:
            safe = terminal_safe(text)
            left = {ch for ch in safe if ch in CONTROLS}
            assert not left, f"control characters left: {sorted(left)!r}"
            stats[("terminal sanitizer", "held")] += 1
        except Exception:  # noqa: BLE001
            stats[("terminal sanitizer", "escapes")] += 1
            failures.append(f"sanitizer: {text[:80]!r}\n{traceback.format_exc(limit=2)}")

    one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strings", type=int, default=10_500, help="through the 14 parsers in all, shared evenly")
    parser.add_argument("--metric-cases", type=int, default=750, help="distribution pairs through the metrics")
    parser.add_argument("--sanitizer-strings", type=int, default=750, help="strings through the terminal sanitizer")
    parser.add_argument("--seed", type=int, default=None, help="default: a fresh one, printed")
    args = parser.parse_args()
    s = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    console = Console(width=max(170, Console().width))  # the table whole, also when piped
    console.print(f"seed {s}")
    per = -(-args.strings // len(TARGETS))
    stats: Counter = Counter()
    failures: list[str] = []
    started = time.perf_counter()
    for name in sorted(TARGETS):
        run_parser(name, per, s, stats, failures)
    parsed_s = time.perf_counter() - started
    run_metrics(args.metric_cases, s, stats, failures)
    run_sanitizer(args.sanitizer_strings, s, stats, failures)

    table = Table(title=f"replies through the parsers of model output (seed {s}); an accepted value matches the reply")
    for col in ("parser", "strings", "accepted", "of which repaired", "rejected with a reason",
                "escapes: raised", "wrong value", "valid rejected", "repair unnoted", "rejected, no reason"):
        table.add_column(col, justify="right")
    keys = ("strings", ACCEPTED, "repaired", REJECTED, *ESCAPES)
    for name in sorted(TARGETS):
        table.add_row(name, *(str(stats[(name, k)]) for k in keys))
    total = {k: sum(stats[(name, k)] for name in TARGETS) for k in keys}
    table.add_row(f"{len(TARGETS)} parsers", *(str(total[k]) for k in keys), style="bold")
    console.print(table)

    by_mangle = Table(title="the same replies by how they were made")
    for col in ("made", "strings", "accepted", "rejected with a reason", "escapes"):
        by_mangle.add_column(col, justify="right")
    for how in MANGLES:
        by_mangle.add_row(how, str(stats[(how, "strings")]), str(stats[(how, ACCEPTED)]), str(stats[(how, REJECTED)]),
                          str(sum(stats[(how, k)] for k in ESCAPES)))
    console.print(by_mangle)

    others = Table(title="the metrics and the terminal sanitizer (not parsers: not in the total above)")
    for col in ("target", "cases", "held", "escapes", "what holds"):
        others.add_column(col, justify="right")
    others.add_row("metrics", *(str(stats[("metrics", k)]) for k in ("tried", "held", "escapes")),
                   "every metric finite, Wasserstein ≥ 0")
    others.add_row("terminal sanitizer", *(str(stats[("terminal sanitizer", k)]) for k in ("tried", "held", "escapes")),
                   "no control character left")
    console.print(others)

    for f in failures[:10]:
        console.print(f, markup=False, highlight=False)
    escapes = sum(total[k] for k in ESCAPES) + stats[("metrics", "escapes")] + stats[("terminal sanitizer", "escapes")]
    console.print(f"{total['strings']} replies through {len(TARGETS)} parsers in {parsed_s:.0f} s, "
                  f"{sum(total[k] for k in ESCAPES)} escapes; {stats[('metrics', 'tried')]} metric cases and "
                  f"{stats[('terminal sanitizer', 'tried')]} sanitizer strings besides; {escapes} escapes in all; "
                  f"{time.perf_counter() - started:.0f} s; command: python benchmarks/fuzz.py {' '.join(sys.argv[1:])}")
    sys.exit(1 if escapes else 0)


if __name__ == "__main__":
    main()
