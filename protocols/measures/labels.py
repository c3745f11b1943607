"""Class-label names: normalization, closed/open label sets, and alignment of distributions.

EVINCE (chapter 7, section 7.3) has each agent emit a top-k probability vector over a class
set C. Two agents (and the dataset's ground truth) spell the same class differently:
"Hepatitis C", " hepatitis  c", "“Hepatitis C”". Every metric of appendix 7.A compares
vectors *on a common label set*, so labels must first be reduced to one key per class.
That key is :func:`normalize_label`; the name shown to people stays the one that was given.

Beyond the key, :meth:`LabelSet.resolve` applies, in order: the class set's synonym map (same
concept, other name: "Dengue fever" = "Dengue"); three spelling rules that link a name to a
label the set knows, each only where exactly one label fits (:data:`SPELLING_RULES`):

* *parenthetical*: "X (Y)" is "X" ("Hepatitis C (HCV)" is "Hepatitis C"; "Cirrhosis (due to
  chronic hepatitis …)" is "Cirrhosis", as appendix 7.E's agents write them), and an
  abbreviation in the brackets stands for the whole ("HCV" is "Hepatitis C (HCV)");
* *head noun*: "X fever", "X disease", "X infection" is "X" ("Dengue fever" and "Dengue",
  "Lyme disease" and "Lyme"), never on its own: "Yellow fever" stays itself unless "Yellow" is
  a label, and "Heart disease" is not "Heart infection";
* *abbreviation*: a name in capitals is the label whose words' initials it spells ("UTI" is
  "Urinary tract infection", "GERD" "Gastro-esophageal reflux disease");

then, in a closed set only, a typo rule (one label at least :data:`FUZZY_CUTOFF` alike): an open
set does not know its other labels yet, and "Hepatitis C" is 91 % like "Hepatitis B". Every
merge is named by its rule where it is made (a turn's parse notes, the benchmark's label merges).

An open set used by one debate learns each label as the agents name it
(:meth:`LabelSet.for_debate`, :meth:`LabelSet.learn`), so that agent B's "Dengue" meets agent A's
"Dengue fever" and the metrics compare one label. Broader and narrower names ("Vertigo" for
benign paroxysmal positional vertigo) are other concepts, never merged: a class set may list
them as a separate relation (:meth:`LabelSet.add_related`), kept as written in a debate and
credited only where scoring opts in, and then reported apart.
"""

from __future__ import annotations

import copy
import csv
import difflib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from protocols.core.lazy import module

if TYPE_CHECKING:
    import numpy as np
else:
    np = module("numpy")

__all__ = [
    "FUZZY_CUTOFF",
    "HEAD_NOUNS",
    "LabelSet",
    "RELATIONS",
    "SPELLING_RULES",
    "align",
    "align_many",
    "canonical_distribution",
    "canonical_label",
    "clean_display",
    "normalize_label",
    "parse_related",
    "parse_synonyms",
    "read_label_set",
    "read_related",
    "read_synonyms",
]

#: The class sets shipped with Symposium, by name (package data of ``tui``, where the app's
#: form lists them; read here because the protocols' inputs name them).
BUILTIN_LABEL_SETS: dict[str, Path] = {
    "symptom2disease": Path(__file__).resolve().parent / "data" / "symptom2disease_labels.txt",
}
#: Each built-in class set's synonym map (``synonym = label`` lines): the names models commonly
#: give its classes ("Dengue fever" for "Dengue", "GERD" spelled out). Section 7.4.1.2 maps
#: synonyms with UMLS, which cannot ship offline; this short hand-made map stands in for it.
BUILTIN_SYNONYMS: dict[str, Path] = {
    "symptom2disease": Path(__file__).resolve().parent / "data" / "symptom2disease_synonyms.txt",
}
#: Each built-in class set's broader and narrower names (``name > label``: the name is broader,
#: ``name < label``: narrower), other concepts than the class: never merged, only credited
#: where scoring opts in (:meth:`LabelSet.add_related`).
BUILTIN_RELATED: dict[str, Path] = {
    "symptom2disease": Path(__file__).resolve().parent / "data" / "symptom2disease_related.txt",
}
#: The built-in choices of a class set, as the form shows them.
LABEL_SOURCES: dict[str, str] = {
    "symptom2disease": "Symptom2Disease: 41 diseases",
    "open": "Open set: the agents name the labels",
}

FUZZY_CUTOFF = 0.9
"""Minimum :class:`difflib.SequenceMatcher` ratio for a fuzzy label match (see :meth:`LabelSet.match`)."""

HEAD_NOUNS = ("fever", "disease", "infection")
"""The head nouns of the head-noun rule: "X fever" is "X" where "X" is a label (module docstring)."""

SPELLING_RULES = ("parenthetical", "head noun", "abbreviation")
"""The spelling rules of :meth:`LabelSet.resolve`, in the order tried."""

RELATIONS = {">": "broader", "<": "narrower"}
"""A related name's relation to its class, as the ``name > label`` / ``name < label`` lines write it."""

#: Words an abbreviation skips ("Disease of the heart" is not "DOTH").
_MINOR_WORDS = frozenset({"of", "the", "and", "in", "to", "with", "a", "an"})
_ABBREVIATION = re.compile(r"[A-Z][A-Z0-9]{1,5}")

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u00b4`"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"
_UNIFY = str.maketrans(
    {c: "-" for c in _DASHES}
    | {c: "'" for c in _SINGLE_QUOTES}
    | {c: '"' for c in _DOUBLE_QUOTES}
    | {"_": " "}
)
# Characters that wrap a label in model output (quotes, markdown emphasis, list bullets,
# sentence punctuation) but are never its meaningful first or last character.
_EDGE_JUNK = " \t\n\r\"'*_.,;:!?-#"


def _enclosed(s: str) -> bool:
    """Whether one bracket pair encloses all of ``s`` ("(a b)" yes, "(a) or (b)" no)."""
    if len(s) < 2 or (s[0], s[-1]) not in {("(", ")"), ("[", "]"), ("{", "}")}:
        return False
    depth = 0
    for ch in s[:-1]:
        depth += (ch == s[0]) - (ch == s[-1])
        if depth == 0:
            return False
    return True


def _strip_edges(s: str) -> str:
    """Strip wrapping punctuation and a bracket pair enclosing the *whole* label.

    "(Dengue)" loses its parentheses, but "(vertigo) Paroymsal Positional Vertigo" and
    "Dimorphic hemmorhoids(piles)" (real labels of the symptom2disease dataset) keep theirs,
    because there the brackets do not enclose the whole string.
    """
    while True:
        before = s
        s = s.strip(_EDGE_JUNK)
        if _enclosed(s):
            s = s[1:-1]
        if s == before:
            return s


def clean_display(s: str) -> str:
    """A label as people should see it: unicode dashes/quotes unified, whitespace collapsed,
    wrapping quotes/markdown stripped, case kept."""
    s = unicodedata.normalize("NFKC", s).translate(_UNIFY)
    return _strip_edges(" ".join(s.split()))


def normalize_label(s: str) -> str:
    """The matching key of a label.

    NFKC-normalize, unify unicode dashes and quotes with their ASCII forms, treat ``_`` as a
    space, casefold, collapse whitespace runs to one space, then strip wrapping punctuation,
    quotes and an enclosing bracket pair. So "  Hepatitis   C " and "hepatitis c" share a key,
    while distinct classes stay distinct ("Hepatitis C" vs "Hepatitis B"): nothing here
    removes letters or digits inside the label. The function is idempotent.
    """
    s = unicodedata.normalize("NFKC", s).translate(_UNIFY)
    s = unicodedata.normalize("NFKC", s.casefold())
    return _strip_edges(" ".join(s.split()))


def _parenthetical(label: str) -> tuple[str, str] | None:
    """A tidied label (:func:`clean_display`) as "X (Y)": X and Y as written (the callers read
    them through :func:`normalize_label` or :func:`clean_display`), for the bracket pair that
    closes it; ``None`` when it does not end in one ("(vertigo) Paroymsal …" opens with its
    brackets). The pair never opens at the first character: a label wholly in brackets has had
    them taken off."""
    if not label.endswith(")"):
        return None
    depth = 0
    for i in range(len(label) - 1, 0, -1):
        depth += (label[i] == ")") - (label[i] == "(")
        if depth == 0:
            return label[:i], label[i + 1:-1]
    return None


def _is_abbreviation(name: str) -> bool:
    """A name written as an abbreviation: 2–6 capitals and digits, a capital first ("HCV", "T2DM")."""
    return _ABBREVIATION.fullmatch(clean_display(name)) is not None


def _initials(key: str) -> str:
    """The initials of a key's words, hyphenated parts apart, minor words skipped
    ("gastro-esophageal reflux disease" → "gerd"; a one-word key gives one letter, which no
    abbreviation of two or more is)."""
    return "".join(w[0] for w in re.split(r"[\s-]+", key) if w not in _MINOR_WORDS)


def _linked(rule: str, name: str, key: str, known: str, known_key: str) -> bool:
    """Whether ``rule`` links the name (as written, and its key) to a known label (its display
    name and its key). Each rule is symmetric: either side may carry the brackets, the head
    noun, or the capitals."""
    if rule == "parenthetical":
        for written, other in ((name, known_key), (known, key)):
            parts = _parenthetical(clean_display(written))
            if parts is not None and (normalize_label(parts[0]) == other
                                      or (normalize_label(parts[1]) == other and _is_abbreviation(parts[1]))):
                return True
        return False
    if rule == "head noun":
        return any(a == f"{b} {head}" for a, b in ((key, known_key), (known_key, key)) for head in HEAD_NOUNS)
    return ((_is_abbreviation(name) and _initials(known_key) == key)
            or (_is_abbreviation(known) and _initials(key) == known_key))


class LabelSet:
    """The class set C of a debate (chapter 7, section 7.3: "a class set C").

    *Closed* sets (a diagnosis dataset's 41 diseases) only accept their own labels: the
    distribution parser drops anything :meth:`match` cannot map. *Open* sets (free-form
    debates) know some labels but accept new ones as written.

    Canonical display names are the given labels with surrounding whitespace trimmed (internal
    spacing is kept so that they equal the dataset's spelling, e.g. the double space in
    "(vertigo) Paroymsal  Positional Vertigo"). ``synonyms`` maps alternative names to
    canonical labels; keys are normalized on insertion and :meth:`add_synonym` extends it.
    ``related`` maps broader or narrower names to ``(label, relation)`` (:meth:`add_related`).
    """

    def __init__(
        self,
        labels: Iterable[str] = (),
        *,
        closed: bool = True,
        synonyms: Mapping[str, str] | None = None,
        fuzzy_cutoff: float = FUZZY_CUTOFF,
        related: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.closed = closed
        self.fuzzy_cutoff = fuzzy_cutoff
        self._by_key: dict[str, str] = {}
        for label in labels:
            key = normalize_label(label)
            if key in self._by_key:
                raise ValueError(
                    f"labels {self._by_key[key]!r} and {label!r} normalize to the same name {key!r}"
                )
            self._by_key[key] = label.strip()
        self._synonyms: dict[str, str] = {}
        for synonym, canonical in (synonyms or {}).items():
            self.add_synonym(synonym, canonical)
        self._related: dict[str, tuple[str, str]] = {}
        for name, (label, relation) in (related or {}).items():
            self.add_related(name, label, relation)
        #: A debate's own copy of an open set learns the labels its agents name (:meth:`for_debate`).
        self.learning = False

    @property
    def labels(self) -> tuple[str, ...]:
        """Canonical display names, in the order given."""
        return tuple(self._by_key.values())

    @property
    def synonyms(self) -> dict[str, str]:
        """A copy of the synonym table (normalized synonym -> canonical label)."""
        return dict(self._synonyms)

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_label(name) in self._by_key

    def __repr__(self) -> str:
        kind = "closed" if self.closed else "open"
        return f"LabelSet({list(self.labels)!r}, {kind}, {len(self._synonyms)} synonyms)"

    def add_synonym(self, synonym: str, canonical: str) -> None:
        """Let ``synonym`` stand for ``canonical``. In a closed set ``canonical`` must be one of
        its labels; an open set learns it as a label (an open debate's synonym map names the
        spelling both agents' "Dengue" and "Dengue fever" become)."""
        key = normalize_label(canonical)
        if key not in self._by_key:
            if self.closed:
                raise ValueError(f"synonym target {canonical!r} is not a label of this set")
            if not key:
                raise ValueError(f"synonym target {canonical!r} is empty")
            self._by_key[key] = clean_display(canonical)
        if normalize_label(synonym) != key:
            self._synonyms[normalize_label(synonym)] = self._by_key[key]

    @property
    def related_names(self) -> dict[str, tuple[str, str]]:
        """A copy of the related names (normalized name -> (canonical label, "broader" or "narrower"))."""
        return dict(self._related)

    def add_related(self, name: str, label: str, relation: str) -> None:
        """Let ``name`` be a broader or narrower concept than the class ``label`` (``relation``
        is "broader" or "narrower"): never merged with it; kept as written in a closed set's
        distributions, and credited to ``label`` only by scoring that opts in (:meth:`related`)."""
        if relation not in RELATIONS.values():
            raise ValueError(f"relation {relation!r} is neither 'broader' nor 'narrower'")
        key = normalize_label(label)
        if key not in self._by_key:
            raise ValueError(f"related label {label!r} is not a label of this set")
        if normalize_label(name) in self._by_key or normalize_label(name) in self._synonyms:
            raise ValueError(f"{name!r} is a label or synonym of this set, not a related name")
        self._related[normalize_label(name)] = (self._by_key[key], relation)

    def related(self, name: str) -> tuple[str, str] | None:
        """The class ``name`` is broader or narrower than, and which: ``(label, relation)``, or ``None``."""
        return self._related.get(normalize_label(name))

    def for_debate(self) -> LabelSet:
        """The set one debate uses: a closed set as it is; an open set's copy that learns the
        labels its agents name (:meth:`learn`), so that no two debates share what they learnt."""
        if self.closed:
            return self
        mine = copy.deepcopy(self)
        mine.learning = True
        return mine

    def learn(self, dist: Mapping[str, float]) -> tuple[dict[str, float], list[str]]:
        """``dist`` with each label in this set's spelling, a label it did not know added to it
        (a debate's open set learning what its agents name, in the order named), entries that
        name one label merged by summing, and one note per rename or merge. A closed set, or a
        set that is not a debate's own (:meth:`for_debate`), learns nothing."""
        if not self.learning:
            return dict(dist), []
        merged: dict[str, float] = {}
        notes: list[str] = []
        for name, value in dist.items():
            found, how = self.resolve(name)
            if found is None:
                found = clean_display(name)
                self._by_key[normalize_label(found)] = found
            elif normalize_label(found) != normalize_label(name):
                notes.append(f"{clean_display(name)!r} -> {found!r} ({how})")
            if found in merged:
                notes.append(f"merged {clean_display(name)!r} into {found!r}")
            merged[found] = merged.get(found, 0.0) + float(value)
        return dict(sorted(merged.items(), key=lambda kv: -kv[1])), notes

    def add_known_synonyms(self, synonyms: Mapping[str, str]) -> list[str]:
        """Add the entries of a class set's synonym map whose target is a label of this set
        (a map written for 41 diseases serves cases that use 30 of them); returns the
        synonyms left out because their target is not here."""
        skipped = []
        for synonym, canonical in synonyms.items():
            if synonym in self:  # a class of its own here ("Asthma" beside "Bronchial Asthma")
                skipped.append(synonym)
            elif canonical in self:
                self.add_synonym(synonym, canonical)
            else:
                skipped.append(synonym)
        return skipped

    def resolve(self, name: str) -> tuple[str | None, str]:
        """The canonical label ``name`` refers to (or ``None``) and how it was found: "same"
        (equal after :func:`normalize_label`: case, spacing, punctuation), "synonym" (the
        synonym map), a spelling rule ("parenthetical", "head noun", "abbreviation": see the
        module docstring; the first rule that links the name to any label decides, and only
        when it links it to exactly one), "typo, N% alike" (:meth:`match`'s fuzzy rule, closed
        sets only), "ambiguous" (a rule fits several labels) or "unknown"."""
        key = normalize_label(name)
        if key in self._by_key:
            return self._by_key[key], "same"
        if key in self._synonyms:
            return self._synonyms[key], "synonym"
        if not key:
            return None, "unknown"
        candidates = [(self._by_key[k], k) for k in self._by_key] + [(k, k) for k in self._synonyms]
        for rule in SPELLING_RULES:
            fits = {self._canonical(k) for shown, k in candidates if _linked(rule, name, key, shown, k)}
            if len(fits) == 1:
                return fits.pop(), rule
            if fits:
                return None, "ambiguous"
        found = self._fuzzy(key) if self.closed else None
        return (found[0], f"typo, {found[1]:.0%} alike") if found is not None else (None, "unknown")

    def _canonical(self, key: str) -> str:
        """The label a known key (a label's or a synonym's) stands for."""
        return self._by_key[key] if key in self._by_key else self._synonyms[key]

    def match(self, name: str) -> str | None:
        """The canonical label ``name`` refers to, or ``None``.

        Tried in order: (1) exact match of normalized names; (2) the synonym table; (3) the
        spelling rules (:meth:`resolve`); (4) in a closed set, a conservative fuzzy fallback for
        typos ("Hepatits C", "hemorrhoids" vs the dataset's "hemmorhoids"): the
        :class:`difflib.SequenceMatcher` ratio against every label and synonym must reach
        ``fuzzy_cutoff`` (0.9 by default) *and* exactly one canonical label may reach it. The
        uniqueness rule matters: "hepatitis c" vs "hepatitis b" already scores 0.909, so an
        unknown "Hepatitis G" is ambiguous and maps to nothing rather than to an arbitrary
        hepatitis.
        """
        return self.resolve(name)[0]

    def _fuzzy(self, key: str) -> tuple[str, float] | None:
        """:meth:`match`'s typo rule on a normalized ``key``: the one canonical label within
        ``fuzzy_cutoff``, with its best ratio; ``None`` when none or several are."""
        if not key:
            return None
        scores: dict[str, float] = {}
        matcher = difflib.SequenceMatcher(b=key, autojunk=False)
        candidates = list(self._by_key.items()) + list(self._synonyms.items())
        for cand_key, canonical in candidates:
            matcher.set_seq1(cand_key)
            if matcher.real_quick_ratio() < self.fuzzy_cutoff or matcher.quick_ratio() < self.fuzzy_cutoff:
                continue
            ratio = matcher.ratio()
            if ratio >= self.fuzzy_cutoff:
                scores[canonical] = max(ratio, scores.get(canonical, 0.0))
        return next(iter(scores.items())) if len(scores) == 1 else None


def align_many(dists: Sequence[Mapping[str, float]]) -> tuple[list[str], np.ndarray]:
    """Put several label->probability mappings on one label axis.

    The axis is the union of all labels after :func:`normalize_label`, sorted by normalized
    name so that the result does not depend on dict order. Labels that collide after
    normalization are merged by summing their mass. Each axis entry is displayed with the
    first spelling met (scanning the mappings in order). Returns the display labels and a
    ``(len(dists), len(labels))`` float array; missing labels are 0. Values are not
    renormalized here.
    """
    display: dict[str, str] = {}
    for dist in dists:
        for name in dist:
            display.setdefault(normalize_label(name), clean_display(name))
    keys = sorted(display)
    index = {k: i for i, k in enumerate(keys)}
    matrix = np.zeros((len(dists), len(keys)))
    for row, dist in enumerate(dists):
        for name, value in dist.items():
            matrix[row, index[normalize_label(name)]] += float(value)
    return [display[k] for k in keys], matrix


def align(p: Mapping[str, float], q: Mapping[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Two distributions on their common label axis (see :func:`align_many`)."""
    labels, matrix = align_many([p, q])
    return labels, matrix[0], matrix[1]


def canonical_label(name: str, labels: LabelSet | None) -> tuple[str, str]:
    """The label set's spelling of ``name`` and the rule that found it (:meth:`LabelSet.resolve`);
    a name the set does not know (or with no set) is kept as written, tidied, by rule "same"."""
    if labels is not None:
        found, how = labels.resolve(name)
        if found is not None:
            return found, how
    return clean_display(name), "same"


def canonical_distribution(dist: Mapping[str, float], labels: LabelSet | None, *,
                           credit_related: bool = False) -> tuple[dict[str, float], list[str]]:
    """``dist`` with every label replaced by the label set's canonical spelling, entries that
    name one class merged by summing, and one note per label renamed or merged.

    Scoring uses it (:mod:`protocols.measures.evaluation`) so that a prediction is judged by the same
    rules as the distributions the debate compared: "Dengue fever" scores as "Dengue" where the
    synonym map says so, and the note says which rule merged what. A label the set does not
    know is kept as written (closed sets drop unknown labels when parsing, not here). Without a
    label set only :func:`normalize_label`'s rule applies, as in :func:`align_many`. With
    ``credit_related``, a broader or narrower name the set lists (:meth:`LabelSet.related`) is
    credited to its class, noted "(credited as broader)" or "(credited as narrower)", so scoring
    can count such hits apart; without it such a name stays itself.
    """
    merged: dict[str, float] = {}
    shown: dict[str, str] = {}
    notes: list[str] = []
    for name, value in dist.items():
        canonical, how = canonical_label(name, labels)
        credit = labels.related(name) if credit_related and labels is not None and name not in labels else None
        if credit is not None and labels is not None and labels.resolve(name)[0] is None:
            canonical, how = credit[0], f"credited as {credit[1]}"
        key = normalize_label(canonical)
        if how != "same":
            notes.append(f"{name!r} -> {canonical!r} ({how})")
        if key in merged:
            notes.append(f"merged {name!r} into {shown[key]!r}")
            merged[key] += float(value)
        else:
            shown[key] = canonical
            merged[key] = float(value)
    return {shown[k]: v for k, v in merged.items()}, notes


def parse_synonyms(text: str, source: str) -> dict[str, str]:
    """``synonym = label`` lines (``#`` comments, blank lines skipped) as a mapping; a line
    without ``=`` or with an empty side raises ``ValueError`` naming ``source`` and the line."""
    table: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        synonym, sep, canonical = line.partition("=")
        if not sep or not synonym.strip() or not canonical.strip():
            raise ValueError(f"{source}:{number}: expected 'synonym = label'")
        table[synonym.strip()] = canonical.strip()
    return table


def parse_related(text: str, source: str) -> dict[str, tuple[str, str]]:
    """``name > label`` (the name is broader than the class) and ``name < label`` (narrower)
    lines, ``#`` comments and blank lines skipped, as name -> (label, relation); a line with
    neither sign, or an empty side, raises ``ValueError`` naming ``source`` and the line."""
    table: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = re.fullmatch(r"\s*([^<>]*?)\s*([<>])\s*([^<>]*?)\s*", line)
        if found is None or not found[1] or not found[3]:
            raise ValueError(f"{source}:{number}: expected 'name > label' (broader) or 'name < label' (narrower)")
        table[found[1]] = (found[3], RELATIONS[found[2]])
    return table


def read_related(path: Path) -> dict[str, tuple[str, str]]:
    """The broader and narrower names of a file (see :func:`parse_related`); errors name the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path} ({exc.strerror})") from None
    return parse_related(text, str(path))


def read_synonyms(path: Path) -> dict[str, str]:
    """The synonym map of a file (see :func:`parse_synonyms`); errors name the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path} ({exc.strerror})") from None
    return parse_synonyms(text, str(path))


def read_label_set(source: str) -> LabelSet | None:
    """A class set C: ``open``/``auto`` → ``None`` (the agents name the labels; a debate then
    uses an open set of its own, with the spelling rules, :meth:`LabelSet.for_debate`);
    ``open:FILE`` → an open set whose synonym map is FILE's ``synonym = label`` lines (:func:`read_synonyms`);
    a built-in name (:data:`BUILTIN_LABEL_SETS`, with its :data:`BUILTIN_SYNONYMS`); or a file — one
    label per line (``#`` comments), or a CSV with a ``disease``, ``label`` or ``class`` column such
    as the Symptom2Disease splits.
    Duplicates (also after normalisation, e.g. "Diabetes " and "Diabetes") are kept once,
    first spelling first. Raises ``ValueError`` naming the file and what is wrong."""
    if source in ("open", "auto"):
        return None
    if source.startswith("open:"):  # the agents name the labels; the file's synonyms merge spellings
        return LabelSet(closed=False, synonyms=read_synonyms(Path(source[5:]).expanduser()))
    path = BUILTIN_LABEL_SETS.get(source) or Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path} ({exc.strerror})") from None
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        column = next((c for c in ("disease", "label", "class") if c in (reader.fieldnames or ())), None)
        if column is None:
            raise ValueError(f"{path} needs a 'disease', 'label' or 'class' column")
        names = [row[column] or "" for row in reader]
    else:
        names = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    unique: dict[str, str] = {}  # key -> the first spelling, in the order first seen
    for name in names:
        if name.strip():
            unique.setdefault(normalize_label(name), name.strip())
    if len(unique) < 2:
        raise ValueError(f"{path} needs at least two labels, found {len(unique)}")
    labels = LabelSet(unique.values())  # no two names share a key: they were just made unique by it
    if source in BUILTIN_SYNONYMS:
        labels.add_known_synonyms(read_synonyms(BUILTIN_SYNONYMS[source]))
    return labels
