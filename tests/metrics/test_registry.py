"""metrics.registry: one list of families, and everything an entry names exists."""

from django.template.loader import get_template

from metrics.evaluations.registry import UPLOADS
from metrics.registry import (
    ADMIN_ONLY,
    FAMILIES,
    OUR_DATA,
    RECOMPUTE_JOB,
    UPLOADED,
    UPLOADED_RUN,
    WHOLE,
    example_files,
    upload_get,
)


def test_every_family_once_our_data_first():
    assert list(FAMILIES) == [
        "extraction",
        "review_savings",
        "calibration",
        "interauditor",
        "selective_prediction",
        "agreement",
        "verdicts",
        "reasoning",
    ]
    assert {f.source for f in FAMILIES.values()} == {OUR_DATA, UPLOADED_RUN}
    assert list(UPLOADED) == list(UPLOADS)
    assert WHOLE == ("review_savings", "calibration", "interauditor")
    assert (RECOMPUTE_JOB, ADMIN_ONLY) == (("extraction",), ("interauditor",))


def test_each_entry_names_a_task_a_card_and_a_version_that_exist():
    for family in FAMILIES.values():
        assert family.celery_task().name == family.task, family.name
        get_template(family.card)
        if family.source == OUR_DATA:
            assert family.code_version and callable(family.card_builder()), family.name
        else:
            assert family.upload is upload_get(family.name)


def test_example_files_name_their_family():
    assert example_files()["agreement_tests.csv"] == "agreement"
