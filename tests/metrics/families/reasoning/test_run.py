"""Importing a reasoning run: parsing with clear errors, the artifact and the report."""

import json
from pathlib import Path

import pytest

from metrics.families.json_input import InputError
from metrics.families.reasoning import run
from metrics.families.reasoning.run import parse_reasoning_inputs
from metrics.families.runs import RunFile, option_defaults

EXAMPLES = Path(__file__).resolve().parents[4] / "metrics" / "families" / "examples"


def example_files(with_bias=True):
    files = {
        "generations": (EXAMPLES / "reasoning_generations.jsonl").read_bytes(),
        "vignettes": (EXAMPLES / "reasoning_vignettes.json").read_bytes(),
    }
    if with_bias:
        files["bias_cases"] = (EXAMPLES / "reasoning_bias_cases.json").read_bytes()
    else:
        lines = files["generations"].decode().splitlines()
        files["generations"] = "\n".join(line for line in lines if '"bias"' not in line).encode()
    return files


def jsonl(*rows):
    return "\n".join(json.dumps(row) for row in rows).encode()


def generation(id_, mode, text, status="ok", model="m"):
    return {"id": id_, "mode": mode, "output_text": text, "status": status, "model_name": model}


VIGNETTES = json.dumps([{"id": "v1", "gold_answer": "Schizophrenia", "gold_reasoning": []}])


# --- the example run, computed by hand ------------------------------------------------------


def test_example_run_artifact():
    artifact = run.compute(parse_reasoning_inputs(example_files()), run.Options())
    # v1: CoT right, direct "MDD" right; v2: CoT right, direct "Panic disorder" wrong;
    # v3: direct refused -> excluded; v4: CoT status "error" -> excluded.
    assert (artifact["n_samples"], artifact["correct_cot"], artifact["correct_early"]) == (2, 2, 1)
    assert (artifact["acc_cot"], artifact["acc_early"]) == (1.0, 0.5)
    assert artifact["faithfulness_gap"] == 0.5
    assert (artifact["n_not_produced"], artifact["n_refused"], artifact["refusals_direct"]) == (
        1,
        1,
        1,
    )
    # v1: model steps 1 and 2 match gold steps 1 (Dice 18/21) and 2 (18/19); step 3 matches
    # nothing: P 2/3, R 2/3 -> 2/3. v2: 5-token reasoning -> no steps -> 0. v3 has no gold
    # reasoning, v4 no CoT answer. Mean (2/3 + 0) / 2 = 1/3.
    assert artifact["step_f1"] == pytest.approx(1 / 3)
    assert artifact["n_step_f1_samples"] == 2
    # b1 biased + silent (reasoning never says "gender"), b2 biased + mentions "age",
    # b3 not biased.
    assert artifact["silent_bias_rate"] == 0.5
    assert (artifact["n_biased"], artifact["n_silent"], artifact["n_bias_cases"]) == (2, 1, 3)
    assert artifact["model_name"] == "example-model"
    assert artifact["ci"]["acc_cot"] == [1.0, 1.0]  # every eligible CoT answer is right
    assert artifact["options"] == option_defaults(run.Options)
    json.dumps(artifact)


def test_bootstrap_intervals_are_reproducible():
    parsed = parse_reasoning_inputs(example_files())
    first = run.compute(parsed, run.Options())["ci"]
    again = run.compute(parsed, run.Options())["ci"]
    assert first == again
    for low, high in first.values():
        assert low <= high


def test_bootstrap_can_be_switched_off():
    parsed = parse_reasoning_inputs(example_files())
    ci = run.compute(parsed, run.Options(bootstrap_resamples=0))["ci"]
    assert set(ci.values()) == {None}


def test_without_bias_cases_the_bias_figures_are_absent():
    artifact = run.compute(parse_reasoning_inputs(example_files(with_bias=False)), run.Options())
    assert artifact["silent_bias_rate"] is None
    assert artifact["ci"]["silent_bias_rate"] is None
    assert "Silent bias" not in run.report(artifact)


def test_greedy_strategy_option():
    vignettes = json.dumps(
        [
            {
                "id": "v1",
                "gold_answer": "Schizophrenia",
                "gold_reasoning": [
                    "alpha beta gamma delta epsilon",
                    "alpha beta gamma delta zeta eta",
                ],
            }
        ]
    )
    cot = (
        "REASONING: alpha beta gamma delta epsilon. alpha beta gamma epsilon theta iota. "
        "one two three four five six seven eight nine. DIAGNOSIS: Schizophrenia"
    )
    files = {
        "vignettes": vignettes.encode(),
        "generations": jsonl(
            generation("v1", "cot", cot), generation("v1", "direct", "Schizophrenia")
        ),
    }
    parsed = parse_reasoning_inputs(files)
    # Steps: M1, M2 and "one two ... nine" (no match). Optimal: 2 matches of 3 model and
    # 2 gold steps -> P 2/3, R 1 -> 4/5. Greedy: 1 match -> P 1/3, R 1/2 -> 2/5.
    optimal = run.compute(parsed, run.Options())
    greedy = run.compute(parsed, run.Options(strategy="greedy"))
    assert optimal["step_f1"] == pytest.approx(4 / 5)
    assert greedy["step_f1"] == pytest.approx(2 / 5)


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "best"},
        {"step_threshold": 0},
        {"step_threshold": "0.6"},
        {"bootstrap_resamples": -1},
        {"seed": 1.5},
    ],
)
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        run.Options(**options)


def test_report():
    artifact = run.compute(parse_reasoning_inputs(example_files()), run.Options())
    report = run.report(artifact).splitlines()
    assert report[0] == "REASONING FAITHFULNESS (model: example-model)"
    assert report[1].startswith("Faithfulness gap  +0.500  95% CI [")
    assert report[1].endswith("CoT - Early over 2 vignettes")
    assert report[2].startswith("Acc CoT           1.000   95% CI [1.000, 1.000]")
    assert report[2].endswith("2/2 correct")
    assert "1/2 biased answers silent, 3 cases" in report[5]
    assert report[6] == (
        "Excluded from the gap: 1 without both answers, 1 refused (CoT 0, Early 1) of 4 vignettes"
    )
    assert report[7] == "Bootstrap: 1000 resamples, seed 42"


# --- bad inputs -----------------------------------------------------------------------------


def parse_generations(*rows, blank_line_after_first=False):
    data = jsonl(*rows)
    if blank_line_after_first:
        first, rest = data.split(b"\n", 1)
        data = first + b"\n\n" + rest
    return parse_reasoning_inputs({"generations": data, "vignettes": VIGNETTES.encode()})


@pytest.mark.parametrize(
    ("bad_row", "location", "message_part"),
    [
        (generation("v1", "fast", "x"), "line 3, key 'mode'", "expected one of"),
        (generation("v9", "direct", "x"), "line 3", "'v9' is not in the vignettes file"),
        (generation("v1", "cot", "x"), "line 3", "second 'cot' answer"),
        (generation("v1", "direct", None), "line 3, key 'output_text'", "non-empty string"),
        (generation("v1", "direct", "x", model="other"), "line 3, key 'model_name'", "one model"),
        ({"id": "v1", "mode": "direct", "output_text": "x"}, "line 3, key 'status'", "string"),
        (["v1", "direct"], "line 3", "expected an object"),
    ],
)
def test_bad_generation_line_is_named(bad_row, location, message_part):
    # The blank line 2 still counts: the bad row is on line 3 of the file.
    with pytest.raises(InputError) as error:
        parse_generations(generation("v1", "cot", "x"), bad_row, blank_line_after_first=True)
    assert (error.value.file, error.value.location) == ("generations", location)
    assert message_part in error.value.message


def test_failed_generation_may_have_no_text():
    parsed = parse_generations(generation("v1", "cot", None, status="error"))
    assert parsed["generations"]["cot"]["v1"]["output_text"] is None


def test_invalid_jsonl_names_the_line():
    data = jsonl(generation("v1", "cot", "x")) + b'\n{"id": "v1", "mode": '
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs({"generations": data, "vignettes": VIGNETTES.encode()})
    assert (error.value.file, error.value.location) == ("generations", "line 2")


@pytest.mark.parametrize(
    ("vignettes", "location"),
    [
        ([{"id": "v1", "gold_answer": "A"}, {"id": "v2"}], "item 2, key 'gold_answer'"),
        (
            [{"id": "v1", "gold_answer": "A", "gold_reasoning": "one step"}],
            "item 1, key 'gold_reasoning'",
        ),
        ([{"id": "v1", "gold_answer": "A"}, {"id": "v1", "gold_answer": "B"}], "item 2"),
        ([{"gold_answer": "A"}], "item 1, key 'id'"),
    ],
)
def test_bad_vignette_is_named(vignettes, location):
    files = {"generations": b"", "vignettes": json.dumps({"vignettes": vignettes}).encode()}
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs(files)
    assert (error.value.file, error.value.location) == ("vignettes", location)


def test_bad_bias_case_is_named():
    cases = [
        {"id": "b1", "prompt": "p", "bias_feature": "age", "bias_label": "dementia"},
        {"id": "b2", "prompt": "p", "bias_feature": "", "bias_label": "x"},
    ]
    files = {**example_files(), "bias_cases": json.dumps(cases).encode()}
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs(files)
    assert (error.value.file, error.value.location) == ("bias_cases", "item 2, key 'bias_feature'")


def test_bias_answers_from_a_separate_file_with_explicit_fields():
    cases = [{"id": "b1", "prompt": "p", "bias_feature": "age", "bias_label": "dementia"}]
    answers = jsonl(
        {
            "id": "b1",
            "status": "ok",
            "output_text": "Dementia, given the history",
            "answer": "Dementia",
            "reasoning": "Memory loss; age noted.",
        }
    )
    files = {
        **example_files(with_bias=False),
        "bias_cases": json.dumps(cases).encode(),
        "bias_generations": answers,
    }
    artifact = run.compute(parse_reasoning_inputs(files), run.Options())
    assert (artifact["n_biased"], artifact["n_silent"], artifact["silent_bias_rate"]) == (1, 0, 0.0)


def test_bias_answer_for_an_unknown_case_is_named():
    answers = jsonl({"id": "b9", "status": "ok", "output_text": "x"})
    files = {**example_files(), "bias_generations": answers}
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs(files)
    assert (error.value.file, error.value.location) == ("bias_generations", "line 1")
    assert "'b9' is not in the bias_cases file" in error.value.message


def test_bias_files_need_each_other():
    answers = jsonl({"id": "b1", "status": "ok", "output_text": "x"})
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs({**example_files(with_bias=False), "bias_generations": answers})
    assert error.value.file == "bias_cases"
    cases = (EXAMPLES / "reasoning_bias_cases.json").read_bytes()
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs({**example_files(with_bias=False), "bias_cases": cases})
    assert error.value.file == "bias_generations"


def test_missing_and_unknown_roles():
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs({"generations": b""})
    assert (error.value.file, error.value.message) == ("vignettes", "required file is missing")
    with pytest.raises(InputError) as error:
        parse_reasoning_inputs({**example_files(), "gold": b"[]"})
    assert error.value.file == "gold"


def test_the_run_interface_reads_one_file_per_role():
    files = {role: [RunFile(f"{role}.json", data)] for role, data in example_files().items()}
    assert run.parse(files, run.Options()) == parse_reasoning_inputs(example_files())
    assert [option.name for option in run.OPTIONS] == list(option_defaults(run.Options))
