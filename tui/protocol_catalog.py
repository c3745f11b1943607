"""The protocols the app and the command line can start, as New-debate forms, and which of
them can resume a journalled debate.

One :class:`~tui.forms.ProtocolSpec` per protocol, generated from its definition in
:data:`protocols.registry.PROTOCOLS` (nothing about a protocol is written here). The order of
:data:`PROTOCOLS` is the order the New-debate form lists them.
"""

from __future__ import annotations

from typing import Any

from protocols.evince import DEMO_CASE
from protocols.registry import BY_NAME, PROTOCOLS as DEFINITIONS

from tui.forms import FormError, ProtocolSpec

__all__ = ["DEMO_CASE", "EVINCE", "PROTOCOLS", "resumable"]

PROTOCOLS: dict[str, ProtocolSpec] = {d.name: ProtocolSpec(d) for d in DEFINITIONS}
EVINCE = PROTOCOLS["evince"]


def resumable(debate: dict[str, Any]) -> tuple[ProtocolSpec, dict[str, str]]:
    """The spec that continues ``debate`` and its roles' models (in the form's roles); raises
    FormError, naming the debate, when it cannot be resumed. Every protocol can: a run is resumed
    by replaying its journal (:mod:`protocols.core.replay`)."""
    if debate["status"] in ("finished", "stopped"):
        raise FormError(f"debate {debate['id']} is {debate['status']}; only an unfinished debate can be resumed")
    # A protocol may journal one of its variants (D3: "d3-samre", "d3-more"): the registry knows them.
    known = BY_NAME.get(debate["protocol"])
    spec = PROTOCOLS.get(known.name) if known is not None else None
    if spec is None:
        raise FormError(f"debate {debate['id']}: its protocol {debate['protocol']!r} is not one this Symposium runs "
                        f"({', '.join(PROTOCOLS)}); open it with `symposium show` instead")
    if debate.get("events_recorded") is None:
        raise FormError(f"debate {debate['id']} was journalled before Symposium kept its models' replies (journal "
                        "layout v5), so it cannot be resumed exactly; start it again")
    return spec, spec.roles_from(debate["participants"])
