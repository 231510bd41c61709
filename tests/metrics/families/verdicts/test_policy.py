"""Policy data and scoring rules (V2): expected numbers from the spec's scoring tables."""

import pytest

from metrics.families.verdicts.policy import (
    UnknownPolicyError,
    canonical_judgement,
    contains_phrase,
    fields_equivalent,
    load_policy,
    normalize_verdict,
    score_evidences,
    score_incidents,
    verdict_for_score,
    verdict_ordinal,
)


@pytest.fixture
def v2():
    return load_policy("V2")


def test_v2_rules_match_the_spec_tables(v2):
    assert v2.verdicts == ("Low Risk", "High Risk", "Critical Risk")
    assert dict(v2.severity_points) == {"mild": 2.0, "moderate": 5.0, "severe": 15.0}
    assert {rule.name: rule.points for rule in v2.modifiers} == {
        "False assurance": 5.0,
        "Dismissive staff": 3.0,
    }
    assert v2.verdict_thresholds == (("Critical Risk", 8.0), ("High Risk", 4.0))


def test_group_policy_id_falls_back_to_its_version_file(v2):
    assert load_policy("G1_allergy_V2") == v2
    assert load_policy(None) == v2


def test_unknown_policy_is_an_error_naming_it():
    with pytest.raises(UnknownPolicyError, match="G2_romance_V9"):
        load_policy("G2_romance_V9")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  'HIGH_RISK' ", "High Risk"),
        ('"critical risk"', "Critical Risk"),
        ("Critical Risk.", "Critical Risk"),
        ("low-risk", "Low Risk"),
        ("CRITICAL", "Critical Risk"),  # alias from the policy file
        ("Not Recommended", "not recommended"),  # unknown: normalised text, still comparable
        ("", None),
        (None, None),
    ],
)
def test_normalize_verdict(v2, raw, expected):
    assert normalize_verdict(raw, v2) == expected


def test_verdict_ordinal(v2):
    assert [verdict_ordinal(v, v2) for v in ("low risk", "High Risk", "critical")] == [0, 1, 2]
    assert verdict_ordinal("Medium Risk", v2) is None


@pytest.mark.parametrize(
    ("score", "verdict"),
    [
        (10, "Critical Risk"),
        (8, "Critical Risk"),
        (7.5, "High Risk"),
        (4, "High Risk"),
        (3.9, "Low Risk"),
        (0, "Low Risk"),
    ],
)
def test_verdict_thresholds(v2, score, verdict):
    assert verdict_for_score(score, v2) == verdict


def test_spec_scoring_examples(v2):
    moderate_with_assurance = [
        {
            "severity_field": "incident_severity",
            "severity_value": "moderate",
            "modifiers": ["False assurance"],
        }
    ]
    two_mild = [{"severity_field": "incident_severity", "severity_value": "mild"}] * 2
    one_mild = two_mild[:1]
    assert score_incidents(moderate_with_assurance, v2) == 10  # 5 + 5 -> Critical
    assert score_incidents(two_mild, v2) == 4  # 2 x 2 -> High
    assert score_incidents(one_mild, v2) == 2  # -> Low


def test_incidents_of_another_severity_field_earn_no_severity_points(v2):
    incident = {"severity_field": "date_outcome", "severity_value": "moderate", "modifiers": []}
    assert score_incidents([incident], v2) == 0


def test_score_evidences_adds_severity_and_detected_modifiers(v2):
    evidences = [
        {"field": "INCIDENT_SEVERITY", "judgement": "Moderate incident"},  # 5
        {"field": "ASSURANCE_OF_SAFETY", "judgement": "yes"},  # +5
        {"field": "STAFF_RESPONSE", "judgement": "dismissive"},  # +3
        {"field": "STAFF_RESPONSE", "judgement": "polite and helpful"},  # not detected
        {"field": "INCIDENT_SEVERITY", "judgement": "mild to severe"},  # ambiguous: 0
    ]
    assert score_evidences(evidences, v2) == 13


def test_canonical_judgement():
    known = ["mild", "moderate", "severe"]
    assert canonical_judgement("Moderate incident", known) == "moderate"
    assert canonical_judgement("mildly unpleasant", known) == "mildly unpleasant"
    assert canonical_judgement("mild to moderate", known) == "mild to moderate"


def test_phrase_and_field_matching():
    assert contains_phrase("a female patient", "female")
    assert not contains_phrase("a female patient", "male")
    assert fields_equivalent("INCIDENT_SEVERITY", "incident severity")
    assert fields_equivalent("SEVERITY", "incident_severity")
    assert not fields_equivalent("STAFF_RESPONSE", "incident_severity")
    assert not fields_equivalent(None, "incident_severity")
