"""The diagnosis benchmark's outputs: terminal tables, ``PATH.md``, ``PATH.json``, ``PATH.svg``
and ``PATH.cost.svg``.

The SVGs come from the report's plotter (:mod:`outputs.report.svg`): Acc@1 per system with its
95 % bootstrap interval, single models grey and combinations blue, as in the paper's Figure 7.2;
and Acc@1 against generated tokens per case (does debate beat a vote at the same cost?), also
drawn in the terminal as a character plot.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.table import Table

from outputs.export import write_private
from outputs.markdown_text import inline
from outputs.report.svg import GREY, PALETTE, Estimate, columns, scatter
from protocols.core.costs import AGENT_HEADERS, MEASURED, NOTE, Cost, Figure, seconds, shown, tokens
from protocols.core.roles import AGENT_A, AGENT_B
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
    for title in ("no prediction", "rounds", "generated tok/case", "prompt tok/case", "s/case"):
        table.add_column(title, justify="right")
    for name in report.systems:
        row = report.rows[name]
        table.add_row(display_name(report, name), *(_cell(row, key) for _, key in COLUMNS), _missing(row),
                      f"{row['rounds']:.1f}", *_costs(row))
    return table


def display_name(report: Report, name: str) -> str:
    """A system's name as shown: self-consistency with its k."""
    k = report.rows.get(name, {}).get("k")
    return f"{name}, k={k}" if k else name


def _costs(row: dict[str, Any]) -> tuple[str, str, str]:
    return (f"{row.get('generated_tokens_per_case', 0):.0f}", f"{row.get('prompt_tokens_per_case', 0):.0f}",
            f"{row['seconds_per_case']:.1f}")


def _bca(stat: dict[str, Any]) -> str:
    """The paper's form: value (sd over the replicates) [BCa interval]."""
    low, high = stat["bca"]
    interval = "[n/a]" if low != low or high != high else f"[{low:.2f}, {high:.2f}]"  # NaN: too few cases
    return f"{stat['value']:.3f} ({stat['sd']:.3f}) {interval}"


PAPER_COLUMNS = (("Acc@1", "acc1"), ("Acc@3", "acc3"), ("MRR", "mrr"), ("Brier", "brier"), ("ECE", "ece"))
PAPER_NOTE = ("The paper's statistics (Chang, 7.4.1–7.4.1.3): value (standard deviation over 20 bootstrap "
              "replicates) [BCa 95% interval from those 20, scipy's bootstrap(method=\"BCa\")]. The intervals above "
              "are ours: percentile, over more resamples. docs/protocols.md says why both.")


def paper_table(report: Report) -> Table:
    table = Table(title="The paper's statistics: value (sd over 20 replicates) [BCa 95%]")
    table.add_column("system")
    for title, _ in PAPER_COLUMNS:
        table.add_column(title, justify="right")
    for name in report.systems:
        paper = report.rows[name].get("paper", {})
        table.add_row(display_name(report, name), *(_bca(paper[key]) if key in paper else "" for _, key in PAPER_COLUMNS))
    return table


CONVERGENCE = (("H(P_f) first", "entropy_first"), ("H(P_f) last", "entropy_last"), ("ΔH", "entropy_change"),
               ("1−WD first", "one_minus_wd_first"), ("1−WD last", "one_minus_wd_last"), ("Δ(1−WD)", "one_minus_wd_change"),
               ("A: 1−WD succ. first", f"successive_first_{AGENT_A}"), ("A: 1−WD succ. last", f"successive_last_{AGENT_A}"),
               ("B: 1−WD succ. first", f"successive_first_{AGENT_B}"), ("B: 1−WD succ. last", f"successive_last_{AGENT_B}"))
CONVERGENCE_NOTE = ("Ours: the entropy of the consensus P_f and 1 − WD between the two agents, in the first and the "
                    "last scored round, and the change. The paper's (7.4.1.2, \"1-WD between successive rounds\"): per "
                    "agent, 1 − WD between its own distributions of two successive rounds, its first and its last such "
                    "pair. Each a mean over the debates with its BCa 95% interval (20 replicates).")
ROUNDS_NOTE = ("Rounds to convergence (7.4.5: exponential \"offers convergence speed advantages (e.g., three vs. four "
               "rounds)\"): per debate arm, the debates Figure 7.1's stop rule ended with the agents agreeing "
               "(converged) or apart (settled apart), and the rounds held, the opening included, by those that "
               "converged (mean, 95% percentile interval) and by all.")


def _conv(conv: dict[str, Any], key: str) -> str:
    if key not in conv:
        return "–"
    low, high = conv[f"{key}_bca"]
    interval = "" if low != low or high != high else f" [{low:.2f}, {high:.2f}]"
    return f"{conv[key]:+.3f}{interval}" if "change" in key else f"{conv[key]:.3f}{interval}"


def convergence_rows(report: Report) -> list[tuple[str, dict[str, Any]]]:
    return [(name, report.rows[name]["convergence"]) for name in report.systems if "convergence" in report.rows[name]]


def convergence_table(report: Report) -> Table:
    table = Table(title="Debate convergence (7.4.1.2): ours (P_f's entropy, 1 − WD between the agents) and the paper's "
                        "(per agent, 1 − WD between successive rounds), BCa 95%")
    table.add_column("system")
    table.add_column("debates", justify="right")
    for title, _ in CONVERGENCE:
        table.add_column(title, justify="right")
    for name, conv in convergence_rows(report):
        table.add_row(name, str(conv["debates"]), *(_conv(conv, key) for _, key in CONVERGENCE))
    return table


ROUNDS_TITLES = ("system", "debates", "converged", "settled apart", "rounds to convergence", "rounds held (all)")


def _rounds_cells(name: str, r: dict[str, Any]) -> list[str]:
    ci = r.get("rounds_ci")
    to = "–" if "rounds" not in r else f"{r['rounds']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
    return [name, str(r["debates"]), str(r["converged"]), str(r["settled_apart"]), to, f"{r['rounds_all']:.2f}"]


def rounds_rows(report: Report) -> list[tuple[str, dict[str, Any]]]:
    return [(name, report.rows[name]["rounds_to_convergence"]) for name in report.systems
            if "rounds_to_convergence" in report.rows[name]]


def rounds_table(report: Report) -> Table:
    table = Table(title="Rounds to convergence per schedule (7.4.5)")
    for title in ROUNDS_TITLES:
        table.add_column(title, justify="left" if title == "system" else "right")
    for name, r in rounds_rows(report):
        table.add_row(*_rounds_cells(name, r))
    return table


def spelling_line(report: Report) -> str:
    """The single models' agreeing answers that spelling keeps apart, before and after the open rules."""
    s = report.spelling
    if not s or not s.get("cases"):
        return ""
    line = (f"Spelling (the two single models on {s['cases']} cases): of {s['agreeing']} agreeing answers (the same class "
            f"by the class set's rules), {s['apart_before']} are two labels by case and punctuation alone and "
            f"{s['apart_after']} under an open debate's spelling rules; of {s['label_pairs']} pairs of labels naming one "
            f"class, {s['labels_apart_before']} and {s['labels_apart_after']}.")
    if report.config.get("open_labels") is False:
        line += " (The models chose from the class set, so its spelling was given to them.)"
    return line


def cost_plot(report: Report, width: int = 60, height: int = 11) -> str:
    """Acc@1 (up) against generated tokens per case (across) as characters for the terminal:
    each system a letter, with the key below. Plain text: names are escaped by the printer."""
    points = [(report.rows[n].get("generated_tokens_per_case", 0.0), report.rows[n]["acc1"], n) for n in report.systems]
    if not points:
        return ""
    most = max(x for x, _, _ in points) or 1.0
    grid = [[" "] * width for _ in range(height)]
    key = []
    for i, (x, y, name) in enumerate(points):
        mark = chr(ord("A") + i) if i < 26 else "*"
        col = min(width - 1, int(x / most * (width - 1)))
        row = height - 1 - min(height - 1, int(y * (height - 1)))
        grid[row][col] = mark if grid[row][col] == " " else "+"
        key.append(f"  {mark}  {display_name(report, name)}: Acc@1 {y:.3f}, {x:.0f} generated tokens/case")
    lines = ["Acc@1 against generated tokens per case (+: points overlap)"]
    for r, cells in enumerate(grid):
        label = f"{1 - r / (height - 1):4.2f}" if r in (0, height // 2, height - 1) else "    "
        lines.append(f"{label} |" + "".join(cells))
    lines.append("     +" + "-" * width)
    lines.append(f"      0{' ' * (width - 2 - len(f'{most:.0f}'))}{most:.0f}")
    return "\n".join(lines + key)


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
    return (f"SELF-JUDGING: the CRIT judge {cfg.get('judge_model')} is also {names}. EVINCE (Chang, section 7.2 (1)(iii)) "
            "asks for external CRIT scoring; here a debater's own model weights P_f and gates the other agent's "
            "arguments, so EVINCE's results may favour it.")


def schedule_note(cfg: dict[str, Any]) -> str | None:
    """The line for a run whose cases shared a llama.cpp model several at a time: which cached
    cells a prompt reuses then depends on the order the cases ran in, and so, in its last bits,
    what a greedy reply says (docs/backends.md measures how often)."""
    if not cfg.get("schedule_dependent"):
        return None
    return (f"{cfg.get('jobs')} cases at a time on llama.cpp: a reply can differ in its last bits, and a near-tie in "
            "its prediction, from the same case run alone, because which cached cells a prompt reuses depends on the "
            "order the cases ran in. For figures another run reproduces exactly, use --jobs 1.")


COMPARISON_TITLES = ("system", "versus", "cases", "ΔAcc@1", "ΔMRR", "p", "p (BH)", "Cliff's Δ",
                     "paper p", "paper p (BH)", "paper Cliff's Δ")


def _comparison_cells(report: Report, c: dict[str, Any]) -> list[str]:
    star = " *" if c.get("paper_significant") else ""
    paper_bh = c.get("paper_p_bh")
    return [display_name(report, c["system"]), c["versus"], str(c["cases"]), f"{c['delta_acc1']:+.3f}",
            f"{c['delta_mrr']:+.3f}", f"{c['p']:.3f}", f"{c['p_bh']:.3f}", f"{c.get('cliffs_delta', float('nan')):+.2f}",
            f"{c.get('paper_p', float('nan')):.3g}", "–" if paper_bh is None else f"{paper_bh:.3g}{star}",
            f"{c.get('paper_cliffs_delta', float('nan')):+.2f}"]


COMPARISON_NOTE = ("Ours: Wilcoxon signed-rank on per-case reciprocal rank, Cliff's Δ on the same per-case values, "
                   "Benjamini–Hochberg over one family: every system in this table against the better single model. "
                   "The paper's (7.4.1.3): Wilcoxon on 20 paired bootstrap replicates of Acc@1, Cliff's Δ between the "
                   "replicates, BH at q = 0.05 (*) over the paper's family, \"each paired model ... with its stronger "
                   "individual component\": the EVINCE arms alone (– for the other systems). Its p falls as replicates "
                   "are added to the same cases, so read ours.")


def comparisons_table(report: Report) -> Table:
    table = Table(title="Each system against the better single model (ours, and the paper's test on replicates)")
    for title in COMPARISON_TITLES:
        table.add_column(title, justify="right" if title not in ("system", "versus") else "left")
    for c in report.comparisons:
        table.add_row(*_comparison_cells(report, c))
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
    schedule = schedule_note(cfg)
    if schedule:
        out += [f"> {schedule}", ""]
    if cfg.get("k"):
        out += [f"Equal-cost baselines on {cfg.get('baseline')}: `cot` (one reasoned answer) and `self-consistency` "
                f"(k = {cfg['k']} reasoned answers at temperature {cfg.get('sc_temperature')}, majority vote, ties by "
                f"mean probability); k {cfg.get('k_source')}.", ""]
    out += ["| system | " + " | ".join(t for t, _ in COLUMNS)
            + " | no prediction | rounds | generated tok/case | prompt tok/case | s/case |",
            "| --- " * (len(COLUMNS) + 6) + "|"]
    for name in report.systems:
        row = report.rows[name]
        out.append(f"| {inline(display_name(report, name))} | " + " | ".join(_cell(row, key) for _, key in COLUMNS)
                   + f" | {_missing(row)} | {row['rounds']:.1f} | " + " | ".join(_costs(row)) + " |")
    if report.comparisons:
        out += ["", "Each system against the better single model. " + COMPARISON_NOTE, "",
                "| " + " | ".join(COMPARISON_TITLES) + " |", "| --- " * len(COMPARISON_TITLES) + "|"]
        out += ["| " + " | ".join(inline(cell) for cell in _comparison_cells(report, c)) + " |" for c in report.comparisons]
    if any("paper" in report.rows[n] for n in report.systems):
        out += ["", PAPER_NOTE, "", "| system | " + " | ".join(t for t, _ in PAPER_COLUMNS) + " |",
                "| --- " * (len(PAPER_COLUMNS) + 1) + "|"]
        out += [f"| {inline(display_name(report, n))} | " + " | ".join(_bca(report.rows[n]["paper"][key]) for _, key in PAPER_COLUMNS)
                + " |" for n in report.systems if "paper" in report.rows[n]]
    if convergence_rows(report):
        out += ["", "Debate convergence (7.4.1.2). " + CONVERGENCE_NOTE, "",
                "| system | debates | " + " | ".join(t for t, _ in CONVERGENCE) + " |", "| --- " * (len(CONVERGENCE) + 2) + "|"]
        out += [f"| {inline(name)} | {conv['debates']} | " + " | ".join(_conv(conv, key) for _, key in CONVERGENCE) + " |"
                for name, conv in convergence_rows(report)]
    if rounds_rows(report):
        out += ["", ROUNDS_NOTE, "", "| " + " | ".join(ROUNDS_TITLES) + " |", "| --- " * len(ROUNDS_TITLES) + "|"]
        out += ["| " + " | ".join(inline(cell) for cell in _rounds_cells(name, r)) + " |" for name, r in rounds_rows(report)]
    credited = {name: report.rows[name]["acc1_credited"] for name in report.systems if report.rows[name].get("acc1_credited")}
    if report.config.get("credit_related"):
        out += ["", "Broader and narrower names credited to their class (`--credit-related`): Acc@1 hits that came "
                "only through such a name, counted in Acc@1 above: " + (", ".join(f"{inline(n)} {k}" for n, k in credited.items())
                                                                         or "none") + "."]
    if spelling_line(report):
        out += ["", inline(spelling_line(report))]
    if report.systems:
        out += ["", "Accuracy against cost (also `OUT.cost.svg`):", "", "```", cost_plot(report), "```"]
    out += cost_markdown(report)
    merged = {name: notes for name, notes in report.label_merges.items() if notes}
    if merged:
        out += ["", "Labels renamed or merged when scoring (case, punctuation, the synonym map, typos):", ""]
        for name, notes in merged.items():
            shown = "; ".join(inline(n) for n in notes[:8]) + (f"; and {len(notes) - 8} more (all in OUT.json)" if len(notes) > 8 else "")
            out.append(f"- {inline(name)}: {shown}")
    out += evidence_markdown(report)
    out += ["", "Intervals: 95% percentile bootstrap over cases. ECE: 15 equal-frequency bins of top-1 confidence. "
            "Brier: multi-class, over the whole label set. No prediction: cases where the system gave no usable "
            "distribution, scored as misses (never an invented one); an ensemble whose other model gave none "
            "combines the one that answered, counted as \"from one model\"."]
    return "\n".join(out) + "\n"


#: What the evidence arm's figures mean, and what they mean on the bundled models.
EVIDENCE_NOTE = ("Evidence arm: each model alone, shown the passages of the evidence file most relevant to the case, "
                 "at the plain arm's reply limit; it lists its claims with their sources, each checked. Citation "
                 "precision: the share of its citations that name a real passage (and quote it, when quoting). "
                 "Supported share: the share of its claims with such a citation. On the bundled 135M/270M models these "
                 "figures are poor (they rarely cite, and often cite ids that do not exist); run it with 7B+ models.")


#: The per-agent cost table's columns after system and agent: means per case.
COST_TITLES = tuple(AGENT_HEADERS[1:])
COST_NOTE = ("Cost per agent, means per case (each ensemble and vote counts the runs it combines). " + NOTE)


def cost_rows(report: Report) -> list[tuple[str, str, list[str]]]:
    """(system, agent, cells) for every agent of every system, figures per case
    (:mod:`protocols.core.costs`: — not measured by the backend, ≥ measured by only some calls)."""
    out: list[tuple[str, str, list[str]]] = []
    for name in report.systems:
        found = report.rows[name].get("costs") or {}
        n = max(1, int(found.get("cases") or 1))
        for agent, data in (found.get("agents") or {}).items():
            cost = Cost.from_json(data)
            per_case = [Figure(getattr(cost, f).total / n, getattr(cost, f).known, getattr(cost, f).calls) for f in MEASURED]
            cached, wait, prefill, decode = per_case
            rate = cost.decode_rate
            out.append((display_name(report, name), agent, [
                f"{cost.calls / n:.1f}", tokens(cost.prompt_tokens / n), shown(cached, tokens), tokens(cost.completion_tokens / n),
                shown(wait), shown(prefill), shown(decode), seconds(cost.duration_s / n), "—" if rate is None else f"{rate:.1f}"]))
    return out


def cost_table(report: Report) -> Table:
    table = Table(title="Cost per agent (means per case)")
    table.add_column("system")
    table.add_column("agent")
    for title in COST_TITLES:
        table.add_column(title, justify="right")
    for system, agent, cells in cost_rows(report):
        table.add_row(system, agent, *cells)
    return table


def cost_markdown(report: Report) -> list[str]:
    rows = cost_rows(report)
    if not rows:
        return []
    out = ["", COST_NOTE, "", "| system | agent | " + " | ".join(COST_TITLES) + " |", "| --- " * (len(COST_TITLES) + 2) + "|"]
    out += [f"| {inline(system)} | {inline(agent)} | " + " | ".join(cells) + " |" for system, agent, cells in rows]
    return out


def _share(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def evidence_table(report: Report) -> Table:
    """Per model: accuracy alone and with the evidence, citation precision, supported share."""
    table = Table(title="Evidence arm (each model alone, with and without the evidence file)")
    for title in ("model", "cases", "Acc@1 alone", "Acc@1 + evidence", "claims", "citations", "supported",
                  "citation precision", "supported share"):
        table.add_column(title, justify="left" if title == "model" else "right")
    for row in report.evidence:
        table.add_row(row["model"], str(row["cases"]), _share(row["accuracy"]), _share(row["accuracy_with_evidence"]),
                      str(row["claims"]), str(row["cited"]), str(row["supported"]), _share(row["citation_precision"]),
                      _share(row["supported_share"]))
    return table


def evidence_markdown(report: Report) -> list[str]:
    """The evidence arm's table for ``PATH.md`` (nothing without ``--evidence``)."""
    if not report.evidence:
        return []
    out = ["", EVIDENCE_NOTE, "", "| model | cases | Acc@1 alone | Acc@1 + evidence | claims | citations | supported | "
           "citation precision | supported share |", "| --- " * 9 + "|"]
    out += [f"| {inline(row['model'])} | {row['cases']} | {_share(row['accuracy'])} | {_share(row['accuracy_with_evidence'])} | "
            f"{row['claims']} | {row['cited']} | {row['supported']} | {_share(row['citation_precision'])} | "
            f"{_share(row['supported_share'])} |" for row in report.evidence]
    return out


def _judge(cfg: dict[str, Any]) -> str:
    judge = cfg.get("judge_model")
    if not judge:
        return "none (equal weights in P_f, no quality gate)"
    return judge + (" (**a debater's own model**: see below)" if cfg.get("self_judging") else " (external)")


#: The chart files' groups: the two models alone (grey, as in the paper's Figure 7.2; they come
#: first in :attr:`Report.systems`) beside what combines or repeats them, in which the cost
#: chart sets the EVINCE debates apart.
SINGLE, COMBINED, EVINCE, OTHER = "single model", "combination", "EVINCE debate", "ensemble, baseline or other protocol"
COLOURS = {SINGLE: GREY, COMBINED: PALETTE[0], EVINCE: PALETTE[0], OTHER: PALETTE[2]}


def _estimates(report: Report, group: Callable[[str], str]) -> list[Estimate]:
    """Each system's Acc@1 with its 95% interval, at its generated tokens per case."""
    out = []
    for i, name in enumerate(report.systems):
        row = report.rows[name]
        low, high = row["acc1_ci"]
        out.append(Estimate(display_name(report, name), row["acc1"], low, high, SINGLE if i < 2 else group(name),
                            row.get("generated_tokens_per_case", 0.0)))
    return out


def svg(report: Report) -> str:
    """Acc@1 ± 95% CI per system, like Figure 7.2."""
    return columns("Diagnostic accuracy (Acc@1) with 95% bootstrap intervals",
                   _estimates(report, lambda name: COMBINED), colours=COLOURS, standalone=True)


def cost_svg(report: Report) -> str:
    """Acc@1 (with its 95 % bootstrap interval) against generated tokens per case: the
    equal-cost question (does debate beat a vote at the same cost?) as a picture."""
    return scatter("Acc@1 (95% bootstrap interval) against generated tokens per case",
                   _estimates(report, lambda name: EVINCE if name.startswith("EVINCE") else OTHER),
                   x_label="generated tokens per case", colours=COLOURS, standalone=True)


def write_outputs(report: Report, out: Path, command: str) -> list[Path]:
    """``PATH.md``, ``PATH.json`` (every number and every case), ``PATH.svg`` and
    ``PATH.cost.svg``, created 0600."""
    paths = [out.with_name(out.name + suffix) for suffix in (".md", ".json", ".svg", ".cost.svg")]
    write_private(paths[0], markdown(report, command))
    warning = self_judging_warning(report.config)
    write_private(paths[1], json.dumps({"command": command, "warnings": [warning] if warning else [],
                                        "config": report.config, "systems": report.systems,
                                        "metrics": report.rows, "comparisons": report.comparisons,
                                        "label_merges": report.label_merges, "evidence": report.evidence,
                                        "cases": report.outcomes}, indent=2, ensure_ascii=False))
    write_private(paths[2], svg(report))
    write_private(paths[3], cost_svg(report))
    return paths
