"""The seven verdict/evidence metrics on hand-computed cases (policy V2)."""

import pytest

from metrics.families.verdicts import (
    compute_evaluation_metrics,
    compute_evidence_validity,
    compute_judgement_accuracy,
    compute_macro_f1,
    compute_ordinal_auprc,
    compute_verdict_consistency_enhanced,
    extract_verdict_from_rule,
    is_snippet_valid,
    load_policy,
    verdict_confusion,
)


def result(business_id, verdict=None, evidences=None, rule=None, risk_score=None):
    parsed = {"evidences": evidences or [], "justification": {"triggered_rule": rule}}
    return {
        "business_id": business_id,
        "verdict": verdict,
        "risk_score": risk_score,
        "parsed": parsed,
    }


def evidence(review_id, field="INCIDENT_SEVERITY", judgement="mild", snippet=None):
    return {"review_id": review_id, "field": field, "judgement": judgement, "snippet": snippet}


def incident(review_id, value="mild", modifiers=None, field="incident_severity"):
    return {
        "review_id": review_id,
        "severity_field": field,
        "severity_value": value,
        "modifiers": modifiers,
    }


# --- AUPRC and macro-F1 ---------------------------------------------------------------------


def test_auprc_caveat_example_perfect_ranking_with_all_predictions_wrong():
    # GT [Low, Low, High, High], predictions [High, High, Critical, Critical], scores 1..4.
    auprc = compute_ordinal_auprc([0, 0, 1, 1], [1, 2, 3, 4])
    assert auprc["auprc_ge_high"] == 1.0
    assert auprc["auprc_ge_critical"] is None  # no Critical in GT: threshold left out
    assert auprc["ordinal_auprc"] == 1.0
    assert compute_macro_f1([0, 0, 1, 1], [1, 1, 2, 2]) == 0.0


def test_auprc_hand_computed_mean_of_two_thresholds():
    # >=High: ranking pos, neg, pos, pos, neg -> AP = 1/3*1 + 1/3*2/3 + 1/3*3/4 = 29/36
    # >=Critical: ranking pos, neg, neg, pos, neg -> AP = 1/2*1 + 1/2*2/4 = 3/4
    auprc = compute_ordinal_auprc([0, 1, 2, 0, 2], [0.1, 0.4, 0.35, 0.8, 0.9])
    assert auprc["auprc_ge_high"] == pytest.approx(29 / 36)
    assert auprc["auprc_ge_critical"] == pytest.approx(3 / 4)
    assert auprc["ordinal_auprc"] == pytest.approx((29 / 36 + 3 / 4) / 2)


def test_auprc_needs_two_samples_and_two_classes():
    assert compute_ordinal_auprc([2], [5.0])["ordinal_auprc"] is None
    assert compute_ordinal_auprc([], [])["n_samples"] == 0
    assert compute_ordinal_auprc([1, 1, 1], [1, 2, 3])["ordinal_auprc"] is None


def test_macro_f1_counts_invalid_predictions_as_wrong():
    # class 0: F1 1; class 1: missed -> 0; class 2: P 1/2, R 1/2 -> 1/2. Mean 1.5/3.
    assert compute_macro_f1([0, 1, 2, 2], [0, 2, 2, -1]) == pytest.approx(0.5)


def test_macro_f1_ignores_classes_absent_from_truth_and_predictions():
    assert compute_macro_f1([0, 0], [0, 0]) == 1.0
    assert compute_macro_f1([], []) is None


# --- snippet validity -----------------------------------------------------------------------

SOURCE = (
    "We ordered the pad thai for the table. The server said it was peanut free. "
    "Then dessert came out quickly. Within minutes my throat was itchy. We left early."
)


def test_snippet_substring_ignores_case_and_whitespace():
    assert is_snippet_valid("the SERVER said  it was\npeanut free", SOURCE)


def test_snippet_stitched_from_sentences_in_order_is_valid():
    assert is_snippet_valid(
        "The server said it was peanut free... Within minutes my throat was itchy", SOURCE
    )


def test_snippet_stitched_out_of_order_is_invalid():
    # Second segment is only searched after the first one: 1 of 2 found = 50% < 80%.
    assert not is_snippet_valid(
        "Within minutes my throat was itchy. The server said it was peanut free.", SOURCE
    )


def test_snippet_eighty_percent_of_segments_rule():
    four_of_five = (
        "We ordered the pad thai for the table. The server said it was peanut free. "
        "Then dessert came out quickly. Within minutes my throat was itchy. The chef apologised."
    )
    three_of_five = four_of_five.replace("Then dessert came out quickly", "The bill was wrong")
    assert is_snippet_valid(four_of_five, SOURCE)
    assert not is_snippet_valid(three_of_five, SOURCE)


def test_snippet_segments_under_ten_characters_are_ignored():
    # "Honestly" is not in the source but too short to count; the other segment is found.
    assert is_snippet_valid("Honestly. The server said it was peanut free.", SOURCE)


def test_fabricated_or_sourceless_snippets_are_invalid():
    assert not is_snippet_valid("The food was perfectly safe for my allergy.", SOURCE)
    assert not is_snippet_valid("The server said it was peanut free", "")
    assert not is_snippet_valid("", SOURCE)


# --- evidence precision / recall / snippet validity ------------------------------------------


def test_evidence_precision_and_recall_are_pooled_by_review_id():
    results = [
        # claims a1 twice (two fields) and fabricated a9: claimed {a1, a9}, matched {a1}
        result("r1", evidences=[evidence("a1"), evidence("a1", "STAFF_RESPONSE"), evidence("a9")]),
        # claims both GT reviews
        result("r2", evidences=[evidence("b1"), evidence("b2")]),
    ]
    gt = {
        "r1": {"incidents": [incident("a1"), incident("a2"), incident("a3")]},
        "r2": {"incidents": [incident("b1"), incident("b2")]},
    }
    details = compute_evidence_validity(results, gt)
    assert (details["total_claimed"], details["total_matched"]) == (4, 3)
    assert details["total_gt_evidence"] == 5
    assert details["evidence_precision"] == pytest.approx(3 / 4)
    assert details["evidence_recall"] == pytest.approx(3 / 5)
    assert details["per_sample"][0]["evidence_precision"] == pytest.approx(1 / 2)
    assert details["per_sample"][0]["evidence_recall"] == pytest.approx(1 / 3)


def test_no_claims_gives_no_precision_but_zero_recall():
    details = compute_evidence_validity([result("r1")], {"r1": {"incidents": [incident("a1")]}})
    assert details["evidence_precision"] is None
    assert details["evidence_recall"] == 0.0
    assert details["samples_with_no_claims"] == 1


def test_no_ground_truth_evidence_gives_no_recall_but_zero_precision():
    details = compute_evidence_validity(
        [result("r1", evidences=[evidence("a1")])], {"r1": {"incidents": []}}
    )
    assert details["evidence_precision"] == 0.0
    assert details["evidence_recall"] is None
    assert details["samples_with_no_gt"] == 1


def test_results_without_a_ground_truth_entry_are_left_out():
    details = compute_evidence_validity(
        [result("r1", evidences=[evidence("a1")]), result("zz", evidences=[evidence("x")])],
        {"r1": {"incidents": [incident("a1")]}},
    )
    assert details["total_claimed"] == 1
    assert details["samples_without_gt_entry"] == 1


def test_snippet_validity_against_review_texts():
    results = [
        result(
            "r1",
            evidences=[
                evidence("a1", snippet="The server said it was peanut free"),  # valid
                evidence("a1", snippet="Everything was safe"),  # fabricated
                evidence("a2", snippet="My throat was itchy"),  # review a2 not in the texts
                evidence("a1"),  # no snippet: not counted
            ],
        ),
        result("r2", evidences=[evidence("b1", snippet="anything")]),  # no texts for r2
    ]
    gt = {"r1": {"incidents": []}, "r2": {"incidents": []}}
    details = compute_evidence_validity(results, gt, {"r1": {"a1": SOURCE}})
    assert (details["valid_snippets"], details["total_snippets"]) == (1, 3)
    assert details["snippet_validity"] == pytest.approx(1 / 3)
    assert compute_evidence_validity(results, gt)["snippet_validity"] is None


# --- judgement accuracy ---------------------------------------------------------------------


def test_judgement_spec_example_normalised_match():
    results = [result("r1", evidences=[evidence("abc", "INCIDENT_SEVERITY", "moderate incident")])]
    gt = {"r1": {"incidents": [incident("abc", "moderate")]}}
    accuracy, details = compute_judgement_accuracy(results, gt)
    assert accuracy == 1.0
    assert details["per_field"]["INCIDENT_SEVERITY"] == {"correct": 1, "total": 1, "accuracy": 1.0}


def test_judgement_checks_severity_and_reported_modifiers_of_matched_incidents():
    results = [
        result(
            "r1",
            evidences=[
                evidence("a1", "INCIDENT_SEVERITY", "severe"),  # GT moderate: wrong
                evidence("a1", "ASSURANCE_OF_SAFETY", "no"),  # not detected, GT has it: wrong
                evidence("a1", "STAFF_RESPONSE", "dismissive"),  # detected, GT lacks it: wrong
                evidence("a2", "INCIDENT_SEVERITY", "mild"),  # right; a2 has no modifier list
            ],
        ),
    ]
    gt = {
        "r1": {
            "incidents": [
                incident("a1", "moderate", modifiers=["False assurance"]),
                incident("a2", "mild", modifiers=None),
                incident(
                    "a3", "severe", modifiers=[]
                ),  # not claimed: recall's business, not counted
            ]
        }
    }
    accuracy, details = compute_judgement_accuracy(results, gt)
    assert (details["correct"], details["total"]) == (1, 4)
    assert accuracy == pytest.approx(1 / 4)
    assert details["per_field"]["ASSURANCE_CLAIM"]["total"] == 1
    assert details["per_field"]["STAFF_RESPONSE"]["correct"] == 0


def test_judgement_right_modifier_judgements():
    results = [
        result(
            "r1",
            evidences=[
                evidence("a1", "INCIDENT_SEVERITY", "Moderate"),
                evidence("a1", "ASSURANCE_CLAIM", "True"),
                evidence("a1", "STAFF_RESPONSE", "apologetic"),
            ],
        )
    ]
    gt = {"r1": {"incidents": [incident("a1", "moderate", modifiers=["False assurance"])]}}
    assert compute_judgement_accuracy(results, gt)[0] == 1.0


def test_matched_incident_without_a_severity_judgement_counts_as_wrong():
    results = [result("r1", evidences=[evidence("a1", "STAFF_RESPONSE", "polite")])]
    gt = {"r1": {"incidents": [incident("a1", "mild", modifiers=None)]}}
    accuracy, details = compute_judgement_accuracy(results, gt)
    assert (accuracy, details["total"]) == (0.0, 1)


def test_judgement_accuracy_is_none_without_matched_incidents():
    accuracy, details = compute_judgement_accuracy(
        [result("r1", evidences=[evidence("zz")])], {"r1": {"incidents": [incident("a1")]}}
    )
    assert accuracy is None
    assert details["total"] == 0


# --- verdict consistency --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("SCORE >= 5 → Critical Risk", "Critical Risk"),
        ("N_NEGATIVE >= 1 → Not Recommended", "Not Recommended"),
        ("else → Low Risk", "Low Risk"),
        ("SCORE >= 4 -> High Risk", "High Risk"),
        ("N_SEVERE >= 1 (actual: N_SEVERE=0) → Critical Risk", "Critical Risk"),
        ("SCORE >= 5", None),
        ("SCORE >= 5 →  ", None),
        (None, None),
    ],
)
def test_extract_verdict_from_rule(rule, expected):
    assert extract_verdict_from_rule(rule) == expected


def test_verdict_consistency_with_both_arrows_and_skips():
    results = [
        result("r1", "Critical Risk", rule="SCORE >= 8 → Critical Risk"),  # consistent
        result("r2", "HIGH_RISK", rule="SCORE >= 4 -> High Risk"),  # consistent (normalised)
        result("r3", "Low Risk", rule="else → low risk"),  # consistent
        result("r4", "High Risk", rule="SCORE >= 8 → Critical Risk"),  # inconsistent
        result("r5", "Low Risk", rule=None),  # skipped: no rule
        result("r6", "Low Risk", rule="SCORE < 4"),  # skipped: no arrow
        result("r7", None, rule="else → Low Risk"),  # skipped: no verdict
    ]
    consistency, details = compute_verdict_consistency_enhanced(results)
    assert consistency == pytest.approx(3 / 4)
    assert (details["consistent"], details["total"]) == (3, 4)
    assert (details["skipped_no_rule"], details["skipped_no_verdict"]) == (2, 1)
    assert [sample["consistent"] for sample in details["per_sample"]] == [True, True, True, False]


def test_verdict_consistency_reports_the_evidence_derived_verdict():
    evidences = [
        evidence("a1", "INCIDENT_SEVERITY", "moderate"),
        evidence("a1", "ASSURANCE_CLAIM", "yes"),
    ]
    _, details = compute_verdict_consistency_enhanced(
        [result("r1", "Critical Risk", evidences, rule="SCORE >= 8 → CRITICAL")]
    )
    sample = details["per_sample"][0]
    assert sample["consistent"] is True  # alias "critical" -> Critical Risk
    assert (sample["evidence_score"], sample["evidence_verdict"]) == (10.0, "Critical Risk")


def test_verdict_consistency_is_none_when_nothing_can_be_checked():
    consistency, details = compute_verdict_consistency_enhanced([result("r1", "Low Risk")])
    assert consistency is None
    assert details["skipped_no_rule"] == 1


# --- all seven ------------------------------------------------------------------------------


def test_evaluation_metrics_on_the_auprc_caveat_example():
    results = [
        result("a", "High Risk", risk_score=1, rule="SCORE >= 4 → High Risk"),
        result("b", "High Risk", risk_score=2, rule="SCORE >= 4 → High Risk"),
        result("c", "Critical Risk", risk_score=3, rule="SCORE >= 8 → Critical Risk"),
        result("d", "Critical Risk", risk_score=4, rule="SCORE >= 8 → High Risk"),
    ]
    gt_verdicts = {"a": "Low Risk", "b": "Low Risk", "c": "High Risk", "d": "High Risk"}
    gt_data = {key: {"verdict": value, "incidents": []} for key, value in gt_verdicts.items()}
    metrics = compute_evaluation_metrics(results, gt_data, gt_verdicts, "direct")
    assert metrics["auprc"] == 1.0
    assert metrics["macro_f1"] == 0.0
    assert metrics["verdict_consistency"] == pytest.approx(3 / 4)
    assert metrics["evidence_precision"] is None  # nothing claimed
    assert metrics["evidence_recall"] is None  # no GT evidence
    assert metrics["judgement_accuracy"] is None
    assert (metrics["n_samples"], metrics["n_structured"], metrics["n_with_gt"]) == (4, 4, 4)
    assert metrics["details"]["auprc_metrics"]["score_source"] == "risk_score"
    assert set(metrics["details"]) == {
        "auprc_metrics",
        "evidence_details",
        "judgement_details",
        "consistency_details",
        "verdict_confusion",
    }


def test_ranking_falls_back_to_verdict_ordinals_when_a_risk_score_is_missing():
    # With the risk scores the Low item (score 9) would rank first; by verdict it ranks last.
    results = [
        result("a", "Low Risk", risk_score=9),
        result("b", "High Risk", risk_score=1),
        {"business_id": "c", "verdict": "Critical Risk"},  # unstructured, no risk score
    ]
    gt_verdicts = {"a": "Low Risk", "b": "High Risk", "c": "Critical Risk"}
    metrics = compute_evaluation_metrics(results, {}, gt_verdicts, "direct")
    assert metrics["details"]["auprc_metrics"]["score_source"] == "verdict_ordinal"
    assert metrics["auprc"] == 1.0
    assert metrics["macro_f1"] == 1.0
    assert metrics["n_structured"] == 2


def test_missing_prediction_stays_in_the_sample_as_wrong():
    results = [result("a", "Low Risk"), result("b", None), result("c", "Medium Risk")]
    gt_verdicts = {"a": "Low Risk", "b": "High Risk", "c": "High Risk"}
    metrics = compute_evaluation_metrics(results, {}, gt_verdicts, "direct")
    # class Low: F1 1; class High: TP 0 -> 0; invalid predictions form no class.
    assert metrics["macro_f1"] == pytest.approx(0.5)
    assert metrics["details"]["auprc_metrics"]["n_invalid_predictions"] == 2
    # Ranking scores 0, -1, -1: the Low item ranks first and both High items tie below it,
    # so >=High reaches recall 1 at precision 2/3 -> AP = 2/3; >=Critical is left out.
    assert metrics["auprc"] == pytest.approx(2 / 3)


def test_unknown_ground_truth_verdict_is_an_error():
    with pytest.raises(ValueError, match="Medium Risk"):
        compute_evaluation_metrics([result("a", "Low Risk")], {}, {"a": "Medium Risk"}, "direct")


def test_verdict_confusion_counts_true_against_predicted_and_keeps_each_sample():
    results = [
        result("a", "Low Risk"),
        result("b", "High Risk"),
        result("c", None),  # no verdict: the "invalid" column
        result("d", "Critical Risk"),
        result("e", "High Risk"),
        result("z", "Low Risk"),  # no ground truth: left out
    ]
    gt_verdicts = {
        "a": "Low Risk",
        "b": "Low Risk",
        "c": "High Risk",
        "d": "High Risk",
        "e": "High Risk",
    }
    confusion = compute_evaluation_metrics(results, {}, gt_verdicts, "direct")["details"][
        "verdict_confusion"
    ]
    assert confusion["truth_labels"] == ["Low Risk", "High Risk", "Critical Risk"]
    assert confusion["predicted_labels"] == ["Low Risk", "High Risk", "Critical Risk", "invalid"]
    assert confusion["matrix"] == [[1, 1, 0, 0], [0, 1, 1, 1], [0, 0, 0, 0]]
    by_id = {s["business_id"]: (s["truth"], s["predicted"]) for s in confusion["per_sample"]}
    assert by_id == {
        "a": ("Low Risk", "Low Risk"),
        "b": ("Low Risk", "High Risk"),
        "c": ("High Risk", "invalid"),
        "d": ("High Risk", "Critical Risk"),
        "e": ("High Risk", "High Risk"),
    }


def test_verdict_confusion_of_no_samples_is_all_zero():
    confusion = verdict_confusion([], load_policy("V2"))
    assert confusion["matrix"] == [[0, 0, 0, 0]] * 3 and confusion["per_sample"] == []
