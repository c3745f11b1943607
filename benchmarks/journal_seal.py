"""What the seal costs a turn: one turn's journal write with and without the hash chain, in one run.

A finished turn is written in one transaction (``Journal.record``): the turn, its distribution
(five labels here), its model call and the debate's ``updated_at``. With the seal
(``store/seal.py``) the same transaction also reads each new row back as SQLite stores it,
hashes it, appends its link, signs the new head with the user's Ed25519 key
(``store/signing.py``) and moves head and signature in the UPDATE of the debate's row it runs
anyway. Both sides run the same INSERTs. Both sides write to their own journal file in the same
folder, the same turns, interleaved turn by turn (sealed, unsealed, unsealed, sealed, …), so a
busy machine slows both alike: read the ratio and the difference, not the absolute times.
``Journal.sealing = False`` is the unsealed side, which exists only for this comparison.

The goal: the seal's cost per turn (sealed median − unsealed median) well under 1 % of a turn.
A turn of a real 7-70B model takes seconds; ``--turn-seconds`` (default 1 s, a conservative
floor) is what the percentage is taken of. Also measured: one Ed25519 signature alone, the
provenance's model-file hash from its cache (each debate's start), and ``verify`` of a whole
debate of ``--turns`` turns (once, not per turn).

    python benchmarks/journal_seal.py                       # 2,000 turns per side, ~1 min
    python benchmarks/journal_seal.py --turns 200 --debates 2   # a smoke run
    python benchmarks/journal_seal.py --json out.json

Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from protocols.core.events import CallRecord, DebateStarted, Participant, TurnFinished  # noqa: E402
from store import provenance, seal, signing  # noqa: E402
from store.journal import Journal  # noqa: E402

LABELS = ("Malaria", "Dengue fever", "Typhoid", "Hepatitis A", "Chikungunya")
TEXT = ("Given the travel history and the cyclic fever, malaria stays first; the rash argues for dengue. " * 12).strip()


def _turn(debate_id: str, i: int) -> TurnFinished:
    dist = {label: p for label, p in zip(LABELS, (0.4, 0.25, 0.15, 0.12, 0.08))}
    call = CallRecord("agent-a" if i % 2 else "agent-b", "qwen2.5-7b", "turn", {"temperature": 0.7, "seed": 1},
                      1800 + i, 120, 256, 6.4, 0.3, "stop")
    return TurnFinished(debate_id, call.role, call.model_id, "exploratory", i // 2, "refutation", TEXT, TEXT,
                        call, {"probs": dist}, (), dist, 0.7, request="Your turn: refute your opponent. " * 20)


def _start(journal: Journal, debate_id: str) -> None:
    journal.record(DebateStarted(debate_id, "evince", "Fever after travel", "A 34-year-old with fever.", {"max_rounds": 10},
                                 (Participant("agent-a", "qwen2.5-7b", "llamacpp"), Participant("agent-b", "qwen2.5-7b", "llamacpp"))))


def measure(folder: Path, turns: int, debates: int) -> dict[str, list[float]]:
    """Seconds per turn write, per side, over ``debates`` debates of ``turns`` turns each."""
    sealed, plain = Journal(folder / "sealed.db"), Journal(folder / "plain.db")
    plain.sealing = False
    times: dict[str, list[float]] = {"sealed": [], "unsealed": []}
    for d in range(debates):
        debate_id = f"bench{d:07d}"
        _start(sealed, debate_id)
        _start(plain, debate_id)
        for i in range(turns):
            order = ((sealed, "sealed"), (plain, "unsealed")) if i % 2 == 0 else ((plain, "unsealed"), (sealed, "sealed"))
            for journal, side in order:
                event = _turn(debate_id, i)
                t0 = time.perf_counter()
                journal.record(event)
                times[side].append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    verdict = seal.verify(sealed.conn, f"bench{debates - 1:07d}")
    times["verify"] = [time.perf_counter() - t0]
    assert verdict.ok, verdict.problems[:1]
    sealed.close()
    plain.close()
    return times


def cached_hash_seconds(folder: Path) -> tuple[float, float]:
    """A 64 MB model file: its first hash, then from the cache (what each later debate pays)."""
    path = folder / "model.Q4_K_M.gguf"
    path.write_bytes(os.urandom(64 << 20))
    cache = folder / "file-hashes.json"
    t0 = time.perf_counter()
    provenance.file_sha256(path, cache=cache)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    provenance.file_sha256(path, cache=cache)
    return first, time.perf_counter() - t0


def sign_seconds(n: int = 2000) -> float:
    """One Ed25519 signature of a head's message (what every sealed write adds), median of ``n``."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    signer = signing.Signer(Ed25519PrivateKey.generate())
    message = signing.message("bench0000001", "ab" * 32, 1, None)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        signer.sign(message)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500, help="turns per debate (default 500)")
    parser.add_argument("--debates", type=int, default=4, help="debates per side (default 4)")
    parser.add_argument("--turn-seconds", type=float, default=1.0,
                        help="the turn the seal's cost is a share of (default 1 s; a real model's take several)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="symposium-seal-bench-") as tmp:
        os.environ.setdefault("SYMPOSIUM_CONFIG_DIR", str(Path(tmp) / "config"))  # the signing key, made for this run
        times = measure(Path(tmp), args.turns, args.debates)
        first, cached = cached_hash_seconds(Path(tmp))
        sign = sign_seconds()
    s, u = times["sealed"], times["unsealed"]
    table = Table(title=f"one turn's journal write ({len(s)} per side, interleaved; WAL, synchronous=NORMAL)")
    for col in ("", "median ms", "mean ms", "p95 ms"):
        table.add_column(col, justify="right")
    for name, xs in (("without the chain", u), ("with the chain", s)):
        table.add_row(name, f"{statistics.median(xs) * 1e3:.3f}", f"{statistics.fmean(xs) * 1e3:.3f}", f"{_p95(xs) * 1e3:.3f}")
    ratio_median = statistics.median(s) / statistics.median(u)
    ratio_mean = statistics.fmean(s) / statistics.fmean(u)
    table.add_row("ratio (with / without)", f"{ratio_median:.3f}×", f"{ratio_mean:.3f}×", f"{_p95(s) / _p95(u):.3f}×")
    cost = statistics.median(s) - statistics.median(u)
    share = cost / args.turn_seconds
    table.add_row("the seal's cost (with − without)", f"{cost * 1e3:.3f}", f"{(statistics.fmean(s) - statistics.fmean(u)) * 1e3:.3f}",
                  f"{(_p95(s) - _p95(u)) * 1e3:.3f}")
    console = Console()
    console.print(table)
    console.print(f"the seal's cost per turn: {cost * 1e3:.3f} ms = {share:.3%} of a {args.turn_seconds:g} s turn "
                  f"(goal well under 1 %, taken as below 0.5 %: {'met' if share < 0.005 else 'not met'}); of it, one Ed25519 signature "
                  f"{sign * 1e3:.3f} ms; verify of a {args.turns}-turn debate: {times['verify'][0] * 1e3:.1f} ms; "
                  f"a 64 MB model file hashed in {first:.2f} s, from the cache in {cached * 1e3:.2f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps({"turns_per_side": len(s), "median_ms": {"sealed": statistics.median(s) * 1e3,
                                               "unsealed": statistics.median(u) * 1e3}, "ratio_median": ratio_median,
                                               "ratio_mean": ratio_mean, "cost_ms": cost * 1e3, "share_of_turn": share,
                                               "turn_seconds": args.turn_seconds, "sign_ms": sign * 1e3,
                                               "verify_ms": times["verify"][0] * 1e3, "hash_first_s": first,
                                               "hash_cached_ms": cached * 1e3}, indent=2))


if __name__ == "__main__":
    main()
