"""Every protocol Symposium offers: the one list (see ``README.md``, "Adding a protocol").

The command line's ``symposium run <name>``, the app's New-debate form (in this order), the
benchmarks and the tests all read :data:`PROTOCOLS`; nothing else lists protocols.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols import agreement, d3, deliberation, evince, humanloop, multiagent, socrasynth
from protocols.core.definition import ProtocolDefinition, check_unique

PROTOCOLS: tuple[ProtocolDefinition, ...] = (
    evince.DEFINITION,
    socrasynth.DEFINITION,
    agreement.DEFINITION,
    deliberation.DEFINITION,
    humanloop.DEFINITION,
    d3.DEFINITION,
    multiagent.DEFINITION,
)

#: Name (and each variant's name, e.g. ``d3-more``) → definition.
BY_NAME: dict[str, ProtocolDefinition] = check_unique(PROTOCOLS)


def definition(name: str) -> ProtocolDefinition:
    """The protocol called ``name`` (or one of its variants); ``KeyError`` listing the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no protocol {name!r}; known: {', '.join(BY_NAME)}") from None


class CannotResume(ValueError):
    """A journalled debate that cannot be continued; the message names it and says why."""


def resumable(debate: Mapping[str, Any]) -> tuple[ProtocolDefinition, dict[str, str]]:
    """The definition that continues ``debate`` (``store.queries.Queries.debate``'s dict) and
    its roles' models. Every protocol can resume (by replaying its journal,
    :mod:`protocols.core.replay`); a finished debate, a protocol this Symposium does not run and
    a journal too old to hold the models' replies cannot."""
    if debate["status"] in ("finished", "stopped"):
        raise CannotResume(f"debate {debate['id']} is {debate['status']}; only an unfinished debate can be resumed")
    known = BY_NAME.get(debate["protocol"])  # a protocol may journal one of its variants
    if known is None:
        raise CannotResume(f"debate {debate['id']}: its protocol {debate['protocol']!r} is not one this Symposium runs "
                           f"({', '.join(d.name for d in PROTOCOLS)}); open it with `symposium show` instead")
    if debate.get("events_recorded") is None:
        raise CannotResume(f"debate {debate['id']} was journalled before Symposium kept its models' replies (journal "
                           "layout v5), so it cannot be resumed exactly; start it again")
    return known, known.roles_from(debate["participants"])
