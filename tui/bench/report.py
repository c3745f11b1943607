"""The diagnosis benchmark's outputs: a terminal table, ``PATH.md``, ``PATH.json``, ``PATH.svg``.

The SVG is drawn by hand (a dozen bars need no plotting library): Acc@1 per system with its 95 %
bootstrap interval, single models grey and combinations blue, as in the paper's Figure 7.2.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from rich.table import Table

from protocols.roles import AGENT_A
from store.export import write_private

from tui.bench.diagnosis import Report

COLUMNS = (("Acc@1", "acc1"), ("Acc@3", "acc3"), ("MRR", "mrr"), ("macro-F1", "macro_f1"), ("Brier", "brier"), ("ECE", "ece"))


def _cell(row: dict[str, Any], key: str) -> str:
    ci = row.get(f"{key}_ci")
    return f"{row[key]:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def terminal_table(report: Report) -> Table:
    table = Table(title=f"Diagnosis benchmark, {report.config.get('design', 'paper')} design: "
                        f"{report.rows[report.systems[0]]['cases'] if report.systems else 0} cases (95% bootstrap intervals)")
    table.add_column("system")
    for title, _ in COLUMNS:
        table.add_column(title, justify="right")
    for title in ("no prediction", "rounds", "tokens/case", "s/case"):
        table.add_column(title, justify="right")
    for name in report.systems:
        row = report.rows[name]
        table.add_row(name, *(_cell(row, key) for _, key in COLUMNS), _missing(row), f"{row['rounds']:.1f}",
                      f"{row['tokens_per_case']:.0f}", f"{row['seconds_per_case']:.1f}")
    return table


def _missing(row: dict[str, Any]) -> str:
    """Cases without a prediction (scored as misses), and for an ensemble the cases it built
    from one model's prediction because the other gave none."""
    text = str(row.get("no_prediction", 0))
    if row.get("one_model_only"):
        text += f" (+{row['one_model_only']} from one model)"
    return text


def self_judging_warning(cfg: dict[str, Any]) -> str | None:
    """The loud line for a run whose CRIT judge is one of the debaters' own models."""
    roles = cfg.get("self_judging") or []
    if not roles:
        return None
    names = " and ".join("model A" if r == AGENT_A else "model B" for r in roles)
    return (f"SELF-JUDGING: the CRIT judge {cfg.get('judge_model')} is also {names}. Seed 004 section 7.2 (1)(iii) "
            "asks for external CRIT scoring; here a debater's own model weights P_f and gates the other agent's "
            "arguments, so EVINCE's results may favour it.")


def comparisons_table(report: Report) -> Table:
    table = Table(title="Each combination against its better single model (Wilcoxon on per-case reciprocal rank, BH-adjusted)")
    for title in ("system", "versus", "cases", "ΔAcc@1", "ΔMRR", "p", "p (BH)"):
        table.add_column(title, justify="right" if title not in ("system", "versus") else "left")
    for c in report.comparisons:
        table.add_row(c["system"], c["versus"], str(c["cases"]), f"{c['delta_acc1']:+.3f}", f"{c['delta_mrr']:+.3f}",
                      f"{c['p']:.3f}", f"{c['p_bh']:.3f}")
    return table


def markdown(report: Report, command: str) -> str:
    cfg = report.config
    out = ["# Diagnosis benchmark", "",
           f"Command: `{command}`", "",
           f"Design: **{cfg.get('design', 'paper')}** ({cfg.get('design_summary', '')}).", "",
           f"Cases: `{cfg['cases']}` (limit {cfg['limit'] or 'none'}, seed {cfg['seed']}); models "
           f"{', '.join(cfg['models'])}; CRIT judge {_judge(cfg)}; "
           f"distributions {cfg['scoring']}; top-{cfg['top_k']}; round cap {cfg['max_rounds']} refutation "
           f"rounds after the opening one; {cfg['turn_tokens']}-token turns.", ""]
    warning = self_judging_warning(cfg)
    if warning:
        out += [f"> **{warning}**", ""]
    out += ["| system | " + " | ".join(t for t, _ in COLUMNS) + " | no prediction | rounds | tokens/case | s/case |",
            "| --- " * (len(COLUMNS) + 5) + "|"]
    for name in report.systems:
        row = report.rows[name]
        out.append(f"| {name} | " + " | ".join(_cell(row, key) for _, key in COLUMNS)
                   + f" | {_missing(row)} | {row['rounds']:.1f} | {row['tokens_per_case']:.0f} | {row['seconds_per_case']:.1f} |")
    if report.comparisons:
        out += ["", "Each combination against its better single model (Wilcoxon signed-rank on per-case "
                "reciprocal rank, Benjamini–Hochberg adjusted):", "",
                "| system | versus | cases | ΔAcc@1 | ΔMRR | p | p (BH) |", "| --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {c['system']} | {c['versus']} | {c['cases']} | {c['delta_acc1']:+.3f} | {c['delta_mrr']:+.3f} | "
                f"{c['p']:.3f} | {c['p_bh']:.3f} |" for c in report.comparisons]
    out += ["", "Intervals: 95% percentile bootstrap over cases. ECE: 15 equal-frequency bins of top-1 confidence. "
            "Brier: multi-class, over the whole label set. No prediction: cases where the system gave no usable "
            "distribution, scored as misses (never an invented one); an ensemble whose other model gave none "
            "combines the one that answered, counted as \"from one model\"."]
    return "\n".join(out) + "\n"


def _judge(cfg: dict[str, Any]) -> str:
    judge = cfg.get("judge_model")
    if not judge:
        return "none (equal weights in P_f, no quality gate)"
    return judge + (" (**a debater's own model**: see below)" if cfg.get("self_judging") else " (external)")


def svg(report: Report) -> str:
    """Acc@1 ± 95% CI per system, like Figure 7.2."""
    width, bar, gap, top, height = 760, 56, 24, 40, 260
    left = 60
    n = len(report.systems)
    longest = max((len(name) for name in report.systems), default=0)
    width = max(width, left + n * (bar + gap) + 20 + int(longest * 5.5))  # room for the last slanted name
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 30 + int(longest * 4.5)}" font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="20" font-size="14">Diagnostic accuracy (Acc@1) with 95% bootstrap intervals</text>',
             f'<line x1="{left}" y1="{top + height}" x2="{width - 10}" y2="{top + height}" stroke="#333"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + height - tick * height
        parts.append(f'<line x1="{left - 4}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#ddd"/>'
                     f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{tick:.2f}</text>')
    for i, name in enumerate(report.systems):
        row = report.rows[name]
        x = left + 10 + i * (bar + gap)
        y = top + height - row["acc1"] * height
        colour = "#9e9e9e" if i < 2 else "#1f77b4"
        low, high = row["acc1_ci"]
        parts.append(f'<rect x="{x}" y="{y}" width="{bar}" height="{row["acc1"] * height}" fill="{colour}"/>')
        parts.append(f'<line x1="{x + bar / 2}" y1="{top + height - high * height}" x2="{x + bar / 2}" '
                     f'y2="{top + height - low * height}" stroke="#000"/>')
        parts.append(f'<text x="{x + bar / 2}" y="{y - 4}" text-anchor="middle">{row["acc1"]:.2f}</text>')
        parts.append(f'<text transform="translate({x + bar / 2},{top + height + 12}) rotate(35)">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def write_outputs(report: Report, out: Path, command: str) -> list[Path]:
    """``PATH.md``, ``PATH.json`` (every number and every case) and ``PATH.svg``, created 0600."""
    paths = [out.with_name(out.name + suffix) for suffix in (".md", ".json", ".svg")]
    write_private(paths[0], markdown(report, command))
    warning = self_judging_warning(report.config)
    write_private(paths[1], json.dumps({"command": command, "warnings": [warning] if warning else [],
                                        "config": report.config, "systems": report.systems,
                                        "metrics": report.rows, "comparisons": report.comparisons,
                                        "cases": report.outcomes}, indent=2, ensure_ascii=False))
    write_private(paths[2], svg(report))
    return paths
