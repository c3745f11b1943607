"""``symposium bench diagnosis``: the section 7.4 benchmark on your models and your cases."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from backends.lifecycle import Engines
from backends.registry import load_registry
from protocols.core.evidence import Grounding
from protocols.measures.labels import LabelSet
from store.journal import Journal
from tui.bench.cases import class_set, load_cases, subset
from tui.bench.diagnosis import (
    ALL_SCHEDULES,
    DESIGNS,
    SCHEDULES,
    Bench,
    BenchConfig,
    Case,
    default_jobs,
    diagnosing,
    evidence_rows,
    evidence_settings,
    prepare_backends,
    summarize,
)
from tui.bench.report import (
    COMPARISON_NOTE,
    EVIDENCE_NOTE,
    comparisons_table,
    convergence_rows,
    convergence_table,
    cost_plot,
    cost_rows,
    cost_table,
    evidence_table,
    paper_table,
    rounds_rows,
    rounds_table,
    schedule_note,
    self_judging_warning,
    spelling_line,
    terminal_table,
    write_outputs,
)
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.evidence import EvidenceError, read_evidence
from tui.headless.session import print_load_events
from tui.headless.signals import run_command


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help=help_for("bench"))
    kinds = bench.add_subparsers(dest="bench", metavar="BENCHMARK", required=True)
    d = kinds.add_parser("diagnosis", help="does debate help? single models vs ensembles vs EVINCE (Chang, 7.4)")
    d.add_argument("--cases", required=True, type=Path,
                   help="CSV of free-text cases (case_id,label,text) or of symptom lists (case_id,disease,symptoms)")
    d.add_argument("--labels", type=Path,
                   help="the class set: one label per line, or a CSV with a label column (default: the cases' labels)")
    d.add_argument("--models", required=True, dest="pair", metavar="A,B", help="the two models, A,B")
    d.add_argument("--design", choices=tuple(DESIGNS), default="paper",
                   help="paper: section 7.4.5 (external CRIT judge, opening + up to 3 refutation rounds, "
                        "one more than the paper's debates); quick: no judge, opening + 1 short refutation round")
    d.add_argument("--judge", help="CRIT judge for EVINCE, required by --design paper: a third model (section 7.2 "
                                   "(1)(iii)); naming model A or B makes a debater judge itself, and the report says so")
    d.add_argument("--scoring", choices=("verbalized", "scored"), default="verbalized")
    d.add_argument("--schedules", default=",".join(SCHEDULES), help="EVINCE cooling schedules to compare")
    d.add_argument("--out", type=Path, default=Path("diagnosis"), help="writes OUT.md, OUT.json, OUT.svg (and OUT.cases.jsonl)")
    d.add_argument("--limit", type=int, help="a random subset of N cases (reproducible with --seed)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--jobs", type=int, default=None,
                   help="cases at once (default 4; on llama.cpp decoded together, see max_concurrency in models.toml)")
    d.add_argument("--synonyms", type=Path, help="file of 'synonym = label' lines to extend label matching")
    d.add_argument("--open-labels", action="store_true",
                   help="the models name the labels (EVINCE's default open class set) instead of choosing from the "
                        "cases' classes; scored against the classes by the class set's rules")
    d.add_argument("--credit-related", action="store_true",
                   help="credit a broader or narrower name (symptom2disease_related.txt: Vertigo for BPPV) to its "
                        "class when scoring, and count those hits apart")
    d.add_argument("--max-rounds", type=int, default=None,
                   help="EVINCE's refutation rounds after the opening one (default: the design's)")
    d.add_argument("--turn-tokens", type=int, default=None, help="default: the design's")
    d.add_argument("--baseline-model", default=None, metavar="MODEL",
                   help="the model of the equal-cost baselines cot and self-consistency (default: model A)")
    d.add_argument("--k", type=int, default=None,
                   help="self-consistency's samples (default: measured, the debates' generated tokens per case "
                        "over cot's, so the vote costs what a debate does)")
    d.add_argument("--protocol", action="append", default=[], metavar="NAME", dest="protocols",
                   help="also run this protocol on every case, seated with the two models, as one more arm (repeat "
                        "for more); those that can: " + ", ".join(d.name for d in diagnosing()))
    d.add_argument("--evidence", type=Path, metavar="FILE",
                   help="adds the evidence arm: each model alone shown this file's passages (disease descriptions; see "
                        "docs/diagnosis-benchmark.md to build one), at the same reply limit; reports accuracy with and "
                        "without it, citation precision and the share of claims with a supported citation")
    d.set_defaults(handler=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    models = tuple(m.strip() for m in args.pair.split(",") if m.strip())
    if len(models) != 2:
        raise UserError("--models needs exactly two model ids, A,B")
    schedules = tuple(s.strip() for s in args.schedules.split(",") if s.strip())
    unknown = sorted(set(schedules) - set(ALL_SCHEDULES))
    if unknown:
        raise UserError(f"--schedules: unknown {', '.join(unknown)}; choose from {', '.join(ALL_SCHEDULES)}")
    try:
        config = BenchConfig(cases=args.cases, models=models, out=args.out, judge=args.judge, scoring=args.scoring,
                             schedules=schedules, limit=args.limit, seed=args.seed, jobs=args.jobs or default_jobs(),
                             synonyms=args.synonyms, design=args.design, max_rounds=args.max_rounds,
                             turn_tokens=args.turn_tokens, baseline_model=args.baseline_model, k=args.k,
                             open_labels=args.open_labels, credit_related=args.credit_related,
                             evidence=args.evidence, protocols=tuple(args.protocols))
    except (KeyError, ValueError) as exc:
        raise UserError(str(exc).strip('"')) from None
    evidence = None
    if config.evidence is not None:  # read before any model loads: a file that cannot be read stops it here
        try:
            evidence, _ = read_evidence([str(config.evidence)], evidence_settings(config.design))
        except EvidenceError as exc:
            raise UserError(f"--evidence: {exc}") from None
    try:
        every_case = load_cases(config.cases)
        labels = class_set(every_case, args.labels, config.synonyms, related=config.credit_related)
    except OSError as exc:
        raise UserError(f"cannot read {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    cases = subset(every_case, config.limit, config.seed)
    command = "symposium " + shlex.join(sys.argv[1:]) if sys.argv[0].endswith("symposium") else shlex.join(sys.argv)
    return run_command(_bench(args.db, args.models, config, cases, labels, command, evidence))


async def _bench(db: str | None, models_file: str | None, config: BenchConfig, cases: list[Case], labels: LabelSet,
                 command: str, evidence: Grounding | None = None) -> int:
    console = Console(highlight=False)
    warning = self_judging_warning({"self_judging": config.self_judging, "judge_model": config.judge_model})
    if warning:
        console.print(warning, style="bold yellow", markup=False)
    registry = load_registry(models_file)
    async with Engines(registry, on_event=print_load_events(console)) as engines:
        backends = await engines.load([*config.models, *([config.judge_model] if config.judge_model else [])])
        prepare_backends(backends, config.jobs)
        options = {m: registry.get(m).default_options() for m in backends}
        with Journal(db) as journal, Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                              TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                              console=console) as progress:
            bench = Bench(config, backends, options, journal, evidence=evidence)
            total = len(cases) * len(bench.systems)
            task = progress.add_task("cases × systems", total=total,
                                     completed=sum(1 for c in cases for s in bench.systems if (c.case_id, s) in bench.done))
            bench.on_done = lambda _: progress.advance(task)
            await bench.run(cases, labels)
    report = summarize(bench, cases, labels)
    report.evidence = evidence_rows(bench, cases, labels)
    console.print(terminal_table(report))
    schedule = schedule_note(report.config)
    if schedule:
        console.print(schedule, style="dim", markup=False)
    if report.evidence:
        console.print(evidence_table(report))
        console.print(EVIDENCE_NOTE, style="dim", markup=False)
    if warning:
        console.print(warning, style="bold yellow", markup=False)
    if report.comparisons:
        console.print(comparisons_table(report))
        console.print(COMPARISON_NOTE, style="dim", markup=False)
    console.print(paper_table(report))
    if convergence_rows(report):
        console.print(convergence_table(report))
    if rounds_rows(report):
        console.print(rounds_table(report))
    if spelling_line(report):
        console.print(spelling_line(report), markup=False)
    console.print(cost_plot(report), markup=False)
    if cost_rows(report):
        console.print(cost_table(report))
    for path in write_outputs(report, config.out, command):
        console.print(f"wrote {path}", style="dim")
    return 0
