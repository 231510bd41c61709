"""Imported runs: parsing/validation errors and the metrics artifact."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from metrics.families.calibration import CalibrationArtifact, TemperatureScalingCalibrator
from metrics.families.json_input import InputError
from metrics.families.runs import RunFile, option_defaults, options_from
from metrics.families.selective import compute_aurc
from metrics.families.selective.bootstrap import SelectiveMetric, bootstrap_by_participant
from metrics.families.selective.run import (
    OPTIONS,
    PHQ8_ITEMS,
    Options,
    compute,
    parse,
    parse_run,
    report,
    run_items,
)

EXAMPLE = Path(__file__).parents[4] / "metrics" / "families" / "examples" / "selective_run.json"


def signals(evidence: int) -> dict[str, Any]:
    return {"llm_evidence_count": evidence, "retrieval_similarity_mean": None}


def participant(pid: int, gt: list[int], pred: list[int | None], evidence: list[int]) -> dict:
    return {
        "participant_id": pid,
        "success": True,
        "ground_truth_items": dict(zip(PHQ8_ITEMS, gt, strict=True)),
        "predicted_items": dict(zip(PHQ8_ITEMS, pred, strict=True)),
        "item_signals": {name: signals(e) for name, e in zip(PHQ8_ITEMS, evidence, strict=True)},
    }


def tiny_run() -> dict:
    """Two successful participants and one failure, one experiment (few_shot).

    Participant 1: errors 0,0,0,0,1,1,2,- at evidence 3,3,3,3,1,1,0,0 (last item abstains).
    Participant 2: errors 0 everywhere, evidence 2, item 8 abstains.
    """
    p1 = participant(
        1,
        [1, 1, 1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 2, 0, 3, None],
        [3, 3, 3, 3, 1, 1, 0, 0],
    )
    p2 = participant(2, [0] * 8, [0] * 7 + [None], [2] * 8)
    failed = {"participant_id": 3, "success": False, "error": "timeout"}
    return {
        "run_metadata": {"run_id": "r1", "git_commit": "abc123"},
        "experiments": [
            {
                "provenance": {"mode": "few_shot"},
                "results": {"mode": "few_shot", "results": [p1, p2, failed]},
            }
        ],
    }


def encode(document: dict) -> bytes:
    return json.dumps(document).encode()


# --------------------------------------------------------------------------- parsing


def test_example_file_parses_in_both_modes() -> None:
    data = EXAMPLE.read_bytes()
    zero = parse_run(data, file="example.json", mode="zero_shot")
    few = parse_run(data, file="example.json", mode="few_shot")
    assert zero.mode == "zero_shot" and few.mode == "few_shot"
    assert zero.run_id == "example-2026-01-03"
    assert zero.failed_ids == {303} and few.failed_ids == frozenset()
    assert len(few.included_ids) == 5


def test_mode_is_required_when_a_file_has_several_experiments() -> None:
    with pytest.raises(InputError, match="choose a mode"):
        parse_run(EXAMPLE.read_bytes(), file="example.json", mode=None)
    with pytest.raises(InputError, match="no experiment with mode 'one_shot'"):
        parse_run(EXAMPLE.read_bytes(), file="example.json", mode="one_shot")


def test_single_experiment_needs_no_mode() -> None:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    assert run.included_ids == {1, 2}
    assert run.failed_ids == {3}
    assert run.git_commit == "abc123"


def break_run(change) -> bytes:
    document = tiny_run()
    change(document["experiments"][0]["results"]["results"][0])
    return encode(document)


@pytest.mark.parametrize(
    ("change", "location", "message"),
    [
        (
            lambda p: p["predicted_items"].pop("Sleep"),
            "participant 1: predicted_items",
            "missing PHQ-8 items ['Sleep']",
        ),
        (
            lambda p: p["ground_truth_items"].update(Tired=4),
            "participant 1: ground_truth_items['Tired']",
            "expected an item score 0-3",
        ),
        (
            lambda p: p["ground_truth_items"].update(Tired=None),
            "participant 1: ground_truth_items['Tired']",
            "got null",
        ),
        (
            lambda p: p["predicted_items"].update(Moving="2"),
            "participant 1: predicted_items['Moving']",
            "0-3 or null",
        ),
        (
            lambda p: p["item_signals"].update(Appetite=[]),
            "participant 1: item_signals['Appetite']",
            "expected a JSON object",
        ),
        # NaN is not JSON: the shared loader refuses the file before any row is read.
        (lambda p: p["predicted_items"].update(Moving=float("nan")), "", "NaN is not a JSON"),
        (lambda p: p.pop("item_signals"), "participant 1: item_signals", "got null"),
        (lambda p: p.update(success="yes"), "participant 1: success", "true or false"),
        (
            lambda p: p.update(participant_id="P1"),
            "experiments[0].results.results[0].participant_id",
            "integer",
        ),
        (lambda p: p.update(participant_id=2), "participant 2", "more than once"),
    ],
)
def test_bad_participants_name_file_participant_and_key(
    change, location: str, message: str
) -> None:
    with pytest.raises(InputError) as raised:
        parse_run(break_run(change), file="tiny.json", mode=None)
    assert raised.value.file == "tiny.json"
    assert raised.value.location == location
    assert message in raised.value.message


def test_failed_participants_need_no_item_data() -> None:
    document = tiny_run()
    failed = document["experiments"][0]["results"]["results"][2]
    assert "predicted_items" not in failed
    assert parse_run(encode(document), file="tiny.json", mode=None).failed_ids == {3}


@pytest.mark.parametrize(
    ("data", "location", "message"),
    [
        (b"[1, 2", "line 1 column 6", "invalid JSON"),
        (b"[]", "top level", "JSON object"),
        (b"{}", "experiments", "non-empty list"),
        (b'{"experiments": [{"results": {}}]}', "experiments[0].results.results", "list"),
    ],
)
def test_bad_documents_are_input_errors(data: bytes, location: str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_run(data, file="bad.json", mode=None)
    assert raised.value.location == location
    assert message in raised.value.message


def test_items_use_the_variant_and_skip_failures() -> None:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    items = run_items(run, variant="llm")
    assert len(items) == 16
    assert [item.confidence for item in items[:8]] == [3, 3, 3, 3, 1, 1, 0, 0]
    assert items[7].pred is None and items[6].pred == 3 and items[6].gt == 1


def test_missing_signal_names_file_participant_item_and_key() -> None:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    with pytest.raises(InputError) as raised:
        run_items(run, variant="token_msp")
    assert raised.value.file == "tiny.json"
    assert raised.value.location == "participant 1: item_signals['NoInterest']"
    assert "item_signals['token_msp'] is missing" in raised.value.message


# --------------------------------------------------------------------------- artifact


def tiny_artifact(**options: Any) -> dict:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    options = {"confidence_variants": ["llm"], "loss": "abs", "bootstrap_resamples": 200, **options}
    return compute([run], options_from(Options, options))


def test_artifact_has_the_spec_keys() -> None:
    artifact = tiny_artifact()
    assert list(artifact) == [
        "schema_version",
        "created_at",
        "inputs",
        "population",
        "loss",
        "confidence_variants",
        "comparison",
    ]
    assert artifact["schema_version"] == "1"
    assert artifact["created_at"].endswith("Z")
    assert artifact["inputs"] == [
        {"path": "tiny.json", "run_id": "r1", "git_commit": "abc123", "mode": "few_shot"}
    ]
    assert artifact["loss"] == {"name": "abs", "definition": "abs(pred - gt)", "raw_multiplier": 1}
    assert artifact["comparison"] == {"enabled": False, "intersection_only": False, "deltas": None}
    variant = artifact["confidence_variants"]["llm"]
    assert set(variant) == {
        "cmax",
        "aurc_full",
        "augrc_full",
        "aurc_optimal",
        "augrc_optimal",
        "eaurc",
        "eaugrc",
        "aurc_achievable",
        "interpretation",
        "aurc_at_c",
        "augrc_at_c",
        "mae_at_coverage",
        "bootstrap",
        "curve",
    }
    assert set(variant["bootstrap"]) == {"seed", "n_resamples", "ci95", "drop_rate"}
    assert set(variant["bootstrap"]["ci95"]) == {
        "aurc_full",
        "augrc_full",
        "aurc_at_c",
        "augrc_at_c",
        "cmax",
        "mae_at_coverage",
    }
    json.dumps(artifact, allow_nan=False)


def test_artifact_population_counts_failures_separately() -> None:
    assert tiny_artifact()["population"] == {
        "participants_included": 2,
        "participants_failed": 1,
        "participants_total": 3,
        "items_total": 16,
        "items_predicted": 14,
        "cmax": 14 / 16,
    }


def test_artifact_numbers_hand_computed() -> None:
    # 16 items, 14 predicted. Evidence plateaus (errors):
    #   3: four items, errors 0      -> k=4,  loss 0 -> coverage 4/16,  risk 0
    #   2: seven items, errors 0     -> k=11, loss 0 -> coverage 11/16, risk 0
    #   1: two items, errors 1, 1    -> k=13, loss 2 -> coverage 13/16, risk 2/13
    #   0: one item, error 2         -> k=14, loss 4 -> coverage 14/16, risk 4/14
    variant = tiny_artifact()["confidence_variants"]["llm"]
    assert variant["curve"]["coverage"] == pytest.approx([4 / 16, 11 / 16, 13 / 16, 14 / 16])
    assert variant["curve"]["threshold"] == [3.0, 2.0, 1.0, 0.0]
    # AURC: (2/16)*(0+2/13)/2 + (1/16)*(2/13+4/14)/2
    aurc = (2 / 16) * (2 / 13) / 2 + (1 / 16) * (2 / 13 + 4 / 14) / 2
    assert variant["aurc_full"] == pytest.approx(aurc)
    # Truncated at 0.5: still on the zero-risk part.
    assert variant["aurc_at_c"] == {"requested": 0.5, "used": 0.5, "value": 0.0}
    assert variant["mae_at_coverage"]["0.70"] == {
        "requested": 0.7,
        "achieved": 13 / 16,
        "value": pytest.approx(2 / 13),
    }
    assert variant["mae_at_coverage"]["0.90"] is None  # Cmax = 14/16
    assert variant["bootstrap"]["ci95"]["mae_at_coverage"]["0.90"] is None
    assert variant["bootstrap"]["drop_rate"]["mae_at_coverage"]["0.90"] == 1.0


def test_artifact_bootstrap_matches_the_library_call() -> None:
    artifact = tiny_artifact(seed=7, bootstrap_resamples=300)
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    items = run_items(run, variant="llm")
    expected = bootstrap_by_participant(
        items, metric_fn=SelectiveMetric.aurc(loss="abs"), n_resamples=300, seed=7, vectorise=False
    )
    bootstrap = artifact["confidence_variants"]["llm"]["bootstrap"]
    assert bootstrap["ci95"]["aurc_full"] == list(expected.ci95)
    assert bootstrap["seed"] == 7 and bootstrap["n_resamples"] == 300


def test_zero_resamples_skip_the_bootstrap() -> None:
    assert tiny_artifact(bootstrap_resamples=0)["confidence_variants"]["llm"]["bootstrap"] == {}


def test_one_entry_per_requested_variant() -> None:
    run = parse_run(EXAMPLE.read_bytes(), file="example.json", mode="few_shot")
    calibration = CalibrationArtifact("temperature_scaling", TemperatureScalingCalibrator(1.5))
    variants = ["llm", "token_pe", "verbalized_calibrated", "secondary:llm+consistency:product"]
    artifact = compute(
        [run],
        Options(confidence_variants=variants, calibration=calibration, bootstrap_resamples=50),
    )
    assert list(artifact["confidence_variants"]) == variants
    assert artifact["loss"]["name"] == Options().loss


def test_paired_artifact_compares_right_minus_left() -> None:
    data = EXAMPLE.read_bytes()
    left = parse_run(data, file="example.json", mode="zero_shot")
    right = parse_run(data, file="example.json", mode="few_shot")
    options = {"confidence_variants": ["llm"], "bootstrap_resamples": 100, "loss": "abs"}
    artifact = compute([left, right], options_from(Options, options))
    variant = artifact["confidence_variants"]["llm"]
    assert set(variant) == {"input_0", "input_1"}
    # Participant 303 failed on the left, so both sides cover 300, 301, 302, 304.
    ids = {300, 301, 302, 304}
    left_aurc = compute_aurc(run_items(left, variant="llm", participant_ids=ids), loss="abs")
    right_aurc = compute_aurc(run_items(right, variant="llm", participant_ids=ids), loss="abs")
    assert variant["input_0"]["aurc_full"] == pytest.approx(left_aurc)
    delta = artifact["comparison"]["deltas"]["llm"]["aurc_full"]
    assert delta["delta"] == pytest.approx(right_aurc - left_aurc)
    assert len(delta["ci95"]) == 2
    comparison = artifact["comparison"]
    assert comparison["enabled"] is True
    assert comparison["participants_overlap_total"] == 5
    assert comparison["participants_overlap_included"] == 4
    assert comparison["participants_failed_left"] == 1
    assert comparison["participants_failed_right"] == 0
    population = artifact["population"]
    assert population["participants_included"] == 4
    assert population["participants_failed"] == 1
    assert set(population["items_predicted"]) == {"input_0", "input_1"}
    assert set(artifact["comparison"]["deltas"]["llm"]["mae_at_coverage"]) == {
        f"{c:.2f}" for c in Options().coverage_grid
    }
    json.dumps(artifact, allow_nan=False)


def test_paired_runs_with_different_participants_need_intersection_only() -> None:
    run = parse_run(encode(tiny_run()), file="left.json", mode=None)
    document = copy.deepcopy(tiny_run())
    document["experiments"][0]["results"]["results"].pop(2)  # drop the failed participant 3
    other = parse_run(encode(document), file="right.json", mode=None)
    options = {"confidence_variants": ["llm"], "bootstrap_resamples": 20}
    with pytest.raises(InputError, match="intersection_only") as raised:
        compute([run, other], options_from(Options, options))
    assert raised.value.file == "right.json"
    artifact = compute([run, other], options_from(Options, {**options, "intersection_only": True}))
    assert artifact["comparison"]["participants_left_only"] == 1
    assert artifact["population"]["participants_included"] == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": "red"}, "unknown option"),
        ({"loss": "l2"}, "loss"),
        ({"confidence_variants": ["bogus"]}, "bogus"),
        ({"confidence_variants": []}, "at least one"),
        ({"bootstrap_resamples": -1}, "bootstrap_resamples"),
        ({"seed": 1.5}, "seed"),
        ({"coverage_grid": [0.5, 1.2]}, "coverage_grid"),
        ({"area_coverage": 0}, "area_coverage"),
        ({"intersection_only": "yes"}, "intersection_only"),
        ({"confidence_variants": ["calibrated"]}, "calibration"),
    ],
)
def test_bad_options_are_value_errors(options: dict, message: str) -> None:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    with pytest.raises(ValueError, match=message):
        compute([run], options_from(Options, options))


def test_missing_signal_for_a_requested_variant_is_an_input_error() -> None:
    run = parse_run(encode(tiny_run()), file="tiny.json", mode=None)
    with pytest.raises(InputError, match="consistency_modal_confidence"):
        compute([run], Options(confidence_variants=["consistency"]))


def test_a_run_without_successful_participants_is_an_input_error() -> None:
    document = tiny_run()
    document["experiments"][0]["results"]["results"] = [{"participant_id": 9, "success": False}]
    run = parse_run(encode(document), file="tiny.json", mode=None)
    with pytest.raises(InputError, match="no participant"):
        compute([run], Options())


def test_the_run_interface_reads_one_file_in_two_modes_for_a_paired_run() -> None:
    files = {"run": [RunFile("example.json", EXAMPLE.read_bytes())]}
    options = Options(mode="zero_shot", second_mode="few_shot", confidence_variants=["llm"])
    left, right = parse(files, options)
    assert (left.mode, right.mode) == ("zero_shot", "few_shot")
    artifact = compute([left, right], replace(options, bootstrap_resamples=20))
    text = report(artifact)
    assert text.startswith("SELECTIVE PREDICTION (loss abs_norm; 4 participants")
    assert "llm delta (input_1 - input_0): aurc_full" in text


def test_parse_refuses_what_only_computing_finds() -> None:
    files = {"run": [RunFile("tiny.json", encode(tiny_run()))]}
    with pytest.raises(InputError, match="consistency_modal_confidence"):
        parse(files, Options(confidence_variants=["consistency"]))


def test_options_declare_every_asked_option_with_its_default() -> None:
    defaults = option_defaults(Options)
    assert [option.name for option in OPTIONS] == [
        name for name in defaults if name != "calibration"
    ]
    assert defaults["confidence_variants"] == ["llm", "total_evidence"]
    assert defaults["bootstrap_resamples"] == 10_000
