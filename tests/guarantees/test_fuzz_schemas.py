"""Every parser of model output on replies built from its own schema, valid and mangled.

For each parser, Hypothesis draws VALID replies from the schema the model is asked to fill
(``tests/helpers/fuzzing.py``) and then cuts, re-quotes, reorders, pads, fences or injects
them. Whatever comes: the parser never raises; a valid reply (also reordered) is accepted;
what is accepted validates against the schema; a reply that had to be repaired (cut or
re-quoted, and still accepted) carries a note saying so; a rejected one carries its reason.
The seed is fresh each run and printed in pytest's header (``tests/conftest.py``).
``SYMPOSIUM_FUZZ_EXAMPLES=N`` sets examples per parser.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings

from tests.helpers.fuzzing import TARGETS, mangled

EXAMPLES = int(os.environ.get("SYMPOSIUM_FUZZ_EXAMPLES", "300"))


def check(name: str, how: str, text: str, value: object) -> None:
    """The contract of one parser on one reply (raises AssertionError naming what broke)."""
    out = TARGETS[name][1](text)
    if how in ("valid", "reorder"):
        assert out.accepted, f"{name} rejected a valid reply {text[:80]!r}: {out.notes}"
    if out.accepted:
        assert out.valid, f"{name} accepted {text[:80]!r} but what it returned does not validate"
        if how in ("cut", "requote") and text != json.dumps(value) and _not_json_of(text, value):
            assert out.notes, f"{name} repaired {text[:80]!r} ({how}) without a note"
    else:
        assert out.notes and out.notes[-1], f"{name} rejected {text[:80]!r} without a reason"


def _not_json_of(text: str, value: object) -> bool:
    try:
        return json.loads(text) != value
    except (ValueError, RecursionError):
        return True


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_valid_and_mangled_replies_are_accepted_validated_or_rejected_with_a_reason(name: str) -> None:
    @settings(max_examples=EXAMPLES)
    @given(mangled(name))
    def run(case: tuple[str, str, object]) -> None:
        check(name, *case)

    run()
