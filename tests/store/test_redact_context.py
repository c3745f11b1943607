"""``--redact``'s recognizers that find an identifier by the words around it: ages over 89 by who
they belong to, towns by the words that name them as places, plates by their country's shape,
licences, registers and biometrics by their labels. Each rule is held by what it must mask and by
the text beside it that it must leave (a measure, a department, a batch, a code).

No model is stubbed: the place rules run beside spaCy's model as ``find`` runs them.
"""

from __future__ import annotations

import pytest

from outputs.redact import redact_text
from outputs.redact_models import entities


@pytest.mark.parametrize(("text", "masked"), [
    ("She is in her 90s and drives.", "She is in her [AGE] and drives."),
    ("He is in his late nineties.", "He is in his late [AGE]."),
    ("Mr Walter Pryce celebrated his 95th birthday.", "Mr [NAME] celebrated his [AGE]."),
    ("Grandmother turned 100 last week.", "Grandmother turned [AGE] last week."),
    ("She finally turned 100.", "She finally turned [AGE]."),
    ("My aunt, who is 97, still rings.", "My aunt, who is [AGE], still rings."),
    ("Nana is 101 and lives with us.", "Nana is [AGE] and lives with us."),
    ("Mr Harold Finch (92) of Kendal.", "Mr [NAME] ([AGE]) of [ADDRESS]."),
    ("The victim, 96, lived alone.", "The victim, [AGE], lived alone."),
    ("Demographics: F, 94; ward 7B.", "Demographics: F, [AGE]; ward 7B."),
    ("A woman of 98 was found.", "A woman of [AGE] was found."),
    ("his wife, herself 90, cares for him", "his wife, herself [AGE], cares for him"),
    ("my grandmother, 99 next month", "my grandmother, [AGE] next month"),
    ("92F presents with a fall", "[AGE]F presents with a fall"),
    ("Nonagenarian (96 years) with AF.", "[AGE] ([AGE]) with AF."),
    ("Alter: 93 Jahre.", "[AGE]."),
    ("Die 94-jährige Patientin.", "Die [AGE] Patientin."),
    ("the plaintiff was 91 at the time", "the plaintiff was [AGE] at the time"),
])
def test_an_age_over_89_is_masked_in_the_wordings_notes_use(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "HR was 92 bpm.", "pt was 92 bpm on arrival", "She is 92 kg.", "The patient is 95% adherent.", "enoxaparin 90 mg for 90 days",
    "married for 90 years", "92 years ago", "in the 90s", "90s music in the day room",
    "the 95th percentile", "his wife, 89 herself", "scores 12, 94, 100", "92Fx", "turned 89",
])
def test_a_number_over_89_that_is_no_age_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("She lives in Letterkenny.", "She lives in [ADDRESS]."),
    ("She lives alone near Truro.", "She lives alone near [ADDRESS]."),
    ("He moved from Dubbo to Orange last year.", "He moved from [ADDRESS] to [ADDRESS] last year."),
    ("He worked in Athlone until 1985.", "He worked in [ADDRESS] until 1985."),
    ("Respondent of Parramatta.", "Respondent of [ADDRESS]."),
    ("Deceased, late of Wodonga.", "Deceased, late of [ADDRESS]."),
    ("The hearing in Ballymena was adjourned.", "The hearing in [ADDRESS] was adjourned."),
    ("Beklagte aus Ingolstadt.", "Beklagte aus [ADDRESS]."),
    ("She was born in Hamilton, Ontario.", "She was born in [ADDRESS], Ontario."),
    ("the defendant of Yonkers, NY.", "the defendant of [ADDRESS], NY."),
    ("seen at Sassoon General Hospital, Pune; ESR 92.", "seen at [FACILITY], [ADDRESS]; ESR 92."),
    ("she grew up in Marin County", "she grew up in [ADDRESS] County"),
])
def test_a_town_named_as_a_place_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "She works in Radiology.", "He was in Theatre until 3pm.", "She came from England in 2001.",
    "moved to New South Wales", "is of Irish descent", "she came to Accident and Emergency",
    "his GP in Practice 4", "Seen, Ontario", "born in 1985",
])
def test_what_follows_a_place_word_and_is_no_town_stays(text: str) -> None:
    assert redact_text(text) == text


def test_the_model_s_entity_ends_before_its_first_lower_case_word() -> None:
    """The small model runs "Thunder Bay" on into "for PCI": the procedure stays."""
    text = "moved to Thunder Bay for PCI"
    assert redact_text(text) == "moved to [ADDRESS] for PCI"
    assert all(text[start:end] != "Thunder Bay for PCI" for start, end, _ in entities(text))


@pytest.mark.parametrize(("text", "masked"), [
    ("The car, reg. 191-D-12345, and a second car, 12-MO-4471.", "The car, reg. [NUMBER], and a second car, [NUMBER]."),
    ("The vehicles KA 05 MN 1234 and DL 3C AB 1234 were seized.", "The vehicles [NUMBER] and [NUMBER] were seized."),
    ("The van (HH-XY 99) was registered.", "The van ([NUMBER]) was registered."),
    ("Texas tag BKR-4471; NSW rego BX 12 YZ.", "Texas tag [NUMBER]; NSW rego [NUMBER]."),
    ("Federal Court matter NSD 123 of 2023.", "Federal Court matter [NUMBER]."),
    ("Geschäftszeichen 3 Ca 771/23; Record No. 2022/1234 P.", "Geschäftszeichen [NUMBER]; Record No. [NUMBER]."),
    ("NMC PIN 12A3456E; CPSO #98765; Medical Council no. 412233.", "NMC [NUMBER]; CPSO #[NUMBER]; Medical Council no. [NUMBER]."),
    ("Führerschein-Nr. B072RRE2I55; Bar Roll No. D/1234/2010.", "Führerschein-Nr. [NUMBER]; Bar Roll No. [NUMBER]."),
    ("DNA sample DNA-8812-K; iris scan ID IRS-44812.", "DNA sample [NUMBER]; iris scan ID [NUMBER]."),
    ("PPSN 7654321KA; PAN ABCDE1234F.", "PPSN [SSN]; PAN [NUMBER]."),
])
def test_plates_licences_registers_and_biometrics_are_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "HLA-B27 positive", "COVID-19 and SARS-CoV-2", "a price tag of 4 dollars", "in the matter of 5 children",
    "a case of 5 patients", "The vaccine lot 4539 1488 0343 6468 expired", "ICD-10 J18.9",
])
def test_codes_and_counts_beside_those_words_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("Flat 402, Shanti Apartments, FC Road, Pune 411004.", "[ADDRESS] [POSTCODE]."),
    ("No. 22, 5th Main, Jayanagar, Bengaluru.", "[ADDRESS]."),
    ("Plot 7, Sardar Patel Marg.", "[ADDRESS]."),
    ("The meeting is on Friday 10th.", "The meeting is on [DATE]."),
    ("The hearing on Wednesday, the 5th of July", "The hearing on Wednesday, the [DATE]"),
])
def test_indian_addresses_and_weekdays_with_a_day_are_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("Visit number V00931174; temperature 37.9.", "Visit number [NUMBER]; temperature 37.9."),
    ("Lab no. L4471-229; ferritin 15.", "Lab no. [NUMBER]; ferritin 15."),
    ("Encounter #E-77120934; Pol#HX44712.", "Encounter #[NUMBER]; Pol#[NUMBER]."),
    ("Insurer ref. CLM-2023-88712; Cause No. DC-22-04471.", "Insurer ref. [NUMBER]; Cause No. [NUMBER]."),
    ("Patient identifier 5520-1187-3; allergy to penicillin.", "Patient identifier [NUMBER]; allergy to penicillin."),
    ("Med.Rec.No. 4471209 on file", "Med.Rec.No. [NUMBER] on file"),
    ("Medicare Beneficiary Identifier 1EG4-TE5-MK73.", "Medicare Beneficiary Identifier [NUMBER]."),
    ("Account Number:\n22-4471-0098", "Account Number:\n[NUMBER]"),
    ("Resident no. R412 at the home.", "Resident no. [NUMBER] at the home."),
])
def test_a_number_after_any_label_of_its_own_is_masked(text: str, masked: str) -> None:
    """"number", "no.", "#", "ID", "identifier" or "ref" after words that name what is numbered,
    the value on the same line or the next."""
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "Room no. 447 and page no. 4471.", "Lot no. 4471B; model no. 22904.", "Bed #12, patient #2.",
    "Flight no. 1054 and seat no. 142.", "Paragraph no. 447 of the judgment.", "Result no. 104.5 today.",
    "Typhoid 0.15, Malaria 0.30", "Typhoid 1204 cases", "Exhibit no. 1204; Section no. 498.",
])
def test_a_number_after_a_label_of_a_place_a_page_or_a_product_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("MBI: 7AK9-QF2-JH11; RAMQ TREM 4412 0918.", "MBI: [NUMBER]; RAMQ [NUMBER]."),
    ("PHN 9876 543 210; ULI 12345-6789; URN: 8812-4471.", "PHN [NUMBER]; ULI [NUMBER]; URN: [NUMBER]."),
    ("UR number 0934471; CHI number 120345 6789; H&C number 334 412 5567.",
     "UR number [NUMBER]; CHI number [NUMBER]; H&C number [NUMBER]."),
])
def test_health_card_and_beneficiary_numbers_by_their_acronyms_are_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


def test_a_label_s_value_is_found_across_a_table_s_bar_and_never_in_two_digits_stuck_to_it() -> None:
    assert redact_text("MRN | 00988123 | Ward | 9") == "MRN | [NUMBER] | Ward | 9"
    assert redact_text("ACC claim number ACC-4471-229; ACC45 form lodged.") == "ACC claim number [NUMBER]; ACC45 form lodged."
    assert redact_text("MRN00412287 on the label") == "MRN[NUMBER] on the label"


@pytest.mark.parametrize(("text", "masked"), [
    ("Record No. 2021/4471 JR before the High Court.", "Record No. [NUMBER] before the High Court."),
    ("The car bearing registration WP 1234 G was stopped.", "The car bearing registration [NUMBER] was stopped."),
    ("MRN 4471209 A patient of ours", "MRN [NUMBER] A patient of ours"),
    ("MRN 4471209 I think", "MRN [NUMBER] I think"),
])
def test_a_number_s_last_capitals_before_a_lower_case_word_are_its_own(text: str, masked: str) -> None:
    """But "A" and "I", which open the next words."""
    assert redact_text(text) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("Patient aged one hundred and two, Hb 88.", "Patient aged [AGE], Hb 88."),
    ("She is a hundred and one.", "She is [AGE]."),
    ("Ninety-six years of age, frail.", "[AGE], frail."),
    ("A hundred-year-old man.", "A [AGE] man."),
    ("The patient, ninety-seven, declined.", "The patient, [AGE], declined."),
])
def test_an_age_over_89_in_words_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "Ninety minutes after the dose.", "ninety per cent of cases", "ninety years ago", "one hundred patients",
    "ninety mg twice daily", "a baby aged 90 days", "about a hundred.",
])
def test_a_number_over_89_in_words_that_is_no_age_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("MRN | 00988123 | Age | 92", "MRN | [NUMBER] | Age | [AGE]"),
    ("Age:93 Sex:M", "Age:[AGE] Sex:M"),
    ("AGE:91Y", "AGE:[AGE]Y"),
    ("AGE | 96 |", "AGE | [AGE] |"),
    ("Age/Sex: 97/F; MUST 2.", "Age/Sex: [AGE]/F; MUST 2."),
    ("Age/Sex: 97 F", "Age/Sex: [AGE] F"),
    ("F/92, Waterlow 20", "F/[AGE], Waterlow 20"),
    ("Pt 96/M, Braden 11", "Pt [AGE]/M, Braden 11"),
])
def test_an_age_over_89_after_its_label_or_beside_a_sex_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "Age | 90 days", "Age | 96 weeks", "BP 140/92", "1/90 F", "F/92x", "M/89", "Age | 95th centile",
])
def test_a_number_beside_an_age_label_or_a_sex_that_is_no_age_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("At 94 he still walks to the shops.", "At [AGE] he still walks to the shops."),
    ("The claimant's mother, who died at 96, left the house.", "The claimant's mother, who died at [AGE], left the house."),
    ("The deceased, then 92, signed the will.", "The deceased, then [AGE], signed the will."),
    ("My dad's MRN is 00231187 and he's 95.", "My dad's MRN is [NUMBER] and he's [AGE]."),
    ("The testator, now ninety-two, signed.", "The testator, now [AGE], signed."),
    ("Grandma turned ninety-one years young!", "Grandma turned [AGE] years young!"),
])
def test_an_age_over_89_the_words_around_it_give_away_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "HR now 92, RR 20.", "titrated at 90 to effect", "At 95 mg the rash recurred.", "he's 95 kg",
    "died at 96 hours", "the patient's 92 bpm",
])
def test_a_number_where_those_words_are_a_measure_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("The car 7ABC123 was seen on the camera.", "The car [NUMBER] was seen on the camera."),
    ("A white van, LV19 XKT, was parked.", "A white van, [NUMBER], was parked."),
    ("The ute was registered as 1ABC 234.", "The ute was registered as [NUMBER]."),
])
def test_a_plate_after_the_vehicle_that_bears_it_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", [
    "his Ford F-150 and a RAV4", "the car, a 2019 Ford F150,", "The van (Mercedes Sprinter 316 CDI)",
    "Car model ZX4000 recalled", "a car with 2 CT scans", "the car was doing 92 km/h", "the van AB 12 was",
    "the van, an old Transit 316 CDI", "the ute, HILUX SR5, was sold", "the car had 45000 km on it",
])
def test_a_vehicle_s_make_model_or_speed_stays(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("I am 93 and tired of forms.", "I am [AGE] and tired of forms."),
    ("I'm 95 next to her.", "I'm [AGE] next to her."),
    ("She will be 95 in May.", "She will be [AGE] in May."),
    ("She is nearly 100.", "She is nearly [AGE]."),
    ("Her ninetieth birthday was on the ward.", "Her [AGE] was on the ward."),
    ("A 93 yr lady.", "A [AGE] lady."),
])
def test_an_age_over_89_said_of_oneself_ahead_or_nearly_is_masked(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", ["I'm 95 kg", "the score will be 95", "She is nearly 100 kg"])
def test_those_words_before_a_measure_stay(text: str) -> None:
    assert redact_text(text) == text
