"""What the cases-in-flight benchmarks share (``batching.py`` on llama.cpp, ``vllm_batching.py``
on vLLM): the greedy predictions compared across N, and the table of cases per hour."""

from __future__ import annotations

from typing import Any

from rich.table import Table

#: (case id, system) -> the system's prediction for the case.
Predictions = dict[tuple[str, str], dict[str, float]]


def differences(baseline: Predictions, other: Predictions) -> list[str]:
    """Each (case, system) whose prediction differs between two runs, as a line to print."""
    keys = sorted(set(baseline) | set(other))
    return [f"{case} / {system}: {baseline.get((case, system))} vs {other.get((case, system))}"
            for case, system in keys if baseline.get((case, system)) != other.get((case, system))]


def cases_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """Cases per hour at each N and its ratio to the first row (the baseline, one at a time),
    with whether the predictions matched the baseline's."""
    table = Table(title=title)
    for col in ("cases in flight", "wall time", "cases / hour", "× one at a time", "results vs one at a time"):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(str(row["jobs"]), f"{row['seconds']:.0f} s", f"{row['cases_per_hour']:.0f}",
                      f"{row['cases_per_hour'] / rows[0]['cases_per_hour']:.2f}×",
                      "baseline" if row is rows[0] else "IDENTICAL" if row["identical"] else f"{len(row['differences'])} differ")
    return table
