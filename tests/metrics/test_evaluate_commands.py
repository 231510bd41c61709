"""The evaluation management commands: import_evaluation and the evaluate_* family commands."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from metrics.models import Evaluation
from tests.metrics.test_evaluations_fixtures import EXAMPLES

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = pytest.mark.django_db


def _run(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def ex(name: str) -> str:
    return str(EXAMPLES / name)


def test_evaluate_selective_prediction_prints_and_writes_the_artifact(tmp_path):
    target = tmp_path / "out.json"
    out = _run(
        "evaluate_selective_prediction",
        "--input", ex("selective_run.json"), "--mode", "few_shot", "--loss", "abs",
        "--bootstrap-resamples", "200", "--seed", "42", "-o", str(target),
    )  # fmt: skip
    assert out.startswith("SELECTIVE PREDICTION (loss abs;")
    assert "llm: AURC" in out and "Cmax" in out
    artifact = json.loads(target.read_text())
    assert artifact["loss"]["name"] == "abs"
    assert artifact["inputs"][0]["mode"] == "few_shot"
    assert artifact["confidence_variants"]["llm"]["bootstrap"]["n_resamples"] == 200
    assert not Evaluation.objects.exists()  # nothing stored without --store


def test_evaluate_selective_prediction_paired_modes():
    out = _run(
        "evaluate_selective_prediction",
        "--input", ex("selective_run.json"), "--mode", "zero_shot",
        "--input", ex("selective_run.json"), "--mode", "few_shot",
        "--bootstrap-resamples", "100", "-o", "-",
    )  # fmt: skip
    artifact = json.loads(out)
    assert artifact["comparison"]["enabled"] is True
    assert [i["mode"] for i in artifact["inputs"]] == ["zero_shot", "few_shot"]


def test_evaluate_selective_prediction_store(media):
    out = _run(
        "evaluate_selective_prediction", "--input", ex("selective_run.json"),
        "--mode", "zero_shot", "--bootstrap-resamples", "50", "--store", "--name", "cli run",
    )  # fmt: skip
    evaluation = Evaluation.objects.get()
    assert evaluation.name == "cli run" and evaluation.status == Evaluation.Status.DONE
    assert evaluation.options["bootstrap_resamples"] == 50
    assert "SELECTIVE PREDICTION" in out


def test_evaluate_verdicts_prints_the_console_table():
    out = _run(
        "evaluate_verdicts",
        "--results", ex("verdict_results.json"),
        "--ground-truth", ex("verdict_ground_truth.json"),
    )  # fmt: skip
    assert out.startswith("EVALUATION METRICS (7 total)")
    assert "│ AUPRC               │ 86.1%" in out
    assert "Verdict Consistency" in out


def test_evaluate_verdicts_unknown_policy():
    with pytest.raises(CommandError, match="option 'policy_id': no scoring rules"):
        _run(
            "evaluate_verdicts", "--results", ex("verdict_results.json"),
            "--ground-truth", ex("verdict_ground_truth.json"), "--policy-id", "NOPE",
        )  # fmt: skip


def test_evaluate_reasoning_prints_the_report():
    out = _run(
        "evaluate_reasoning",
        "--generations", ex("reasoning_generations.jsonl"),
        "--vignettes", ex("reasoning_vignettes.json"),
        "--bias-cases", ex("reasoning_bias_cases.json"),
        "--bootstrap-resamples", "100",
    )  # fmt: skip
    assert out.startswith("REASONING FAITHFULNESS (model: example-model)")
    assert "Faithfulness gap  +0.500" in out and "Silent bias rate" in out


def test_evaluate_agreement_prints_main_and_auxiliary():
    out = _run("evaluate_agreement", "--input", ex("agreement_tests.csv"))
    assert "Main:      PAS (raw) 0.749   ECS (CCC) 0.432 (n=7)" in out
    assert "Auxiliary: PAS (normalised) 0.699   ECS_Strict 0.463" in out


def test_a_bad_file_is_a_command_error_naming_it(tmp_path):
    bad = tmp_path / "tests.csv"
    bad.write_text("Study_ID,Finding_ID\n")
    with pytest.raises(CommandError, match=r"tests\.csv"):
        _run("evaluate_agreement", "--input", str(bad))
    with pytest.raises(CommandError, match="no such file"):
        _run("evaluate_agreement", "--input", str(tmp_path / "missing.csv"))


def test_import_evaluation_queues_the_task(media, run_on_commit):
    with run_on_commit():
        out = _run(
            "import_evaluation", "--family", "verdicts", "--name", "imported",
            "--option", "method=cli", f"results={ex('verdict_results.json')}",
            "--file", f"ground_truth={ex('verdict_ground_truth.json')}",
        )  # fmt: skip
    evaluation = Evaluation.objects.get()
    assert f"evaluation {evaluation.pk} (verdicts, imported): queued" in out
    evaluation.refresh_from_db()  # the task ran on commit (eager Celery)
    assert evaluation.status == Evaluation.Status.DONE
    assert evaluation.artifact["method"] == "cli"
    assert evaluation.uploaded_by is None


def test_import_evaluation_now_and_refusals(media):
    out = _run(
        "import_evaluation", "--family", "agreement", "--now",
        f"tests={ex('agreement_tests.csv')}",
    )  # fmt: skip
    assert ": done" in out
    with pytest.raises(CommandError, match="option 'colour': unknown option for agreement"):
        _run(
            "import_evaluation", "--family", "agreement", "--option", "colour=red",
            f"tests={ex('agreement_tests.csv')}",
        )  # fmt: skip
    with pytest.raises(CommandError, match="ROLE=PATH"):
        _run("import_evaluation", "--family", "agreement")
    with pytest.raises(CommandError, match="as KEY=VALUE"):
        _run("import_evaluation", "--family", "agreement", "tests.csv")
    assert Evaluation.objects.count() == 1
