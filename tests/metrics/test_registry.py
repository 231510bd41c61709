"""metrics.registry: one list of families, and everything an entry names exists."""

from importlib import import_module
from unittest import mock

from django.template.loader import get_template
from django.urls import resolve, reverse

from metrics.evaluations.registry import UPLOADS, example_files, upload_get
from metrics.models import MetricResult
from metrics.registry import (
    ADMIN_ONLY,
    FAMILIES,
    OUR_DATA,
    RECOMPUTE_JOB,
    UPLOADED,
    UPLOADED_RUN,
    WHOLE,
    WHOLE_TASK,
)

# The package of each uploaded family (its upload name can differ).
FAMILY_PACKAGES = {
    "selective_prediction": "selective",
    "agreement": "agreement",
    "verdicts": "verdicts",
    "reasoning": "reasoning",
}


def test_every_family_once_our_data_first():
    assert list(FAMILIES) == [
        "extraction",
        "review_savings",
        "calibration",
        "interauditor",
        "triage",
        "selective_prediction",
        "agreement",
        "verdicts",
        "reasoning",
    ]
    assert {f.source for f in FAMILIES.values()} == {OUR_DATA, UPLOADED_RUN}
    assert list(UPLOADED) == list(UPLOADS)
    assert WHOLE == ("review_savings", "calibration", "interauditor", "triage")
    assert (RECOMPUTE_JOB, ADMIN_ONLY) == (("extraction",), ("interauditor", "triage"))


def test_each_entry_names_a_task_a_card_and_a_version_that_exist():
    for family in FAMILIES.values():
        assert family.celery_task().name == family.task, family.name
        get_template(family.card)
        if family.source == OUR_DATA:
            assert family.code_version and callable(family.card_builder()), family.name
        else:
            assert family.upload is upload_get(family.name)


def test_a_whole_family_needs_no_code_beyond_its_entry_module_and_template():
    """Its task, card URL and card view are the registry's: one task computes a row of any
    of them by the entry's service, one URL pattern per entry serves its card."""
    for name in WHOLE:
        family = FAMILIES[name]
        assert family.task == WHOLE_TASK and callable(family.compute_service()), name
        assert family.compute.startswith("metrics.own_data."), name
        assert family.card_context.rsplit(".", 1)[0] == family.compute.rsplit(".", 1)[0], name
        args = [1] if family.scope == MetricResult.Scope.RUN else []
        match = resolve(reverse(f"metrics:{name}_card", args=args))
        assert match.kwargs["family"] == name


def test_an_uploaded_family_brings_its_card_with_its_run_module():
    for name, spec in UPLOADS.items():
        run = import_module(f"metrics.families.{FAMILY_PACKAGES[name]}.run")
        artifact = {"marker": object()}
        with mock.patch.object(run, "card", return_value={"from": name}) as card:
            assert spec.card_context(artifact) == {"from": name}
        card.assert_called_once_with(artifact)


def test_example_files_name_their_family():
    assert example_files()["agreement_tests.csv"] == "agreement"
