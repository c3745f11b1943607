"""Tests of protocols.measures.labels (normalization, LabelSet) and protocols.measures.distribution (parsing replies)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocols.measures.distribution import (
    MAX_INPUT_CHARS,
    DistributionParse,
    DistributionReply,
    Prediction,
    format_distribution,
    parse_distribution,
    reply_schema,
)
from protocols.measures.labels import LabelSet, clean_display, normalize_label

# The 41 diseases of the symptom2disease dataset, spelled as in its dev split.
DISEASES = [
    "(vertigo) Paroymsal  Positional Vertigo", "AIDS", "Acne", "Alcoholic hepatitis", "Allergy",
    "Arthritis", "Bronchial Asthma", "Cervical spondylosis", "Chicken pox", "Chronic cholestasis",
    "Common Cold", "Dengue", "Diabetes", "Dimorphic hemmorhoids(piles)", "Drug Reaction",
    "Fungal infection", "GERD", "Gastroenteritis", "Heart attack", "Hepatitis B", "Hepatitis C",
    "Hepatitis D", "Hepatitis E", "Hypertension", "Hyperthyroidism", "Hypoglycemia",
    "Hypothyroidism", "Impetigo", "Jaundice", "Malaria", "Migraine", "Osteoarthristis",
    "Paralysis (brain hemorrhage)", "Peptic ulcer diseae", "Pneumonia", "Psoriasis",
    "Tuberculosis", "Typhoid", "Urinary tract infection", "Varicose veins", "hepatitis A",
]
CLOSED = LabelSet(DISEASES)
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(result: DistributionParse, labels: LabelSet | None, top_k: int | None = None) -> None:
    """What every parse must satisfy, whatever the input."""
    assert isinstance(result, DistributionParse)
    assert all(isinstance(r, str) and r for r in result.repairs)
    assert all(isinstance(a, str) for a in result.arguments)
    if result.probs is None:
        assert isinstance(result.rejected_reason, str) and result.rejected_reason
        return
    assert result.rejected_reason is None
    assert result.probs
    assert abs(sum(result.probs.values()) - 1.0) <= 1e-9
    assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in result.probs.values())
    if labels is not None and labels.closed:
        assert set(result.probs) <= set(labels.labels)
    if top_k is not None:
        assert len(result.probs) <= top_k


# --- labels --------------------------------------------------------------------------------


def test_normalize_label_examples() -> None:
    assert normalize_label("  Hepatitis   C ") == normalize_label("hepatitis c") == "hepatitis c"
    assert normalize_label("“Hepatitis C”") == "hepatitis c"  # unicode quotes stripped
    assert normalize_label("Hepatitis\u2013C") == normalize_label("Hepatitis-C") == "hepatitis-c"
    assert normalize_label("**Dengue**.") == normalize_label("(Dengue)") == "dengue"
    assert normalize_label("common_cold") == "common cold"
    assert normalize_label("Diabetes ") == "diabetes"
    # brackets that do not wrap the whole label are kept
    assert normalize_label("(vertigo) Paroymsal  Positional Vertigo") == "(vertigo) paroymsal positional vertigo"
    assert normalize_label("Dimorphic hemmorhoids(piles)") == "dimorphic hemmorhoids(piles)"
    assert normalize_label("(a) or (b)") == "(a) or (b)"


def test_dataset_labels_stay_distinct_and_stable() -> None:
    keys = [normalize_label(d) for d in DISEASES]
    assert len(set(keys)) == len(DISEASES)
    assert [normalize_label(k) for k in keys] == keys


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_normalize_is_idempotent(s: str) -> None:
    once = normalize_label(s)
    assert normalize_label(once) == once
    assert normalize_label(clean_display(s)) == once


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DISEASES), st.sampled_from(["", " ", "  ", "\t"]), st.booleans(), st.sampled_from(["", '"', "**"])
)
def test_mangled_dataset_labels_match_themselves(label: str, pad: str, upper: bool, wrap: str) -> None:
    mangled = wrap + pad + (label.upper() if upper else label.lower()).replace(" ", " " + pad) + pad + wrap
    assert CLOSED.match(mangled) == label


def test_labelset_match_order_and_ambiguity() -> None:
    labels = LabelSet(DISEASES, synonyms={"piles": "Dimorphic hemmorhoids(piles)"})
    assert labels.match("hepatitis c") == "Hepatitis C"  # exact after normalization
    assert labels.match("Piles") == "Dimorphic hemmorhoids(piles)"  # synonym
    assert labels.match("Dimorphic hemorrhoids(piles)") == "Dimorphic hemmorhoids(piles)"  # fuzzy 0.96
    assert labels.match("Hepatits C") == "Hepatitis C"  # fuzzy 0.95, unique
    assert labels.match("Hepatitis G") is None  # 0.91 to all five hepatitis kinds: ambiguous
    assert labels.match("Chikungunya") is None
    assert labels.match("") is None
    labels.add_synonym("PUD", "Peptic ulcer diseae")
    assert labels.match("pud") == "Peptic ulcer diseae"
    assert labels.synonyms == {"piles": "Dimorphic hemmorhoids(piles)", "pud": "Peptic ulcer diseae"}
    with pytest.raises(ValueError):
        labels.add_synonym("flu", "Influenza")


def test_labelset_basics() -> None:
    assert CLOSED.labels[0] == "(vertigo) Paroymsal  Positional Vertigo"  # spacing kept for display
    assert len(CLOSED) == 41 and "hepatitis a" in CLOSED and "Hepatitis F" not in CLOSED
    assert LabelSet([" Diabetes "]).labels == ("Diabetes",)
    with pytest.raises(ValueError, match="normalize to the same name"):
        LabelSet(["Hepatitis C", "hepatitis  c"])
    open_set = LabelSet(["Dengue"], closed=False)
    assert not open_set.closed and open_set.match("dengue") == "Dengue" and open_set.match("Zika") is None


# --- the requested shape and the schema ----------------------------------------------------


def test_clean_reply_needs_no_repair() -> None:
    reply = DistributionReply(
        predictions=[
            Prediction(label="Hepatitis C", probability=0.5, argument="ALT is high"),
            Prediction(label="Jaundice", probability=0.3, argument="yellow skin"),
            Prediction(label="Hepatitis B", probability=0.2, argument="ALT is high"),
        ],
        arguments=["Liver involvement is clear."],
    )
    result = parse_distribution(reply.model_dump_json(), CLOSED, top_k=3)
    assert result.ok and result.repairs == []
    assert result.probs == {"Hepatitis C": 0.5, "Jaundice": 0.3, "Hepatitis B": 0.2}
    assert list(result.probs) == ["Hepatitis C", "Jaundice", "Hepatitis B"]  # highest first
    # per-prediction arguments first, duplicates removed, then the general ones
    assert result.arguments == ["ALT is high", "yellow skin", "Liver involvement is clear."]


def test_reply_schema() -> None:
    schema = reply_schema(CLOSED, top_k=3)
    assert schema["$defs"]["Prediction"]["properties"]["label"]["enum"] == list(CLOSED.labels)
    assert schema["properties"]["predictions"]["maxItems"] == 3
    assert "enum" not in json.dumps(reply_schema(LabelSet(["x"], closed=False)))


# --- one test per repair --------------------------------------------------------------------


def test_json_in_a_fence() -> None:
    reply = '{"predictions": [{"label": "Dengue", "probability": 1.0, "argument": "rash"}]}'
    raw = f"Here is my answer:\n```json\n{reply}\n```"
    result = parse_distribution(raw, CLOSED)
    assert result.probs == {"Dengue": 1.0}
    assert result.repairs == ["extracted the JSON from the surrounding text"]


def test_json_in_prose() -> None:
    raw = 'I believe {"Dengue": 0.7, "Malaria": 0.3} fits best. {not json}'
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Dengue": 0.7, "Malaria": 0.3})
    assert "extracted the JSON from the surrounding text" in result.repairs


def test_trailing_commas() -> None:
    result = parse_distribution('{"predictions": [{"label": "Dengue", "probability": 1,},],}', CLOSED)
    assert result.probs == {"Dengue": 1.0} and "removed trailing commas" in result.repairs


def test_single_quotes() -> None:
    raw = "{'predictions': [{'label': 'Malaria', 'probability': 0.6}, {'label': \"Dengue\", 'probability': 0.4}]}"
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Malaria": 0.6, "Dengue": 0.4})
    assert "converted single quotes to double quotes" in result.repairs


def test_percent_strings_and_bare_percent() -> None:
    raw = '{"predictions": [{"label": "Malaria", "probability": "60%"}, {"label": "Dengue", "probability": 40%}]}'
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Malaria": 0.6, "Dengue": 0.4})
    assert "quoted bare percentages" in result.repairs


def test_numbers_summing_to_about_100_are_percentages() -> None:
    result = parse_distribution('{"Dengue": 60, "Malaria": 30, "Typhoid": 9}', CLOSED)
    assert result.probs == pytest.approx({"Dengue": 60 / 99, "Malaria": 30 / 99, "Typhoid": 9 / 99})
    assert "read values summing to 99 as percentages" in result.repairs


def test_probabilities_as_strings() -> None:
    raw = '{"predictions": [{"label": "Dengue", "probability": " 0.4 "}, {"label": "Malaria", "probability": 0.6}]}'
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Malaria": 0.6, "Dengue": 0.4})
    assert "read 1 probabilities given as strings" in result.repairs


def test_plain_mapping() -> None:
    result = parse_distribution('{"Dengue": 0.5, "Malaria": 0.5, "arguments": ["fever"]}', CLOSED)
    assert result.probs == {"Dengue": 0.5, "Malaria": 0.5} and result.arguments == ["fever"]
    assert "read a plain {label: probability} mapping" in result.repairs


def test_list_of_pairs() -> None:
    result = parse_distribution('[["Dengue", 0.8], ["Malaria", "20%"]]', CLOSED)
    assert result.probs == pytest.approx({"Dengue": 0.8, "Malaria": 0.2})
    assert "read a list of [label, probability] pairs" in result.repairs


def test_wrapped_object_is_unwrapped() -> None:
    result = parse_distribution('{"answer": {"predictions": {"Dengue": 1}}}', CLOSED)
    assert result.probs == {"Dengue": 1.0}
    assert parse_distribution('[{"predictions": [["Dengue", 1]]}]', CLOSED).probs == {"Dengue": 1.0}


def test_text_with_parenthesized_percentages() -> None:
    result = parse_distribution("Dengue (60%), Chikungunya (25%), Zika (15%).", None)
    assert result.probs == pytest.approx({"Dengue": 0.6, "Chikungunya": 0.25, "Zika": 0.15})
    assert result.repairs == ["no usable JSON; read 3 'label: percent' pairs from the text"]
    # with a label set, the longest run of trailing words it recognizes is the label
    closed = parse_distribution("I'd say it is Dengue (60%) or maybe Malaria (40%)", CLOSED)
    assert closed.probs == pytest.approx({"Dengue": 0.6, "Malaria": 0.4})
    # without one, the words before the number are kept as written
    assert "I'd say it is Dengue" in parse_distribution("I'd say it is Dengue (60%)", None).probs


def test_text_with_numbered_lines() -> None:
    raw = "My ranking:\n1. Hepatitis C: 40%\n2. **Hepatitis B**: 30%\n3. The rest is Jaundice - 30%\n"
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Hepatitis C": 0.4, "Hepatitis B": 0.3, "Jaundice": 0.3})
    text = parse_distribution("Paralysis (brain hemorrhage): 0.7\nMigraine = 0.3", CLOSED)
    assert text.probs == pytest.approx({"Paralysis (brain hemorrhage)": 0.7, "Migraine": 0.3})


def test_drops_negative_nan_and_infinite_values() -> None:
    raw = '{"Dengue": 0.5, "Malaria": -0.2, "Typhoid": NaN, "Jaundice": Infinity, "Acne": 1e999, "GERD": 0.5}'
    result = parse_distribution(raw, CLOSED)
    assert result.probs == {"Dengue": 0.5, "GERD": 0.5}
    assert "dropped 4 negative, NaN or infinite probabilities" in result.repairs


def test_merges_duplicate_labels() -> None:
    entries = [("Dengue", 0.3), (" dengue", 0.3), ("Malaria", 0.4)]
    raw = json.dumps({"predictions": [{"label": label, "probability": p} for label, p in entries]})
    result = parse_distribution(raw, CLOSED)
    assert result.probs == pytest.approx({"Dengue": 0.6, "Malaria": 0.4})
    assert "merged duplicate labels: 'Dengue'" in result.repairs


def test_closed_set_drops_unknown_labels_and_maps_typos() -> None:
    result = parse_distribution('{"Hepatits C": 0.5, "Chikungunya": 0.25, "Zika": 0.25}', CLOSED)
    assert result.probs == {"Hepatitis C": 1.0}
    assert "matched labels: 'Hepatits C' -> 'Hepatitis C' (typo, 95% alike)" in result.repairs
    assert "dropped 2 labels unknown in the closed set: 'Chikungunya', 'Zika'" in result.repairs
    assert "renormalized probabilities that summed to 0.5" in result.repairs


def test_open_set_keeps_unknown_labels() -> None:
    labels = LabelSet(["Dengue"], closed=False)
    result = parse_distribution('{"dengue": 0.5, " Chikungunya ": 0.5}', labels)
    assert result.probs == {"Dengue": 0.5, "Chikungunya": 0.5}


def test_renormalizes() -> None:
    result = parse_distribution('{"Dengue": 0.3, "Malaria": 0.3}', CLOSED)
    assert result.probs == pytest.approx({"Dengue": 0.5, "Malaria": 0.5})
    assert "renormalized probabilities that summed to 0.6" in result.repairs


def test_top_k_truncates_and_renormalizes() -> None:
    result = parse_distribution('{"Dengue": 0.4, "Malaria": 0.3, "Typhoid": 0.2, "Jaundice": 0.1}', CLOSED, top_k=2)
    assert result.probs == pytest.approx({"Dengue": 4 / 7, "Malaria": 3 / 7})
    assert "kept the top 2 of 4 labels" in result.repairs
    with pytest.raises(ValueError):
        parse_distribution("{}", CLOSED, top_k=0)


def test_zero_entries_are_dropped() -> None:
    result = parse_distribution('{"Dengue": 1, "Malaria": 0}', CLOSED)
    assert result.probs == {"Dengue": 1.0}
    assert "dropped 1 labels with zero probability: 'Malaria'" in result.repairs


def test_control_characters_and_ansi_are_removed() -> None:
    result = parse_distribution('\x1b[31m{"Dengue":\x00 1}\x1b[0m', CLOSED)
    assert result.probs == {"Dengue": 1.0}
    assert result.repairs[0] == "removed control characters and terminal escapes"


def test_input_length_is_capped() -> None:
    raw = '{"Dengue": 1}' + " " * (MAX_INPUT_CHARS + 10)
    result = parse_distribution(raw, CLOSED)
    assert result.probs == {"Dengue": 1.0} and result.raw == raw
    assert result.repairs[0] == f"cut the reply to its first {MAX_INPUT_CHARS} characters"


# --- rejections -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty reply"),
        ("I cannot tell without more tests.", "no JSON object and no 'label: percent' pairs found"),
        (
            '{"thoughts": "hmm"}',
            "the JSON holds no label/probability pairs, and the text has no 'label: percent' pairs",
        ),
        ('{"Flu": 0.5, "Zika": 0.3, "Ebola": 0.2}', "all 3 labels unknown in the closed set: 'Flu', 'Zika', 'Ebola'"),
        ('{"Dengue": 0, "Malaria": 0}', "all probabilities were zero or negative"),
        ('{"Dengue": -1, "Malaria": NaN}', "all probabilities were negative, NaN or infinite"),
    ],
)
def test_rejections(raw: str, reason: str) -> None:
    result = parse_distribution(raw, CLOSED)
    assert result.probs is None and not result.ok
    assert result.rejected_reason == reason


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 100_000,
        "{" * 30_000 + "}" * 30_000,
        "[" * 3000 + "]" * 3000,
        '{"a": ' * 5000 + "1" + "}" * 5000,
        '{"Dengue": ' + "9" * 5000 + "}",
        '"' * 1000 + "{" * 1000,
        "Dengue: 99999999999999999999%",
        "x" * (MAX_INPUT_CHARS * 2),
    ],
)
def test_pathological_inputs(raw: str) -> None:
    check_invariants(parse_distribution(raw, CLOSED), CLOSED)


# --- fuzzing ---------------------------------------------------------------------------------

FRAGMENTS = [
    "{", "}", "[", "]", '"', "'", ",", ":", "%", "%,", " ", "\n", "\x1b[31m", "\x00", "```json\n", "```",
    '"label"', '"probability"', '"predictions"', '"arguments"', '"argument"', "label", "probability",
    "NaN", "Infinity", "-Infinity", "-1", "0", "0.5", ".3", "1e999", "1e-320", "40%", '"40%"', "40",
    "1" * 30, "true", "null", "Dengue", "Hepatitis C", "hepatitis  c", "Zika", "1.", "(", ")", "=",
]


@st.composite
def jsonish_text(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=60)))


JSON_LEAVES = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from(DISEASES) | st.sampled_from(["40%", "0.4", "-3", "1e999", "abc"])
)
JSON_KEYS = st.sampled_from(["predictions", "label", "probability", "argument", "arguments", "Dengue", "p"]) | st.text(
    max_size=6
)
json_values = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_KEYS, inner, max_size=4),
    max_leaves=25,
)


@st.composite
def prediction_replies(draw: st.DrawFn) -> str:
    prob = st.floats() | st.integers(-200, 200) | st.sampled_from(["40%", " 0.25", "abc"])
    label = st.sampled_from([*DISEASES, "Zika", "Hepatitis G", ""]) | st.text(max_size=12)
    preds = draw(st.lists(st.fixed_dictionaries({"label": label, "probability": prob}), max_size=6))
    text = json.dumps({"predictions": preds, "arguments": draw(st.lists(st.text(max_size=10), max_size=2))})
    return draw(st.sampled_from(["{}", "Answer: {} thanks", "```json\n{}\n```"])).replace("{}", text)


@FUZZ
@given(st.text(), st.sampled_from([None, CLOSED, LabelSet(DISEASES[:5], closed=False)]), st.sampled_from([None, 1, 3]))
def test_fuzz_arbitrary_text(raw: str, labels: LabelSet | None, top_k: int | None) -> None:
    check_invariants(parse_distribution(raw, labels, top_k=top_k), labels, top_k)


@FUZZ
@given(jsonish_text(), st.sampled_from([None, CLOSED]), st.sampled_from([None, 3]))
def test_fuzz_jsonish_fragments(raw: str, labels: LabelSet | None, top_k: int | None) -> None:
    check_invariants(parse_distribution(raw, labels, top_k=top_k), labels, top_k)


@FUZZ
@given(json_values, st.sampled_from([None, CLOSED]), st.booleans())
def test_fuzz_json_values(value: object, labels: LabelSet | None, single_quotes: bool) -> None:
    raw = json.dumps(value)
    if single_quotes:
        raw = raw.replace('"', "'")
    check_invariants(parse_distribution(raw, labels), labels)


@FUZZ
@given(prediction_replies(), st.sampled_from([None, CLOSED]), st.sampled_from([None, 3]))
def test_fuzz_prediction_replies(raw: str, labels: LabelSet | None, top_k: int | None) -> None:
    check_invariants(parse_distribution(raw, labels, top_k=top_k), labels, top_k)


# --- display ---------------------------------------------------------------------------------


def test_format_distribution() -> None:
    assert format_distribution({"Hepatitis B": 0.3, "Hepatitis C": 0.4, "Jaundice": 0.296, "Acne": 0.004}) == (
        "Hepatitis C 40% · Hepatitis B 30% · Jaundice 30% · Acne <1%"
    )
    assert format_distribution(None) == format_distribution({}) == "(no distribution)"


def test_raw_newlines_inside_json_strings_are_accepted() -> None:
    """llama.cpp's JSON grammar lets a model put a bare newline inside a string."""
    from pydantic import BaseModel

    from protocols.core.untrusted import parse_as

    class Note(BaseModel):
        text: str

    parsed, notes = parse_as('{"text": "line one\nline two"}', Note)
    assert parsed is not None and parsed.text == "line one\nline two" and notes == []


def test_a_reply_cut_off_mid_json_keeps_its_complete_predictions() -> None:
    labels = LabelSet(["Pneumonia", "Psoriasis", "Malaria"])
    raw = ('{ "predictions": [ { "label": "Pneumonia", "probability": 0.7, "argument": "cough" }, '
           '{ "label": "Psoriasis", "probability": 0.3, "a')
    parsed = parse_distribution(raw, labels)
    assert parsed.probs == {"Pneumonia": 1.0}
    assert any("cut off mid-JSON" in r for r in parsed.repairs)


def test_cut_off_json_is_closed_at_its_last_complete_part() -> None:
    from protocols.core.untrusted import json_candidates

    values = [v for v, _ in json_candidates('{"a": [1, 2], "b": {"c": "x"}, "d": "unfinish')]
    assert values[0] == {"a": [1, 2], "b": {"c": "x"}}
    assert list(json_candidates('{"a": "never closed')) == []
