"""Every protocol Symposium offers: the one list (see ``README.md``, "Adding a protocol").

The command line's ``symposium run <name>``, the app's New-debate form (in this order), the
benchmarks and the tests all read :data:`PROTOCOLS`; nothing else lists protocols.
"""

from __future__ import annotations

from protocols import agreement, d3, deliberation, evince, humanloop, socrasynth
from protocols.core.definition import ProtocolDefinition, check_unique

PROTOCOLS: tuple[ProtocolDefinition, ...] = (
    evince.DEFINITION,
    socrasynth.DEFINITION,
    agreement.DEFINITION,
    deliberation.DEFINITION,
    humanloop.DEFINITION,
    d3.DEFINITION,
)

#: Name (and each variant's name, e.g. ``d3-more``) → definition.
BY_NAME: dict[str, ProtocolDefinition] = check_unique(PROTOCOLS)


def definition(name: str) -> ProtocolDefinition:
    """The protocol called ``name`` (or one of its variants); ``KeyError`` listing the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no protocol {name!r}; known: {', '.join(BY_NAME)}") from None
