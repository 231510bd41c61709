"""Imported evaluations: upload → task → stored artifact → card, for every registered family;
refused uploads store nothing; failures are recorded and can be retried; permissions."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from metrics import tasks
from metrics.evaluations import services
from metrics.evaluations.registry import UPLOADS, InputFile, OptionError, upload_get
from metrics.families.json_input import InputError
from metrics.models import Evaluation, EvaluationFile
from metrics.registry import UPLOADED
from tests.metrics.test_evaluations_fixtures import (
    EXAMPLE_UPLOADS,
    example_bytes,
    example_files,
    example_options,
    stored_files,
)

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = pytest.mark.django_db
Status = Evaluation.Status

# What each family's card must show (a label and a figure from the example files).
CARD_TEXTS = {
    "selective_prediction": ["Risk–coverage curve", "AURC", "AUGRC", "Cmax", "MAE at coverage"],
    "agreement": ["PAS (raw)", "ECS (Lin's CCC)", "Auxiliary metrics", "ECS_Strict", "0.749"],
    "verdicts": ["AUPRC", "Macro F1", "Evidence precision", "Verdict consistency", "86.1%"],
    "reasoning": ["Faithfulness gap", "Step-F1", "Silent bias rate", "+0.500", "[+0.000, +1.000]"],
}


def _create(family: str, **overrides) -> Evaluation:
    arguments = {
        "family": family,
        "name": f"{family} example",
        "files": example_files(family),
        "options": example_options(family),
        "user": None,
    }
    arguments.update(overrides)
    return services.evaluation_create(**arguments)


def _form_data(family: str) -> dict:
    roles, options = EXAMPLE_UPLOADS[family]
    data = {"family": family, "name": f"{family} upload"}
    for role, names in roles.items():
        uploads = [SimpleUploadedFile(name, example_bytes(name)) for name in names]
        data[f"file_{role}"] = uploads if len(uploads) > 1 else uploads[0]
    for name, value in options.items():
        data[f"option_{name}"] = str(value)
    # Unchecked checkboxes are absent from a real form post; keep the defaults on.
    for option in upload_get(family).options:
        if option.kind == "bool" and option.default:
            data[f"option_{option.name}"] = "on"
    return data


# --- the whole path, per family --------------------------------------------------------------


def test_every_family_is_registered_with_its_card_and_examples():
    assert list(UPLOADED) == ["selective_prediction", "agreement", "verdicts", "reasoning"]
    templates = Path(__file__).resolve().parents[2] / "templates"
    for family in UPLOADED.values():
        assert (templates / family.card_template).is_file(), family.card_template
        assert family.resolve_options({}) == family.defaults()
        for role in family.roles:
            if role.example:
                assert example_bytes(role.example)


@pytest.mark.parametrize("family", list(EXAMPLE_UPLOADS))
def test_upload_page_computes_and_shows_the_card(family, admin_client, media, run_on_commit):
    with run_on_commit():
        response = admin_client.post(
            reverse("metrics:evaluation_upload") + f"?family={family}", _form_data(family)
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    evaluation = Evaluation.objects.get()
    assert response["Location"] == reverse("metrics:evaluation_detail", args=[evaluation.pk])
    assert evaluation.status == Status.DONE, evaluation.error
    assert evaluation.artifact and evaluation.started_at and evaluation.finished_at
    assert evaluation.uploaded_by.username == "carol"
    roles, _ = EXAMPLE_UPLOADS[family]
    assert sorted(f.role for f in evaluation.files.all()) == sorted(
        role for role, names in roles.items() for _ in names
    )
    assert all(f.size == len(example_bytes(f.original_name)) for f in evaluation.files.all())

    page = admin_client.get(response["Location"]).content.decode()
    assert f'data-family="{family}"' in page
    for text in CARD_TEXTS[family]:
        assert text in page, text
    assert "hx-trigger" not in page  # done: no more polling

    download = admin_client.get(reverse("metrics:evaluation_artifact", args=[evaluation.pk]))
    assert download.status_code == 200
    assert "attachment" in download["Content-Disposition"]
    assert json.loads(download.content) == evaluation.artifact


def test_selective_artifact_follows_the_spec_schema(media, run_on_commit):
    with run_on_commit():
        evaluation = _create("selective_prediction")
    evaluation.refresh_from_db()
    artifact = evaluation.artifact
    assert {"schema_version", "inputs", "population", "loss", "confidence_variants"} <= set(
        artifact
    )
    assert artifact["inputs"][0]["mode"] == "few_shot"
    assert artifact["comparison"]["enabled"] is False
    llm = artifact["confidence_variants"]["llm"]
    assert llm["bootstrap"]["n_resamples"] == 200
    assert evaluation.options["loss"] == "abs_norm"  # defaults are stored with the options


def test_two_runs_in_one_upload_give_paired_deltas(media, run_on_commit):
    data = example_bytes("selective_run.json")
    files = {"run": [InputFile("a.json", data), InputFile("b.json", data)]}
    options = {"mode": "zero_shot", "second_mode": "few_shot", "bootstrap_resamples": 100}
    with run_on_commit():
        evaluation = _create("selective_prediction", files=files, options=options)
    evaluation.refresh_from_db()
    comparison = evaluation.artifact["comparison"]
    assert comparison["enabled"] is True
    assert comparison["deltas"]["llm"]["cmax"]["delta"] == pytest.approx(-0.09375)


# --- refused uploads -------------------------------------------------------------------------

BAD_SELECTIVE_KEY = json.dumps({"run_metadata": {}, "runs": []}).encode()


def _bad_selective_row() -> bytes:
    document = json.loads(example_bytes("selective_run.json"))
    few_shot = document["experiments"][1]["results"]["results"]
    few_shot[0]["ground_truth_items"]["Sleep"] = 7  # participant 300
    return json.dumps(document).encode()


BAD_SELECTIVE_ROW = _bad_selective_row()
BAD_AGREEMENT_ROW = example_bytes("agreement_tests.csv").replace(b",0.22,0.54,", b",abc,0.54,", 1)


@pytest.mark.parametrize(
    ("family", "role", "name", "data", "expected"),
    [
        ("selective_prediction", "run", "bad.json", b'{"experiments": [', "bad.json at line 1"),
        ("selective_prediction", "run", "key.json", BAD_SELECTIVE_KEY, "key.json at experiments"),
        (
            "selective_prediction",
            "run",
            "row.json",
            BAD_SELECTIVE_ROW,
            "row.json at participant 300: ground_truth_items['Sleep']: expected an item score 0-3",
        ),
        (
            "agreement",
            "tests",
            "rows.csv",
            BAD_AGREEMENT_ROW,
            "rows.csv at row 2 (line 3), column Agent_Effect_Size: expected a number",
        ),
        ("agreement", "tests", "cols.csv", b"Study,Other\n1,2\n", "cols.csv"),
        ("verdicts", "ground_truth", "gt.json", b'{"shops": {}}', "gt.json (ground_truth)"),
        ("reasoning", "generations", "gen.jsonl", b'{"id": "v1"}\n{oops\n', "gen.jsonl"),
    ],
)
def test_a_bad_file_is_refused_naming_file_and_place(family, role, name, data, expected, media):
    assert data, "the example file changed; adjust the bad-row fixture"
    files = example_files(family)
    files[role] = [InputFile(name, data)]
    with pytest.raises(InputError) as caught:
        _create(family, files=files)
    assert expected in str(caught.value), str(caught.value)
    assert not Evaluation.objects.exists()
    assert not EvaluationFile.objects.exists()
    assert stored_files(media) == []


def test_reasoning_bad_line_is_named(media):
    files = example_files("reasoning")
    files["generations"] = [InputFile("gen.jsonl", b'{"id": "v1"}\n{oops\n')]
    with pytest.raises(InputError) as caught:
        _create("reasoning", files=files)
    assert str(caught.value).startswith("gen.jsonl (generations) at line 2")


def test_upload_page_shows_the_refusal_and_stores_nothing(admin_client, media, run_on_commit):
    data = _form_data("agreement")
    data["file_tests"] = SimpleUploadedFile("broken.csv", BAD_AGREEMENT_ROW)
    with run_on_commit():
        response = admin_client.post(reverse("metrics:evaluation_upload"), data)
    assert response.status_code == 400
    page = response.content.decode()
    assert "broken.csv at row 2 (line 3), column Agent_Effect_Size" in page
    assert not Evaluation.objects.exists() and stored_files(media) == []


def test_oversized_file_is_refused_before_reading(settings, admin_client, media, run_on_commit):
    settings.EVALUATION_MAX_FILE_BYTES = 100
    data = _form_data("agreement")
    with run_on_commit():
        response = admin_client.post(reverse("metrics:evaluation_upload"), data)
    assert response.status_code == 400
    assert "agreement_tests.csv: file is 1,207 bytes; the limit is 100 bytes" in (
        response.content.decode()
    )
    with pytest.raises(InputError, match="the limit is 100 bytes"):
        _create("agreement")
    assert not Evaluation.objects.exists() and stored_files(media) == []


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"colour": "red"}, "option 'colour': unknown option for selective_prediction"),
        ({"seed": "abc"}, "option 'seed': expected an integer, got 'abc'"),
        ({"loss": "square"}, "option 'loss': expected one of abs, abs_norm"),
        ({"bootstrap_resamples": -1}, "option 'bootstrap_resamples': must be at least 0"),
        ({"intersection_only": "maybe"}, "option 'intersection_only': expected true or false"),
        ({"confidence_variants": "nope"}, "unknown confidence variant 'nope'"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options, expected, media):
    with pytest.raises(OptionError) as caught:
        _create("selective_prediction", options=options)
    assert expected in caught.value.messages[0]
    assert not Evaluation.objects.exists()


def test_unknown_option_shows_on_the_form(admin_client, media):
    data = _form_data("verdicts")
    data["option_policy_id"] = "NO_SUCH_POLICY"
    response = admin_client.post(reverse("metrics:evaluation_upload"), data)
    assert response.status_code == 400
    assert "no scoring rules for policy" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_text_options_are_typed_like_json_ones(media):
    family = upload_get("selective_prediction")
    resolved = family.resolve_options(
        {"seed": "7", "intersection_only": "yes", "coverage_grid": "0.25, 0.5"}
    )
    assert resolved["seed"] == 7 and resolved["intersection_only"] is True
    assert resolved["coverage_grid"] == [0.25, 0.5]


def test_missing_and_unknown_roles_are_refused(media):
    with pytest.raises(InputError, match="ground_truth: required file"):
        _create("verdicts", files={"results": example_files("verdicts")["results"]})
    files = {**example_files("agreement"), "extra": [InputFile("x.csv", b"a")]}
    with pytest.raises(InputError, match="extra: unknown file role for agreement"):
        _create("agreement", files=files)
    three = example_files("selective_prediction")["run"] * 3
    with pytest.raises(InputError, match="at most 2 file"):
        _create("selective_prediction", files={"run": three})
    assert not Evaluation.objects.exists()


# --- failures and retry ----------------------------------------------------------------------


def _break_compute(monkeypatch, family: str, error: Exception) -> None:
    def boom(parsed, options):
        raise error

    monkeypatch.setitem(UPLOADS, family, dataclasses.replace(UPLOADS[family], compute=boom))


def test_a_failed_computation_shows_its_error_and_can_be_retried(
    monkeypatch, admin_client, client, auditor, media, run_on_commit
):
    _break_compute(monkeypatch, "agreement", ZeroDivisionError("division by zero"))
    with run_on_commit():
        evaluation = _create("agreement")
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FAILED
    assert evaluation.error.startswith("ZeroDivisionError: division by zero")
    assert "in boom" in evaluation.error  # where the bug was raised
    assert evaluation.artifact is None and evaluation.finished_at

    url = reverse("metrics:evaluation_detail", args=[evaluation.pk])
    page = admin_client.get(url).content.decode()
    assert "Computing failed" in page and "ZeroDivisionError: division by zero" in page
    assert "Retry" in page

    monkeypatch.undo()  # the family is fixed
    with run_on_commit():
        response = admin_client.post(reverse("metrics:evaluation_retry", args=[evaluation.pk]))
    assert response.status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.status == Status.DONE and evaluation.error == ""
    assert "PAS (raw)" in admin_client.get(url).content.decode()


def test_retry_is_for_admins_and_failed_evaluations_only(
    monkeypatch, client, auditor, admin_user, media, run_on_commit
):
    _break_compute(monkeypatch, "agreement", RuntimeError("bug"))
    with run_on_commit():
        evaluation = _create("agreement")
    client.force_login(auditor)
    page = client.get(reverse("metrics:evaluation_detail", args=[evaluation.pk])).content
    assert b"RuntimeError: bug" in page and b"Retry</button>" not in page
    response = client.post(reverse("metrics:evaluation_retry", args=[evaluation.pk]))
    assert response.status_code == 403
    monkeypatch.undo()
    with run_on_commit():
        services.evaluation_retry(evaluation=evaluation)
    evaluation.refresh_from_db()
    assert evaluation.status == Status.DONE
    with pytest.raises(services.EvaluationStateError):
        services.evaluation_retry(evaluation=evaluation)


def test_input_errors_found_while_computing_are_shown_in_full(monkeypatch, media, run_on_commit):
    def refuse(parsed, options):
        raise InputError("tests.csv", "row 9", "expected a number")

    monkeypatch.setitem(
        UPLOADS, "agreement", dataclasses.replace(UPLOADS["agreement"], compute=refuse)
    )
    with run_on_commit():
        evaluation = _create("agreement")
    evaluation.refresh_from_db()
    assert evaluation.error == "tests.csv at row 9: expected a number"


def test_the_task_records_a_bug_outside_the_service(monkeypatch, media):
    evaluation = _create("agreement")  # not queued: on-commit callbacks are not run here

    def broken(*, evaluation_id):
        raise KeyError("lost")

    monkeypatch.setattr(services, "evaluation_compute", broken)
    tasks.evaluation_compute.delay(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FAILED
    assert evaluation.error.startswith("KeyError: 'lost'")


def test_the_task_leaves_a_done_evaluation_alone(media, run_on_commit):
    with run_on_commit():
        evaluation = _create("agreement")
    evaluation.refresh_from_db()
    finished = evaluation.finished_at
    assert services.evaluation_compute(evaluation_id=evaluation.pk) is None
    evaluation.refresh_from_db()
    assert evaluation.finished_at == finished


# --- progress polling ------------------------------------------------------------------------


def test_a_queued_evaluation_page_polls_its_status(admin_client, media):
    evaluation = _create("agreement")  # queued: the task has not run
    status_url = reverse("metrics:evaluation_status", args=[evaluation.pk])
    page = admin_client.get(reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    assert f'hx-get="{status_url}?page=detail"' in page.content.decode()
    assert "Queued" in page.content.decode()

    services.evaluation_compute(evaluation_id=evaluation.pk)
    fragment = admin_client.get(status_url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in fragment and 'data-family="agreement"' in fragment
    assert "<html" not in fragment


def test_artifact_download_waits_for_the_result(admin_client, media):
    evaluation = _create("agreement")
    response = admin_client.get(reverse("metrics:evaluation_artifact", args=[evaluation.pk]))
    assert response.status_code == 404


# --- list, filters, comparison ---------------------------------------------------------------


def test_list_filters_by_family_status_and_name(auditor_client, media, run_on_commit):
    with run_on_commit():
        _create("agreement", name="replication one")
        _create("verdicts", name="allergy verdicts")
    _create("agreement", name="replication queued")
    url = reverse("metrics:evaluations")

    def names(query: str) -> list[str]:
        return [e.name for e in auditor_client.get(url + query).context["evaluations"]]

    assert len(names("")) == 3
    assert names("?family=verdicts") == ["allergy verdicts"]
    assert names("?status=queued") == ["replication queued"]
    assert sorted(names("?q=replication")) == ["replication one", "replication queued"]


def test_compare_two_evaluations_side_by_side_with_paired_deltas(
    admin_client, media, run_on_commit
):
    with run_on_commit():
        left = _create("selective_prediction", name="zero", options={"mode": "zero_shot", **_QUICK})
        right = _create("selective_prediction", name="few", options={"mode": "few_shot", **_QUICK})
    url = reverse("metrics:evaluation_compare") + f"?left={left.pk}&right={right.pk}"
    page = admin_client.get(url).content.decode()
    assert page.count('data-family="selective_prediction"') == 2
    assert "Compute paired deltas" in page

    with run_on_commit():
        response = admin_client.post(
            reverse("metrics:evaluation_pair"), {"left": left.pk, "right": right.pk}
        )
    assert response.status_code == 302
    paired = services.evaluation_pair_get(left=left, right=right)
    assert paired.status == Status.DONE, paired.error
    assert paired.artifact["comparison"]["enabled"] is True
    assert paired.options["mode"] == "zero_shot" and paired.options["second_mode"] == "few_shot"
    page = admin_client.get(url).content.decode()
    assert page.count('data-family="selective_prediction"') == 3
    assert "Δ" in page and "Compute paired deltas" not in page


_QUICK = {"bootstrap_resamples": 50}


def test_compare_refuses_different_families(auditor_client, media, run_on_commit):
    with run_on_commit():
        left, right = _create("agreement"), _create("verdicts")
    url = reverse("metrics:evaluation_compare") + f"?left={left.pk}&right={right.pk}"
    response = auditor_client.get(url)
    assert "Only evaluations of the same family" in response.content.decode()
    assert auditor_client.get(reverse("metrics:evaluation_compare")).status_code == 200
    half = reverse("metrics:evaluation_compare") + f"?left={left.pk}"
    assert auditor_client.get(half).status_code == 400


# --- permissions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "upload", "view"),
    [("admin_user", 200, 200), ("auditor", 403, 200), ("outsider", 403, 403)],
)
def test_who_may_upload_and_view(request, client, persona, upload, view, media):
    evaluation = _create("agreement")
    client.force_login(request.getfixturevalue(persona))
    assert client.get(reverse("metrics:evaluation_upload")).status_code == upload
    assert client.post(
        reverse("metrics:evaluation_upload"), _form_data("agreement")
    ).status_code in ({upload} if upload == 403 else {302})
    for name, args in [
        ("metrics:evaluations", []),
        ("metrics:evaluation_detail", [evaluation.pk]),
        ("metrics:evaluation_status", [evaluation.pk]),
    ]:
        assert client.get(reverse(name, args=args)).status_code == view, name


def test_anonymous_users_are_sent_to_log_in(client, media):
    evaluation = _create("agreement")
    for url in [
        reverse("metrics:evaluations"),
        reverse("metrics:evaluation_upload"),
        reverse("metrics:evaluation_detail", args=[evaluation.pk]),
        reverse("metrics:evaluation_artifact", args=[evaluation.pk]),
    ]:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_example_files_are_served_from_the_registry_only(auditor_client):
    response = auditor_client.get(
        reverse("metrics:evaluation_example", args=["agreement_tests.csv"])
    )
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == example_bytes("agreement_tests.csv")
    missing = auditor_client.get(reverse("metrics:evaluation_example", args=["common.py"]))
    assert missing.status_code == 404


def test_upload_page_is_generated_from_the_registry(admin_client):
    page = admin_client.get(reverse("metrics:evaluation_upload") + "?family=reasoning")
    html = page.content.decode()
    for role in UPLOADED["reasoning"].roles:
        assert f'name="file_{role.name}"' in html
    for option in UPLOADED["reasoning"].options:
        assert f'name="option_{option.name}"' in html
    assert 'accept=".jsonl"' in html
    assert reverse("metrics:evaluation_example", args=["reasoning_vignettes.json"]) in html
    assert admin_client.get(reverse("metrics:evaluation_upload") + "?family=nope").status_code == (
        404
    )


def test_kept_upload_files_belong_to_their_user(admin_user, make_user):
    """A refused upload's files are kept for the next try of the same user only."""
    files = {"run": [InputFile("run.json", b"{}")]}
    token = services.upload_kept_store(user=admin_user, files=files)
    assert services.upload_kept_read(user=admin_user, token=token) == files
    other = make_user("dave", role="admin")
    assert services.upload_kept_read(user=other, token=token) == {}
    assert services.upload_kept_read(user=admin_user, token="nope") == {}


def test_upload_without_mode_uses_the_first_mode_in_the_file(admin_client, media):
    """The example run holds two experiments; left at its default, Mode is the first one."""
    url = reverse("metrics:evaluation_upload") + "?family=selective_prediction"
    data = {
        "family": "selective_prediction",
        "option_bootstrap_resamples": "0",
        "file_run": SimpleUploadedFile("selective_run.json", example_bytes("selective_run.json")),
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Evaluation.objects.get().options["mode"] == "zero_shot"


def test_status_poll_updates_heading_and_summary_together(auditor_client, media):
    """Polled from the evaluation page, the status answer carries the heading (status chip,
    artifact download) and the summary (finished time) too, swapped in out of band."""
    evaluation = services.evaluation_create(
        family="agreement", name="polled", files=example_files("agreement"), options={}, queue=False
    )
    url = reverse("metrics:evaluation_status", args=[evaluation.pk])
    html = auditor_client.get(url, {"page": "detail"}).content.decode()
    assert "Queued" in html and "?page=detail" in html
    services.evaluation_compute(evaluation_id=evaluation.pk)
    html = auditor_client.get(url, {"page": "detail"}).content.decode()
    assert "Queued" not in html and "hx-trigger" not in html
    head = html[html.index(f'id="evaluation-head-{evaluation.pk}"') :]
    assert 'hx-swap-oob="true"' in head[:80] and "Download artifact" in head and "Done" in head
    assert "Finished" in html[html.index(f'id="evaluation-summary-{evaluation.pk}"') :]
    # Polled from the comparison page: the result section only.
    assert "evaluation-head" not in auditor_client.get(url).content.decode()
