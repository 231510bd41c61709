"""Importing a verdict run: parsing with clear errors, the artifact and the console table."""

import json
from pathlib import Path

import pytest

from metrics.families.json_input import InputError
from metrics.families.runs import RunFile, option_defaults
from metrics.families.verdicts import run
from metrics.families.verdicts.run import parse_verdict_inputs

EXAMPLES = Path(__file__).resolve().parents[4] / "metrics" / "families" / "examples"


def example_files():
    return {
        "results": (EXAMPLES / "verdict_results.json").read_bytes(),
        "ground_truth": (EXAMPLES / "verdict_ground_truth.json").read_bytes(),
    }


def results_file(rows, **top):
    return json.dumps({"policy_id": "G1_allergy_V2", **top, "results": rows}).encode()


def gt_file(restaurants):
    return json.dumps({"restaurants": restaurants}).encode()


def gt_entry(verdict, incidents=()):
    return {"ground_truth": {"verdict": verdict, "incidents": list(incidents)}}


GOOD_ROW = {"business_id": "r1", "verdict": "Low Risk", "parsed": {"evidences": []}}


def parse(rows, restaurants=None, **extra_files):
    files = {
        "results": results_file(rows),
        "ground_truth": gt_file(
            restaurants or {"r1": gt_entry("Low Risk"), "r2": gt_entry("High Risk")}
        ),
    }
    files.update(extra_files)
    return parse_verdict_inputs(files)


# --- the example run, computed by hand ------------------------------------------------------


def test_example_run_artifact():
    artifact = run.compute(parse_verdict_inputs(example_files()), run.Options())
    # GT ordinals r1..r6 = 2,1,0,0,1,0; predicted 2,1,0,1,missing,0. r5 has no risk score,
    # so ranking uses predicted ordinals 2,1,0,1,-1,0.
    # >=High: r1+ | r2+ r4- (tie) | r3- r6- | r5+  -> AP = 1/3 + 1/3*2/3 + 1/3*1/2 = 13/18
    # >=Critical: r1 ranks alone on top -> AP = 1.  AUPRC = (13/18 + 1)/2 = 31/36.
    assert artifact["auprc"] == pytest.approx(31 / 36)
    # F1 per class: Low P 1 R 2/3 -> 4/5; High P 1/2 R 1/2 -> 1/2; Critical 1.
    assert artifact["macro_f1"] == pytest.approx((4 / 5 + 1 / 2 + 1) / 3)
    # claimed {a1}, {b1, b3}, {d1}; GT {a1}, {b1, b2}, {d1}, {e1}: 3 matched of 4 and of 5.
    assert artifact["evidence_precision"] == pytest.approx(3 / 4)
    assert artifact["evidence_recall"] == pytest.approx(3 / 5)
    assert artifact["snippet_validity"] is None  # no review texts
    # a1 severity right, a1 assurance right, b1 right, d1 ("moderate" for mild) wrong.
    assert artifact["judgement_accuracy"] == pytest.approx(3 / 4)
    # r1, r2 ("->"), r3 consistent; r4 inconsistent; r5 no verdict; r6 no rule.
    assert artifact["verdict_consistency"] == pytest.approx(3 / 4)
    consistency = artifact["details"]["consistency_details"]
    assert (consistency["skipped_no_verdict"], consistency["skipped_no_rule"]) == (1, 1)
    assert (artifact["n_samples"], artifact["n_structured"], artifact["n_with_gt"]) == (6, 5, 6)
    assert artifact["details"]["auprc_metrics"]["n_invalid_predictions"] == 1
    assert artifact["details"]["ground_truth_check"]["mismatched"] == 0
    assert (artifact["policy_id"], artifact["method"], artifact["policy_rules"]) == (
        "G1_allergy_V2",
        "direct",
        "V2",
    )
    json.dumps(artifact)  # JSON-ready


def test_example_console_table():
    artifact = run.compute(parse_verdict_inputs(example_files()), run.Options())
    assert run.report(artifact) == "\n".join(
        [
            "EVALUATION METRICS (7 total)",
            "┌─────────────────────┬─────────┬────────────────────────────────┐",
            "│ Metric              │ Score   │ Notes                          │",
            "├─────────────────────┼─────────┼────────────────────────────────┤",
            "│ AUPRC               │ 86.1%   │ (ranking quality)              │",
            "│ Macro F1            │ 76.7%   │ (classification quality)       │",
            "│ Evidence Precision  │ 75.0%   │ (3/4 claimed exist in GT)      │",
            "│ Evidence Recall     │ 60.0%   │ (3/5 GT evidences found)       │",
            "│ Snippet Validity    │ N/A     │ (0/0 quotes match source)      │",
            "│ Judgement Accuracy  │ 75.0%   │ (field correctness)            │",
            "│ Verdict Consistency │ 75.0%   │ (evidence+rule→verdict)        │",
            "└─────────────────────┴─────────┴────────────────────────────────┘",
        ]
    )


def test_console_table_widens_for_long_notes():
    artifact = run.compute(parse_verdict_inputs(example_files()), run.Options())
    artifact["details"]["evidence_details"].update(total_matched=12345, total_claimed=67890)
    lines = run.report(artifact).splitlines()
    assert "│ (12345/67890 claimed exist in GT) │" in lines[6]
    assert len({len(line) for line in lines[1:]}) == 1  # every row as wide as the borders


# --- options --------------------------------------------------------------------------------


def test_options_default_to_the_results_file():
    assert option_defaults(run.Options) == {"policy_id": None, "method": None}
    assert [option.name for option in run.OPTIONS] == ["policy_id", "method"]
    parsed = parse_verdict_inputs(example_files())
    artifact = run.compute(parsed, run.Options(method="amos", policy_id="V2"))
    assert (artifact["method"], artifact["policy_id"]) == ("amos", "V2")


def test_unknown_policy_option_is_rejected():
    with pytest.raises(ValueError, match="policy_id"):
        run.Options(policy_id="V7")


def test_unknown_policy_in_the_results_file_names_the_file():
    files = {
        "results": results_file([GOOD_ROW], policy_id="G2_romance_V7"),
        "ground_truth": gt_file({"r1": gt_entry("Low Risk")}),
    }
    with pytest.raises(InputError) as error:
        run.compute(parse_verdict_inputs(files), run.Options())
    assert (error.value.file, error.value.location) == ("results", "policy_id")


def test_ground_truth_verdict_outside_the_policy_names_the_key():
    parsed = parse([GOOD_ROW], {"r1": gt_entry("Low Risk"), "r2": gt_entry("Medium Risk")})
    with pytest.raises(InputError) as error:
        run.compute(parsed, run.Options())
    assert error.value.file == "ground_truth"
    assert error.value.location == "restaurants.r2.ground_truth.verdict"
    assert "Medium Risk" in error.value.message


# --- bad inputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad_row", "location_part", "message_part"),
    [
        (
            {"business_id": "r2", "verdict": "High Risk", "risk_score": "high"},
            "risk_score",
            "number",
        ),
        ({"business_id": "r2", "parsed": {"evidences": "a1"}}, "parsed.evidences", "list"),
        (
            {"business_id": "r2", "parsed": {"evidences": [{"review_id": ["a"]}]}},
            "parsed.evidences[0].review_id",
            "id",
        ),
        (
            {"business_id": "r2", "parsed": {"justification": {"triggered_rule": 3}}},
            "triggered_rule",
            "string",
        ),
        ({"business_id": "r2", "verdict": ["High Risk"]}, "verdict", "string"),
    ],
)
def test_bad_result_row_is_named(bad_row, location_part, message_part):
    with pytest.raises(InputError) as error:
        parse([GOOD_ROW, bad_row])
    assert error.value.file == "results"
    assert error.value.location.startswith("results[1] (business_id 'r2')")
    assert location_part in error.value.location
    assert message_part in error.value.message


def test_result_row_without_business_id_is_named():
    with pytest.raises(InputError) as error:
        parse([GOOD_ROW, {"verdict": "Low Risk"}])
    assert error.value.location == "results[1].business_id"


def test_duplicate_business_id_is_rejected():
    with pytest.raises(InputError, match=r"duplicate business_id 'r1' \(first in results\[0\]\)"):
        parse([GOOD_ROW, GOOD_ROW])


@pytest.mark.parametrize(
    ("entry", "location"),
    [
        ({"ground_truth": {"incidents": []}}, "restaurants.r2.ground_truth.verdict"),
        ({"verdict": "High Risk"}, "restaurants.r2.ground_truth"),
        (
            gt_entry("High Risk", [{"review_id": "x", "severity_field": "incident_severity"}]),
            "restaurants.r2.ground_truth.incidents[0].severity_value",
        ),
        (
            gt_entry(
                "High Risk",
                [
                    {
                        "review_id": "x",
                        "severity_field": "f",
                        "severity_value": "mild",
                        "modifiers": "False assurance",
                    }
                ],
            ),
            "restaurants.r2.ground_truth.incidents[0].modifiers",
        ),
    ],
)
def test_bad_ground_truth_entry_is_named(entry, location):
    with pytest.raises(InputError) as error:
        parse([GOOD_ROW], {"r1": gt_entry("Low Risk"), "r2": entry})
    assert (error.value.file, error.value.location) == ("ground_truth", location)


def test_invalid_json_names_the_line():
    files = example_files()
    files["results"] = b'{\n  "results": [\n    {"business_id": "r1",}\n  ]\n}'
    with pytest.raises(InputError) as error:
        parse_verdict_inputs(files)
    assert error.value.file == "results"
    assert error.value.location.startswith("line 3")


def test_missing_and_unknown_roles():
    with pytest.raises(InputError) as error:
        parse_verdict_inputs({"results": example_files()["results"]})
    assert (error.value.file, error.value.message) == ("ground_truth", "required file is missing")
    with pytest.raises(InputError) as error:
        parse_verdict_inputs({**example_files(), "review_texts": b"{}"})
    assert error.value.file == "review_texts"


def test_results_and_ground_truth_that_share_no_restaurant_are_rejected():
    with pytest.raises(InputError, match="none of the 1 result business ids"):
        parse([GOOD_ROW], {"zz": gt_entry("Low Risk")})


# --- review texts ---------------------------------------------------------------------------

REVIEW = "The server said it was peanut free. Within minutes my throat was itchy."
SNIPPET_ROWS = [
    {
        "business_id": "r1",
        "verdict": "High Risk",
        "parsed": {
            "evidences": [
                {
                    "review_id": "a1",
                    "field": "INCIDENT_SEVERITY",
                    "judgement": "mild",
                    "snippet": "the server said it was peanut free",
                },
                {
                    "review_id": "a1",
                    "field": "STAFF_RESPONSE",
                    "judgement": "rude",
                    "snippet": "the staff laughed at me",
                },
            ]
        },
    },
]


@pytest.mark.parametrize(
    "reviews",
    [
        json.dumps({"r1": {"a1": REVIEW}}),
        json.dumps({"r1": {"a1": {"text": REVIEW, "stars": 1}}}),
        json.dumps([{"business_id": "r1", "review_id": "a1", "text": REVIEW}]),
        json.dumps({"business_id": "r1", "review_id": "a1", "text": REVIEW})
        + "\n"
        + json.dumps({"business_id": "r1", "review_id": "a2", "text": "fine"}),
    ],
)
def test_snippet_validity_with_each_review_file_form(reviews):
    parsed = parse(SNIPPET_ROWS, {"r1": gt_entry("High Risk")}, reviews=reviews.encode())
    artifact = run.compute(parsed, run.Options())
    assert artifact["snippet_validity"] == pytest.approx(1 / 2)


def test_bad_review_row_is_named():
    reviews = json.dumps(
        [
            {"business_id": "r1", "review_id": "a1", "text": REVIEW},
            {"business_id": "r1", "review_id": "a2", "text": 5},
        ]
    )
    with pytest.raises(InputError) as error:
        parse(SNIPPET_ROWS, {"r1": gt_entry("High Risk")}, reviews=reviews.encode())
    assert (error.value.file, error.value.location) == ("reviews", "row 2")


def test_the_run_interface_parses_with_a_dry_run():
    files = {role: [RunFile(f"{role}.json", data)] for role, data in example_files().items()}
    parsed = run.parse(files, run.Options())
    assert parsed == parse_verdict_inputs(example_files())
    bad = {
        "results": [RunFile("results.json", results_file([GOOD_ROW]))],
        "ground_truth": [RunFile("gt.json", gt_file({"r1": gt_entry("Medium Risk")}))],
    }
    with pytest.raises(InputError) as error:
        run.parse(bad, run.Options())  # found only while computing: refused at parse time
    assert error.value.file == "ground_truth"
