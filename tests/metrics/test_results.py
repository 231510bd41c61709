"""metrics.results: the lifecycle every stored result shares (keys, hash, locks, failures)."""

import pytest
from django.db import OperationalError, transaction

from metrics.models import MetricResult
from metrics.results import (
    failure_recorded,
    input_hash,
    row_locked_or_created,
    run_key,
    system_key,
)
from tests.factories import ExtractionRunFactory, StatementFactory

Status = MetricResult.Status
SETTINGS = {"strategy": "greedy"}


def test_keys_name_family_scope_and_ids():
    assert run_key("calibration", 7) == "calibration:run:r7:d-:s-"
    assert system_key("interauditor") == "interauditor:system:r-:d-:s-"


def test_the_hash_sees_inputs_settings_code_and_family_parameters():
    base = input_hash([1, 2], code_version="x/1", settings=SETTINGS)
    assert base == input_hash([1, 2], code_version="x/1", settings=dict(SETTINGS))
    assert base != input_hash([1, 3], code_version="x/1", settings=SETTINGS)
    assert base != input_hash([1, 2], code_version="x/2", settings=SETTINGS)
    assert base != input_hash([1, 2], code_version="x/1", settings={})
    assert base != input_hash([1, 2], code_version="x/1", settings=SETTINGS, seed=0)


@pytest.mark.django_db
def test_lock_or_create_inserts_once():
    run = ExtractionRunFactory()
    key = run_key("calibration", run.pk)
    with transaction.atomic():
        first = row_locked_or_created(key=key, family="calibration", scope="run", run_id=run.pk)
        again = row_locked_or_created(key=key, family="calibration", scope="run", run_id=run.pk)
    assert first.pk == again.pk and first.status == Status.STALE and first.stale_since is None
    assert MetricResult.objects.filter(key=key).count() == 1


@pytest.mark.django_db
def test_a_failure_marks_the_row_and_its_run_and_system_rows():
    statement = StatementFactory()
    run = ExtractionRunFactory()
    for scope, key in (("run", run_key("fam", run.pk)), ("system", system_key("fam"))):
        MetricResult.objects.create(key=key, family="fam", scope=scope, status=Status.FRESH)
    with failure_recorded(
        family="fam",
        scope="statement",
        code_version="fam/1",
        settings=SETTINGS,
        run_id=run.pk,
        statement_id=statement.pk,
        stale_now=True,
    ):
        raise ValueError("boom")
    row = MetricResult.objects.get(family="fam", scope="statement")
    assert row.status == Status.FAILED and "ValueError: boom" in row.error
    assert row.discussion_id == statement.discussion_id and row.stale_since is not None
    assert (row.code_version, row.match_settings) == ("fam/1", SETTINGS)
    parents = MetricResult.objects.filter(scope__in=["run", "system"], family="fam")
    assert {p.status for p in parents} == {Status.FAILED}
    assert all(row.key in p.error for p in parents)


@pytest.mark.django_db
def test_transient_database_errors_propagate_for_a_retry():
    with (
        pytest.raises(OperationalError),
        failure_recorded(family="fam", scope="system", code_version="v", settings={}),
    ):
        raise OperationalError("deadlock detected")
    assert not MetricResult.objects.filter(family="fam").exists()
