"""Mutation testing of the modules behind RELIABILITY.md's guarantees: do their tests fail when the code breaks?

    make mutation                                      # every module, the whole run
    python benchmarks/mutation.py --modules journal,redact --jobs 2
    python benchmarks/mutation.py --quick 25 --seed 7  # a reproducible sample of 25 mutants per module

A test stands for a promise only if it fails when the code behind the promise breaks. A
mutation tool makes those breaks for us, one at a time — ``<`` for ``<=``, ``and`` for ``or``, an
argument dropped, a number or a string changed, a call's result replaced by ``None`` — and runs
the tests that cover the code. A mutant the tests still pass ("survived") is a change to the
code that no test notices: either a promise no test holds, or a change that cannot alter
behaviour (an *equivalent* mutant, listed in :data:`EQUIVALENT` with the reason).

The tool is mutmut (pinned in the ``dev`` extra). cosmic-ray was tried on
``backends/loopback.py`` with the same four tests: it starts one pytest process per mutant
(about 10 s each on this busy machine, so the ~2,500 mutants here would take hours on two
cores), and its operators do not touch string literals or method calls; mutmut forks each
mutant from one warm pytest process, chooses per function the tests that reach it, handles
``async`` functions, and gave the same module 47 mutants in 21 s against cosmic-ray's 32 in
5 minutes (same machine, same hour).

How a run goes, per module (:data:`TARGETS`):

* the checkout (tracked files, plus untracked ones git does not ignore) is copied to a
  temporary folder, and mutmut runs there: the working tree is never written, so Ctrl-C or a
  kill cannot leave it mutated (the script hashes the source and test files before and after,
  and says so);
* mutmut runs the module's test list once to learn which tests reach which function, then
  runs each mutant in a forked child with only the tests that reach its function, fastest
  first, stopping at the first failure. The test lists name fast scripted tests; tests of the
  bundled models are left out where scripted ones cover the same code;
* Hypothesis tests use a fixed seed (``--seed``) and ``SYMPOSIUM_FUZZ_EXAMPLES`` from the
  target, so a run is reproducible.

Outcomes (mutmut's names): *killed* (a test failed), *survived*, *timeout* (mutmut stops a
mutant after 30 × (its tests' time + 1 s) of CPU time: an endless loop, counted as detected),
*suspicious* (the tests misbehaved), *no tests* (no listed test reaches the function: a gap),
*segfault*; and *equivalent*, a survivor that :data:`EQUIVALENT` explains. Kill % is
(killed + timeout) / (mutants − equivalent).

Limits, said plainly: mutmut 3 mutates code inside functions and methods only, so module-level
constants — the regular expressions of ``tui/sanitize.py``, the parameters' defaults — are
not mutated here (they are held by the example and Hypothesis tests of their modules);
``outputs/redact.py`` builds its patterns inside a function (``_recognizers``, no decorator:
mutmut skips decorated functions) so that they are mutated, and held by its labelled set. mutmut learns which tests reach a function by watching them run in
its own process, so a test that reaches the code only through a subprocess (the command line
run as ``python -m tui.cli``) does not count: such code shows as *no tests* until an
in-process test reaches it. For EVINCE and SocraSynth only the functions that aggregate (P_f,
metrics per round) and decide stopping are mutated: :data:`EVINCE_FUNCTIONS` and
:data:`SOCRASYNTH_FUNCTIONS` name them; of the form and the catalog only the functions that
resume a journalled debate (:data:`FORMS_FUNCTIONS`, :data:`CATALOG_FUNCTIONS`). The resume
targets run each test under a pytest timeout (``Target.test_timeout``): a mutant that leaves a
run waiting forever uses no CPU, and mutmut's wall limit is 15 × the tests' time.

The tables go to stdout and to ``benchmarks/out/mutation.md`` (``--out``), ready for
RELIABILITY.md. Exit status: 0 when every module ran, 1 when one could not run, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import functools
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: The packages mutmut copies (and may mutate); the rest of the checkout is copied beside them.
SOURCE_PATHS = ("backends", "protocols", "store", "tui", "outputs")
DEFAULT_OUT = REPO / "benchmarks" / "out" / "mutation.md"


# -- what is mutated, and by which tests ------------------------------------------------------

#: EVINCE's aggregation (P_f and the metrics of a round) and stopping rule (section 7.3.2).
EVINCE_FUNCTIONS = (
    "Evince._metrics",      # the round's metrics, CRIT, P_f's entropy and information gain
    "Evince._consensus",    # P_f = (Γ_A·P_A + Γ_B·P_B)/(Γ_A + Γ_B)
    "Evince._weight",       # Γ, or the mean of the known scores when one is missing
    "Evince._pair",         # two consecutive scored rounds, or none
    "Evince._converged",    # the stopping rule: ΔWD, ΔMI, ΔJSD under ε and CRIT not rising
    "Evince._signals",      # Figure 7.1's signed changes that steer κ
    "Evince._improvement",  # Tables 7.2/7.3's last row
)

#: SocraSynth's aggregation (Γ per round, the judges' tables) and stopping rule (Table 6.2).
SOCRASYNTH_FUNCTIONS = (
    "SocraSynth._set_delta",   # Δ_role(t) = start / δ^(t − origin)
    "SocraSynth.delta",        # the debate's Δ: the larger of the two
    "SocraSynth._loop_ended",  # Table 6.2's loop condition: Δ above threshold, quality not falling, agreement
    "SocraSynth._capped",      # the round cap, a safety bound behind Table 6.2's test
    "SocraSynth._round",       # the metrics of a round (Δ, Γ/10, agreement) and its quality
    "SocraSynth.evaluation",   # the judges' tables with their tally
    "side_score",              # one side's cell: the strongest √(γθ), the floor, or missing
    "debate_quality",          # what the loop tests: the mean of both sides' cells
    "tally",                   # totals, gaps, each judge's winner and the panel's
    "_winner",
)


#: The resume code of the form: a journalled debate's config, roles and sampling
#: options rebuilt from its rows, and the replay started with them. The rest of the form
#: (fields, validation) is held by the app's and the CLI's tests, which are slow to run here.
FORMS_FUNCTIONS = (
    "ProtocolSpec.resume",            # the journalled config and options, then protocols.core.replay.resume
    "ProtocolSpec.roles_from",        # role -> model of a journalled debate (the inverse of roles_for)
    "ProtocolSpec.recorded_options",  # each role's sampling options as journalled
)

#: Which journalled debates can be resumed, and by which protocol's spec.
CATALOG_FUNCTIONS = ("resumable",)


def module_name(path: str) -> str:
    """What ``--modules`` calls a module: its file's stem, or a package's name for its
    ``__init__.py`` (``protocols/evince/__init__.py`` is ``evince``): every package's
    ``__init__`` would otherwise share one name, and only the last listed could be run."""
    p = Path(path)
    return p.parent.name if p.stem == "__init__" else p.stem


@dataclass(frozen=True)
class Target:
    """One module to mutate: the tests that cover it and, optionally, the functions to mutate."""

    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # "Class.method" or "function"; empty: every function
    fuzz_examples: int = 40  # SYMPOSIUM_FUZZ_EXAMPLES for the Hypothesis tests that read it
    #: pytest-timeout's limit per test (seconds; None: pyproject's 600). A mutant that leaves a
    #: run waiting for something that never comes (a command, a reply) uses no CPU, so only
    #: mutmut's wall limit (15 × the tests' time, ~25 min for the resume tests) or this one ends it.
    test_timeout: int | None = None
    #: Mutants mutmut cannot make (it leaves module-level constants alone): given the module's
    #: source and the seed, ``(name, mutated source)`` pairs, each run against ``tests`` in a
    #: copy of the checkout and reported with mutmut's (:func:`_run_hand_mutants`).
    hand_mutants: Callable[[str, int], list[tuple[str, str]]] | None = None

    @property
    def name(self) -> str:
        return module_name(self.path)

    @property
    def dotted(self) -> str:
        """The module's dotted name as mutmut names its mutants (a package's ``__init__`` left out)."""
        return self.path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def seal_column_left_out(source: str, seed: int) -> list[tuple[str, str]]:
    """store/seal.py with one column left out of one table's hash (added to
    :data:`store.seal.UNSEALED`, which mutmut cannot mutate: a module-level constant), one such
    mutant per sealed table, the column drawn with ``seed`` from the journal's own schema: the
    test that changes every column of every sealed table must notice each.

    The column naming the row's debate (``debate_id``; the debate's own ``id``) is not drawn: leaving it out is an
    equivalent mutant, since a row moved to another debate leaves this debate's chain without
    it ("deleted") and the other's with a row no link covers ("inserted") whatever its hash."""
    import sqlite3

    sys.path.insert(0, str(REPO))
    from store.schema import MIGRATIONS
    from store.seal import KEYS, UNSEALED

    conn = sqlite3.connect(":memory:")
    for migration in MIGRATIONS:
        conn.executescript(migration.sql)
    anchor = "UNSEALED: frozenset[tuple[str, str]] = frozenset("
    assert source.count(anchor) == 1, "store/seal.py's UNSEALED is not where the hand-made mutants expect it"
    rng = random.Random(f"{seed}:seal")
    mutants: list[tuple[str, str]] = []
    for table in KEYS:
        owner = "id" if table == "debates" else "debate_id"
        drawable = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if (table, r[1]) not in UNSEALED and r[1] != owner]
        column = rng.choice(drawable)
        mutants.append((f"seal: {table}.{column} left out of the hash",
                        source.replace(anchor, f"{anchor}{{({table!r}, {column!r})}}) | frozenset(", 1)))
    conn.close()
    return mutants


def _run_hand_mutants(target: Target, files: list[str], seed: int) -> list[Mutant]:
    """Each of ``target``'s hand-made mutants, its tests run in a copy of the checkout (stopping
    at the first failure): ``killed`` when a test failed, ``survived`` when all passed,
    ``suspicious`` when pytest could not run them (exit status other than 0 or 1)."""
    if target.hand_mutants is None:
        return []
    work = Path(tempfile.mkdtemp(prefix=f"symposium-hand-mutants-{target.name}-"))
    try:
        for f in files:
            (work / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, work / f)
        module = work / target.path
        original = module.read_text()
        out: list[Mutant] = []
        for name, mutated in target.hand_mutants(original, seed):
            module.write_text(mutated)
            run = subprocess.run([sys.executable, "-m", "pytest", *target.tests, "-x", "-q", "-n", "0", "-p", "no:cacheprovider"],
                                 cwd=work, env={**_child_env(target, seed, work), "PYTHONPATH": str(work)}, capture_output=True, text=True)
            status = {0: "survived", 1: "killed"}.get(run.returncode, "suspicious")
            diff = "".join(difflib.unified_diff(original.splitlines(keepends=True), mutated.splitlines(keepends=True), n=0))
            out.append(Mutant(f"hand.{name}", status, "UNSEALED", None, "\n".join(diff.splitlines()[2:])))
            print(f"  hand-made mutant {name}: {status}", flush=True)
        module.write_text(original)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


#: Every protocol resumes by replaying its journal. The unit tests of the replay's
#: rules and of the catalog's resume take about a second and kill most mutants; the contract
#: test runs each protocol cut at every journal write and resumed (~30 s of CPU, the slowest
#: here: mutmut runs each mutant's tests fastest first, so it runs only for the few that the
#: others miss).
_RESUME = (
    "tests/protocols/test_replay.py",
    "tests/store/test_resume_catalog.py",
    "tests/store/test_resume_half_round.py",
    "tests/protocols/test_evince_convergence.py::test_a_debate_cut_after_its_last_round_resumes_to_the_same_ending",
    "tests/store/test_resume_prompts.py",
    "tests/protocols/test_resume_every_protocol.py",
)
#: The slowest resume test takes ~45 s on the busy 2-CPU machine; a mutant that makes a resumed
#: run wait forever (a live command awaited during the replay) fails here instead of in 25 min.
_RESUME_TIMEOUT = 150
#: The report's escaping and its page: each helper's and each block's exact output
#: (milliseconds), whole debates' pages (~3 s, no browser) and the two browser tests of the
#: security promise (~5 s: a hostile turn shown as text with nothing fetched; the policy blocking
#: markup written raw). The browser's layout tests (screenshots, ~40 s together) are left out: a
#: survivor runs every listed test, and they hold how the page looks, not what it lets through.
_BROWSER = "tests/guarantees/test_report_browser.py::"
_REPORT = (
    "tests/store/test_report_safe.py",
    "tests/store/test_report_render.py",
    "tests/store/test_report.py",
    _BROWSER + "test_a_hostile_turn_renders_as_text_and_nothing_leaves_the_page",
    _BROWSER + "test_the_recorder_and_the_policy_are_real",
)
#: The seal, played as an attacker (the journal, exports, redacted copies, the signature) and
#: the provenance it seals: ~25 s together, no model loaded.
_SEAL = (
    "tests/store/test_seal.py",
    "tests/store/test_seal_export.py",
    "tests/store/test_seal_signing.py",
    "tests/store/test_seal_redacted.py",
    "tests/store/test_seal_verify_cli.py",
    "tests/store/test_seal_hostile.py",
    "tests/store/test_seal_writer.py",  # a writer never seals an edit made around it
    "tests/store/test_undecodable_text.py",  # the seal hashes the bytes as stored, not the text shown
    "tests/store/test_provenance.py",
    "tests/store/test_call_costs.py",
)
_OPENAI = "tests/backends/test_openai_backend.py::"
_UNTRUSTED = "tests/guarantees/test_untrusted_output.py::"
_ANALYZER = "tests/protocols/test_analyzer.py::"
#: Every number docs/protocols.md states, computed by the code (~2 s, no model).
_DOC_NUMBERS = "tests/protocols/test_protocols_doc.py::test_each_number_the_doc_states_is_the_codes"
TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("store/journal.py", (
        "tests/store/test_journal.py",
        "tests/store/test_journal_records.py",
        "tests/store/test_failed_calls.py",
        "tests/store/test_journal_contention.py",
        "tests/store/test_resume_half_round.py",
        "tests/cli/test_bad_input.py::test_a_full_disk_fails_the_turn_cleanly_and_keeps_the_rest",
        "tests/cli/test_bad_input.py::test_a_read_only_journal_is_reported",
        "tests/store/test_resume_prompts.py",
        "tests/store/test_seal.py",  # each write seals its rows in its own transaction
        "tests/store/test_seal_writer.py",  # and first checks that what it builds on was not edited
        "tests/store/test_journal_later_writes.py",
        "tests/guarantees/test_deleted_words.py",  # a delete a reader keeps from wiping says so; the next open wipes
        "tests/guarantees/test_planted_files.py",  # a journal restored 0644 narrowed, another account's warned of
        "tests/store/test_undecodable_text.py",  # text that is not UTF-8 read as U+FFFD, never written back
    )),
    Target("outputs/redact.py", ("tests/store/test_redact.py", "tests/store/test_redact_exact.py",
                               "tests/store/test_redact_recall.py", "tests/store/test_redact_findings.py",
                               "tests/store/test_redact_heldout.py", "tests/store/test_redact_context.py",
                               "tests/store/test_redact_ages_plates.py", "tests/store/test_redact_edges.py",
                               "tests/store/test_redact_towns.py")),
    # The trained and data-driven finders (spaCy's people and places, the towns' gazetteer and its
    # tag checks, libphonenumber's phones).
    Target("outputs/redact_models.py", ("tests/store/test_redact_towns.py", "tests/store/test_redact.py",
                                      "tests/store/test_redact_findings.py", "tests/store/test_redact_heldout.py",
                                      "tests/store/test_redact_recall.py", "tests/store/test_redact_edges.py",
                                      "tests/store/test_redact_models_edges.py")),
    Target("outputs/markdown_text.py", ("tests/guarantees/test_markdown_literal.py",
                                      "tests/guarantees/test_terminal_output.py")),
    Target("backends/served.py", ("tests/guarantees/test_loopback_ports.py",)),
    Target("backends/private.py", ("tests/guarantees/test_planted_files.py",
                                   "tests/guarantees/test_private_files.py::test_a_case_an_older_version_saved_is_dropped_and_its_file_narrowed")),
    Target("tui/sanitize.py", (
        "tests/guarantees/test_terminal_safe.py",
        "tests/guarantees/test_terminal_output.py",
        "tests/app/test_tui_stream.py::test_stream_sanitizer_equals_sanitizing_the_whole",
        _UNTRUSTED + "test_terminal_safe_strips_every_escape_and_control",
        _UNTRUSTED + "test_printed_events_cannot_drive_the_terminal",
    )),
    Target("backends/loopback.py", (
        _OPENAI + "test_loopback_hosts",
        _OPENAI + "test_other_hosts_are_not_loopback",
        _OPENAI + "test_registry_refuses_a_remote_server_unless_allowed",
        _OPENAI + "test_the_backend_rechecks_the_rule_and_warns_when_remote",
        "tests/backends/test_loopback.py",
        "tests/guarantees/test_loopback_ports.py",  # another account's listener refused before anything is sent
    )),
    Target("protocols/core/untrusted.py", (
        "tests/protocols/test_untrusted.py",
        "tests/protocols/test_distribution.py",
        "tests/guarantees/test_fuzz_schemas.py",
        _UNTRUSTED + "test_every_parser_parses_repairs_or_rejects_with_a_reason",
        "tests/protocols/test_agreement.py::test_the_exact_rule",
        "tests/protocols/test_agreement.py::test_any_reply_gives_a_label_and_a_reason_when_it_is_not_one",
        "tests/protocols/test_deliberation.py::test_the_moderators_choice",
        "tests/protocols/test_deliberation.py::test_any_reply_resolves_to_an_eligible_speaker_with_a_reason",
    ), fuzz_examples=30),
    Target("protocols/measures/metrics.py", (
        "tests/protocols/test_metrics.py",
        "tests/protocols/test_metrics_bounds.py",
        "tests/protocols/test_wasserstein.py::test_wasserstein_matches_network_simplex_on_any_cost",
        "tests/protocols/test_wasserstein.py::test_ordinal_cost_matches_scipy_one_dimensional_distance",
        "tests/protocols/test_wasserstein.py::test_the_pair_that_was_infeasible_now_solves",
        "tests/protocols/test_contentiousness.py::test_round_signals_from_snapshots_use_figure_7_1_signs",
    )),
    Target("protocols/measures/labels.py", (
        "tests/protocols/test_labels.py",
        "tests/protocols/test_distribution.py",
        "tests/protocols/test_metrics.py",
        "tests/bench/test_evaluation.py",  # scoring reads labels in their canonical spelling
        "tests/bench/test_bench_reporting.py",  # the open rules' merges counted, broader names credited apart
        _DOC_NUMBERS,
    )),
    Target("protocols/measures/crit.py", (
        "tests/protocols/test_crit.py",
        "tests/protocols/test_crit_steps.py",
        "tests/protocols/test_fitting.py::test_socrasynths_judges_read_the_subject_and_every_round_whole",
        "tests/protocols/test_fitting.py::test_socrasynths_judges_are_fitted_to_a_small_window_with_notes",
        "tests/protocols/test_socrasynth_paper.py",
        "tests/protocols/test_evince_paper.py",
        "tests/guarantees/test_fuzz_schemas.py::test_valid_and_mangled_replies_are_read_as_written_or_rejected_with_a_reason[crit]",
        "tests/guarantees/test_fuzz_schemas.py::test_valid_and_mangled_replies_are_read_as_written_or_rejected_with_a_reason[crit-strict]",
        _DOC_NUMBERS,  # docs/protocols.md's worked examples of Γ
    )),
    Target("protocols/evince/__init__.py", (
        "tests/protocols/test_evince_paper.py",
        "tests/protocols/test_evince_convergence.py",
        "tests/guarantees/test_injection.py",
        "tests/protocols/test_evince.py::test_malformed_agent_output_is_repaired_or_rejected_with_a_reason",
        "tests/store/test_resume_half_round.py",
    ), functions=EVINCE_FUNCTIONS),
    Target("protocols/socrasynth/__init__.py", (
        "tests/protocols/test_socrasynth_paper.py",
        "tests/protocols/test_socrasynth.py::test_tally_reproduces_the_totals_and_winner_of_tables_6_5_and_6_6",
        "tests/protocols/test_socrasynth.py::test_a_missing_score_leaves_its_row_out_of_both_totals_and_is_counted",
        "tests/protocols/test_fitting.py::test_socrasynths_agreement_judge_keeps_the_round_just_finished_whole",
        _DOC_NUMBERS,  # the doc's worked examples of the debate's quality and its stop
    ), functions=SOCRASYNTH_FUNCTIONS),
    Target("protocols/measures/analyzer.py", (  # the scripted tests: the bundled model's test adds minutes and no kills
        *(_ANALYZER + name for name in (
            "test_list_parts_are_read_from_json_cut_off_json_or_bullets",
            "test_the_argument_map_gets_ids_and_only_valid_links",
            "test_a_claim_left_out_does_not_move_the_links_of_the_others",
            "test_a_salvaged_list_keeps_values_not_field_names",
            "test_claims_read_as_loose_pieces_get_no_links",
            "test_any_reply_is_read_without_raising",
            "test_the_analyzer_reads_every_turn_and_the_topic_whole",
            "test_a_transcript_the_window_cannot_hold_is_fitted_with_a_note_every_turn_keeping_its_ends",
            "test_the_exact_notes_of_replies_with_nothing_to_read",
            "test_a_bad_link_does_not_stop_the_rest_and_salvaged_items_are_clipped",
            "test_loose_pieces_never_link_to_one_another",
            "test_one_analysis_from_scripted_replies_as_journalled_rebuilt_and_shown",
            "test_a_topic_too_long_for_the_window_gives_way_last_and_is_named_in_the_note",
            "test_a_part_cut_off_at_its_token_limit_says_so",
        )),
        *(f"tests/guarantees/test_fuzz_schemas.py::test_valid_and_mangled_replies_are_read_as_written_or_rejected_with_a_reason[{t}]"
          for t in ("analyzer-points", "analyzer-map")),
        *(f"{_UNTRUSTED}test_every_parser_parses_repairs_or_rejects_with_a_reason[{t}]" for t in ("analyzer-points", "analyzer-map")),
        "tests/protocols/test_deliberation.py::test_the_analyzer_runs_every_k_turns_and_at_the_end_and_bad_choices_fall_back",
        "tests/protocols/test_deliberation.py::test_the_headless_panel_is_printed_after_each_analysis_as_plain_safe_text",
    ), fuzz_examples=30),
    Target("protocols/core/replay.py", _RESUME, test_timeout=_RESUME_TIMEOUT),
    Target("protocols/core/replies.py", _RESUME, test_timeout=_RESUME_TIMEOUT),
    Target("tui/forms.py", _RESUME, functions=FORMS_FUNCTIONS, test_timeout=_RESUME_TIMEOUT),
    Target("tui/protocol_catalog.py", _RESUME, functions=CATALOG_FUNCTIONS, test_timeout=_RESUME_TIMEOUT),
    Target("store/seal.py", _SEAL, hand_mutants=seal_column_left_out),
    Target("store/export_check.py", _SEAL),
    Target("store/signing.py", _SEAL),
    Target("tui/cli/verify.py", _SEAL),
    # The memory guard (refuse a debate whose models would not fit): its arithmetic and its message.
    Target("backends/kv_memory.py", ("tests/backends/test_memory_guard.py",),
           functions=("MemoryNeed.__post_init__", "_count", "buffer_bytes", "memory_need", "_vocabulary_size",
                      "check_memory")),
    Target("outputs/report/safe.py", _REPORT),
    Target("outputs/report/render.py", _REPORT),
    Target("protocols/core/passages.py", ("tests/protocols/test_passages.py",)),
    Target("protocols/core/costs.py", ("tests/protocols/test_costs.py", "tests/bench/test_bench_costs.py")),
    Target("protocols/measures/citations.py", ("tests/protocols/test_citations.py",)),
)}


@dataclass(frozen=True)
class Equivalent:
    """A surviving mutant that cannot change behaviour, matched by its function and its lines
    (whitespace-trimmed), so the entry outlives line shifts and mutmut's renumbering."""

    path: str
    function: str
    before: str  # the source line(s), "\n"-joined
    after: str   # the mutated line(s)
    reason: str


_LP = "c.ravel(), A_eq=np.vstack([rows, cols[keep]]), b_eq=np.concatenate([a, b[keep]]),"
_HIGHS = 'method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},'
_DEFAULT_BOUNDS = "scipy's linprog bounds every variable to (0, None) when not told otherwise"
_FALSY = "None is false as False is, and the value is only ever tested for its truth"
_NOW = "the commands due now are only tested for their truth before they are popped, and None is false as [] is"
_DIGEST = 'digest = base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")'
_CONSOLE = "console = Console(highlight=False, soft_wrap=True)  # a hash broken by a wrap cannot be copied"
_NOT_VERIFIABLE = """line(("NOT VERIFIABLE ", "bold yellow"), f"{v.debate_id}: {'; '.join(v.unverifiable)}")"""
_READ_EXPORT = 'document = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)'
_METRICS = 'for _, m in sorted(by_table["metrics"], key=lambda kr: (kr[1]["round"], kr[1]["name"])):'
_BUSY = "the next statement, PRAGMA busy_timeout = 10000, sets the same SQLite busy timeout, and nothing runs before it"
#: Text spliced into the seal's SQL (a column name, NULL, a WHERE clause), not passed to execute itself.
_SQL_PART = "a column name, the NULL keyword or a WHERE clause put into SQL: SQLite reads them in any case"
_SIGNED = 'signed = "seal_signed_from" if signer is not None else "NULL"  # (no such column while migrating to v6)'
_WHERE = 'where = " WHERE id = ? AND seal_head = ? AND seal_links = ?" if guarded else " WHERE id = ?"'
_ROWS_JSON = 'return json.dumps([list(r) for r in rows], ensure_ascii=False, separators=(",", ":"))'
_TEXT_KEYED = ("the tables keyed by text are keyed by the debate's own id (debates.id, provenance.debate_id, evidence.debate_id), "
               "so a debate has one row of each and no other row of that table to have moved from; for every other table "
               "typed_key of any other name is int(k), as typed_key(table, k) is")
_SAME_COLUMNS = ("verify reads columns(conn) itself when given none, from the same connection verify_all read them from: "
                 "the same columns; passing them only saves reading them again per debate")

#: Survivors that cannot change behaviour, each with the reason. A survivor not listed here (or
#: caught by :data:`SQL_CASE`) is a gap: kill it with a test of the promise, not a test written
#: to touch a line.
#: A letter's case changed in a regular expression compiled with ``re.IGNORECASE`` (none of
#: ``outputs/redact.py``'s scoped ``(?-i:…)`` parts: those lines are left to the tests).
IGNORECASE = "a pattern compiled with re.IGNORECASE reads letters in either case"
_ID_NOUN = '''id_noun = r"(?:\\s*#|(?:\\s+|(?<=\\.))(?:number|num|nos?|nr|ID|identifier|ref|reference)\\b\\.?)"'''
_ID_TOKEN = '''id_token = r"(?=[A-Za-z0-9/.:-]{0,40}\\d)[A-Za-z0-9#](?:[A-Za-z0-9/:-]|\\.(?=\\w)|,(?=\\d{3}\\b)){0,40}"'''
_REGION_SORT = 'return tuple(sorted((x.strip() for x in _REGIONS.split(",") if x.strip()), key=len, reverse=True))'

EQUIVALENT: tuple[Equivalent, ...] = (
    *(Equivalent("store/signing.py", "_blob", line, line.replace('">I"', '">i"', 1) if first else
                 line[::-1].replace('"I>"', '"i>"', 1)[::-1],
                 "both lengths are small positive numbers (11 and 32), packed alike as signed or unsigned 32-bit")
      for line in ('return struct.pack(">I", len(_ALGORITHM)) + _ALGORITHM + struct.pack(">I", len(raw)) + raw',)
      for first in (True, False)),
    Equivalent("store/signing.py", "fingerprint", 'return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")',
               'return "SHA256:" + base64.b64encode(digest).decode().rstrip("XX=XX")',
               "a 32-byte digest's base64 ends in one '=' after a character that carries 4 bits and 2 zero bits "
               "(one of AEIMQUYcgkosw048): never an X to strip"),
    Equivalent("backends/served.py", "new_key", "return secrets.token_urlsafe(32)", "return secrets.token_urlsafe(None)",
               "None asks for secrets' default, DEFAULT_ENTROPY, which is 32 bytes: 32 says it where it matters"),
    *(Equivalent("backends/private.py", function, "private_dir(path.parent, ours=False)",
                 "private_dir(path.parent, ours=None)", "ours is only tested for truth: None is False")
      for function in ("create_private", "write_private")),
    Equivalent("backends/kv_memory.py", "check_memory",
               'if not needs or os.environ.get(MEMORY_CHECK_ENV, "").lower() == "off":',
               'if not needs or os.environ.get(MEMORY_CHECK_ENV, "XXXX").lower() == "off":',
               "the default stands for an unset variable: any value but \"off\" reads the same"),
    Equivalent("outputs/redact.py", "_recognizers",
               """_Recognizer("name", re.compile(r"\\b(?i:handle|username|user name|screen name|user ID|login)\\s*:?\\s*(@?[\\w.]{0,63}\\w)"), group=1),""",
               """_Recognizer("name", re.compile(r"\\b(?i:handle|username|user name|screen name|user id|login)\\s*:?\\s*(@?[\\w.]{0,63}\\w)"), group=1),""",
               "the words are inside (?i:…): either case reads the same"),
    Equivalent("outputs/report/safe.py", "text", "shown = neutral(value if isinstance(value, str) else str(value))",
               "shown = neutral(value if (isinstance(value, str)) and False else str(value))",
               "str() of a str is the same text (a Markup, the one str subclass here, returned before this line)"),
    *(Equivalent("outputs/report/safe.py", function, line, line.replace(", quote=True)", ", )"),
                 "html.escape quotes (\" and ') by default: quote=True restates it")
      for function, line in (("text", "marked = html.escape(shown, quote=True)"),
                             ("attribute", "return html.escape(neutral(str(value)), quote=True)"))),
    Equivalent("outputs/report/safe.py", "tag",
               """rendered = "".join(f' {k.rstrip("_").replace("_", "-")}="{attribute(v)}"' for k, v in attrs.items() if v is not None)""",
               """rendered = "".join(f' {k.rstrip("XX_XX").replace("_", "-")}="{attribute(v)}"' for k, v in attrs.items() if v is not None)""",
               "rstrip takes a set of characters, so it strips an X as well as an underscore, and no attribute name "
               "the report writes ends in a capital X (class_, id, href; the SVG writes its own)"),
    *(Equivalent("outputs/report/render.py", "policy", _DIGEST, _DIGEST.replace(f'"{codec}"', f'"{codec.upper()}"'),
                 "Python reads codec names in any case") for codec in ("utf-8", "ascii")),
    Equivalent("outputs/redact.py", "_recognizers",
               r'''r"|days?|weeks?|months?|min|minutes|hours?)\b))")''',
               r'''r"|DAYS?|WEEKS?|MONTHS?|MIN|MINUTES|HOURS?)\b))")''',
               "the units are inside the (?i:…) group the line before opens: either case reads the same"),
    Equivalent("outputs/redact.py", "_recognizers",
               '''units = r"(?:one|two|three|four|five|six|seven|eight|nine)"''',
               '''units = r"(?:ONE|TWO|THREE|FOUR|FIVE|SIX|SEVEN|EIGHT|NINE)"''',
               "the number words are read only inside (?i:…) (age_number) and in the age pattern compiled with "
               "re.IGNORECASE: either case reads the same"),
    Equivalent("outputs/redact.py", "_recognizers", r'r"\b(?i:car|vehicle|van|truck|lorry|motorcycle|motorbike|ute|SUV|sedan|hatchback|taxi|trailer|scooter|moped)\b"',
               r'r"\b(?i:car|vehicle|van|truck|lorry|motorcycle|motorbike|ute|suv|sedan|hatchback|taxi|trailer|scooter|moped)\b"', "the vehicles are inside (?i:…): either case reads the same"),
    Equivalent("outputs/redact.py", "_honorific",
               r'''r"|herr|frau|mme|sra?|dña|don|dc|ds|pc|det|sgt|counsel|m|d|co)\.?", part) is not None''',
               r'''r"|HERR|FRAU|MME|SRA?|DÑA|DON|DC|DS|PC|DET|SGT|COUNSEL|M|D|CO)\.?", part) is not None''',
               "the titles are inside the (?i:…) group the line before opens: either case reads the same"),
    Equivalent("outputs/redact.py", "_free_parts", 'while b > a and text[b - 1] in " ,;:":',
               'while b >= a and text[b - 1] in " ,;:":',
               "at b == a the part is empty and masks nothing whatever b becomes (the next test reads text[a:b])"),
    Equivalent("outputs/redact.py", "_card", "return 13 <= len(digits) <= 19 and _luhn(digits)",
               "return 13 <= len(digits) <= 20 and _luhn(digits)",
               "the card pattern holds at most 4 + 4 + 4 + 7 = 19 digits"),
    Equivalent("outputs/redact.py", "_recognizers", "group=1, weak=True),", "weak=True),",
               "the weak name pattern's group 1 is the whole match (it begins with a look-behind)"),
    Equivalent("outputs/redact.py", "_recognizers", 'rf"|confirmed|signed|asked|left|remains|will)\\b)", re.MULTILINE), group=1),',
               'rf"|confirmed|signed|asked|left|remains|will)\\b)", re.MULTILINE), ),',
               "group 1 of the name opening a sentence is the whole match (the pattern opens with ^ or a look-behind "
               "and a look-ahead, and ends with a look-ahead)"),
    *(Equivalent("outputs/redact.py", "_recognizers", _ID_NOUN, _ID_NOUN.replace(word, word.upper() if upper else "id"),
                 "id_noun is read only inside any_id_label, in a pattern compiled with re.IGNORECASE (outside its (?-i:…) parts)")
      for word, upper in (("ID", False), ("number|num|nos?|nr|ID|identifier|ref|reference", True))),
    *(Equivalent("outputs/redact.py", "_recognizers", _ID_TOKEN, _ID_TOKEN.replace("A-Za-z", letters),
                 "id_token is read only in id_value, outside its (?-i:…) parts, and id_value only in the two number "
                 "patterns compiled with re.IGNORECASE")
      for letters in ("a-za-z", "A-ZA-Z")),
    *(Equivalent("outputs/redact.py", "_region_names", _REGION_SORT, _REGION_SORT.replace("key=len, reverse=True", order),
                 "the regions are one alternation before \\b(?!\\s*\\d) in the pattern whose group is the town before them: "
                 "a regular expression tries every alternative before it gives up, so their order decides which one "
                 "matches, never whether, nor the town")
      for order in ("key=None, reverse=True", "reverse=True", "key=len, ", "key=len, reverse=False")),
    *(Equivalent("outputs/redact.py", "_eponym", line, line.upper().replace(")\\B", ")\\b").replace('R"', 'r"'),
                 "the terms are inside the (?i:…) group the first line opens: either case reads the same")
      for line in (r'''r"|sarcoma|orbitopathy|crisis|law|theorem|index|classification|stage|ulcer|phenomenon|encephalopathy|thyroiditis"''',
                   r'''r"|virus|fever|flu|definition|triage|category|questionnaire|assessment|guidelines?|protocol|convention|treaty|accord)\b")''')),
    Equivalent("outputs/redact.py", "_candidates", "asked = False", "asked = None",
               "asked is only read as `not asked`, and None is false as False is"),
    *(Equivalent("outputs/redact.py", "_candidates", "asked = True", f"asked = {after}",
                 "one recognizer is weak, so the models are asked once either way; asked again they would give the "
                 "same spans, each then taken or cleared as before, and mask nothing more")
      for after in ("None", "False")),
    Equivalent("outputs/redact.py", "_luhn", "total += d", "total -= d",
               "the check is total % 10 == 0, and -t % 10 == 0 exactly when t % 10 == 0"),
    Equivalent("outputs/redact_models.py", "phones",
               "for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):",
               "for match in phonenumbers.PhoneNumberMatcher(text, region, ):",
               "PhoneNumberMatcher's leniency defaults to Leniency.VALID (phonenumbers 9.0): the argument restates it"),
    Equivalent("outputs/redact_models.py", "towns", "while i < len(doc):", "while i <= len(doc):",
               "at i == len(doc) the window range(min(len(doc), …), i, -1) is empty: no span is read, nothing is "
               "found, i steps past the end and the loop ends"),
    Equivalent("outputs/redact_models.py", "towns",
               "for j in range(min(len(doc), i + TOWN_WORDS * 3), i, -1):",
               "for j in range(min(len(doc), i + TOWN_WORDS * 4), i, -1):",
               "a wider window only tries longer spans, and no name the gazetteer holds is longer than 11 of spaCy's "
               "tokens (test_redact_models_edges checks the longest fits TOWN_WORDS * 3 = 12): the longest match "
               "found is the same"),
    Equivalent("store/journal.py", "Journal.__init__",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, )", _BUSY),
    Equivalent("store/journal.py", "Journal.__init__",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS * 1000)", _BUSY),
    Equivalent("store/journal.py", "Journal.__init__",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)",
               "self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1001)", _BUSY),
    Equivalent("store/journal.py", "Journal._prepare_file",
               "private_dir(self.path.parent, ours=False)  # missing folders 0700, parents included",
               "private_dir(self.path.parent, ours=None)  # missing folders 0700, parents included", _FALSY),
    Equivalent("store/journal.py", "_dumps",
               "return json.dumps(value, ensure_ascii=False, default=str)  # keep order: distributions are ranked",
               "return json.dumps(value, ensure_ascii=None, default=str)  # keep order: distributions are ranked",
               _FALSY + " (json.dumps)"),
    Equivalent("store/journal.py", "Journal._migrate", '"BEGIN IMMEDIATE;\\n"', '"begin immediate;\\n"',
               "SQL keywords are read in any case by SQLite (this script is passed to executescript)"),
    Equivalent("store/journal.py", "Journal._migrate", '"COMMIT;"', '"commit;"',
               "SQL keywords are read in any case by SQLite (this script is passed to executescript)"),
    Equivalent("tui/sanitize.py", "_complete",
               'return len(text) - esc > 1 and text[esc + 1] not in "[]"  # a lone ESC + other: a control to drop',
               'return len(text) - esc > 1 and text[esc + 1] not in "XX[]XX"  # a lone ESC + other: a control to drop',
               "this line runs only where _ESCAPES found no sequence at the ESC, and ESC + 'X' always is one "
               "('X' is in @-Z), so the added 'X' never decides"),
    Equivalent("protocols/core/untrusted.py", "_loads", "return True, json.loads(text, strict=False)",
               "return True, json.loads(text, strict=None)", _FALSY),
    Equivalent("protocols/core/untrusted.py", "_closing_brackets", "in_string = escaped = False",
               "in_string = escaped = None", _FALSY),
    Equivalent("protocols/core/untrusted.py", "_closing_brackets", "escaped = False", "escaped = None", _FALSY),
    Equivalent("protocols/core/untrusted.py", "_closing_brackets", "in_string = False", "in_string = None", _FALSY),
    *(Equivalent("protocols/core/untrusted.py", "_balanced_spans", "for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):",
                 f"for start, end in sorted(spans, {key}):",
                 "every span starts at its own opening bracket, so no two share a start and only the first key decides")
      for key in ("key=None", "", "key=lambda s: (s[0], +s[1])")),
    Equivalent("protocols/core/untrusted.py", "_repair_json", "pos = 0", "pos = None",
               "the first slice, text[pos:m.start()], starts at the beginning from None as from 0"),
    Equivalent("protocols/core/untrusted.py", "parse_as", 'text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else ""',
               'text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else "XXXX"',
               "text without a bracket, empty or not, gives the same rejection: no JSON object found"),
    Equivalent("protocols/measures/crit.py", "crit",
               "sub_calls = await _recurse(judge, reasons, shown, author, subject_used, max_tokens, depth, notes, rival=False)",
               "sub_calls = await _recurse(judge, reasons, shown, author, subject_used, max_tokens, depth, notes, rival=None)",
               _FALSY),
    Equivalent("protocols/measures/crit.py", "crit", "max_tokens: int = 320,", "max_tokens: int = 321,",
               "every caller passes max_tokens (EVINCE and SocraSynth their crit_tokens, the recursion its own)"),
    *(Equivalent("protocols/measures/crit.py", "crit", 'raw = ""', f"raw = {value}",
                 "the first attempt sets raw before anything reads it") for value in ("None", '"XXXX"')),
    Equivalent("protocols/measures/crit.py", "_parts", "return [Section(name, material.strip())] if material.strip() else []",
               "return [Section(name, material.strip())] if (material.strip()) or True else []",
               "an empty part shows nothing: the prompt prints an empty document as it prints none, and skips an "
               "empty counter as it skips a missing one"),
    Equivalent("protocols/measures/crit.py", "_fitted",
               "return _prompt(joined(texts, doc), author, joined(texts, against) if against else None,",
               "return _prompt(joined(texts, doc), author, joined(texts, against) if (against) or True else None,",
               "with no counter, joined() gives '' and _prompt skips an empty counter as it skips None"),
    Equivalent("protocols/measures/crit.py", "_fitted",
               'cited = [Section("the cited evidence", sources.strip(), 0, cut="end")] if sources and sources.strip() else []',
               'cited = [Section("the cited evidence", sources.strip(), cut="end")] if sources and sources.strip() else []',
               "0 is Section's default priority: the argument restates it (the evidence gives way first either way)"),
    Equivalent("protocols/measures/labels.py", "_enclosed", "depth += (ch == s[0]) - (ch == s[-1])",
               "depth -= (ch == s[0]) - (ch == s[-1])",
               "only the count's zero is read, and the negated count is zero at the same characters"),
    Equivalent("protocols/measures/labels.py", "_parenthetical", 'depth += (label[i] == ")") - (label[i] == "(")',
               'depth -= (label[i] == ")") - (label[i] == "(")',
               "depth counts the brackets from the end and is only compared with 0: its sign is arbitrary, the "
               "opening bracket that closes the label is where it returns to 0 either way"),
    Equivalent("protocols/measures/labels.py", "_parenthetical", "for i in range(len(label) - 1, 0, -1):",
               "for i in range(len(label) - 1, -1, -1):",
               "index 0 would close a label wholly in brackets, and clean_display takes such a pair off first"),
    Equivalent("protocols/measures/labels.py", "LabelSet.__init__", "self.learning = False", "self.learning = None", _FALSY),
    Equivalent("protocols/measures/labels.py", "LabelSet._fuzzy",
               "if matcher.real_quick_ratio() < self.fuzzy_cutoff or matcher.quick_ratio() < self.fuzzy_cutoff:",
               "if matcher.real_quick_ratio() < self.fuzzy_cutoff and matcher.quick_ratio() < self.fuzzy_cutoff:",
               "a shortcut only: ratio() <= quick_ratio() <= real_quick_ratio(), and the ratio is tested against the "
               "cutoff right after, so a candidate the shortcut lets through is still refused"),
    Equivalent("protocols/measures/labels.py", "LabelSet._fuzzy", "matcher = difflib.SequenceMatcher(b=key, autojunk=False)",
               "matcher = difflib.SequenceMatcher(b=key, autojunk=None)", _FALSY + " (difflib)"),
    *(Equivalent("protocols/measures/labels.py", function, f'{line}"utf-8")', f'{line}"UTF-8")',
                 "codec names are read in any case: UTF-8 and utf-8 are one codec")
      for function, line in (("read_synonyms", "text = path.read_text(encoding="),
                             ("read_related", "text = path.read_text(encoding="),
                             ("read_label_set", "text = path.read_text(encoding="))),
    *(Equivalent("protocols/measures/metrics.py", function, f"{lhs} = entropy((a + b) / 2){rest}", f"{lhs} = entropy((a + b) {op}){rest}",
                 "entropy() renormalizes what it is given, so (P + Q)·2 or (P + Q)/3 is M again (to the last bit of rounding)")
      for function, lhs, rest in (("jensen_shannon", "jsd", " - (entropy(a) + entropy(b)) / 2"), ("agreement_information", "h", ""))
      for op in ("* 2", "/ 3")),
    Equivalent("protocols/measures/metrics.py", "normalized_mutual_information", "return float(min(1.0, mutual_information(a, b) / h))",
               "return float(min(2.0, mutual_information(a, b) / h))",
               "mutual_information is already clamped to min(H(P), H(Q)) ≤ h, and a float divided by one no smaller is ≤ 1"),
    Equivalent("protocols/measures/metrics.py", "mixture", "return mixed / mixed.sum()", "return mixed * mixed.sum()",
               "a convex mix of normalized rows sums to 1 but for rounding, so dividing or multiplying by that sum "
               "moves the last bit only (a rounding-only change, below every tolerance a figure is shown at)"),
    Equivalent("protocols/measures/metrics.py", "wasserstein", _LP + " bounds=(0, None),", _LP + " bounds=None,", _DEFAULT_BOUNDS),
    Equivalent("protocols/measures/metrics.py", "wasserstein", _LP + " bounds=(0, None),\n" + _HIGHS, _LP + " " + _HIGHS,
               _DEFAULT_BOUNDS),
    Equivalent("protocols/measures/metrics.py", "wasserstein",
               'method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},',
               'options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},',
               "HiGHS is linprog's default method (scipy 1.17)"),
    Equivalent("protocols/measures/metrics.py", "wasserstein",
               'method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},',
               'method="HIGHS", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},',
               "linprog lower-cases the method's name"),
    Equivalent("protocols/measures/metrics.py", "wasserstein", "keep = np.arange(n) != int(np.argmax(b))",
               "keep = np.arange(n) != int(np.argmax(None))",
               "any one of the 2n marginal constraints is implied by the others; dropping the first instead of the "
               "largest moves the implied value by rounding only (~1e-16), far inside HiGHS's 1e-10 tolerance "
               "(5,000 near-degenerate pairs solve either way, tests/protocols/test_wasserstein.py)"),
    Equivalent("protocols/evince/__init__.py", "Evince._metrics", "earlier = [r for r in self.by_round if r < round_]",
               "earlier = [r for r in self.by_round if r <= round_]",
               "_metrics runs once per round, for a round with no metrics yet (resume restarts after the last round "
               "with metrics, or inside one without), so by_round never holds round_ here"),
    Equivalent("protocols/evince/__init__.py", "Evince._weight", "return sum(known) / len(known) if known else 1.0",
               "return sum(known) * len(known) if known else 1.0",
               "this line runs for an agent whose own score is missing, so known holds the other agent's score at "
               "most: len(known) is 1 there, and ·1 = /1"),
    Equivalent("protocols/socrasynth/__init__.py", "SocraSynth._set_delta",
               'fresh = {role: make_schedule("socrasynth", kappa0=k, delta=self.config.delta) for role, k in start.items()}',
               'fresh = {role: make_schedule("SOCRASYNTH", kappa0=k, delta=self.config.delta) for role, k in start.items()}',
               "make_schedule looks the name up lower-cased"),
    Equivalent("protocols/socrasynth/__init__.py", "SocraSynth._set_delta",
               "self.schedules = [(o, s) for o, s in self.schedules if o < origin] + [(origin, fresh)]",
               "self.schedules = [(o, s) for o, s in self.schedules if o <= origin] + [(origin, fresh)]",
               "a schedule with the new one's origin is kept before it, but delta() reads the last schedule begun by "
               "the round, the new one, so the kept one is never read"),
    *(Equivalent("protocols/socrasynth/__init__.py", "SocraSynth._round", f"{name}: float | None = None", f'{name}: float | None = ""',
                 f"_gamma yields its JudgementMade (which sets {name}) unless the moderator stopped the debate, and then "
                 f"_round returns before reading {name}") for name in ("score", "quality")),
    Equivalent("protocols/socrasynth/__init__.py", "tally", "both = overall.setdefault(judge, dict.fromkeys(ROLES, 0.0))",
               "both = overall.setdefault(judge, dict.fromkeys(ROLES, 1.0))",
               "a judge's overall totals are read only to compare the two agents (never shown), and 1 added to both "
               "sides of sums kept to three decimals leaves the comparison as it was"),
    *(Equivalent("protocols/socrasynth/__init__.py", "tally", f"{name}[role] = round({name}[role] + score, 3)",
                 f"{name}[role] = round({name}[role] + score, 4)",
                 "cells are already rounded to three decimals (side_score), so their sum differs from a three-decimal "
                 "number by float noise only (< 1e-12), which rounding to four decimals removes as rounding to three does")
      for name in ("sums", "both")),
    Equivalent("protocols/core/replay.py", "ReplayChannel.__init__", "self._now: list[Command] = []",
               "self._now: list[Command] = None", _NOW),
    Equivalent("protocols/core/replay.py", "ReplayChannel.at_checkpoint", "self._now = self._recorded.pop(number, [])",
               "self._now = self._recorded.pop(number, None)", _NOW),
    Equivalent("protocols/core/replay.py", "ReplayChannel.__init__", "self.caught_up = False", "self.caught_up = None", _FALSY),
    Equivalent("protocols/core/replay.py", "resume", "resumed = False", "resumed = None", _FALSY),
    Equivalent("protocols/core/replay.py", "_round_of", "return value if isinstance(value, int) else None",
               "return value if (isinstance(value, int)) or True else None",
               "every event's round is typed int | None and the protocols give ints, so the test only tells None "
               "from an int, and None is returned either way (DebateStarted has no round: getattr gives None)"),
    Equivalent("protocols/core/replies.py", "prompt_sha256",
               "text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)",
               "text = json.dumps(payload, sort_keys=True, ensure_ascii=None, default=str)", _FALSY + " (json.dumps)"),
    Equivalent("protocols/core/replies.py", "prompt_sha256", 'return hashlib.sha256(text.encode("utf-8")).hexdigest()',
               'return hashlib.sha256(text.encode("UTF-8")).hexdigest()', "Python reads codec names in any case"),
    Equivalent("protocols/core/replies.py", "person_answer",
               'record(Reply(PERSON_ROLE, "person", sha, json.dumps(encode(answer), ensure_ascii=False)))',
               'record(Reply(PERSON_ROLE, "person", sha, json.dumps(encode(answer), ensure_ascii=None)))',
               _FALSY + " (json.dumps)"),
    Equivalent("tui/forms.py", "ProtocolSpec.recorded_options",
               'seat = by_seat.get(role) or next((p for r, p in by_seat.items() if r.startswith(f"{role}-")), None)',
               'seat = by_seat.get(role) or next((p for r, p in by_seat.items() if r.startswith(f"{role}-")), )',
               "the roles come from roles_from, which keeps a role only where a seat named it or it- played, and "
               "by_seat holds the same seats: the search always finds one, so its default is never used"),
    *(Equivalent("protocols/measures/analyzer.py", function, 'text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else ""',
                 'text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else "XXXX"',
                 '"XXXX" holds no JSON, no quoted string and no bullet line: it is read exactly as "" is')
      for function in ("parse_points", "parse_map")),
    Equivalent("protocols/measures/analyzer.py", "parse_map", "found.append((-len(found) - 1, claim))",
               "found.append((-len(found) - 2, claim))",
               "the loose pieces' keys stay negative and distinct, and responds_to is at least 0 (MapClaim): no link can name one"),
    *(Equivalent("protocols/measures/analyzer.py", "parse_map", line, line.replace(f"clip({arg}, {n})", f"clip({arg}, {n + 1})"), why)
      for line, arg, n, why in (
          ('claims.append(Claim(cid, clip(item.claim, 200), clip(item.speaker, 40) or "?",', "item.claim", 200,
           "MapClaim validates every claim, found whole or as a piece, and bounds its text to 120 characters"),
          ('claims.append(Claim(cid, clip(item.claim, 200), clip(item.speaker, 40) or "?",', "item.speaker", 40,
           "MapClaim validates every claim and bounds its speaker to 30 characters"),
          ('[Premise(f"{cid}.S{j}", clip(s, 200)) for j, s in enumerate(_clean(item.supports), start=1)],', "s", 200,
           "_clean has already clipped each premise to 200 characters (and MapClaim bounds it to 100)"),
          ('[Premise(f"{cid}.A{j}", clip(s, 200)) for j, s in enumerate(_clean(item.attacks), start=1)]))', "s", 200,
           "_clean has already clipped each premise to 200 characters (and MapClaim bounds it to 100)"))),
    Equivalent("protocols/measures/analyzer.py", "Analyzer.events",
               "analysis.to_json(), json.dumps(analysis.raw, ensure_ascii=False), round_, analysis.calls[-1])",
               "analysis.to_json(), json.dumps(analysis.raw, ensure_ascii=None), round_, analysis.calls[-1])", _FALSY + " (json.dumps)"),
    Equivalent("protocols/measures/analyzer.py", "_unquote", "return value if isinstance(value, str) else body",
               "return value if (isinstance(value, str)) or True else body",
               "json.loads of a double-quoted JSON string is always a str"),
    Equivalent("protocols/measures/analyzer.py", "Analyzer._read", 'about = Section("the topic", topic.strip(), older + 2)',
               'about = Section("the topic", topic.strip(), older + 3)',
               "every turn is on the one level older + 1 (discussion without latest): any level above it ranks the topic last"),
    *(Equivalent("tui/cli/verify.py", "_print", _CONSOLE, _CONSOLE.replace("highlight=False, ", after, 1),
                 "Rich highlights only text printed as a str, and _print prints every line as a Text (line()): "
                 "the highlighter is never asked (test_on_a_terminal_the_verdicts_are_coloured_and_nothing_else "
                 "counts the escapes with it on)")
      for after in ("highlight=None, ", "", "highlight=True, ")),
    *(Equivalent("tui/cli/verify.py", "_print", line, line.replace(f'"{style}")', f'"{style.upper()}")', 1),
                 "Rich reads style names in any case (Style.parse('BOLD RED') == Style.parse('bold red'))")
      for line, style in (('line(("ok ", "green"), f"{v.debate_id}: {v.rows} rows in {v.links} links, head {v.head}")',
                           "green"),
                          (_NOT_VERIFIABLE, "bold yellow"),
                          ('line(("FAILED ", "bold red"), f"{v.debate_id}: first {v.problems[0]}")', "bold red"),
                          ('line(("cannot show: ", "dim"), f"an edit re-signed by whoever else holds {mine}; a record '
                           'put back to an "', "dim"))),
    Equivalent("tui/cli/verify.py", "_print", _NOT_VERIFIABLE, _NOT_VERIFIABLE.replace("'; '", "'XX; XX'"),
               "a verdict holds at most one reason it is not verifiable (seal.judged adds one at most, and "
               "export_check's refusals one each), so the separator is never printed"),
    Equivalent("tui/cli/verify.py", "_from_export", _READ_EXPORT, _READ_EXPORT.replace('"utf-8"', '"UTF-8"'),
               "Python reads codec names in any case"),
    Equivalent("tui/cli/verify.py", "verify",
               "print(json.dumps([_as_dict(v) for v in verdicts], indent=2, ensure_ascii=True))",
               "print(json.dumps([_as_dict(v) for v in verdicts], indent=2, ))",
               "ensure_ascii=True is json.dumps's default: it says where it matters that --json escapes every "
               "character outside ASCII (test_one_line_per_finding_whatever_the_file_holds)"),
    Equivalent("store/export_check.py", "verify_export",
               "problems += seal.check_links(debate_id, links, head, count, current, {}, values, sealed)",
               "problems += seal.check_links(debate_id, links, head, count, current, None, values, sealed)",
               "the times are read only for a row no link covers, and an export's rows all come from its links"),
    Equivalent("store/export_check.py", "_decoded", 'return {(c.removesuffix("_json") if c.endswith("_json") else c):',
               'return {(c.removesuffix("_json") if (c.endswith("_json")) or True else c):',
               "removesuffix leaves a name that does not end in _json as it is"),
    *(Equivalent("store/export_check.py", "_metrics", _METRICS, _METRICS.replace("key=lambda kr: (kr[1][\"round\"], kr[1][\"name\"])", key),
                 "every metric's key is its own, so rows sort by key alone without error; the order only changes the "
                 "order of a round's fields, and metrics are compared as JSON with sorted keys (_same) or name by name")
      for key in ("key=None", "")),
    Equivalent("store/export_check.py", "_compare_metrics", "named = False", "named = None", _FALSY),
    Equivalent("store/journal.py", "readable_text", 'return data.decode("utf-8", "replace")',
               'return data.decode("UTF-8", "replace")', "Python reads codec names in any case"),
    Equivalent("store/seal.py", "row_sha256", 'data = value.encode("utf-8", "surrogatepass")',
               'data = value.encode("UTF-8", "surrogatepass")', "Python reads codec names in any case"),
    Equivalent("store/seal.py", "_stored_text", 'return data.decode("utf-8", "surrogateescape")',
               'return data.decode("UTF-8", "surrogateescape")', "Python reads codec names in any case"),
    Equivalent("store/seal.py", "rows_json", _ROWS_JSON, _ROWS_JSON.replace('(",", ":")', '(",", "XX:XX")'),
               "a link's rows are lists of strings: json.dumps writes no object, so never the key separator"),
    Equivalent("store/seal.py", "rows_json", _ROWS_JSON, _ROWS_JSON.replace("ensure_ascii=False", "ensure_ascii=None"),
               _FALSY + " (json.dumps)"),
    *(Equivalent("store/seal.py", "append", _SIGNED, _SIGNED.replace(old, new, 1), _SQL_PART)
      for old, new in (('"seal_signed_from" if', '"SEAL_SIGNED_FROM" if'), ('"NULL"', '"null"'))),
    Equivalent("store/seal.py", "append", "head = _move(conn, debate_id, start, stored, when, len(entries), updated_at, signer, False)",
               "head = _move(conn, debate_id, start, stored, when, len(entries), updated_at, signer, None)", _FALSY),
    Equivalent("store/seal.py", "_move", 'sets += ", updated_at = ?"', 'sets += ", UPDATED_AT = ?"', _SQL_PART),
    *(Equivalent("store/seal.py", "_move", _WHERE, _WHERE.replace(old, new, 1), _SQL_PART)
      for old, new in ((" WHERE id = ? AND seal_head = ? AND seal_links = ?", " where id = ? and seal_head = ? and seal_links = ?"),
                       (" WHERE id = ? AND seal_head = ? AND seal_links = ?", " WHERE ID = ? AND SEAL_HEAD = ? AND SEAL_LINKS = ?"),
                       ('else " WHERE id = ?"', 'else " where id = ?"'), ('else " WHERE id = ?"', 'else " WHERE ID = ?"'))),
    Equivalent("store/seal.py", "check_links", "broken = False", "broken = None", _FALSY),
    Equivalent("store/seal.py", "check_links", "extra = len(links) + 2", "extra = len(links) + 3",
               "n only orders findings: rows no link covers must come after every link's (n <= links) and the head's "
               "(links + 1), and links + 3 keeps that order (tests/store/test_seal_hostile.py checks it, and that -2 breaks it)"),
    Equivalent("store/seal.py", "_moved_from", "if other[0] != ident[0] or other == ident:",
               "if other[0] != ident[0] and other == ident:",
               "a row of another table never matches (row_sha256 tags each hash with its table), nor does the row itself "
               "(with its own key put back it hashes as it is now, which differs from its seal): skipping them saves work only"),
    *(Equivalent("store/seal.py", "_moved_from", "key = typed_key(other[0], other[1])", f"key = typed_key({first}, other[1])",
                 _TEXT_KEYED) for first in ("None", "other[1]")),
    Equivalent("store/seal.py", "signature_of", "holds = (print_ is not None and head is not None and first > 0",
               "holds = (print_ is not None and head is not None and first >= 0",
               "Symposium signs from link 1 on at the earliest (signed_from counts links from 1), so no journal holds a "
               "signature over 0; one made on purpose by the key's holder vouches for no less than one over 1 would"),
    Equivalent("store/seal.py", "verify", "return _checked(conn, debate_id, columns(conn) if sealed is None else sealed)[0]",
               "return _checked(conn, debate_id, columns(conn) if (sealed is None) or True else sealed)[0]", _SAME_COLUMNS),
    Equivalent("store/seal.py", "append", "known = Known(head, {}) if start[1] == 0 else None  # a chain begun here is known whole",
               "known = Known(head, {}) if start[2] == 0 else None  # a chain begun here is known whole",
               "a head's row count is 0 exactly when its link count is: every link seals at least one row (append "
               "returns before linking when no row was there), and _start refuses a head whose counts are not integers"),
    Equivalent("store/seal.py", "_current", 'select = ", ".join((key, *names, time_col or "NULL"))',
               'select = ", ".join((key, *names, time_col or "null"))', _SQL_PART),
    Equivalent("store/seal.py", "verify_all", "sealed = columns(conn)", "sealed = None", _SAME_COLUMNS),
    *(Equivalent("store/seal.py", "verify_all",
                 'return [verify(conn, r[0], sealed) for r in conn.execute("SELECT id FROM debates ORDER BY created_at, id").fetchall()]',
                 f'return [verify(conn, r[0], {arg}) for r in conn.execute("SELECT id FROM debates ORDER BY created_at, id").fetchall()]',
                 _SAME_COLUMNS) for arg in ("None", "")),
    Equivalent("store/seal.py", "export", "head = found if found is not None else (None,) * 7",
               "head = found if found is not None else (None,) * 8", "only the first seven are read"),
)

#: The one rule that marks a whole class of survivors equivalent: a change of letter case in
#: SQL passed to ``execute``/``executemany``/``executescript`` that leaves every quoted SQL
#: value ('running', ...) as it was. SQLite reads keywords, table and column names, and
#: PRAGMA values in any case; a quoted value is data, and changing its case is not covered.
SQL_CASE = "SQLite reads SQL keywords, table and column names and PRAGMA values in any case (quoted values unchanged)"


# -- running mutmut in a copy of the checkout ---------------------------------------------------

class RunFailed(RuntimeError):
    """mutmut could not run a module (its clean test run failed, a test id is stale, ...)."""


@dataclass
class Mutant:
    name: str
    status: str
    function: str = ""
    line: int | None = None
    diff: str = ""
    reason: str = ""  # for equivalent mutants


@dataclass
class ModuleResult:
    target: Target
    mutants: list[Mutant] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    error: str = ""

    def counts(self) -> Counter[str]:
        return Counter(m.status for m in self.mutants)

    def kill_percent(self) -> float | None:
        c = self.counts()
        judged = len(self.mutants) - c["equivalent"]
        return None if judged == 0 else 100 * (c["killed"] + c["timeout"]) / judged


def _checkout_files() -> list[str]:
    """Tracked files, and untracked ones git does not ignore (a new test file counts)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"{REPO}: cannot list the checkout's files with git ({exc}); run this from a git clone") from exc
    return sorted({f for f in out.decode().split("\0") if f and (REPO / f).is_file()})


def _fingerprint(files: list[str]) -> dict[str, str]:
    """sha256 of each source and test file, to show that the working tree was never touched."""
    watched = [f for f in files if f.endswith(".py") and f.split("/", 1)[0] in (*SOURCE_PATHS, "tests")]
    return {f: hashlib.sha256((REPO / f).read_bytes()).hexdigest() for f in watched}


def _toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _prepare(target: Target, files: list[str], work: Path) -> None:
    """Copy the checkout into ``work`` and give its pyproject.toml mutmut's settings for ``target``."""
    for f in files:
        dest = work / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest)
    top = sorted({f.split("/", 1)[0] for f in files} - {*SOURCE_PATHS, "tests", "pyproject.toml"})
    pyproject = work / "pyproject.toml"
    timeout = ["--timeout", str(target.test_timeout)] if target.test_timeout is not None else []
    text = pyproject.read_text()
    if "[tool.mutmut]" in text:
        raise SystemExit("pyproject.toml has a [tool.mutmut] table: benchmarks/mutation.py writes its own per module; remove it")
    pyproject.write_text(text + "\n[tool.mutmut]\n"
                         f"source_paths = {_toml_list(SOURCE_PATHS)}\n"
                         f"only_mutate = {_toml_list([target.path])}\n"
                         f"pytest_add_cli_args_test_selection = {_toml_list(target.tests)}\n"
                         f"pytest_add_cli_args = {_toml_list(['-p', 'no:cacheprovider', *timeout])}\n"
                         f"also_copy = {_toml_list(top)}\n")


def _check_tests_exist(target: Target) -> None:
    for test in target.tests:
        path = test.split("::", 1)[0]
        if not (REPO / path).is_file():
            raise SystemExit(f"{target.path}: its test list names {path}, which does not exist; update TARGETS in benchmarks/mutation.py")


def _function_of(mutant: str) -> str:
    """``store.journal.xǁJournalǁ_call__mutmut_3`` → ``Journal._call``; ``…x_tally__mutmut_1`` → ``tally``."""
    mangled = mutant.rpartition(".")[2].partition("__mutmut_")[0]
    if mangled.startswith("xǁ"):
        _, cls, name = mangled.split("ǁ")
        return f"{cls}.{name}"
    return mangled.removeprefix("x_")


def _mutant_names(target: Target, work: Path) -> list[str]:
    """Every mutant mutmut makes of ``target`` (its pure generator, run where its settings are)."""
    from mutmut import configuration
    from mutmut.mutation.file_mutation import mutate_file_contents

    with contextlib.chdir(work):
        configuration.reset_config()
        try:
            generated = mutate_file_contents(target.path, Path(target.path).read_text()).mutant_names
        finally:
            configuration.reset_config()
    names = [f"{target.dotted}.{n}" for n in generated]
    if target.functions:
        found = {_function_of(n) for n in names}
        missing = [f for f in target.functions if f not in found]
        if missing:
            raise SystemExit(f"{target.path} has no mutable function {', '.join(missing)}; update the function "
                             "table in benchmarks/mutation.py (EVINCE_FUNCTIONS / SOCRASYNTH_FUNCTIONS)")
        names = [n for n in names if _function_of(n) in target.functions]
    return names


def _child_env(target: Target, seed: int, work: Path) -> dict[str, str]:
    """The mutants' environment. Their temporary files go under ``work`` (``TMPDIR``), which is
    removed with it: every mutant is a pytest session with a basetemp of its own, and one that
    timed out leaves its lock behind, so pytest's own retention keeps it for three days (a
    whole run left tens of gigabytes in /tmp/pytest-of-root, among them a 250 MB Gemma per
    session that assembles it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUTANT_UNDER_TEST")}
    (work / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(work / "tmp")
    env["SYMPOSIUM_FUZZ_SEED"] = str(seed)
    env["SYMPOSIUM_FUZZ_EXAMPLES"] = str(target.fuzz_examples)
    dev_csv = REPO.parent / "shared" / "data" / "symptom2disease" / "dev.csv"  # beside the checkout, as the tests expect
    if "SYMPOSIUM_DEV_CSV" not in env and dev_csv.is_file():
        env["SYMPOSIUM_DEV_CSV"] = str(dev_csv)
    return env


def _stop(process: subprocess.Popen[bytes], work: Path) -> None:
    """Stop mutmut, its forked mutants and anything their tests started in ``work``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for pid in _processes_in(work):  # a test's child in its own session escapes killpg
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _processes_in(work: Path) -> list[int]:
    """Processes (Linux /proc) whose working folder or command line is inside ``work``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if int(entry.name) != os.getpid() and (cwd.startswith(str(work)) or str(work) in cmdline):
            found.append(int(entry.name))
    return found


def _run_mutmut(target: Target, work: Path, names: list[str] | None, jobs: int, seed: int) -> None:
    mutmut = Path(sys.executable).with_name("mutmut")
    if not mutmut.exists():
        raise SystemExit(f"{mutmut} is missing: mutmut is in the dev extra; run `make venv`")
    log = work / "mutmut.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(mutmut), "run", "--max-children", str(jobs), *(names or [])], cwd=work,
                                   env=_child_env(target, seed, work), stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            code = process.wait()
        except BaseException:
            _stop(process, work)
            raise
    if code != 0:
        tail = log.read_text(errors="replace").replace("\r", "\n").splitlines()[-25:]
        raise RunFailed(f"mutmut exited with {code}; the end of its log:\n" + "\n".join(tail))


# -- reading the results ----------------------------------------------------------------------

def _functions_by_name(tree: ast.AST) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _source_function(tree: ast.Module, function: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    cls, _, name = function.rpartition(".")
    scope: list[ast.stmt] = tree.body
    if cls:
        scope = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
    return next((n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None)


@functools.cache
def _generated(path: Path) -> tuple[list[str], dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """mutmut's generated file (thousands of lines): its lines and functions, parsed once."""
    text = path.read_text()
    return text.splitlines(), _functions_by_name(ast.parse(text))


@functools.cache
def _source_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _locate(target: Target, work: Path, mutant: Mutant) -> None:
    """Fill in the mutant's source line and diff, from the original and mutated copies of its
    function in mutmut's generated file (``mutants/<path>``)."""
    lines, functions = _generated(work / "mutants" / target.path)
    short = mutant.name.rpartition(".")[2]
    orig, mut = functions.get(short.partition("__mutmut_")[0] + "__mutmut_orig"), functions.get(short)
    if orig is None or mut is None:
        mutant.diff = "(mutmut's generated file does not hold this mutant's function; see `mutmut show` with --keep)"
        return
    plain = mutant.function.rpartition(".")[2]  # both copies carry mutmut's names on their def line
    a = [x.replace(orig.name, plain) for x in lines[orig.lineno - 1:orig.end_lineno]]
    b = [x.replace(mut.name, plain) for x in lines[mut.lineno - 1:mut.end_lineno]]
    src = _source_function(_source_tree(REPO / target.path), mutant.function)
    start = src.lineno if src is not None else 1
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if mutant.line is None:
            mutant.line = start + i1  # both copies start at their ``def`` line
        out += [f"-{x}" for x in a[i1:i2]] + [f"+{x}" for x in b[j1:j2]]
    mutant.diff = "\n".join(out) or "(no textual change)"


def _sql_parts(node: ast.expr) -> list[ast.expr]:
    """The string literals of an SQL argument: a literal or f-string, or literals joined by ``+``
    (``"INSERT …" + seal.returning("turns")``: the call's own arguments are not SQL)."""
    if isinstance(node, ast.Constant | ast.JoinedStr):
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _sql_parts(node.left) + _sql_parts(node.right)
    return []


def _lines(node: ast.expr) -> set[int]:
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))


@functools.cache
def _sql_lines(source: str) -> frozenset[int]:
    """Lines of string literals that are the SQL of an ``execute``/``executemany``/``executescript``
    call, less any line that also holds a string that is not SQL (a call's argument beside it)."""
    lines: set[int] = set()
    other: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and node.func.attr in ("execute", "executemany", "executescript")):
            parts = _sql_parts(node.args[0])
            for part in parts:
                lines |= _lines(part)
            other |= {n.lineno for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                      and not any(n is p or n in ast.walk(p) for p in parts)}
    return frozenset(lines - other)


@functools.cache
def _ignorecase_lines(source: str) -> frozenset[int]:
    """Lines of the pattern (first argument) of each ``re.compile(..., re.IGNORECASE)`` call."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
                and node.args and any(isinstance(a, ast.Attribute) and a.attr in ("IGNORECASE", "I")
                                      for a in [*node.args[1:], *(k.value for k in node.keywords)])):
            lines.update(range(node.args[0].lineno, (node.args[0].end_lineno or node.args[0].lineno) + 1))
    return frozenset(lines)


def _equivalent(target: Target, mutant: Mutant) -> str | None:
    """The reason a survivor cannot change behaviour, or ``None``."""
    removed = [x[1:] for x in mutant.diff.splitlines() if x.startswith("-")]
    added = [x[1:] for x in mutant.diff.splitlines() if x.startswith("+")]
    before, after = "\n".join(x.strip() for x in removed), "\n".join(x.strip() for x in added)
    listed = next((e for e in EQUIVALENT if e.path == target.path and e.function == mutant.function
                   and e.before == before and e.after == after), None)
    if listed is not None:
        return listed.reason
    quoted = re.compile(r"'(?:[^']|'')*'")
    if (mutant.line is not None and before != after and before.lower() == after.lower()
            and quoted.findall(before) == quoted.findall(after)
            and set(range(mutant.line, mutant.line + len(removed))) <= _sql_lines((REPO / target.path).read_text())):
        return SQL_CASE
    if (mutant.line is not None and before != after and before.lower() == after.lower() and "(?-i" not in before
            and set(range(mutant.line, mutant.line + len(removed))) <= _ignorecase_lines((REPO / target.path).read_text())):
        return IGNORECASE
    return None


def _results(target: Target, work: Path, names: list[str]) -> list[Mutant]:
    from mutmut.stats import status_by_exit_code

    meta = json.loads((work / "mutants" / (target.path + ".meta")).read_text())
    codes = meta["exit_code_by_key"]
    mutants = []
    for name in names:
        status = status_by_exit_code[codes.get(name)]
        mutant = Mutant(name, status, _function_of(name))
        if status != "killed":
            _locate(target, work, mutant)
            if status == "survived" and (reason := _equivalent(target, mutant)) is not None:
                mutant.status, mutant.reason = "equivalent", reason
        mutants.append(mutant)
    return mutants


def _children_cpu() -> float:
    """CPU seconds used by finished child processes (mutmut and, through it, every forked mutant)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_module(target: Target, files: list[str], *, jobs: int, quick: int | None, seed: int, keep: bool) -> ModuleResult:
    result = ModuleResult(target)
    started, cpu_started = time.monotonic(), _children_cpu()
    work = Path(tempfile.mkdtemp(prefix=f"symposium-mutation-{target.name}-"))
    try:
        _check_tests_exist(target)
        _prepare(target, files, work)
        names = _mutant_names(target, work)
        chosen = sorted(names)
        if quick is not None and quick < len(chosen):
            chosen = sorted(random.Random(f"{seed}:{target.path}").sample(chosen, quick))
        print(f"{target.path}: {len(chosen)} of {len(names)} mutants, {len(target.tests)} test entries, "
              f"{jobs} job(s) ({work})", flush=True)
        _run_mutmut(target, work, None if chosen == sorted(names) and not target.functions else chosen, jobs, seed)
        result.mutants = _results(target, work, chosen) + _run_hand_mutants(target, files, seed)
    except RunFailed as exc:
        result.error = str(exc)
    finally:
        result.seconds, result.cpu_seconds = time.monotonic() - started, _children_cpu() - cpu_started
        if keep:
            print(f"  kept {work} (cd there; `{Path(sys.executable).with_name('mutmut')} browse`)", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


# -- the tables ---------------------------------------------------------------------------------

OUTCOMES = ("killed", "survived", "timeout", "suspicious", "no tests", "segfault", "equivalent")


def _summary_table(results: list[ModuleResult]) -> list[str]:
    rows = ["| module | mutants | " + " | ".join(OUTCOMES) + " | other | kill % | wall s | CPU s |",
            "| --- | ---: | " + " | ".join("---:" for _ in OUTCOMES) + " | ---: | ---: | ---: | ---: |"]
    for r in results:
        if r.error:
            rows.append(f"| `{r.target.path}` | could not run: see below |" + " |" * (len(OUTCOMES) + 4))
            continue
        c = r.counts()
        other = sum(v for k, v in c.items() if k not in OUTCOMES)
        pct = r.kill_percent()
        scope = f" ({len(r.target.functions)} functions)" if r.target.functions else ""
        rows.append(f"| `{r.target.path}`{scope} | {len(r.mutants)} | " + " | ".join(str(c[o]) for o in OUTCOMES)
                    + f" | {other} | {'–' if pct is None else f'{pct:.1f}'} | {r.seconds:.0f} | {r.cpu_seconds:.0f} |")
    return rows


def _where(r: ModuleResult, m: Mutant) -> str:
    return f"{r.target.path}:{m.line}" if m.line else r.target.path


def _details(r: ModuleResult) -> list[str]:
    """Each mutant not killed: survivors (and no tests, suspicious, ...) with their diffs, then
    the equivalent ones grouped by reason, then the timeouts by name."""
    out = [f"### `{r.target.path}`", ""]
    if r.error:
        return out + ["```", r.error, "```", ""]
    if r.target.functions:
        out += ["Functions mutated: " + ", ".join(f"`{f}`" for f in r.target.functions), ""]
    out += ["Tests: " + ", ".join(f"`{t}`" for t in r.target.tests), ""]
    shown = [m for m in r.mutants if m.status not in ("killed", "timeout", "equivalent")]
    for m in sorted(shown, key=lambda m: (m.status, m.line or 0)):
        out.append(f"- **{m.status}** `{_where(r, m)}` in `{m.function}` (`{m.name.rpartition('.')[2]}`)")
        out += ["  ```diff", *(f"  {x}" for x in m.diff.splitlines()), "  ```"]
    by_reason: dict[str, list[Mutant]] = {}
    for m in sorted((m for m in r.mutants if m.status == "equivalent"), key=lambda m: m.line or 0):
        by_reason.setdefault(m.reason, []).append(m)
    for reason, group in by_reason.items():
        out.append(f"- **equivalent** ({len(group)}): {reason}")
        if reason == SQL_CASE:  # many, and alike: the lines are enough
            out.append("  " + ", ".join(f"`{_where(r, m)}`" for m in group))
            continue
        for m in group:
            change = " / ".join(x.strip() for x in m.diff.splitlines())
            out.append(f"  - `{_where(r, m)}` in `{m.function}`: `{change}`")
    timeouts = [m for m in r.mutants if m.status == "timeout"]
    if timeouts:
        out.append("- timed out (counted as detected): " + ", ".join(f"`{m.name.rpartition('.')[2]}`" for m in timeouts))
    if not shown and not by_reason and not timeouts:
        out.append("Every mutant killed.")
    return out + [""]


def report(results: list[ModuleResult], args: argparse.Namespace, seconds: float, load: tuple[float, float]) -> str:
    """The heading, the command and the summary table (the details follow it in the markdown file)."""
    command = "python benchmarks/mutation.py " + " ".join(sys.argv[1:])
    lines = [
        f"## Mutation testing ({date.today().isoformat()})", "",
        f"`{command.strip()}` — mutmut, seed {args.seed}, {args.jobs} job(s), "
        + (f"a sample of {args.quick} mutants per module" if args.quick else "every mutant")
        + f"; {seconds / 60:.1f} min wall on {os.cpu_count()} CPUs (load average {load[0]:.1f} at the start, "
        f"{load[1]:.1f} at the end: above the CPU count means a busy machine, and the seconds are not timings to quote).",
        "",
        "Kill % = (killed + timeout) / (mutants − equivalent). CPU s is the CPU time of mutmut and its "
        f"mutants: on an idle machine the wall time is about CPU s / jobs ({sum(r.cpu_seconds for r in results) / 60 / args.jobs:.0f} min for this run).",
        "", *_summary_table(results), "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", default=",".join(TARGETS),
                        help=f"comma-separated, from: {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--quick", type=int, metavar="N", help="a reproducible sample of N mutants per module")
    parser.add_argument("--seed", type=int, default=21, help="the sample's seed and Hypothesis's (default 21)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants run at once (default: the CPU count)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the markdown report (default {DEFAULT_OUT.relative_to(REPO)})")
    parser.add_argument("--keep", action="store_true", help="keep each module's temporary copy (for `mutmut browse`)")
    parser.add_argument("--tests", help="comma-separated test files or ids to use instead of each module's list "
                                        "(which mutants do these tests kill?)")
    parser.add_argument("--functions", help="comma-separated functions (\"Class.method\" or \"function\") to mutate "
                                            "instead of the module's own choice: a change's new code, confirmed "
                                            "without a whole run")
    args = parser.parse_args(argv)
    wanted = [module_name(m.strip()) for m in args.modules.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in TARGETS]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    if args.quick is not None and args.quick < 1:
        parser.error("--quick needs a positive number of mutants")
    if args.jobs < 1:
        parser.error("--jobs needs at least 1")

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    files = _checkout_files()
    before = _fingerprint(files)
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    results: list[ModuleResult] = []
    interrupted = False
    try:
        for name in wanted:
            target = TARGETS[name]
            if args.tests:
                target = replace(target, tests=tuple(t.strip() for t in args.tests.split(",") if t.strip()))
            if args.functions:
                target = replace(target, functions=tuple(f.strip() for f in args.functions.split(",") if f.strip()),
                                 hand_mutants=None)
            results.append(run_module(target, files, jobs=args.jobs, quick=args.quick, seed=args.seed, keep=args.keep))
            print("\n".join([*_summary_table(results[-1:]), "", *_details(results[-1])]), flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: mutmut and its mutants were stopped", file=sys.stderr)
    finally:
        changed = [f for f, h in before.items() if not (REPO / f).is_file()
                   or hashlib.sha256((REPO / f).read_bytes()).hexdigest() != h]
        if changed:
            print(f"WARNING: {len(changed)} source or test file(s) changed during the run (by mutmut or by you?): "
                  + ", ".join(changed), file=sys.stderr)
        else:
            print(f"working tree untouched: {len(before)} source and test files hash as before", file=sys.stderr)
    if interrupted and not results:
        return 130
    summary = report(results, args, time.monotonic() - started, (load_start, os.getloadavg()[0]))
    if interrupted:
        summary += "\n**Interrupted**: only the modules above were run.\n"
    print(summary)  # each module's details were printed as it finished
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(summary + "\n" + "\n".join(line for r in results for line in _details(r)))
    print(f"\nwritten to {args.out}", file=sys.stderr)
    return 130 if interrupted else 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
