"""Fixtures shared by the app's tests."""

from __future__ import annotations

import pytest

from tests.helpers.debate_from_form import Gate, answer
from tests.helpers.scripted_backends import answering


@pytest.fixture
def scripted_models(monkeypatch: pytest.MonkeyPatch) -> Gate:
    """Scripted models for the app, and the gate every reply streams through (open)."""
    gate = Gate()
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.01, chunk=8, answer=answer, gate=gate))
    return gate
