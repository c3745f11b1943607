"""Masking personal identifiers in what leaves the journal (``symposium export --redact``, the report).

Clinicians and lawyers share transcripts; the journal keeps the originals, a redacted export masks
the identifiers HIPAA's Safe Harbor method lists (45 CFR 164.514(b)(2)), each with a mark of its
kind: ``[NAME]``, ``[DATE]``, ``[PHONE]`` … One code path serves every consumer: :func:`redact`
(text in; the masked text and a count per kind out), :func:`redact_debate` (every free text of a
journalled debate) and :func:`redact_text` (the text alone).

The recognizers are the project's own regular expressions and word lists, and three trained or
curated sources beside them (``outputs/redact_models.py``): spaCy's English entity model for people
and places, libphonenumber's numbering plans for phones, and GeoNames' towns of 5,000 people or
more, each checked against spaCy's part-of-speech tags. All install from PyPI and run offline. The
labelled sets in ``tests/fixtures/redaction/`` (synthetic clinical and legal snippets of several
countries, tuning sets and held-out sets) measure them: ``python benchmarks/redaction.py`` prints
each kind's recall and precision, and docs/redaction.md says which set was written when.

What is found, by kind (:data:`KINDS`): structured identifiers by their shapes (phone and fax
numbers of the US, UK, EU, India, Australia, Japan, Brazil; emails; URLs; IPv4/IPv6; US SSNs, UK
National Insurance and, with their names, Canadian SINs; record, account, licence, plan, policy,
card and vehicle numbers with the word that names them (or any label ending in "number", "no.",
"#", "ID" or "ref" but those of rooms, pages, products and phones), plates after the vehicle
that bears them or by their country's shape (UK, Ireland, India, Germany, France, Italy, the
Netherlands, Brazil, California, Spain), IBANs and card numbers without; dates
except a year alone; ages over 89, and a year of birth ninety years back or more), street addresses and postcodes (US ZIP after a state, UK,
Canadian), care facilities by their kind ("St. Mary's", "Mercy General Hospital"), and names.

What it cannot promise, said where ``--redact`` is offered: names are found by their company — a
title or role ("Dr. Ana Ruiz", "patient John", "his wife Maria"), a field label ("Name:"), a
common given name, or two capitalised words inside a sentence — so a surname alone, a name written
in lower case, or a rare given name at the start of a sentence can stay; a town of fewer than
5,000 people with no word around it saying it is a place ("lives in", "moved from", "…, Ontario"),
or one named like an English word that opens a sentence ("Reading is …"), stays; a number with
no word naming it and no known shape (a bare "00482913") stays; free descriptions that identify
someone (a rare job, a photograph's description) stay.
Check an export before sharing it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any

#: Each kind masked, its mark's word and what it covers (``--redact``'s help is built from this).
KINDS: dict[str, str] = {
    "email": "email addresses",
    "url": "web addresses",
    "ip": "IP addresses (v4 and v6)",
    "ssn": "social security and national insurance numbers (US SSN, UK NINO, Canadian SIN)",
    "number": "medical record, account, licence, plan, policy, card, case and vehicle numbers, number plates",
    "date": "dates (day, month; a year alone is kept)",
    "age": ("ages over 89 (\"93-year-old\", \"in her 90s\", \"who is 97\", \"aged ninety-three\", \"Age: 101\", \"96/F\", \"94 ans\") "
            "and years of birth ninety years back"),
    "phone": "phone and fax numbers",
    "address": ("street addresses, counties, and towns: in an address, named as places (\"lives in …\", \"City: …\"), "
                "or any town of 5,000 people or more"),
    "postcode": "ZIP codes and postcodes",
    "facility": "hospitals, clinics and other care facilities",
    "name": "people's names",
}
#: The kinds with a fixed shape, for which the benchmark's goal is recall ≥ 0.98.
STRUCTURED = ("email", "url", "ip", "ssn", "number", "date", "age", "phone", "postcode")


@dataclass(frozen=True)
class Span:
    """One identifier found: ``text[start:end]`` is of ``kind``."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Redaction:
    """A text with its identifiers masked, and how many of each kind were masked."""

    text: str
    counts: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class _Recognizer:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0  # the part of a match that is the identifier (a title before a name is kept)
    check: Callable[[re.Match[str]], bool] | None = None
    weak: bool = False  # found by capitalisation or a word list alone: the debate's terms and the never-names clear it


def _luhn(digits: str) -> bool:
    """Whether a card number's check digit holds (ISO/IEC 7812): random digit runs mostly fail it."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and _luhn(digits)


def _ipv4(match: re.Match[str]) -> bool:
    return all(int(part) <= 255 for part in match.group(0).split("."))


def _born_ninety_years_back(match: re.Match[str]) -> bool:
    """A year of birth gives away an age over 89 when it is at least ninety years back (Safe Harbor
    asks for it too: "all elements of dates (including year) indicative of such age")."""
    return 1850 <= int(match.group(1)) <= date.today().year - 90


def _phone(match: re.Match[str]) -> bool:
    """A phone's digits: 7 to 15 (ITU E.164), and not a range of years ("2019-2021")."""
    text = match.group(0)
    digits = re.sub(r"\D", "", text)
    if not 7 <= len(digits) <= 15:
        return False
    return not re.fullmatch(r"(?:19|20)\d\d\s?[-–/]\s?(?:19|20)\d\d", text)


def _id_label(match: re.Match[str]) -> bool:
    """Whether a number after a label of its own ("Visit number V00931174") identifies someone: the
    label names nothing no one is identified by (:func:`_not_id_words`) and the value holds three
    digits or more and is no decimal ("bed no. 12", "patient #2", "ref 0.15" stay)."""
    words = re.findall(r"[A-Za-z][\w&'’/-]*", match.group(1))
    if any(w.casefold() in _not_id_words() for w in words):
        return False
    value = match.group("value")
    return sum(ch.isdigit() for ch in value) >= 3 and not re.fullmatch(r"\d+[.,]\d+", value)


def _no_reference_range(match: re.Match[str]) -> bool:
    """Whether a number after "ref" or "reference" is a reference number, not a lab value's
    reference range ("(ref 130-170)": two numbers, the lower first)."""
    span = re.fullmatch(r"(\d{1,4}(?:\.\d+)?)\s*[-–]\s*(\d{1,4}(?:\.\d+)?)", match.group(1))
    return not (span is not None and re.match(r"(?i)ref(?:erence)?\b", match.group(0)) is not None
                and float(span[1]) < float(span[2]))


def _not_id_words() -> frozenset[str]:
    """Words before "number", "no.", "#" or "ref" whose number identifies a place, a page, a
    product, a dose, a rule or a phone line, not a person: "room no. 412", "page no. 447", "lot
    no. 4471", "model no. 2290", "phone no. …" (a phone is found as a phone)."""
    return frozenset("""
        room rooms bed beds bay ward level floor theatre cubicle page pages pp para paragraph paragraphs section sec
        clause rule rules article art schedule appendix annex exhibit tab item items line lines table figure fig slide
        footnote chapter volume vol issue edition question step stage grade phase score size version build release
        model lot batch part catalog catalogue cat sku product dose doses cycle day week month year trial protocol
        order range normal icd cpt drg phone telephone tel mobile cell fax pager bleep extension ext contact call
        helpline hotline flight seat gate platform route bus train exit junction road highway
        """.split())


def _given_names() -> tuple[str, ...]:
    """Common given names across the languages of the project's users (names that are also
    common English words, May, Will, Grace, Mark, are left out: they would mask the words)."""
    return tuple("""
        Aaron Abdul Adam Adrian Ahmed Aisha Alan Albert Alejandro Alex Alexander Alice Alicia Amanda Amir Amy
        Ana Andrea Andrew Angela Anita Ann Anna Anne Anthony Antonio Arjun Arthur Barbara Beatriz Benjamin
        Brian Camille Carlos Carmen Carol Caroline Catherine Charles Charlotte Chen Chloe Christina Christine
        Christopher Claire Claudia Daniel David Deborah Diana Diego Dmitri Donald Dorothy Edward Elena Elizabeth
        Ellen Emily Emma Eric Fatima Fernando Francesca Francis Gabriel George Giulia Giuseppe Hannah Hans Harold
        Helen Henry Hiroshi Ian Ibrahim Ingrid Isabel Isabella Jacob James Jan Jane Janet Jason Javier Jean
        Jennifer Jessica Joan Johann John Jorge Jose José Joseph Joshua Juan Julia Julie Karen Katarzyna Kenji
        Kevin Khalid Kwame Laura Lauren Leila Linda Lisa Lucas Lucia Luis Luka Margaret Maria María Marie
        Marta Martin Mary Matthew Mehmet Michael Michelle Miguel Mohammed Muhammad Nadia Nancy Natalia Nicholas
        Nicole Nina Noah Oliver Olga Olivia Omar Orla Pablo Patricia Paul Pedro Peter Pierre Priya Rachel Rahul
        Raj Rebecca Richard Robert Roberto Ronald Rosa Ryan Samuel Sandra Sara Sarah Sean Sergei Sharon Simon
        Sofia Sophie Stefan Stephen Steven Susan Takeshi Thomas Timothy Tomasz Valentina Victoria Vikram
        William Xavier Yusuf Yuki Zainab Zhang Wei Mei Ling Oluwaseun Chinedu Ngozi Aroha Siobhan Niamh
        Declan Aoife Bronwyn Dylan Ewan Fiona Graham Hamish Iain Morag Rhys Sian
        """.split())


def _never_names() -> frozenset[str]:
    """Capitalised words that are never part of a name found by capitalisation alone: a run of
    words holding one is a term (a disease, a score), a month, an institution or a title of law.
    Some are surnames too (Lane, Ward, Bell): a name with a title, a role or a field label before
    it is masked whatever its words (see :func:`_cleared`)."""
    return frozenset("""
        January February March April June July August September October November December Monday Tuesday
        Wednesday Thursday Friday Saturday Sunday I The This That These Those He She They We You It His Her
        Their Our My Your If When While After Before Since During Although However Therefore Patient
        English French German Spanish American British Canadian Australian Indian European
        Emergency Intensive Internal General Medicine Medical Surgery Surgical Department Unit Ward Team Service
        Trust Board Council Court Supreme Appeals Appeal District Federal State County City Act Code Section
        Article Amendment Rule Rules Regulation Regulations Law Constitution Convention Directive Schedule Statute
        Disease Syndrome Disorder Fever Virus Infection Cancer Type Stage Grade Class Level Phase Score Scale
        Test Criteria Guidelines Association Society Agency Ministry Office Committee Commission Health Care
        National Insurance Security Social Bar Failure Rights Human Chronic Acute Kidney Heart Diabetes Coma
        Appendix Table Figure Chapter Part Covid Hepatitis Lyme Dengue Zika Ebola Crohn Parkinson Alzheimer
        Hodgkin Down Kaposi Tourette Asperger Bell Cushing Addison Graves Hashimoto Raynaud Sjogren Guillain
        Barre Huntington Marfan Wilson Paget Bayes Gaussian Wasserstein Jensen Shannon Kullback Leibler
        Yes No Okay Agent Judge Moderator Round Case Subject Issue Question Answer Summary Conclusion
        North South East West Street Road Avenue Lane Drive Highway Motorway Hospital Clinic Centre Center
        Kläger Klägerin Beklagte Beklagter Halterin Patientin Kennzeichen Landgericht Amtsgericht Aktenzeichen
        Bench Division Chancery Tribunal Wohnort Geburtsort
        """.split())


def _not_names() -> frozenset[str]:
    """Words that are never part of a person's name, whatever comes before them: a span that a
    title or label found and that holds one ("Patient: The patient …") is no name."""
    return frozenset("""
        January February March April June July August September October November December Monday Tuesday
        Wednesday Thursday Friday Saturday Sunday I The This That These Those He She They We You It His Her
        Their Our My Your If When While After Before Since During Although However Therefore Patient
        ID MRN URN ULI NHI DOB Number Identifier Beneficiary Insurer Assessment
        Wohnhaft Domicilié Domiciliée Residente Vecino Vecina Natural Cebuano
        """.split())


def _field_words() -> frozenset[str]:
    """Words the model takes for a person or a place that are the labels of a form or a note
    ("Email", "Tel", "Postcode") or the abbreviations beside a name ("Esq", "SC")."""
    return frozenset("""
        Email Tel Telephone Phone Fax Mobile Postcode Versichertennummer Ingreso Procedimiento Processo Reg Ref
        Esq County Chikungunya MRN ID NHS GP DOB SC ST Landgericht Amtsgericht Kläger Klägerin Beklagte Beklagter
        Halter Halterin Patientin Führerschein Wohnort Geburtsort Edad Idade Età Leeftijd Ålder Placa Matrícula
        Targa Kenteken Tablica Immatriculation Grüßen Grandmother Grandfather Grandma Grandpa Grandad Granddad
        Nana Art Kennzeichen Highway Motorway
        """.split())


def _region_names() -> tuple[str, ...]:
    """:func:`_regions` as written, longest first (for a pattern's alternation)."""
    return tuple(sorted((x.strip() for x in _REGIONS.split(",") if x.strip()), key=len, reverse=True))


def _place(match: re.Match[str]) -> bool:
    """Whether the words a place recognizer took name a town: not a state or a country (Safe
    Harbor lets those stand), a month, a department, a drug maker or a term (:func:`_never_names`),
    nor a people's adjective ("of Irish descent")."""
    found = next(g for g in match.groups() if g is not None)
    if found.casefold() in _regions():
        return False
    words = found.split()
    return not any(w in _never_names() or w in _not_places() or re.search(r"(?:ish|ian|ese)$", w) for w in words)


def _not_places() -> frozenset[str]:
    """Capitalised words after "in", "to" or "from" in notes that are no town: wards, departments,
    services, times of the day, companies."""
    return frozenset("""
        Cardiology Oncology Neurology Radiology Orthopaedics Orthopedics Paediatrics Pediatrics Geriatrics Psychiatry
        Haematology Hematology Nephrology Dermatology Urology Gastroenterology Rheumatology Endocrinology Respiratory
        Obstetrics Gynaecology Gynecology Theatre Theatres Recovery Outpatients Casualty Resus Majors Minors Maternity
        Rehab Rehabilitation Physio Physiotherapy Pharmacy Pathology Haemodialysis Dialysis Palliative Hospice Home
        Ebola Zika Dengue Chikungunya Covid
        Pfizer Moderna AstraZeneca Novartis Roche Sanofi Bayer Merck Amazon Google Facebook Apple Microsoft
        Morning Evening Night Christmas Easter Spring Summer Autumn Winter Fall May Term Court Garda Police Station
        Dr Mr Mrs Ms Miss Prof Sir Dame Judge Justice Nurse Father Sister Seen Accident Practice Christ God Heaven
        """.split())


def _alternation(lines: str) -> str:
    """``(?:a|b|…)`` from alternatives written over several lines (the lines' indentation dropped)."""
    return "(?:" + "".join(line.strip() for line in lines.splitlines()) + ")"


def _recognizers() -> tuple[_Recognizer, ...]:
    """Every recognizer, most specific first: where two overlap, the earlier one's kind wins and
    the later one masks only what is left over (so no part of an identifier stays in clear).

    Built on each call (``re`` keeps the compiled patterns: about 0.1 ms), not at module level
    nor behind ``functools.cache``: the mutation benchmark's mutmut mutates code inside plain
    functions only, and a cache filled before a mutant's process forks would hand it the
    unmutated patterns. ``tests/store/test_redact_recall.py`` holds each pattern through the
    labelled set. Every repetition is bounded, so no text makes a pattern slower than linear."""
    months = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
              r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
    # Months of the other languages the users write (German, French, Spanish, Portuguese, Italian,
    # Dutch), in any case, full or cut: "7. Mai 2024", "12 mars", "5 de marzo de 2024".
    foreign_months = "(?i:" + _alternation(r"""
        Januar|Jänner|Februar|März|Mai|Juni|Juli|Oktober|Dezember|janvier|février|mars|avril|mai|juin|juillet
        |août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre
        |setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro
        |novembro|dezembro|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari
        |februari|maart|mei|augustus""") + ")"
    any_month = rf"(?:{months}|(?i:{months})(?=\s+\d)|{foreign_months})"
    weekday = r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+)?"
    day = r"(?:[0-3]?\d(?:st|nd|rd|th|\.)?)"
    ordinal_words = _alternation(r"""
        first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth
        |fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|twenty-\w+|thirtieth
        |thirty-first""")
    year = r"(?:\d{4}|'\d\d)"
    # The word lists are data, written as triple-quoted alternations (which mutmut leaves alone);
    # the labelled set holds them by example. The patterns' syntax below is mutated and held.
    states = _alternation(r"""
        AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY
        |NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|ON|QC|BC|AB|MB|SK|NS|NB|NL|PE""")
    uk_postcode = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
    ca_postcode = r"[A-Z]\d[A-Z]\s?\d[A-Z]\d"
    au_postcode = r"(?:NSW|VIC|QLD|WA|SA|TAS|ACT|NT)\s\d{4}"
    street_types = _alternation(r"""
        Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Place|Pl|Way|Terrace
        |Close|Crescent|Cres|Square|Sq|Highway|Hwy|Parkway|Pkwy|Row|Walk|Gardens|Grove|Hill|Mews|Plaza""") + r"\.?"
    word = r"[A-Z][a-zà-ÿ'’]+(?:-[A-Z][a-zà-ÿ'’]+)?"
    town = rf"{word}(?:[ -](?:(?:am|an|on|upon|de|sur|le|la)[ -])?{word}){{0,2}}"
    name_word = rf"(?:[A-Z]\.|(?:Mc|Mac|O['’])?{word})"
    particle = _alternation(r"""van|von|der|de|del|della|da|di|du|la|le|bin|ibn|al|el|ter|ten|das|dos""") + r"\s+"
    full_name = rf"{name_word}(?:\s+(?:{particle}){{0,2}}{name_word}){{0,3}}"
    titles = _alternation(r"""
        Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Sir|Dame|Lady|Lord|Judge|Justice|Officer|Det|Detective|Sgt
        |Sergeant|Insp|Inspector|Constable|Rev|Reverend|Fr|Father|Sister|Nurse|Mister|Doctor|Counsel
        |Attorney|Captain|Capt|Patient|Adv|Advocate|DC|DS|PC|Herr|Frau|Mme|Mlle|M|Sr|Sra|Srta|Dña|Doña|Don|D""") + r"\.?"
    # Titles and roles written in lower case, as notes and transcripts do: "seen by dr helen brophy".
    lower_titles = _alternation(r"""
        dr|mr|mrs|ms|pt|patient|nurse|judge|wife|husband|son|daughter|mum|mom|mother|father|dad|sister
        |brother|clerk|mediator|hi|dear""") + r"\.?"
    # Words that follow a name in notes and never are one: a lower-case name ends before them.
    after_name = _alternation(r"""
        today|yesterday|tonight|was|is|has|had|and|or|with|reviewed|seen|said|says|called|rang|stable
        |on|at|in|for|to|from|who|will|took|read|it|the|a|an|re|c|about|post|op|then|again|says|also
        |asked|came|went|here|there|well|not|no|please|thanks|x|s|lives|lived|visits|visited|relocated|moved
        |drives|works|worked|died|fell|turned|celebrated|herself|himself|themselves|identifier|id|number|no|record|ref
        |born|name""")
    roles = "(?i:" + _alternation(r"""
        patient|client|defendant|plaintiff|claimant|appellant|respondent|petitioner|witness|victim|tenant
        |landlord|employee|employer|nurse|doctor|physician|surgeon|midwife|paramedic|therapist|counsellor
        |physiotherapist|mother|father|son|daughter|wife|husband|partner|brother|sister|aunt|uncle|grandmother
        |grandfather|grandson|granddaughter|grand-daughter|brother-in-law|sister-in-law|mum|friend|neighbou?r
        |caregiver|carer|guardian(?: ad litem)?|named|called|kn[eo]wn? as|aka|a\.k\.a\.|v\.|vs\.?|accused
        |deponent|decedent|testator|prisoner|applicant|complainant|minor|informant|counsel|mediator|clerk
        |consultant|locum|Estate of|I""") + ")"
    labels = _alternation(r"""
        (?:Patient|Client|Full|Family|Given|Maiden)?\s*[Nn]ame|Patient|Pt|Client|Defendant|Plaintiff
        |Witness|Signed|Signature|Next of kin|NOK|Emergency contact|Contact|Attending|GP|Referred by
        |Prepared by|Guardian|Mother|Father|Spouse|Wife|Husband|Son|Daughter|Consultant|From|Kläger|Klägerin
        |demandante|autor|Affidavit of|Statement of|Deposition of""") + r"\s*:?\s*"
    facility_nouns = _alternation(r"""
        Hospital|Clinic|Medical Cent(?:er|re)|Health Cent(?:er|re)|Cancer Cent(?:er|re)|Infirmary
        |Hospice|Surgery|Medical Practice|Nursing Home|Care Home|Care Cent(?:er|re)|Rehabilitation Cent(?:er|re)
        |Medical Group|Pharmacy|Sanatorium|Children's Hospital|Health System|Health Sciences Cent(?:er|re)
        |Medical College|Teaching Hospital|University Hospital|Penitentiary|Prison|National School|School
        |Care Group|Klinikum|Krankenhaus|Hôpital|Hospital Universitario|Clinique|Hospital General""")
    id_words = _alternation(r"""
        MRN|medical record(?: number| no\.?)?|record (?:number|no\.?)|hosp(?:ital|\.)? (?:number|no\.?)|patient ID
        |NHS (?:number|no\.?)|Medicare(?: card| number| no\.?| Beneficiary ID)?|Medicaid (?:ID|number)
        |health card(?: number)?|health plan ID|chart(?: number| no\.?)?|acc(?:ession)?(?: number| no\.?)?|UHID|NHI
        |account(?: number| no\.?)?|acct\.?(?: no\.?)?|a/c|IBAN|BSB|sort code|routing(?: number)?
        |licen[cs]e(?: number| no\.?)?|(?-i:DL)(?: number)?|driver'?s licen[cs]e(?: number)?|passport(?: number| no\.?)?
        |member(?:ship)?(?: ID| number| no\.?)?|plan (?:ID|number|no\.?)|policy(?: number| no\.?)?|group(?: number| no\.?)?
        |beneficiary (?:ID|number)|insurance (?:ID|number)|subscriber ID|claim(?: number| no\.?)?
        |certificate (?:number|no\.?)|serial(?: number| no\.?)?|S/N|(?-i:SN)|VIN|plates?|registrations?(?: number)?
        |reg\.?(?: number| no\.?)?|(?-i:GMC|NPI|DEA|OAB/\w\w)(?: number| no\.?)?
        |case(?: number| no\.?)?|docket(?: number| no\.?)?|file (?:number|no\.?)|ref(?:erence)?(?: number| no\.?)?
        |badge(?: number| no\.?)?|(?:state )?bar (?:number|no\.?)|employee (?:ID|number)|student (?:ID|number)
        |device (?:ID|serial)|(?-i:ID)|index (?:number|no\.?)|suit (?:number|no\.?)|(?:writ )?petition(?: \(\w+\))? no\.?
        |Aktenzeichen|Az\.|RG n°|Rechnung Nr\.?|Procedimiento|Processo n\.?º|inmate (?:number|no\.?)|title
        |Versichertennummer|cartão SUS|fingerprint(?: template| ID)?|facial (?:image|photograph)(?: ref)?|photo ID
        |voiceprint(?: enrol?ment)?|genetic sample|transmitter SN|MAC|meeting ID|call ref|Home Office ref
        |vehicle (?:no\.?|number|reg(?:istration)?)|Kennzeichen|licen[cs]e plate|number ?plate|matr[ií]cula|targa|kenteken
        |immatriculation|placa(?: antiga)?|plaque(?: d'immatriculation)?|tablica(?: rejestracyjna)?|Führerschein(?:-Nr\.?|nummer)?
        |(?-i:NMC|IMC|CPSO|AHPRA|LANR|BSNR|HCPC|OHIP|IHI|PIN)(?: number| no\.?| #)?
        |(?:medical|dental|nursing) council (?:no\.?|number|reg\.?)
        |(?:bar )?roll (?:no\.?|number)|DNA sample|(?:DNA|sample) (?:ID|ref(?:erence)?)|prisoner (?:no\.?|number)
        |Geschäftszeichen|Gesch\.-Z\.|FIR(?: no\.?)?|(?:iris|retina) scan(?: ID| ref(?:erence)?)?|palm vein ID
        |(?-i:MBI|RAMQ|PHN|CHI|ULI|URN|UR|H&C)(?: number| no\.?)?""")
    # Any words naming a number of their own ("Visit number", "Lab no.", "Pol#", "Insurer ref.",
    # "Patient identifier"), but those of things no one is identified by (a room, a page, a dose, a
    # lot, a model, a phone: :func:`_not_id_words`); the value then holds three digits or more.
    id_noun = r"(?:\s*#|(?:\s+|(?<=\.))(?:number|num|nos?|nr|ID|identifier|ref|reference)\b\.?)"
    any_id_label = rf"((?:[A-Za-z][\w&'’/-]*\.?(?:\s+|(?<=\.))){{0,2}}?[A-Za-z][\w&'’/-]*\.?){id_noun}"
    # A number after its label: tokens holding a digit (or short capitals, "3 O 123/23"), joined by
    # spaces, "of" ("1187 of 2022") or "/"; never across a sentence's full stop.
    id_token = r"(?=[A-Za-z0-9/.:-]{0,40}\d)[A-Za-z0-9#](?:[A-Za-z0-9/:-]|\.(?=\w)|,(?=\d{3}\b)){0,40}"
    id_value = (rf"(?:(?-i:[A-Z]{{1,4}}(?:-[A-Z]{{1,3}})?)\s(?=\d))?(?:{id_token})"
                rf"(?:\s(?:of\s)?(?:(?=[\w/.-]*\d){id_token}|(?:[A-Z]{{1,3}}|[A-Z][a-z])(?=\s\d))(?![\w-])){{0,4}}")
    id_value += r"(?:\s(?:[A-Z]{1,3}(?=\s*(?:[,.;)]|$|\s+(?:and|or)\b))|(?-i:(?![AI]\b)[A-Z]{1,3}(?=\s+[a-z]))))?"
    over89 = r"(?:9\d|1[01]\d)"
    # A hyphen as typed or as a word processor sets it ("94‐year‐old", "93–year–old").
    dash = "[-\u2010\u2011\u2012\u2013\u2014]"
    # An age over 89 in words: "ninety", "ninety-three", "one hundred", "a hundred and two".
    units = r"(?:one|two|three|four|five|six|seven|eight|nine)"
    spelled = (rf"(?:ninety(?:(?:{dash}|\s){units})?|one(?:{dash}|\s)hundred(?:(?:\s+and\s+|{dash}|\s)(?:{units}|ten|eleven|twelve))?"
               rf"|(?:a(?:{dash}|\s))?hundred(?:\s+and\s+|{dash}|\s)(?:{units}|ten|eleven|twelve))")
    age_number = rf"(?:{over89}|(?i:{spelled}))"
    # Who an age belongs to, in the words before it: "she is 97", "the victim, 96", "a woman of 98".
    person = "(?i:" + _alternation(r"""
        she|he|who|and|patient|pt|woman|man|lady|gentleman|mother|mum|mam|mom|father|dad|nana|nan|gran|granny
        |grandma|grandmother|grandpa|grandad|granddad|grandfather|aunt|auntie|uncle|wife|husband|widow|widower
        |neighbou?r|resident|deceased|victim|testator|testatrix|decedent|sister|brother|friend|client|plaintiff
        |defendant|claimant|applicant|petitioner|respondent|witness|mr|mrs|ms""") + ")"
    # A number with a unit after it is a measure, never an age: "is 92 bpm", "(92%)".
    not_a_measure = (r"(?![\d.,]?\d|(?![MF]\b)\w|\s*(?:%|/|°|[a-zA-Zµ]+/|(?i:mg|g|kg|mmol|bpm|mm|cm|ml|units?|percent|per|times|points?"
                     r"|days?|weeks?|months?|min|minutes|hours?)\b))")
    indian_ways = (r"(?:Road|Rd|Main|Cross|Nagar|Apartments|Colony|Layout|Marg|Society|Enclave|Towers|Residency|Bagh|Vihar"
                   r"|[A-Z][a-z]+(?:nagar|puram))")
    # Words after which "in", "from", "to" or "of" names a place.
    place_cue = "(?i:" + _alternation(r"""
        lives?|living|lived|resides?|residing|resident|settled|born|raised|grew up|moved|moving|relocated|relocating
        |returned|work(?:s|ed|ing)?|travell?ed|drove|drives|driving|commutes?|commuting|came|comes|visiting|visits?|visited|brought
        |wrote|writing|appeared|sworn|signed|held|heard|occurred|happened|died|farmer|farm|home|house|office|hearing
        |meeting|sister|brother|son|daughter|mother|father|aunt|uncle|grandmother|grandfather|nephew|niece|cousin
        |family|friend|GP|practice|carer|respondent|applicant|petitioner|plaintiff|defendant|claimant|victim|widow
        |widower|late|wohnhaft|wohnt|stammt|kommt|Patientin|Patient|Beklagten?|Kläger(?:in)?|Halter(?:in)?|Hausarzt""") + ")"
    region_names = "|".join(re.escape(r) for r in _region_names())
    national = _alternation(r"""
        Aadhaar|CPF|DNI|NIE|NIR|PPSN?(?: number| no\.?)?|TFN|ID number|SA ID|num[ée]ro de s[ée]curit[ée] sociale(?: est le)?
        |sécurité sociale""")
    return (
        # Published case law is public, its parties' names included ("Roe v. Wade, 410 U.S. 113",
        # "Donoghue v Stevenson [1932] AC 562"): taken first, and left as written.
        _Recognizer("keep", re.compile(
            rf"\b{word}(?:\s+(?:{word}|plc|Ltd|Inc|of|the)){{0,5}}\s+v\.?\s+{word}(?:\s+(?:{word}|of|the)){{0,5}}"
            rf"(?:,\s+\d+\s+[A-Z][\w.]*(?:\s[A-Z][\w.]*)?\s+\d+|\s+\[\d{{4}}\]\s+(?:\d+\s+)?[A-Z][\w.]*(?:\s[A-Z][\w.]*)?\s+\d+)")),
        # Versions and codes that read like dates or numbers: "6.18.44-fc", "v3.2.1", "5.4.0-rc2".
        _Recognizer("keep", re.compile(
            r"(?<![\w.])(?:v|version\s|build\s|release\s|firmware\s|kernel\s)?\d+(?:\.\d+){1,3}-[a-z][\w.]*"
            r"|\b(?i:v|version|build|release|firmware|kernel|python|numpy|ubuntu)\s?\d+(?:\.\d+){1,3}(?:-[\w.]+)?")),
        # Codes named by their system ("ICD-10 J18.9", "LOINC 4548-4 and 718-7") and rules of court.
        _Recognizer("keep", re.compile(
            r"\b(?:ICD(?:-?(?:9|10|11))?(?:-CM)?|LOINC|SNOMED(?: CT)?|CPT|ATC|OPCS)(?:\s+codes?)?\s*:?\s*(?=[\w.-]*\d)[A-Z0-9][\w.-]*"
            r"(?:\s*(?:,|and|or)\s*(?=[\w.-]*\d)[A-Z0-9][\w.-]*(?=[\s,;.)]|$)){0,6}"
            r"|\bFed\.\s+R\.\s+(?:Civ|Crim|Evid|App|Bankr)\.(?:\s+P\.)?\s+\d+(?:\(\w+\))*")),
        _Recognizer("email", re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b")),
        _Recognizer("url", re.compile(
            r"\b(?:https?://|ftp://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]"
            r"|(?<![\w.-])(?:[a-z0-9-]{1,63}\.){1,6}(?:com|org|net|edu|gov|io|info|health|uk|us|ca|au|de|fr|es|it|nl|in|nz|ie)"
            r"(?:/[^\s<>\"')\]]*[^\s<>\"')\].,;:!?])?(?![\w@])", re.IGNORECASE)),
        _Recognizer("ip", re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)"), check=_ipv4),
        _Recognizer("ip", re.compile(
            r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])"
            r"|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){1,6}(?::[0-9a-fA-F]{1,4}){1,6}(?![\w:])"
            r"|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){1,7}:(?![\w:])|(?<![\w:])::(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{1,4}(?![\w:])")),
        _Recognizer("ssn", re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\w-])")),
        _Recognizer("ssn", re.compile(
            r"\b(?:(?-i:SSN|SIN|NINO|NI)|social security(?: number| no\.?)?|social insurance(?: number| no\.?)?"
            r"|national insurance(?: number| no\.?)?)\s*(?:#|:|is)?\s*(\d{3}[- ]?\d{2,3}[- ]?\d{3,4}"
            r"|[A-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]?|[xX*]{3}[- ]?[xX*]{2}[- ]?\d{4})\b", re.IGNORECASE), group=1),
        _Recognizer("ssn", re.compile(
            rf"\b{national}\s*(?:#|:|is|n°|no\.?)?\s*((?=(?:[\s.-]?\d){{6}})[\dA-Z](?:[\dA-Z]|[.-](?=[\dA-Z])| (?=\d)){{5,24}})(?![\w-])",
            re.IGNORECASE), group=1),
        _Recognizer("ssn", re.compile(r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b")),  # a Brazilian CPF
        _Recognizer("ssn", re.compile(r"\b(?![DFIQUV])[A-Z](?![DFIOQUV])[A-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b")),
        _Recognizer("number", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,3})?\b")),  # IBAN
        _Recognizer("number", re.compile(r"(?<![\d-])\d{4}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\d-])"), check=_card),
        _Recognizer("number", re.compile(r"\b(?=[A-HJ-NPR-Z0-9]*\d)(?=[A-HJ-NPR-Z0-9]*[A-Z])[A-HJ-NPR-Z0-9]{17}\b")),  # VIN
        _Recognizer("number", re.compile(r"\b[A-Z]{2}\d{2}\s?[A-Z]{3}\b")),  # a UK number plate
        # Number plates by their country's shape, with no word naming them: Irish (year, county,
        # number: "191-D-12345"), Indian (state, district, series, number: "KA 05 MN 1234"), German
        # (district, letters, number: "M-AB 1234"; the space keeps "HLA-B27" whole).
        _Recognizer("number", re.compile(
            r"\b\d{2,3}-(?:CE|CN|CW|DL|KE|KK|KY|LD|LH|LK|LM|LS|MH|MN|MO|OY|RN|SO|TN|TS|WD|WH|WW|WX|C|D|G|L|T|W)-\d{1,6}\b")),
        _Recognizer("number", re.compile(
            r"\b(?:AP|AR|AS|BR|CG|DL|GA|GJ|HR|HP|JK|JH|KA|KL|LA|MP|MH|MN|ML|MZ|NL|OD|OR|PB|RJ|SK|TN|TS|TR|UP|UK|WB|CH|PY)"
            r"[ -]?\d{1,2}[A-Z]?[ -]?[A-Z]{1,3}[ -]?\d{4}\b")),
        _Recognizer("number", re.compile(r"(?<![\w-])[A-ZÄÖÜ]{1,3}-[A-Z]{1,2} \d{1,4}[EH]?\b")),
        # France ("AB-123-CD", no I, O or U), Italy ("AB 123 CD"; never before a number, as vital signs
        # are written: "BP 128 HR 64"), the Netherlands (six characters in three groups: "12-XKB-4", "1-KBB-23"),
        # Brazil (Mercosul "BRA2E19", older "GHJ-4412"), California ("8ABC234"), Spain ("4821 KLM",
        # letters without vowels; never a year, "2023 NHS", or a count, "1000 PCR tests"); never the
        # tail of a longer code ("RX-GHJ-4412").
        _Recognizer("number", re.compile(r"(?<![\w-])[A-HJ-NP-TV-Z]{2}-\d{3}-[A-HJ-NP-TV-Z]{2}(?![\w-])")),
        _Recognizer("number", re.compile(r"(?<![\w-])[A-HJ-NPR-TV-Z]{2} \d{3} [A-HJ-NPR-TV-Z]{2}(?![\w-]|\s*\d)")),
        _Recognizer("number", re.compile(
            r"(?<![\w-])(?=[\dA-Z-]{8}(?![\w-]))(?:\d{1,3}-[A-Z]{2,3}-\d{1,3}|[A-Z]{2,3}-\d{1,3}-[A-Z]{1,3})(?![\w-])")),
        _Recognizer("number", re.compile(r"(?<![\w-])(?:[A-Z]{3}\d[A-Z]\d{2}|[A-Z]{3}-\d{4}|[1-9][A-Z]{3}\d{3})(?![\w-])")),
        _Recognizer("number", re.compile(r"(?<![\w-])(?!(?:19|20)\d\d\b)\d{4}[ -]?[BCDFGHJKLMNPRSTVWXYZ]{3}(?![\w-]|\s+[a-z])")),
        _Recognizer("number", re.compile(r"\b[A-Z]{5}\d{4}[A-Z]\b")),  # an Indian PAN
        # Words that name a number only when capitals and digits follow ("Texas tag BKR-4471", "rego
        # BX 12 YZ", "matter NSD 123 of 2023"), never "a price tag of 4" or "the matter of 5 children".
        _Recognizer("number", re.compile(
            r"\b(?i:tag|rego|matter)(?:\s+(?i:no\.?|number))?\s*[:#]?\s*"
            r"((?=[A-Z0-9 -]{0,20}\d)[A-Z0-9]{2,}(?:[ -][A-Z0-9]{1,5}){0,3}(?:\sof\s\d{4})?)\b"),
            group=1),
        # A plate after the vehicle that bears it, with at most three lower-case words between ("the car
        # 7ABC123", "a white van, LV19 XKT,", "the ute was registered as 1ABC 234"): capitals and digits,
        # two of each or more, five to nine in all; a model's name is shorter ("F-150", "RAV4") or named
        # as one ("car model ZX-4000").
        _Recognizer("number", re.compile(
            r"\b(?i:car|vehicle|van|truck|lorry|motorcycle|motorbike|ute|SUV|sedan|hatchback|taxi|trailer|scooter|moped)\b"
            r"[ \t]*[,(:]?(?:[ \t]+(?!(?i:model|make|type|engine|version)\b)[a-z]+){0,3}[ \t]+"
            r"((?=(?:[ -]?[A-Z0-9]){5,9}(?![\w-]))(?=(?:[A-Z -]*\d){2})(?=(?:[\d -]*[A-Z]){2})"
            r"[A-Z0-9]{1,8}(?:[ -][A-Z0-9]{1,4}){0,2})(?![\w-])"), group=1),
        _Recognizer("number", re.compile(r"\b\d:\d{2}-[a-z]{2,4}-\d{3,6}(?:-[A-Z]{2,4})*\b")),  # a US federal docket
        _Recognizer("number", re.compile(r"\b\d{4}/[A-Z]{2,4}/\d{3,6}\b")),  # an Irish or Indian docket: 2022/HC/1187
        _Recognizer("number", re.compile(
            rf"\b{id_words}(?![a-z]|\d{{1,2}}\b)\s*(?:#|:|no\.?|number|is|n°)?\s*(?:[#:|=]\s*)?({id_value})(?<![./:-])", re.IGNORECASE),
            group=1, check=_no_reference_range),
        _Recognizer("number", re.compile(
            rf"(?<![\w&'’/.-]){any_id_label}\s*(?:[:.#=|]|\bis\b)?\s*(?:[:#|]\s*)?(?P<value>{id_value})(?<![./:-])", re.IGNORECASE),
            group="value", check=_id_label),
        _Recognizer("date", re.compile(
            rf"{weekday}(?<![\w.-])(?:\d{{4}}(?P<a>[-/.])(?:0?[1-9]|1[0-2])(?P=a)(?:0?[1-9]|[12]\d|3[01])(?:T\d\d:\d\d(?::\d\d)?)?"
            rf"|(?:0?[1-9]|[12]\d|3[01])(?P<b>[-/.])(?:0?[1-9]|1[0-2])(?P=b)(?:\d{{4}}|\d{{2}})"   # 05/03/2024, 5.3.24
            rf"|(?:0?[1-9]|1[0-2])(?P<c>[-/.])(?:0?[1-9]|[12]\d|3[01])(?P=c)(?:\d{{4}}|\d{{2}})"   # 03/25/2024 (US)
            rf"|(?:{day}|{ordinal_words})(?:\s+day)?(?:\s+of)?\s+(?:de\s+)?{any_month}(?:,?\s+(?:de\s+)?{year})?"  # 5 March 2024
            rf"|{any_month}\s+{day}(?:,?\s+{year})?(?!\d)"                                    # March 5, 2024
            rf"|{months}\s+{year}"                                                             # March 2024
            rf"|\d{{1,2}}-?{months}-?(?:{year}|\d\d)|(?i:\d{{1,2}}-?{months}-?(?:{year}|\d\d)))(?![\w-]|\.\d)")),  # 05-Mar-24, 05MAR2024
        _Recognizer("date", re.compile(r"(?<![\w./])(?:0?[1-9]|[12]\d|3[01])\.(?:0[1-9]|1[0-2])\.(?![\w.])")),  # 05.03.
        _Recognizer("date", re.compile(
            r"\b(?:DOB|D\.O\.B\.|born|date of birth|admitted|discharged|seen|on|since|from|until|dated|review"
            r"|follow-up|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?)\s*:?\s*"
            r"((?:0?[1-9]|[12]\d|3[01])[/.](?:0?[1-9]|1[0-2])|\d{8})(?![\w/]|\.\d)", re.IGNORECASE), group=1),
        _Recognizer("date", re.compile(r"(?<=\bthe )(?:[12]?\d|3[01])(?:st|nd|rd|th)\b(?!\s+(?!of\b)[a-z])")),  # "on the 12th"
        _Recognizer("date", re.compile(
            r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+(?:the\s+)?(?:[12]?\d|3[01])(?:st|nd|rd|th)\b(?!\s+of\b)")),
        _Recognizer("date", re.compile(
            r"\b(?:Christmas(?: Eve| Day)?|New Year's (?:Eve|Day)|Boxing Day|Easter (?:Sunday|Monday)|St\.? Patrick's Day"
            r"|Thanksgiving(?: Day)?|Independence Day|Bastille Day|Hogmanay|Valentine's Day|Halloween)\b")),
        _Recognizer("age", re.compile(
            rf"\b(?:{over89}(?:(?:{dash}|\s)(?:year|yr)s?(?:{dash}|\s)old|(?:\s?|{dash})(?:yo[fm]?|y/o|y-o|y\.o\.?(?:[fm]\.?)?)|{dash}year{dash}old"
            rf"|\s+years\s+of\s+age|\s*(?:yrs?|yo)\b"
            rf"|\s*Jahren?\b|\s*J\.|-?jährig\w*"  # German: "93 Jahre", "mit 94 Jahren", "die 94-jährige"
            r"|\s+(?:ans|años|anos|anni|jaar|år)(?!\w)|-årig(?!\w)"  # French, Spanish, Portuguese, Italian, Dutch, Scandinavian
            r"|\s?y(?:\s?\d{1,2}\s?m\b|(?=\s*[),;])))"  # "94y 3m", "(96 y)"
            rf"|(?:aged?|age:|age of|Alter:?|Alter von)\s+{over89}(?:\s*Jahren?\b)?"
            rf"(?!\s*(?:%|(?:days?|weeks?|months?|kgs?|lbs?|g|cm|mm|mg|ml|bpm|mmHg)\b))"
            r"|nonagenarian|(?:super)?centenarian|(?:tenth|eleventh)\s+decade"
            rf"|{spelled}(?:(?:{dash}|\s)years?(?:{dash}|\s)old|\s+years\s+of\s+age|(?!\s+(?:per|percent|[a-z]+s|mg|g|kg|ml|mm|cm|km|mph|bpm)\b))"
            rf"|hundred[- ]years?[- ]old"
            r")(?![\w-])", re.IGNORECASE)),
        # An age after its label, in a form, a table or scanned text: "Age: 101", "Age | 92",
        # "AGE:91Y", "Age/Sex: 97/F", "Age at death: 98", "Edad: 94"; and beside a sex, "F/92", "97/F".
        _Recognizer("age", re.compile(
            rf"\b(?i:age|aged|edad|âge|età|idade|leeftijd|ålder|alder)(?i:\s+at\s+(?:death|admission|onset|diagnosis|presentation"
            rf"|interview|enrol?ment|entry|the\s+(?:time|date)\s+of\s+\w+))?"
            rf"(?:\s*\((?i:years?|yrs?|y)\))?(?:\s*/\s*(?i:sex|gender))?\s*(?:[:|=\t]\s*)?({age_number})"
            rf"(?=(?i:\s*(?:y|yrs?|years?|yo|y/o))(?![\w-])|{not_a_measure}(?![\w-]))"), group=1),
        _Recognizer("age", re.compile(rf"(?<=[MF]/)(?<![\w/.][MF]/){over89}(?![\w/.])|(?<![\w/.]){over89}(?=/[MF](?![\w/]))")),
        # "(96 years)", never a span of time: "for 90 years", "92 years ago".
        _Recognizer("age", re.compile(
            rf"(?<!\bfor )(?<!\bover )(?<!\bpast )(?<!\blast )(?<!\bin )(?<!\bafter )\b{over89}\s+years\b"
            r"(?!\s+(?:ago|later|earlier|before|after|since|of\s+(?!age)))")),
        # An age the words around it give away: "in her 90s", "his 95th birthday", "turned 100",
        # "who is 97", "Mr Finch (92)", "the victim, 96, lived", "a woman of 98", "herself 90",
        # "99 next month", "92F". The number alone is an age there; a unit after it is a measure.
        _Recognizer("age", re.compile(
            r"\b(?i:his|her|their)\s+(?:(?i:early|mid|late)[- ]?)?((?:90|100)['’]?s|(?i:nineties))(?![\w'’])"), group=1),
        _Recognizer("age", re.compile(
            rf"\b(?:{over89}(?:st|nd|rd|th)|(?i:ninetieth|ninety{dash}\w+th|(?:one\s+)?hundredth))\s+(?i:birthday)\b")),
        # "in her ninety-fourth year", "his 101st year": the ordinal is the age.
        _Recognizer("age", re.compile(
            rf"\b(?i:his|her|their)\s+({over89}(?:st|nd|rd|th)|(?i:ninetieth|ninety{dash}\w+th|(?:one\s+)?hundredth))\s+(?i:year)\b"),
            group=1),
        # A year of birth ninety years back or more: "born in 1931", "(b. 1929)", "Year of birth: 1928".
        _Recognizer("age", re.compile(
            r"\b(?:born(?:\s+in)?|b\.|year\s+of\s+birth|YOB|birth\s+year|DOB:?\s+year|n[ée]e?\s+en|geboren(?:\s+im\s+Jahr)?|nacid[oa]\s+en)"
            r"\s*:?\s*(\d{4})\b(?![/.-]\d)", re.IGNORECASE), group=1, check=_born_ninety_years_back),
        *(_Recognizer("age", re.compile(rf"{before}({age_number}){not_a_measure}"), group=1) for before in (
            r"\b(?i:turn(?:ed|s|ing)?)\s+",
            (rf"\b(?:{person})(?:\s+(?:is|was|turns|turned|will be|would have been)|['’]s)"
             rf"(?:\s+(?:now|almost|nearly|over|just))?(?:\s+aged)?\s+"),
            r"\b(?:I\s+am|I['’]m|I\s+was)(?:\s+(?:now|almost|nearly|over|just))?\s+",
            rf"\b(?:{person}),?\s+(?i:then|now)\s+(?:aged\s+)?",
            r"\b(?i:died|dying|death|passed away|widowed|retired)\s+(?i:aged|at)\s+",
            rf"\b(?i:at)\s+(?={age_number},?\s+(?:he|she|they|I|we|his|her|my|our)\b)",
            rf"\b(?:{person})\s+of\s+",
            rf"\b(?:{person}|[MF]|[A-Z][a-z]+),\s+(?={over89}(?:\s*[,;)]|\s+(?i:next|now|herself|himself|this|years?)\b))",
            rf"\b(?:{person})\s+\((?={over89}\))",  # after a name: see AGE_AFTER_NAME
            r"\b(?i:herself|himself)\s+",
            r"\b(?i:aet|æt)\.?\s+",  # aetatis, "of the age of", in older notes
            rf"\b(?:is|was)\s+(?={over89}\s+(?:at the time|when)\b)",
            r"\b(?=\d+\s+(?i:herself|himself|next (?:month|year|week|birthday))\b)",
            r"\b(?=\d+[MF]\b)",
            r"(?m:^)(?=\d+\s[MF][,;:])")),  # "92 M, BP 130/80": a note's opening age and sex
        _Recognizer("phone", re.compile(
            r"(?<![\w+/.-])(?:(?:\+|00)\d{1,3}[\s.-]?|1[\s.-]?(?=\())?(?:\(0\)\s?)?(?:\(\d{1,5}\)[\s.-]?|\d{1,5}[\s./-])?"
            r"\d{2,5}(?:[\s.-]\d{2,5}){0,3}[\s.-]?\d{2,5}(?:\s*(?:ext\.?|x)\s*\d{1,5})?(?![\w/]|[.-]\d)"), check=_phone),
        _Recognizer("phone", re.compile(
            r"\b(?:phone|tel|telephone|mobile|cell|fax|pager|ph)\.?\s*(?:no\.?|number|#)?\s*:?\s*(\+?\d{7,15})\b",
            re.IGNORECASE), group=1),
        _Recognizer("address", re.compile(
            rf"\b(?:(?:Flat|Apt|Apartment|Unit|Suite|Ste)\.?\s*#?\s*\w+,?\s+)?\d{{1,5}}(?:/\d{{1,5}})?[A-Za-z]?\s+(?:[NSEW]\.?\s+)?(?:(?:{word}|\d{{1,3}}(?:st|nd|rd|th))\s+){{1,3}}"
            rf"{street_types}(?:\s+(?:NW|NE|SW|SE|N|S|E|W))?(?:,?\s+(?:Apt|Apartment|Unit|Suite|Flat)\.?\s*#?\s*\w+)?"
            rf"(?:,\s+(?:{word}\s?){{1,3}}){{0,2}}(?:,?\s+(?:{states})\b)?(?:,?\s+(?:\d{{5}}(?:-\d{{4}})?|{uk_postcode}|{ca_postcode}))?\b"
            rf"|\b(?:P\.?\s?O\.?\s+Box|PO Box)\s+\d+"
            rf"|\b(?i:flat|unit|apt)\.?\s+\d{{1,4}}[A-Z]?/\d{{1,4}}\s+{word}(?:\s+{word})?\s+{street_types}"
            rf"|\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|weg|platz|gasse|allee|ring|damm)\s+\d{{1,4}}[a-z]?\b"
            rf"|\b(?i:rue|avenue|av\.|avenida|boulevard|place|calle|carrer|paseo|rua|via|viale|piazza)\s+"
            rf"(?:(?:de|del|della|da|do|la|le|des|du)\s+){{0,2}}{word}(?:\s+{word}){{0,2}}\s*,?\s+\d{{1,4}}(?:,\s+\d+º\s?[A-Z]?)?\b"
            rf"|\b\d{{1,4}},?\s+(?i:rue|avenue|boulevard|place|calle|via)\s+(?:(?:de|del|la|le|des|du)\s+){{0,2}}{word}(?:[\s-]+{word}){{0,3}}"
            # An Indian address: a flat or house number, then a building, a main or cross road, a
            # nagar or layout ("Flat 402, Shanti Apartments, FC Road", "No. 22, 5th Main, Jayanagar").
            rf"|\b(?:Flat|Plot|No\.)\s\d{{1,4}}[A-Z]?(?:/\d{{1,4}})?(?:,(?:\s+(?:[A-Z][\w.'’-]*|\d{{1,2}}(?:st|nd|rd|th))){{0,3}}\s+{indian_ways}\b){{1,3}}(?:,\s+{word})?")),
        # A town a form's label names: "City: Greeley", "Place of birth: Durban", "County: Westmeath".
        _Recognizer("address", re.compile(
            rf"\b(?:(?i:town|city|village|suburb|county|place of birth|birthplace|home ?town|city of birth|town of birth)"
            rf"|Ort|Wohnort|Geburtsort|Ville|Lieu de naissance|Ciudad|Localidad|Cidade|Città|Comune)\s*:[ \t]*({town})(?![\w'’-])"),
            group=1, check=_place),
        _Recognizer("address", re.compile(r"\b(?i:(?:county|parish|borough) of) ([A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+)?)"), group=1),
        _Recognizer("address", re.compile(rf"\b({word}) County\b"), group=1),
        # A town the words before it name as a place: "lives in Ballina", "moved from Dubbo to
        # Orange", "born in Sligo", "late of Wodonga", "the hearing in Ballymena", "Patientin aus
        # Göttingen"; :func:`_place` turns away what is no town ("moved to Cardiology").
        _Recognizer("address", re.compile(
            rf"\b(?:{place_cue})(?:\s+(?!(?:in|at|near|from|to|of|aus)\b)[a-z]+){{0,2}},?\s+(?i:in|at|near|from|to|of|outside|aus)"
            rf"(?:\s+near)?\s+({town})(?<!\sCounty)(?![\w'’-])"), group=1, check=_place),
        _Recognizer("address", re.compile(
            rf"\b(?:{place_cue})(?:\s+(?!(?:in|at|near|from|to|of|aus)\b)[a-z]+){{0,2}}\s+(?i:from|in)\s+{town}\s+to\s+({town})(?<!\sCounty)(?![\w'’-])"),
            group=1, check=_place),
        _Recognizer("address", re.compile(
            rf"\b(?i:is|was|lives|lived)\s+(?:in|at|near)\s+({town})(?=\s*[,;.)]|\s+(?:and|since|with|until)\b|$)"),
            group=1, check=_place),
        # A town beside its state, province or country ("Hamilton, Ontario", "Yonkers, NY"), or
        # after the facility in it ("Sassoon General Hospital, Pune").
        _Recognizer("address", re.compile(
            rf"\b({town}),\s+(?:{region_names}|NY|CA|TX|FL|IL|WA|NJ|NSW|VIC|QLD|TAS|ACT|NT|ON|QC|BC|NB|NS|MB|SK)\b(?!\s*\d)"),
            group=1, check=_place),
        _Recognizer("address", re.compile(rf"\b(?:{facility_nouns}),\s+({town})(?=\s*[,;.)]|$)"), group=1, check=_place),
        _Recognizer("address", re.compile(rf"\b(?:Co\.|County)\s+({word})"), group=1),
        # A town is named beside its postcode, its state or its county: "80331 München", "Bakersfield,
        # CA 93301", "Cardiff CF11 9HA", "Wagga Wagga NSW 2650".
        _Recognizer("address", re.compile(
            rf"(?<![\w-])(?:\d{{5}}|\d{{4}}(?=\s+{word}\b(?!\s*\d)))\s+({town})(?=\s*(?:[,;.)]|$))"), group=1),
        _Recognizer("address", re.compile(
            rf"\b(?!(?i:post\s?code|zip|address)\b)({town}),?\s+(?:(?:{states})\s+\d{{5}}|{uk_postcode}\b|{ca_postcode}\b|{au_postcode}\b|(?:{states})(?=,?\s+{ca_postcode})"
            rf"|[1-9]\d{{5}}\b|(?:Co\.|County)\s+{word})"),
            group=1),
        _Recognizer("postcode", re.compile(
            rf"(?<=\b(?:{states}) )\d{{5}}(?:-\d{{4}})?\b|(?<=\b(?:ZIP|CEP|PLZ) )(?:\d{{5}}(?:-\d{{3,4}})?)\b"
            rf"|\b(?:ZIP|zip code|postcode|post code|postal code)\s*:?\s*"
            rf"(?:\d{{5}}(?:-\d{{4}})?|{uk_postcode}|{ca_postcode}|\d{{4}})\b|\b{uk_postcode}\b|\b{ca_postcode}\b"
            rf"|\b{au_postcode}\b|(?<=, )\d{{5}}(?=\s+[A-Z][a-zà-ÿ]+)|(?<![\w-])\d{{5}}(?=\s+{town}\b(?!\s*\d))"
            rf"|\b[A-Z]\d{{2}}\s?[A-Z0-9]{{4}}\b|(?<=, )\d{{4}}\b(?=\s*$|\.)|(?<=[a-z] )[1-9]\d{{5}}\b(?![\d-])")),
        _Recognizer("facility", re.compile(
            rf"\b(?:St\.?|Saint)\s+{word}(?:['’]s)?(?:\s+(?:{word}\s+){{0,2}}{facility_nouns})?"
            rf"|\b(?:{word}\s+(?:(?:{word}|of|the|and|&|rechts|der|la|de)\s+){{0,3}})?{word}\s+{facility_nouns}\b(?:\s+(?:of|for)\s+{word}(?:\s+{word})?)?"
            rf"|\b(?:Klinikum|Krankenhaus|Hôpital|Hospital Universitario|Clinique|Hospital General)\s+"
            rf"(?:(?:rechts der|de la|de|del|der|du)\s+)?{word}(?:\s+{word})?"
            rf"|\b(?:AIIMS|Charité|Mayo Clinic|Mass General|Cedars-Sinai)\b")),
        _Recognizer("name", re.compile(rf"\b{labels}((?:[A-Z][A-Z'’.-]+,?\s+){{0,3}}[A-Z][A-Z'’-]+\b|(?!{titles}\b){full_name})"), group=1),
        _Recognizer("name", re.compile(rf"\b(?i:{labels})((?:[A-Z][A-Z'’.-]+\s+){{1,3}}[A-Z][A-Z'’-]+\b)"), group=1),
        _Recognizer("name", re.compile(rf"\b{titles}\s+({full_name})"), group=1),
        _Recognizer("name", re.compile(rf"\b{roles},?\s+((?!{titles}\b){full_name})"), group=1),
        _Recognizer("name", re.compile(
            rf"(?<![\w.])(?<!(?i:the) )(?<!(?i:\ba) )(?<!(?i:an) )(?i:{lower_titles}),?\s+\(?"
            rf"((?!{after_name}\b)[a-z][a-z'’-]+(?:\s+(?!{after_name}\b)[a-z][a-z'’-]+)?)"
            rf"(?=\s*(?:[,;:.)!?—\"'”’-]|$|\d|\s(?:{after_name})\b))"), group=1),
        _Recognizer("name", re.compile(
            rf"(?:^|(?<=[.!?]\s))(?!(?:{titles}|{roles}|{labels})\b)({word}(?:\s+(?:{particle}){{0,2}}{name_word}){{1,3}})(?=\s+(?:was|is|has|had|wrote|rang|called|attended"
            rf"|testified|needed|presented|died|said|lives|lived|came|went|arrived|reported|denies|complains|underwent|needs"
            rf"|confirmed|signed|asked|left|remains|will)\b)", re.MULTILINE), group=1),
        _Recognizer("name", re.compile(r"\b(?i:handle|username|user name|screen name|user ID|login)\s*:?\s*(@?[\w.]{0,63}\w)"), group=1),
        _Recognizer("name", re.compile(r"(?<![\w.@])@[A-Za-z_][\w.]{2,30}\w")),
        _Recognizer("name", re.compile(
            rf"(?<=[a-z,;:]\s)((?!{titles}\b){word}(?:\s+(?:{particle}){{0,2}}(?!{titles}\b){name_word}){{1,4}})"),
            group=1, weak=True),
        # A common given name is a person's whatever follows it ("Maria Jensen"), and whatever the
        # debate's labels say: a label written as a person's name is masked too.
        _Recognizer("name", re.compile(
            r"\b(?:" + "|".join(_given_names()) + rf")\b(?:['’]s)?(?:\s+(?:{particle}){{0,2}}{name_word}){{0,2}}")),
    )


@cache
def _regions() -> frozenset[str]:
    """Places Safe Harbor lets stand (a state or larger): the model's places are masked unless they
    are one of these countries (every one GeoNames lists), states, provinces or regions."""
    from outputs.redact_models import countries

    return frozenset(x.strip().casefold() for x in _REGIONS.split(",") if x.strip()) | countries()


#: The states, provinces, countries and regions of :func:`_regions`.
_REGIONS = """
        Afghanistan, Argentina, Australia, Austria, Bangladesh, Belgium, Belize, Brazil, Canada, Chile, China,
        Colombia, Denmark, Egypt, England, Ethiopia, Finland, France, Germany, Ghana, Greece, India, Indonesia, Iran,
        Iraq, Ireland, Israel, Italy, Japan, Kenya, Korea, Malaysia, Mexico, Morocco, Nepal, Netherlands, New Zealand,
        Nigeria, Northern Ireland, Norway, Pakistan, Peru, Philippines, Poland, Portugal, Russia, Saudi Arabia,
        Scotland, Singapore, South Africa, Spain, Sri Lanka, Sweden, Switzerland, Syria, Thailand, Turkey, Uganda,
        Ukraine, United Kingdom, UK, United States, US, USA, U.S., America, Venezuela, Vietnam, Wales, Zimbabwe, Europe,
        Africa, Asia, Britain, Great Britain, EU,
        Alabama, Alaska, Arizona, Arkansas, California, Colorado, Connecticut, Delaware, Florida, Georgia, Hawaii,
        Idaho, Illinois, Indiana, Iowa, Kansas, Kentucky, Louisiana, Maine, Maryland, Massachusetts, Michigan,
        Minnesota, Mississippi, Missouri, Montana, Nebraska, Nevada, New Hampshire, New Jersey, New Mexico,
        New York State, North Carolina, North Dakota, Ohio, Oklahoma, Oregon, Pennsylvania, Rhode Island,
        South Carolina, South Dakota, Tennessee, Texas, Utah, Vermont, Virginia, Washington State, West Virginia,
        Wisconsin, Wyoming, Ontario, Quebec, British Columbia, Alberta, Manitoba, Saskatchewan, Nova Scotia,
        New South Wales, Victoria, Queensland, Tasmania, Western Australia, South Australia, Bavaria, Bayern, Hesse,
        Saxony, Baden-Württemberg, Maharashtra, Karnataka, Tamil Nadu, Kerala, Gujarat, Punjab, Gauteng,
        Western Cape, KwaZulu-Natal, Catalonia, Andalusia, Île-de-France, Lagos State,
        Andhra Pradesh, Arunachal Pradesh, Assam, Bihar, Chhattisgarh, Goa, Haryana, Himachal Pradesh, Jharkhand,
        Madhya Pradesh, Manipur, Meghalaya, Mizoram, Nagaland, Odisha, Rajasthan, Sikkim, Telangana, Tripura,
        Uttar Pradesh, Uttarakhand, West Bengal, Jammu and Kashmir, Ladakh
        """

#: How a recognizer found its span, which decides what may clear it (see :func:`_cleared`).
STRONG, MODEL, WEAK = 0, 1, 2


def _cleared(text: str, start: int, end: int, kind: str, kept: set[str], level: int) -> bool:
    """Whether a found name, place or facility is no identifier: one of the debate's own terms (a
    label, a model), a state or country, an eponym ("Graves' disease"), or a run of words that is
    never a person (a disease, a court, a month). A name a title, role or label found is cleared
    only by words that are never in a name ("Patient: The …"); the debate's terms shield only what
    the model or capitalisation alone found, so a label cannot carry a name into an export."""
    if kind not in ("name", "facility", "address"):
        return False
    span_text = text[start:end]
    folded = span_text.casefold()
    if (level > STRONG or kind == "facility") and (folded in kept or any(k in folded for k in kept if len(k) > 3)):
        return True
    if kind == "facility":
        return False
    words = [re.sub(r"['’]s?$", "", w) for w in span_text.split()]
    if level == MODEL and (any(w in _not_names() or w in _field_words() for w in words) or any(c.isdigit() for c in span_text)
                           or not span_text[:1].isupper() or _eponym(text, end)):
        return True
    if kind == "address":
        return level == MODEL and (folded.removeprefix("the ") in _regions() or any(w in _not_places() for w in words))
    if any(w in _not_names() for w in words) or (level > STRONG and folded in _regions()):
        return True
    if level == WEAK and _eponym(text, end):
        return True
    return level == WEAK and any(w in _never_names() or w.removesuffix("s") in _never_names() for w in words)


def _eponym(text: str, end: int) -> bool:
    """Whether the words before ``end`` name a disease, a sign, a score or a convention after a
    person or a place ("Graves' disease", "Hoehn and Yahr stage", "Glasgow-Blatchford score",
    "Marburg virus", "Oxford knee score", "Manchester triage"), not a person or a town."""
    term = re.compile(
        r"(?:\s*(?:and|&|-)\s*[A-Z][\w-]+)?['’]?s?(?:\s+[a-z]+)?\s+(?i:disease|syndrome|palsy|sign|test|score|scale|criteria|triad|lymphoma"
        r"|sarcoma|orbitopathy|crisis|law|theorem|index|classification|stage|ulcer|phenomenon|encephalopathy|thyroiditis"
        r"|virus|fever|flu|definition|triage|category|questionnaire|assessment|guidelines?|protocol|convention|treaty|accord)\b")
    return term.match(text, end) is not None


def _honorific(part: str) -> bool:
    """Whether what is left of a model's name, once the title recognizer took the name, is only the
    title or article before it ("Dr.", "the"): that stays, as it does for the recognizer's own."""
    return re.fullmatch(r"(?i:the|a|an|dr|mr|mrs|ms|mx|prof|sir|dame|judge|justice|officer|nurse|doctor|patient|pt|adv"
                        r"|herr|frau|mme|sra?|dña|don|dc|ds|pc|det|sgt|counsel|m|d|co)\.?", part) is not None


def _candidates(text: str) -> Iterator[tuple[int, int, str, int]]:
    """Every span each recognizer finds, most specific first, with how it was found: the
    project's patterns, then libphonenumber's phones and the model's people and places
    (:mod:`outputs.redact_models`, loaded on first use), then names by capitalisation alone."""
    from outputs import redact_models

    asked = False
    for rec in _recognizers():
        if rec.weak and not asked:
            asked = True
            for finder in redact_models.FINDERS:
                yield from ((start, end, kind, MODEL) for start, end, kind in finder(text))
        for match in rec.pattern.finditer(text):
            if match.group(rec.group) is None or (rec.check is not None and not rec.check(match)):
                continue
            start, end = match.span(rec.group)
            yield start, end, rec.kind, WEAK if rec.weak else STRONG


def find(text: str, keep: Iterable[str] = ()) -> list[Span]:
    """The identifiers in ``text``, in order, not overlapping. ``keep`` lists phrases never
    masked as names (the debate's labels, its models) where only the model or capitalisation
    found them."""
    kept = {k.casefold() for k in keep if k.strip()}
    taken = [False] * len(text)
    spans: list[Span] = []
    for start, end, kind, level in _candidates(text):
        if start == end or _cleared(text, start, end, kind, kept, level):
            continue
        split = any(taken[start:end])
        parts = list(_free_parts(text, start, end, kind, taken))
        if kind == "number" and split:
            # What a number's span has left once others took their parts is a number only if it
            # holds a digit: "and" between two plates a label's value ran across is a word.
            parts = [p for p in parts if any(ch.isdigit() for ch in text[p.start:p.end])]
        if kind != "keep":
            spans.extend(p for p in parts if not (level == MODEL and _honorific(text[p.start:p.end])))
    for span in [s for s in spans if s.kind == "name"]:
        # "Mr Finch (92)", "Walter Pryce (96)": a bracketed number over 89 right after a name.
        after = AGE_AFTER_NAME.match(text, span.end)
        if after and not any(taken[after.start(1):after.end(1)]):
            spans.append(Span(after.start(1), after.end(1), "age"))
    return sorted(spans, key=lambda s: s.start)


#: An age over 89 in brackets right after a name (see :func:`find`).
AGE_AFTER_NAME = re.compile(r"\s+\((9\d|1[01]\d)\)")


def _free_parts(text: str, start: int, end: int, kind: str, taken: list[bool]) -> Iterator[Span]:
    """The parts of ``text[start:end]`` no earlier recognizer took (each with a letter or digit),
    marked as taken."""
    i = start
    while i < end:
        while i < end and taken[i]:
            i += 1
        j = i
        while j < end and not taken[j]:
            j += 1
        a, b = i, j
        while a < b and text[a] in " ,;:":  # a part left over is cut to its words
            a += 1
        while b > a and text[b - 1] in " ,;:":
            b -= 1
        if any(ch.isalnum() for ch in text[a:b]):
            for k in range(a, b):
                taken[k] = True
            yield Span(a, b, kind)
        i = j


def redact(text: str, keep: Iterable[str] = ()) -> Redaction:
    """``text`` with every identifier :func:`find` sees replaced by its kind's mark
    (``[PHONE]``), and how many of each kind were masked. The one function every consumer
    (export, report, command line) masks text with."""
    out, counts, last = [], Counter[str](), 0
    for span in find(text, keep):
        out += [text[last:span.start], f"[{span.kind.upper()}]"]
        counts[span.kind] += 1
        last = span.end
    out.append(text[last:])
    return Redaction("".join(out), counts)


def redact_text(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with its identifiers masked (see :func:`redact`)."""
    return redact(text, keep).text


#: Keys of a journalled debate whose values are identifiers of Symposium's own, never free text.
_DATA_KEYS = ("id", "debate_id", "model_id", "role", "backend", "status", "passage", "kind", "match")
#: Keys whose values are withheld from a redacted copy: a file's hash would let a reader test
#: guesses of what was masked in a short file (hash "Patient: John Smith", compare); a reply's
#: token ids (journalled to resume exactly) are its text to anyone with the model's tokenizer.
_WITHHELD = ("sha256", "tokens")


def redact_debate(debate: dict[str, Any], counts: Counter[str] | None = None) -> dict[str, Any]:
    """A copy of a journalled debate (``Queries.debate``) with every string redacted, dictionary
    keys included (a distribution's labels are keys: a label written as "Maria Lopez" or
    "call 555-0199" is masked there as everywhere); the masks made are added to ``counts``
    when given (the report says how many of each). The debate's labels and model ids shield only
    what the model or capitalisation alone would mask, so a label cannot carry an identifier out.
    Two keys that mask to the same text are told apart by a number ("[NAME] (2)"), so no value
    is lost."""
    config = debate.get("config") or {}
    keep = [str(x) for x in (config.get("labels") or [])] + [p["model_id"] for p in debate.get("participants", [])]
    tally = Counter[str]() if counts is None else counts

    def masked(text: str) -> str:
        done = redact(text, keep)
        tally.update(done.counts)
        return done.text

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return masked(value)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for k, v in value.items():
                key = masked(k) if isinstance(k, str) else k
                n = 1
                while key in out:
                    n += 1
                    key = f"{masked(k)} ({n})"
                out[key] = "withheld (redacted copy)" if k in _WITHHELD else v if k in _DATA_KEYS else clean(v)
            return out
        return value

    return clean(debate)


def describe() -> str:
    """What ``--redact`` masks and what it does not promise, in a sentence each (its help)."""
    return ("mask identifiers (HIPAA Safe Harbor's list) in every text and every key: " + "; ".join(KINDS.values())
            + ". Measured on a held-out set (docs/redaction.md) about 97 in 100 identifiers are masked, so some "
              "stay: a rare name with no title or role before it, a small town (under 5,000 people) with no word "
              "saying it is a place, "
              "a number no word names and no known shape (a plate) gives away, an age or date in an unusual wording, "
              "a free description; states, countries and years stay on purpose. Check before sharing")
