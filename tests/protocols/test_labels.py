"""Label normalization: one rule for the distributions the debate compares
and for the scores the benchmark gives.

With an open label set, "Dengue" and "Dengue fever" were two labels, so two agents who agreed
showed a JSD of 1 and a WD of 1; and a benchmark prediction "Dengue fever" scored as a miss
against "Dengue". A synonym map (the class set's own, or a file) now merges them, and every
merge leaves a note saying which rule made it (same spelling after case and punctuation,
the synonym map, a typo). Fast tests: they are the mutation benchmark's list for
``protocols/measures/labels.py``.
"""

from __future__ import annotations

import locale
from pathlib import Path

import pytest

from protocols.evince import EvinceConfig
from protocols.measures import evaluation as E
from protocols.measures import metrics as M
from protocols.measures.distribution import parse_distribution
from protocols.measures.labels import (
    BUILTIN_RELATED,
    BUILTIN_SYNONYMS,
    LabelSet,
    canonical_distribution,
    normalize_label,
    parse_related,
    parse_synonyms,
    read_label_set,
    read_related,
    read_synonyms,
)

AGREE_A = '{"Dengue": 0.8, "Malaria": 0.2}'
AGREE_B = '{"Dengue fever": 0.8, "malaria": 0.2}'


def test_two_agents_who_agree_are_not_apart_by_spelling_in_an_open_set() -> None:
    """The issue's example. Without a synonym map the agents are as far apart as can be on
    their top label (this is what the code did before); with one, JSD and WD are 0."""
    bare = LabelSet((), closed=False)
    a, b = parse_distribution(AGREE_A, bare).probs, parse_distribution(AGREE_B, bare).probs
    assert a is not None and b is not None
    assert M.jensen_shannon(a, b) > 0.5 and M.wasserstein(a, b) == pytest.approx(0.8)
    mapped = LabelSet((), closed=False, synonyms={"Dengue fever": "Dengue"})
    a_parse, b_parse = parse_distribution(AGREE_A, mapped), parse_distribution(AGREE_B, mapped)
    assert a_parse.probs == pytest.approx({"Dengue": 0.8, "Malaria": 0.2})
    assert b_parse.probs == pytest.approx({"Dengue": 0.8, "malaria": 0.2})  # case alone is the metrics' rule
    assert M.jensen_shannon(a_parse.probs, b_parse.probs) == pytest.approx(0.0, abs=1e-12)
    assert M.wasserstein(a_parse.probs, b_parse.probs) == pytest.approx(0.0, abs=1e-12)
    assert "matched labels: 'Dengue fever' -> 'Dengue' (synonym)" in b_parse.repairs  # the note on the merge
    assert not any("matched" in r for r in a_parse.repairs)  # "Dengue" needed no rule


def test_each_rule_is_named() -> None:
    labels = LabelSet(["Dengue", "Hepatitis C", "Hepatitis B"], synonyms={"breakbone fever": "Dengue"})
    assert labels.resolve("  DENGUE. ") == ("Dengue", "same")
    assert labels.resolve("Breakbone Fever") == ("Dengue", "synonym")
    assert labels.resolve("Hepatits C") == ("Hepatitis C", "typo, 95% alike")
    assert labels.resolve("Hepatitis G") == (None, "unknown")  # two hepatitis are as close: no guess
    assert labels.resolve("Zika") == (None, "unknown")
    assert labels.match("breakbone fever") == "Dengue" and labels.match("Zika") is None


def test_a_closed_set_refuses_a_synonym_of_a_label_it_lacks_an_open_set_learns_it() -> None:
    closed = LabelSet(["Malaria"])
    with pytest.raises(ValueError, match="synonym target 'Dengue' is not a label of this set"):
        closed.add_synonym("Dengue fever", "Dengue")
    assert closed.labels == ("Malaria",) and closed.synonyms == {}
    open_ = LabelSet(["Malaria"], closed=False)
    open_.add_synonym("Dengue fever", "  Dengue ")
    assert open_.labels == ("Malaria", "Dengue") and open_.synonyms == {"dengue fever": "Dengue"}
    open_.add_synonym("dengue", "Dengue")  # a "synonym" that is the label itself adds nothing
    assert open_.synonyms == {"dengue fever": "Dengue"}
    with pytest.raises(ValueError, match="is empty"):
        open_.add_synonym("x", " ** ")


def test_a_class_sets_map_adds_only_what_fits_this_set() -> None:
    labels = LabelSet(["Dengue", "Asthma", "Bronchial Asthma"])
    skipped = labels.add_known_synonyms({"Dengue fever": "Dengue", "Typhoid fever": "Typhoid",
                                         "Asthma": "Bronchial Asthma"})
    assert skipped == ["Typhoid fever", "Asthma"]  # no Typhoid here; Asthma is a class of its own here
    assert labels.synonyms == {"dengue fever": "Dengue"}
    assert labels.match("Asthma") == "Asthma"


def test_the_builtin_class_sets_map_names_only_its_labels() -> None:
    """Every line of the shipped Symptom2Disease map lands (a target spelled wrong would be
    skipped silently by add_known_synonyms), and the issue's example is in it."""
    table = read_synonyms(BUILTIN_SYNONYMS["symptom2disease"])
    labels = read_label_set("symptom2disease")
    assert labels is not None and len(table) >= 35
    assert all(canonical in labels for canonical in table.values()), [c for c in table.values() if c not in labels]
    assert len(labels.synonyms) == len(table)
    assert labels.resolve("Dengue fever") == ("Dengue", "synonym")
    assert labels.resolve("gastroesophageal reflux disease") == ("GERD", "synonym")
    assert labels.resolve("Typhoid") == ("Typhoid", "same")


def test_canonical_distribution_merges_and_notes_each_merge() -> None:
    labels = LabelSet(["Dengue", "Malaria", "Hepatitis C"], synonyms={"Dengue fever": "Dengue"})
    merged, notes = canonical_distribution({"Dengue fever": 0.5, "dengue": 0.25, "Hepatits C": 0.15, "Zika": 0.1}, labels)
    assert merged == pytest.approx({"Dengue": 0.75, "Hepatitis C": 0.15, "Zika": 0.1})
    assert list(merged) == ["Dengue", "Hepatitis C", "Zika"]
    assert notes == ["'Dengue fever' -> 'Dengue' (synonym)", "merged 'dengue' into 'Dengue'",
                     "'Hepatits C' -> 'Hepatitis C' (typo, 95% alike)"]
    bare, bare_notes = canonical_distribution({"Dengue": 0.5, " dengue ": 0.5}, None)
    assert bare == {"Dengue": 1.0} and bare_notes == ["merged ' dengue ' into 'Dengue'"]
    untouched, none = canonical_distribution({"Dengue": 0.6, "Malaria": 0.4}, labels)
    assert untouched == {"Dengue": 0.6, "Malaria": 0.4} and none == []


def test_scoring_uses_the_same_rules_with_a_note_per_case() -> None:
    labels = LabelSet(["Dengue", "Malaria"], synonyms={"Dengue fever": "Dengue", "paludism": "Malaria"})
    preds = [{"Dengue fever": 0.9, "Malaria": 0.1}, {"Malaria": 1.0}]
    truths = ["Dengue", "paludism"]
    assert E.hits_at(preds, truths, 1).tolist() == [0.0, 0.0]  # by spelling alone: two misses
    canon, refs, notes = E.canonicalize(preds, truths, labels)
    assert E.hits_at(canon, refs, 1).tolist() == [1.0, 1.0]
    assert refs == ["Dengue", "Malaria"]
    assert notes == [["'Dengue fever' -> 'Dengue' (synonym)"], ["reference 'paludism' -> 'Malaria' (synonym)"]]
    same, same_refs, no_notes = E.canonicalize(preds, truths, None)
    assert E.hits_at(same, same_refs, 1).tolist() == [0.0, 0.0] and no_notes == [[], []]


def test_synonym_files_name_the_line_at_fault(tmp_path: Path) -> None:
    assert parse_synonyms("# c\n\nDengue fever = Dengue\n  TB=Tuberculosis \n", "s.txt") == {
        "Dengue fever": "Dengue", "TB": "Tuberculosis"}
    for bad, line in (("a = b\nno sign\n", 2), ("= Dengue\n", 1), ("Dengue fever =  \n", 1)):
        with pytest.raises(ValueError, match=rf"s\.txt:{line}: expected 'synonym = label'"):
            parse_synonyms(bad, "s.txt")
    with pytest.raises(ValueError, match="cannot read .*missing.txt"):
        read_synonyms(tmp_path / "missing.txt")


def test_an_open_set_with_a_synonym_file_from_the_form(tmp_path: Path) -> None:
    path = tmp_path / "syn.txt"
    path.write_text("Dengue fever = Dengue\n", encoding="utf-8")
    labels = read_label_set(f"open:{path}")
    assert labels is not None and not labels.closed and labels.match("dengue fever") == "Dengue"
    assert read_label_set("open") is None


def test_a_debate_resumes_with_its_synonyms_and_its_open_set() -> None:
    """The journalled config keeps the map and the set's kind: a resumed debate parses as the
    first run did (before, the synonyms were lost and an open set came back closed)."""
    for labels in (LabelSet((), closed=False, synonyms={"Dengue fever": "Dengue"}),
                   LabelSet(["Dengue", "Malaria"], synonyms={"Dengue fever": "Dengue"})):
        config = EvinceConfig(case="fever", labels=labels)
        again = EvinceConfig.from_description(config.describe())
        assert again.labels is not None
        assert again.labels.closed == labels.closed and again.labels.synonyms == labels.synonyms
        assert again.labels.labels == labels.labels
        assert parse_distribution(AGREE_B, again.labels).probs == parse_distribution(AGREE_B, labels).probs


# --- the rest of the module's promises, one by one (its mutation list) ----------------------------


@pytest.mark.parametrize(("written", "key"), [
    ("[Dengue]", "dengue"), ("{Dengue}", "dengue"), ("(Dengue)", "dengue"), ("((Dengue))", "dengue"),
    ("()", ""), ("(", "("), ("(a) or (b)", "(a) or (b)"), ("(Dengue))", "(dengue))"),
    ("[a] (b)", "[a] (b)"), ("(vertigo) Paroymsal  Positional Vertigo", "(vertigo) paroymsal positional vertigo"),
])
def test_only_a_bracket_pair_around_the_whole_label_is_taken_off(written: str, key: str) -> None:
    assert normalize_label(written) == key


def test_the_typo_rule_is_inclusive_reports_its_best_ratio_and_reads_long_labels_whole() -> None:
    # ratio exactly 0.9 (2·9/20): at the cutoff, so it matches, for equal and unequal lengths
    assert LabelSet(["abcdefghij"]).match("abcdefghiz") == "abcdefghij"
    assert LabelSet(["abcdefghijk"]).match("abcdefghi") == "abcdefghijk"
    assert LabelSet(["abcdefghijk"]).match("abcdefgh") is None  # 2·8/19 = 0.84
    # a label and its synonym both close: the note gives the closer (97 %, not the synonym's 92 %)
    labels = LabelSet(["abcdefghijklmnopqrst"], synonyms={"abcdefghijklmnopqrxy": "abcdefghijklmnopqrst"})
    assert labels.resolve("abcdefghijklmnopqrs") == ("abcdefghijklmnopqrst", "typo, 97% alike")
    # a 240-character label: no character may be treated as junk (difflib's autojunk would)
    long = "chronic inflammatory demyelinating polyradiculoneuropathy with " * 4
    assert LabelSet([long, "Malaria"]).match(long.replace("polyradiculo", "polyradicullo", 1)) == long.strip()


def test_a_synonym_file_skips_indented_comments_and_splits_at_the_first_sign(tmp_path: Path) -> None:
    assert parse_synonyms("   # a = b\nx = y = z\n", "s.txt") == {"x": "y = z"}
    path = tmp_path / "syn.txt"
    path.write_text("Dengue fever = Dengue\nnot a line\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*syn\.txt:2: expected 'synonym = label'$"):
        read_synonyms(path)


@pytest.mark.parametrize("source", ["open", "auto"])
def test_open_and_auto_are_no_class_set(source: str) -> None:
    assert read_label_set(source) is None


def test_label_files_one_a_line_or_a_csv_column(tmp_path: Path) -> None:
    text = tmp_path / "labels.txt"
    text.write_text("# the differential\n  # indented comment\nMigraine\n\n Tension headache \nmigraine\nCluster headache\n",
                    encoding="utf-8")
    labels = read_label_set(str(text))
    assert labels is not None and labels.closed and labels.synonyms == {}
    assert labels.labels == ("Migraine", "Tension headache", "Cluster headache")  # first spelling, file order
    for column in ("disease", "label", "class"):
        path = tmp_path / f"by-{column}.CSV"
        path.write_text(f"case_id,{column},text\n1,Flu,x\n2,,y\n3,Cold,z\n4,flu,w\n", encoding="utf-8")
        read = read_label_set(str(path))
        assert read is not None and read.labels == ("Flu", "Cold"), column
    both = tmp_path / "both.csv"
    both.write_text("label,disease\nA,Flu\nB,Cold\n", encoding="utf-8")
    read = read_label_set(str(both))
    assert read is not None and read.labels == ("Flu", "Cold")  # "disease" first: Symptom2Disease's splits
    empty_rows = tmp_path / "header-only.csv"
    empty_rows.write_text("label\n", encoding="utf-8")
    for path, error in ((empty_rows, "needs at least two labels, found 0"),):
        with pytest.raises(ValueError, match=rf"{path.name} {error}"):
            read_label_set(str(path))


@pytest.mark.parametrize(("name", "text", "error"), [
    ("nocol.csv", "id,text\n1,x\n", r"nocol\.csv needs a 'disease', 'label' or 'class' column$"),
    ("one.txt", "Flu\nflu \n", r"one\.txt needs at least two labels, found 1$"),
    ("two.txt", "Flu\nCold\n", None),
])
def test_label_file_errors_name_the_file(tmp_path: Path, name: str, text: str, error: str | None) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    if error is None:
        labels = read_label_set(str(path))
        assert labels is not None and len(labels) == 2
        return
    with pytest.raises(ValueError, match=error):
        read_label_set(str(path))


def test_a_missing_label_file_is_named_and_a_home_path_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"^cannot read .*nowhere\.txt \(No such file or directory\)$"):
        read_label_set(str(tmp_path / "nowhere.txt"))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "mine.txt").write_text("Flu\nCold\n", encoding="utf-8")
    (tmp_path / "syn.txt").write_text("grippe = Flu\n", encoding="utf-8")
    labels = read_label_set("~/mine.txt")
    assert labels is not None and labels.labels == ("Flu", "Cold")
    open_ = read_label_set("open:~/syn.txt")
    assert open_ is not None and open_.closed is False and open_.labels == ("Flu",) and open_.match("Grippe") == "Flu"


def test_a_label_set_lists_iterates_and_describes_itself() -> None:
    labels = LabelSet(["Dengue", "Malaria"], synonyms={"dengue fever": "Dengue"})
    assert list(labels) == ["Dengue", "Malaria"] and len(labels) == 2
    assert "Dengue" in labels and " MALARIA " in labels and "Zika" not in labels and 3 not in labels
    assert repr(labels) == "LabelSet(['Dengue', 'Malaria'], closed, 1 synonyms)"
    assert repr(LabelSet(["a"], closed=False)) == "LabelSet(['a'], open, 0 synonyms)"


def test_label_and_synonym_files_are_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """A clinician's file names "Ménière's disease": read as UTF-8 even where the locale is
    ASCII (the C locale of a bare server or container)."""
    labels_file, synonyms_file = tmp_path / "labels.txt", tmp_path / "syn.txt"
    labels_file.write_text("Ménière's disease\nMigraine\n", encoding="utf-8")
    synonyms_file.write_text("Morbus Ménière = Ménière's disease\n", encoding="utf-8")
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        labels = read_label_set(str(labels_file))
        table = read_synonyms(synonyms_file)
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert labels is not None and labels.labels == ("Ménière's disease", "Migraine")
    assert table == {"Morbus Ménière": "Ménière's disease"}


# --- the shipped map holds only true synonyms; broader and narrower names are apart ----------------


def test_the_shipped_map_does_not_merge_a_broader_or_narrower_concept_into_a_class() -> None:
    """UMLS keeps Vertigo apart from BPPV, Cholestasis from chronic cholestasis, Stroke from a
    brain hemorrhage (section 7.4.1.2 maps synonyms "with UMLS"): a different answer must not
    score as the class. Failed when the map merged them."""
    labels = read_label_set("symptom2disease")
    assert labels is not None
    for name in ("Vertigo", "Cholestasis", "Stroke", "Tinea", "Type 2 diabetes", "Hay fever", "Enteric fever",
                 "Bladder infection", "Pulmonary tuberculosis", "HIV infection", "Acute myocardial infarction"):
        assert labels.resolve(name) == (None, "unknown"), name
    for name, label in (("BPPV", "(vertigo) Paroymsal  Positional Vertigo"), ("Brain hemorrhage", "Paralysis (brain hemorrhage)"),
                        ("Piles", "Dimorphic hemmorhoids(piles)"), ("Myocardial infarction", "Heart attack")):
        assert labels.resolve(name) == (label, "synonym"), name
    distribution = parse_distribution('{"Vertigo": 0.7, "Migraine": 0.3}', labels)
    assert distribution.probs == {"Migraine": 1.0}  # not opted in: a name outside the class set, dropped as before


def test_the_shipped_related_names_are_other_concepts_of_the_classes() -> None:
    related = read_related(BUILTIN_RELATED["symptom2disease"])
    labels = read_label_set("symptom2disease")
    synonyms = read_synonyms(BUILTIN_SYNONYMS["symptom2disease"])
    assert labels is not None and len(related) >= 20
    assert related["Vertigo"] == ("(vertigo) Paroymsal  Positional Vertigo", "broader")
    assert related["Tinea"] == ("Fungal infection", "narrower")
    assert not {normalize_label(n) for n in related} & {normalize_label(n) for n in synonyms}  # never both
    for name, (label, _) in related.items():
        assert label in labels and name not in labels, name
        labels.add_related(name, label, related[name][1])  # every line lands
    assert len(labels.related_names) == len(related)


def test_a_related_name_is_kept_apart_in_a_debate_and_credited_only_where_scoring_opts_in() -> None:
    labels = LabelSet(["BPPV", "Migraine"], related={"Vertigo": ("BPPV", "broader")})
    parsed = parse_distribution('{"Vertigo": 0.7, "Migraine": 0.3}', labels)
    assert parsed.probs == pytest.approx({"Vertigo": 0.7, "Migraine": 0.3})  # another answer, not BPPV
    assert any("broader or narrower than a class: 'Vertigo'" in r for r in parsed.repairs)
    assert labels.match("Vertigo") is None and labels.related("vertigo ") == ("BPPV", "broader")
    plain, _ = canonical_distribution(parsed.probs, labels)
    credited, notes = canonical_distribution(parsed.probs, labels, credit_related=True)
    assert plain == pytest.approx({"Vertigo": 0.7, "Migraine": 0.3})
    assert credited == pytest.approx({"BPPV": 0.7, "Migraine": 0.3})
    assert notes == ["'Vertigo' -> 'BPPV' (credited as broader)"]
    assert E.hits_at([plain], ["BPPV"], 1).tolist() == [0.0] and E.hits_at([credited], ["BPPV"], 1).tolist() == [1.0]
    with pytest.raises(ValueError, match="related label 'Zika' is not a label of this set"):
        labels.add_related("fever", "Zika", "broader")
    with pytest.raises(ValueError, match="'migraine' is a label or synonym of this set"):
        labels.add_related("migraine", "BPPV", "broader")
    with pytest.raises(ValueError, match="relation 'wider' is neither"):
        labels.add_related("dizziness", "BPPV", "wider")
    config = EvinceConfig(case="dizzy", labels=labels)
    again = EvinceConfig.from_description(json_round_trip(config.describe()))
    assert again.labels is not None and again.labels.related_names == {"vertigo": ("BPPV", "broader")}


def json_round_trip(data: dict) -> dict:  # type: ignore[type-arg]
    """The config as the journal keeps it (JSON: tuples come back as lists)."""
    import json
    return json.loads(json.dumps(data))


def test_related_files_name_the_line_at_fault() -> None:
    assert parse_related("# c\n\nVertigo > BPPV\n Tinea<Fungal infection \n", "r.txt") == {
        "Vertigo": ("BPPV", "broader"), "Tinea": ("Fungal infection", "narrower")}
    for bad, line in (("a > b\nno sign\n", 2), ("> BPPV\n", 1), ("Vertigo <  \n", 1), ("a > b > c\n", 1), ("a = b\n", 1)):
        with pytest.raises(ValueError, match=rf"r\.txt:{line}: expected 'name > label' \(broader\) or 'name < label' \(narrower\)"):
            parse_related(bad, "r.txt")


# --- open labels are normalized by default: the spelling rules ----------------------------------------


def test_appendix_7e_spellings_resolve_in_the_symptom2disease_set() -> None:
    """App. 7.E's agents write "Hepatitis C (HCV)"; it resolved to nothing before."""
    labels = read_label_set("symptom2disease")
    assert labels is not None
    assert labels.resolve("Hepatitis C (HCV)") == ("Hepatitis C", "parenthetical")
    assert labels.resolve("Hepatitis B (HBV)") == ("Hepatitis B", "parenthetical")
    assert labels.resolve("Malaria fever") == ("Malaria", "head noun")
    assert labels.resolve("Jaundice (yellowing of the skin)") == ("Jaundice", "parenthetical")


def test_each_spelling_rule_links_a_name_to_exactly_one_known_label_either_way() -> None:
    labels = LabelSet(["Dengue", "Hepatitis C (HCV)", "Urinary tract infection", "Lyme disease", "COPD"], closed=False)
    assert labels.resolve("Dengue fever") == ("Dengue", "head noun")
    assert labels.resolve("dengue infection") == ("Dengue", "head noun")
    assert labels.resolve("Lyme") == ("Lyme disease", "head noun")
    assert labels.resolve("HCV") == ("Hepatitis C (HCV)", "parenthetical")  # the bracketed abbreviation
    assert labels.resolve("Hepatitis C") == ("Hepatitis C (HCV)", "parenthetical")
    assert labels.resolve("Dengue (classic)") == ("Dengue", "parenthetical")
    assert labels.resolve("UTI") == ("Urinary tract infection", "abbreviation")
    assert labels.resolve("Chronic obstructive pulmonary disease") == ("COPD", "abbreviation")
    for name in ("uti", "Uti", "Hepatitis C virus", "Yellow fever", "Dengue hemorrhagic fever", "Lyme arthritis",
                 "Dengue fever fever"):
        assert labels.resolve(name)[0] is None, name  # lower case is no abbreviation; no rule fits the rest
    two = LabelSet(["Heart disease", "Heart infection", "Multiple sclerosis", "Mitral stenosis"], closed=False)
    assert two.resolve("Heart") == (None, "ambiguous")  # two labels fit: no guess
    assert two.resolve("MS") == (None, "ambiguous")
    assert two.resolve("Heart disease (cardiac)") == ("Heart disease", "parenthetical")
    glossed = LabelSet(["Paralysis (brain hemorrhage)", "Paralysis (spinal injury)"], closed=False)
    assert glossed.resolve("Paralysis") == (None, "ambiguous")
    assert glossed.resolve("Paralysis (stroke)")[0] is None  # another gloss of the same head is not the same label


def test_an_open_set_has_no_typo_rule_it_would_merge_distinct_classes() -> None:
    """An open set does not know its other labels yet: "Hepatitis C" is 91 % like "Hepatitis B"
    and the typo rule (which a closed set guards by asking for exactly one close label) merged
    them. Failed when open sets used the typo rule."""
    open_ = LabelSet(["Hepatitis B"], closed=False, synonyms={"HBV infection": "Hepatitis B"})
    assert open_.resolve("Hepatitis C") == (None, "unknown")
    assert LabelSet(["Hepatitis B", "Malaria"]).resolve("Hepatits B") == ("Hepatitis B", "typo, 95% alike")


def test_a_debates_open_set_learns_the_labels_as_named_and_no_other_debate_sees_them() -> None:
    shared = LabelSet((), closed=False)
    one, two = shared.for_debate(), shared.for_debate()
    first, none = one.learn({"Dengue fever": 0.6, "Zika": 0.4})
    assert first == {"Dengue fever": 0.6, "Zika": 0.4} and none == []
    second, notes = one.learn({"Zika virus": 0.3, "Dengue": 0.4, "dengue fever": 0.2, "dengue infection": 0.1})
    assert second == pytest.approx({"Dengue fever": 0.6, "Zika virus": 0.3, "dengue infection": 0.1})
    assert list(second) == ["Dengue fever", "Zika virus", "dengue infection"]  # most probable first
    assert notes == ["'Dengue' -> 'Dengue fever' (head noun)", "merged 'dengue fever' into 'Dengue fever'"]
    assert one.labels == ("Dengue fever", "Zika", "Zika virus", "dengue infection")  # no rule links two head nouns
    assert two.labels == () and shared.labels == ()  # nothing leaks to another debate
    closed = LabelSet(["Dengue"])
    assert closed.for_debate() is closed and closed.learn({"Dengue fever": 1.0}) == ({"Dengue fever": 1.0}, [])
    assert shared.learn({"x": 1.0}) == ({"x": 1.0}, []) and shared.labels == ()  # only a debate's own copy learns


async def test_the_default_open_debate_does_not_keep_agreeing_agents_apart_by_spelling() -> None:
    """EVINCE's default class set is open. Agent A says "Dengue fever", agent B "Dengue", both at
    0.8 with malaria: the debate reads one label (JSD and WD 0 in every round), converges with
    the agents agreeing, and B's turn notes the merge. Failed when an open set had no rules (JSD
    0.72 between agents who agree; the stop rule said "settled without agreement")."""
    from protocols.core.events import DebateFinished, MetricsComputed, TurnFinished
    from tests.helpers.evince_scripted import agents, reply, run_all
    from tests.helpers.scripted_backends import ScriptedBackend

    a = ScriptedBackend("a", [reply({"Dengue fever": 0.8, "Malaria": 0.2})] * 4)
    b = ScriptedBackend("b", [reply({"Dengue": 0.8, "malaria": 0.2})] * 4)
    config = EvinceConfig(case="fever, rash, joint pain after a trip", recommendations=False, crit_judge=False, max_rounds=3)
    assert config.labels is None  # the default: the agents name the labels
    events = await run_all(config, agents(a, b, ScriptedBackend("j", [])))
    metrics = [e.metrics for e in events if isinstance(e, MetricsComputed)]
    assert metrics and all(m["jsd"] == pytest.approx(0, abs=1e-12) and m["wd"] == pytest.approx(0, abs=1e-12) for m in metrics)
    done = events[-1]
    assert isinstance(done, DebateFinished) and done.outcome["ending"] == "converged", done.stop_reason
    assert done.outcome["final_distribution"] == pytest.approx({"Dengue fever": 0.8, "Malaria": 0.2})
    b_turn = next(e for e in events if isinstance(e, TurnFinished) and e.role == "agent-b")
    assert "matched labels: 'Dengue' -> 'Dengue fever' (head noun)" in b_turn.parse_notes
    assert b_turn.distribution == pytest.approx({"Dengue fever": 0.8, "Malaria": 0.2})


def test_the_spelling_rules_edge_by_edge() -> None:
    """Each boundary of the rules, one by one (the mutation benchmark's list)."""
    assert LabelSet(["C"], closed=False).resolve("C (the letter)") == ("C", "parenthetical")  # a one-letter head
    assert LabelSet(["HCV"], closed=False).resolve("Hepatitis C ( HCV )") == ("HCV", "parenthetical")  # spaced brackets
    assert LabelSet(["Dengue"], closed=False).resolve("Dengue ()") == ("Dengue", "parenthetical")
    assert LabelSet(["Dengue"], closed=False).resolve("Dengue (dengue virus)") == ("Dengue", "parenthetical")
    assert LabelSet(["Dengue"], closed=False).resolve("Fever (Dengue)") == (None, "unknown")  # the gloss is no abbreviation
    mapped = LabelSet(["Dengue", "Malaria"], synonyms={"Dengue fever": "Dengue"})
    assert mapped.resolve("Dengue fever (DF)") == ("Dengue", "parenthetical")  # through the synonym's spelling
    assert LabelSet(["Dengue"]).resolve(" ** ") == (None, "unknown")  # nothing left of the name
    assert LabelSet(["Malaria"], closed=False).resolve("M") == (None, "unknown")  # one word: one letter, no abbreviation
    one, _ = LabelSet(closed=False).for_debate().learn({"Dengue": 0.3, "Zika": 0.7})
    assert list(one) == ["Zika", "Dengue"]  # most probable first, not alphabetical


def test_related_files_skip_indented_comments_and_name_the_file(tmp_path: Path) -> None:
    assert parse_related("   # a > b\nVertigo > BPPV\n", "r.txt") == {"Vertigo": ("BPPV", "broader")}
    bad = tmp_path / "related.txt"
    bad.write_text("Vertigo > BPPV\nno sign\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*related\.txt:2: expected 'name > label'"):
        read_related(bad)
    with pytest.raises(ValueError, match=r"^cannot read .*missing\.txt \(No such file or directory\)$"):
        read_related(tmp_path / "missing.txt")
    accented = tmp_path / "accented.txt"
    accented.write_text("Maladie de Ménière > Ménière's disease\n", encoding="utf-8")
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        table = read_related(accented)
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert table == {"Maladie de Ménière": ("Ménière's disease", "broader")}


def test_a_bracket_pair_right_after_a_one_letter_name_is_read_as_its_parenthetical() -> None:
    """The closing pair may open at the second character ("C(HCV)"): only the first is ruled out
    (a label wholly in brackets has had them taken off)."""
    from protocols.measures.labels import _parenthetical

    assert _parenthetical("C(HCV)") == ("C", "HCV")
    assert _parenthetical("(HCV)") is None
