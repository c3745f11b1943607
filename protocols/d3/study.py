"""D3's study across debates: its verdicts against reference verdicts (Chaithanya Bandi, Abir
Harrasse, "Debate, Deliberate, Decide (D3): A Cost-Aware Adversarial Framework for Reliable and
Interpretable LLM Evaluation", section 4.3), ``symposium study d3-report``; the measures are
:mod:`protocols.d3.audit`.

A reference file lists the right verdict per item, one JSON object per line (or one JSON list):

    {"question": "Which sorting algorithm ...?", "reference": "A", "model_a": "gemma2-9b", "model_b": "llama3.1-8b"}
    {"debate": "3f9c2a1b", "reference": "tie"}

An item names its debate by id (or unique prefix) or by its question (every finished D3 debate
on that question, whitespace aside, is an evaluation of it). ``model_a`` / ``model_b`` say which
model wrote each answer; they default to what the debate was started with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protocols.core.definition import Input, Study
from protocols.core.present import DefList, Para, Section, Table, num
from protocols.d3.audit import Evaluation, agreement, evaluators_of, normalize_reference, self_enhancement


def read_references(path: str | Path) -> list[dict[str, Any]]:
    """The items of a reference file (JSON lines or a JSON list), each checked; ``ValueError``
    naming the file, the line and the fix."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the reference file ({exc.strerror})") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        numbered = list(enumerate(items if isinstance(items, list) else [], start=1))
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                numbered.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None
    out = []
    for number, item in numbered:
        where = f"{path}: item {number}"
        if not isinstance(item, dict) or not (item.get("debate") or item.get("question")):
            raise ValueError(f"{where}: needs \"debate\" (an id) or \"question\", and \"reference\" (A, B or tie)")
        reference = normalize_reference(item.get("reference"), where)
        out.append({**item, "reference": reference, "where": where})
    if not out:
        raise ValueError(f"{path}: no reference items found")
    return out


def read_families(specs: Sequence[str]) -> dict[str, str]:
    """``MODEL=FAMILY`` pairs, for model ids whose leading letters name the wrong family."""
    out = {}
    for spec in specs:
        model, sep, fam = spec.partition("=")
        if not sep or not model.strip() or not fam.strip():
            raise ValueError(f"{spec!r}: write MODEL=FAMILY, e.g. my-finetune=llama")
        out[model.strip()] = fam.strip()
    return out


def _key(question: str) -> str:
    return " ".join(question.split()).casefold()


def compare(debates: Sequence[Mapping[str, Any]], values: Mapping[str, Any]) -> dict[str, Any]:
    """Accuracy, κ and the self-enhancement audit of the finished D3 ``debates`` against the
    reference items (``values["reference"]``, read by :func:`read_references`); ``unmatched``
    lists the items with no finished D3 debate."""
    finished = [d for d in debates if d.get("status") == "finished" and isinstance(d.get("outcome"), Mapping)]
    by_id = {str(d["id"]): d for d in finished}
    by_question: dict[str, list[Mapping[str, Any]]] = {}
    for d in finished:
        by_question.setdefault(_key(str(d.get("subject") or "")), []).append(d)
    families = values.get("family") or {}
    evaluations: list[Evaluation] = []
    unmatched: list[str] = []
    for item in values["reference"]:
        if item.get("debate"):
            prefix = str(item["debate"])
            found = [d for i, d in by_id.items() if i.startswith(prefix)]
            matched = found if len(found) == 1 else []
        else:
            matched = by_question.get(_key(str(item["question"])), [])
        if not matched:
            unmatched.append(str(item["where"]))
        for debate in matched:
            config, outcome = debate.get("config") or {}, debate["outcome"]
            judge = next((p["model_id"] for p in debate.get("participants") or [] if p["role"] == "judge"), "")
            evaluations.append(Evaluation(
                item=str(debate["id"]), verdict=outcome.get("verdict"), reference=str(item["reference"]),
                model_a=str(item.get("model_a") or config.get("model_a") or ""),
                model_b=str(item.get("model_b") or config.get("model_b") or ""),
                evaluators=evaluators_of(outcome, judge)))
    return {"agreement": agreement(evaluations), "self_enhancement": self_enhancement(evaluations, families),
            "evaluations": [e.item for e in evaluations], "unmatched": unmatched}


def _rate(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def present(result: Mapping[str, Any]) -> list[Section]:
    a = result["agreement"]
    section = Section("d3-report", f"D3 against {a['items']} reference verdict(s)", [DefList([
        ("Accuracy", _rate(a["accuracy"])), ("Cohen's κ", _rate(a["kappa"])), ("Without a verdict", num(a["no_verdict"]))])])
    section.blocks.append(Table(["evaluator", "family", "subset", "prefers own", "reference prefers own", "rate"], [
        [name, row["family"], row["subset"], _rate(row["prefers_own_rate"]), _rate(row["reference_prefers_own_rate"]),
         _rate(row["rate"])] for name, row in result["self_enhancement"].items()],
        caption="Self-enhancement (section 4.3): preferring one's own family's answer against the reference", numeric=False))
    for where in result["unmatched"]:
        section.blocks.append(Para(f"no finished D3 debate for {where}", "note"))
    return [section]


STUDY = Study(
    "d3-report",
    "accuracy, Cohen's kappa and self-enhancement of journalled D3 verdicts against reference verdicts (Bandi & "
    "Harrasse, section 4.3)",
    inputs=(
        Input("reference", "Reference verdicts", "file", parse=read_references, metavar="FILE",
              help='JSON lines: {"debate": ID or "question": TEXT, "reference": "A"|"B"|"tie", "model_a": …, "model_b": …}'),
        Input("family", "Model families", "list", optional=True, parse=read_families, metavar="MODEL=FAMILY",
              help="a model's family where its id's leading letters are wrong (repeatable)"),
    ),
    run=compare,
    present=present,
)
