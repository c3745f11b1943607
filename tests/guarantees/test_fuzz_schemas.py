"""Every parser of model output on replies built from its own schema, valid and mangled, held to the reply.

For each parser, Hypothesis draws VALID replies from the schema the model is asked to fill
(``tests/helpers/fuzzing.py``) and then cuts, re-quotes, reorders, pads, fences or injects
them. Whatever comes: the parser never raises; a valid reply (also reordered) is accepted;
a rejected one carries its reason; a reply that had to be repaired (cut or re-quoted, and
still accepted) carries a note saying so; and what is accepted is what the reply says. That
last check reads the reply's own JSON independently of the parser and compares: the labels
and probabilities of a distribution (renormalized, nothing dropped, nothing swapped), the
scores, verdicts, stances and speakers, every text field, and the argument map's claims,
premises and links (source, target and relation, derived from ``responds_to``); a damaged
reply may only lose its cut-off parts. The seed is fresh each run and printed in pytest's
header (``tests/conftest.py``). ``SYMPOSIUM_FUZZ_EXAMPLES=N`` sets examples per parser;
``benchmarks/fuzz.py`` runs ten thousand and counts them per parser.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings

from tests.helpers.fuzzing import ACCEPTED, REJECTED, TARGETS, check, mangled

EXAMPLES = int(os.environ.get("SYMPOSIUM_FUZZ_EXAMPLES", "300"))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_valid_and_mangled_replies_are_read_as_written_or_rejected_with_a_reason(name: str) -> None:
    @settings(max_examples=EXAMPLES)
    @given(mangled(name))
    def run(case: tuple[str, str, object]) -> None:
        verdict = check(name, *case)
        assert verdict.kind in (ACCEPTED, REJECTED), f"{verdict.kind}: {verdict.detail}"

    run()
