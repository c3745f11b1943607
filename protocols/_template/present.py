"""What the template's run found, as neutral blocks (:mod:`protocols.core.present`) that the
report, the terminal and the app's outcome panel draw. ``claims``: the outcome keys a section
shows (the report shows the rest generically); ``brief``: also in the app's outcome panel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import Section, Table


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    answers = outcome.get("answers") or {}
    return [Section("answers", "The answers", [Table(["agent", "answer"], [[role, answer or "—"] for role, answer in answers.items()],
                                                     numeric=False)], claims=frozenset({"answers"}), brief=True)]
