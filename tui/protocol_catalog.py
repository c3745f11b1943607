"""The protocols the app and the command line can start, as New-debate forms, and which of
them can resume a journalled debate.

One :class:`~tui.forms.ProtocolSpec` per protocol, generated from its definition in
:data:`protocols.registry.PROTOCOLS` (nothing about a protocol is written here). The order of
:data:`PROTOCOLS` is the order the New-debate form lists them.
"""

from __future__ import annotations

from typing import Any

from protocols.evince import DEMO_CASE
from protocols.registry import PROTOCOLS as DEFINITIONS

from tui.forms import FormError, ProtocolSpec

__all__ = ["DEMO_CASE", "EVINCE", "PROTOCOLS", "resumable"]

PROTOCOLS: dict[str, ProtocolSpec] = {d.name: ProtocolSpec(d) for d in DEFINITIONS}
EVINCE = PROTOCOLS["evince"]


def resumable(debate: dict[str, Any]) -> tuple[ProtocolSpec, dict[str, str]]:
    """The spec that can continue ``debate`` and its roles' models; raises FormError if none."""
    if debate["status"] in ("finished", "stopped"):
        raise FormError(f"debate {debate['id']} is {debate['status']}; only an unfinished debate can be resumed")
    spec = PROTOCOLS.get(debate["protocol"])
    if spec is None or spec.resume is None:
        raise FormError(f"debate {debate['id']}: resuming a {debate['protocol']} debate is not supported yet")
    roles = {p["role"]: p["model_id"] for p in debate["participants"] if p["backend"] != "human"}
    return spec, roles
