"""``symposium study NAME …``: an analysis across the journal's debates of one protocol, as its
definition declares it (:class:`protocols.core.definition.Study`): D3's verdicts against
reference verdicts, the human-in-the-loop panel's stance change rates, and any a protocol adds.
Its flags are generated from the study's inputs as ``symposium run``'s are from a protocol's."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.text import Text

from protocols.core.definition import InputError, ProtocolDefinition, Study
from protocols.registry import PROTOCOLS
from store.journal import Journal
from store.queries import Queries
from tui.cli.commands import help_for
from tui.cli.run import _add_input
from tui.errors import UserError
from tui.headless.sections import renderables


def studies() -> dict[str, tuple[ProtocolDefinition, Study]]:
    """Study name → (its protocol, the study), from every registered definition."""
    return {s.name: (d, s) for d in PROTOCOLS for s in d.studies}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help=help_for("study"))
    names = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    for name, (d, study) in studies().items():
        q = names.add_parser(name, help=study.help, description=f"{study.help} ({d.title})")
        for i in study.inputs:
            _add_input(q, i)
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        q.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    d, study = studies()[args.study]
    try:
        values = study.values({i.name: getattr(args, i.name, None) for i in study.inputs})
    except InputError as exc:
        flag = next((i.cli_flag for i in study.inputs if i.name == exc.name), exc.name)
        raise UserError(f"{flag}: {exc.problem}") from None
    with Journal(args.db) as journal:
        debates = Queries(journal).debates_of([d.name, *(v.name for v in d.variants)])
    result = study.run(debates, values)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    console = Console(highlight=False)
    if not debates:
        console.print(Text(f"the journal holds no {d.title} debate", style="yellow"))
    for part in renderables(study.present(result)):
        console.print(part)
    return 0
