"""``symposium d3-report``: D3 verdicts in the journal against reference verdicts (seed 003
section 4.3): accuracy, Cohen's κ and the self-enhancement audit."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from store.d3_report import ReferenceError, d3_report, read_references
from store.journal import Journal

from tui.cli.commands import help_for
from tui.errors import UserError
from tui.sanitize import terminal_safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("d3-report", help=help_for("d3-report"))
    p.add_argument("--reference", required=True, metavar="FILE",
                   help='JSON lines: {"debate": ID or "question": TEXT, "reference": "A"|"B"|"tie", "model_a": …, "model_b": …}')
    p.add_argument("--family", action="append", default=[], metavar="MODEL=FAMILY",
                   help="a model's family where its id's leading letters are wrong (repeatable)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _families(specs: list[str]) -> dict[str, str]:
    out = {}
    for spec in specs:
        model, sep, fam = spec.partition("=")
        if not sep or not model.strip() or not fam.strip():
            raise UserError(f"--family {spec!r}: write MODEL=FAMILY, e.g. --family my-finetune=llama")
        out[model.strip()] = fam.strip()
    return out


def run(args: argparse.Namespace) -> int:
    try:
        references = read_references(args.reference)
    except ReferenceError as exc:
        raise UserError(str(exc)) from None
    with Journal(args.db) as journal:
        report = d3_report(journal, references, _families(args.family))
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    console = Console()
    a = report["agreement"]
    fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
    console.print(f"D3 against {a['items']} reference verdict(s): accuracy {fmt(a['accuracy'])}, "
                  f"Cohen's κ {fmt(a['kappa'])}, {a['no_verdict']} without a verdict", markup=False)
    table = Table(title="Self-enhancement (section 4.3): preferring one's own family's answer against the reference")
    for col in ("evaluator", "family", "subset", "prefers own", "reference prefers own", "rate"):
        table.add_column(col)
    for name, row in report["self_enhancement"].items():
        table.add_row(terminal_safe(name), terminal_safe(row["family"]), str(row["subset"]), fmt(row["prefers_own_rate"]),
                      fmt(row["reference_prefers_own_rate"]), fmt(row["rate"]))
    console.print(table)
    for where in report["unmatched"]:
        console.print(f"no finished D3 debate for {terminal_safe(where)}", markup=False)
    return 0
