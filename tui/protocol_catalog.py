"""The protocols the app and the command line can start, as New-debate forms, and which of
them can resume a journalled debate.

One :class:`~tui.forms.ProtocolSpec` per protocol, generated from its definition in
:data:`protocols.registry.PROTOCOLS` (nothing about a protocol is written here). The order of
:data:`SPECS` is the order the New-debate form lists them; the first is the one a new debate and
the demo open with.
"""

from __future__ import annotations

from typing import Any

from protocols.registry import PROTOCOLS, CannotResume
from protocols.registry import resumable as resumable_definition
from tui.forms import FormError, ProtocolSpec

__all__ = ["FIRST", "SPECS", "resumable"]

SPECS: dict[str, ProtocolSpec] = {d.name: ProtocolSpec(d) for d in PROTOCOLS}
#: The protocol a new debate's form and the demo open with.
FIRST = SPECS[PROTOCOLS[0].name]


def resumable(debate: dict[str, Any]) -> tuple[ProtocolSpec, dict[str, str]]:
    """The spec that continues ``debate`` and its roles' models; :class:`FormError` naming the
    debate when it cannot be resumed (see :func:`protocols.registry.resumable`)."""
    try:
        definition, roles = resumable_definition(debate)
    except CannotResume as exc:
        raise FormError(str(exc)) from None
    return SPECS[definition.name], roles
