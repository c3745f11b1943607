"""The cases of ``symposium bench diagnosis``: the Symptom2Disease symptom lists, or the user's
own free-text vignettes (a clinician's or a lawyer's), and the class set they are judged on.

Two CSV layouts are read, told apart by their header:

- ``case_id,label,text``: one free-text case per row; ``label`` is the right answer;
- ``case_id,disease,symptoms``: the Symptom2Disease split (``;``-separated symptom codes).

The class set is the cases' own labels, or a labels file (``--labels``: one label per line or
a CSV with a ``label``/``disease``/``class`` column), which may hold labels no case has, as a
real differential does. Every error names the file and the row (the header is line 1).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from protocols.measures.labels import LabelSet
from tui.bench.diagnosis import Case, label_set, read_cases
from tui.forms import FormError, load_labels

TEXT_COLUMNS = ("case_id", "label", "text")


@dataclass
class TextCase(Case):
    """A free-text case: ``disease`` holds its label (the right answer), ``narrative`` the text."""

    narrative: str = ""

    @property
    def text(self) -> str:
        return self.narrative


def load_cases(path: Path) -> list[Case]:
    """Every case of ``path`` in file order (either layout); ``ValueError`` names the culprit."""
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        columns = set(reader.fieldnames or ())
        if not set(TEXT_COLUMNS) <= columns:
            if {"case_id", "disease", "symptoms"} <= columns:
                return read_cases(path, limit=None, seed=0)
            raise ValueError(f"{path}: the header has {', '.join(sorted(columns)) or 'no columns'}; "
                             f"expected {','.join(TEXT_COLUMNS)} (free text) or case_id,disease,symptoms")
        cases: list[Case] = []
        seen: set[str] = set()
        for line, row in enumerate(reader, start=2):
            case_id, label, text = ((row.get(c) or "").strip() for c in TEXT_COLUMNS)
            for column, value in zip(TEXT_COLUMNS, (case_id, label, text), strict=True):
                if not value:
                    raise ValueError(f"{path}:{line}: the {column!r} column is empty")
            if case_id in seen:
                raise ValueError(f"{path}:{line}: case_id {case_id!r} appears twice; case ids must be unique")
            seen.add(case_id)
            cases.append(TextCase(case_id, label, [], narrative=text))
    if not cases:
        raise ValueError(f"{path}: no cases below the header")
    return cases


def subset(cases: Sequence[Case], limit: int | None, seed: int) -> list[Case]:
    """A reproducible random subset of ``limit`` cases in file order (the same draw as
    :func:`tui.bench_diagnosis.read_cases`, so earlier runs' ``--limit/--seed`` still match)."""
    if limit is None or limit >= len(cases):
        return list(cases)
    keep = sorted(np.random.default_rng(seed).choice(len(cases), size=limit, replace=False))
    return [cases[i] for i in keep]


def class_set(cases: Sequence[Case], labels_file: Path | None, synonyms: Path | None, *, related: bool = False) -> LabelSet:
    """The labels the models choose from. With a labels file, each case's label must be one
    of them (after normalisation, synonyms and typo matching) and is rewritten to its spelling.
    ``related``: also the built-in broader and narrower names (``--credit-related``)."""
    if labels_file is None:
        return label_set(cases, synonyms, related=related)
    try:
        labels = load_labels(str(labels_file))
    except FormError as exc:
        raise ValueError(str(exc).removeprefix("labels: ")) from None
    assert labels is not None  # a path is never "open"
    labels = label_set([Case("", name, []) for name in labels.labels], synonyms, related=related)  # the synonym maps
    for case in cases:
        canonical = labels.match(case.disease)
        if canonical is None:
            raise ValueError(f"case {case.case_id!r}: its label {case.disease!r} is not in {labels_file}; "
                             "add it there or fix the case")
        case.disease = canonical
    return labels
