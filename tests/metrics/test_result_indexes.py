"""The results table's indexes: each row write adds an entry to every one, so none is kept that
another already serves (migration metrics.0012), and the key stays unique."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from metrics.models import MetricResult

pytestmark = pytest.mark.django_db


def _indexes_on(columns: list[str]) -> list[str]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, MetricResult._meta.db_table)
    return [
        name
        for name, info in found.items()
        if (info["index"] or info["unique"]) and info["columns"] == columns
    ]


def test_the_key_has_one_index_and_stays_unique() -> None:
    assert len(_indexes_on(["key"])) == 1  # no second (LIKE) index beside the unique one
    MetricResult.objects.create(key="extraction:system", family="extraction", scope="system")
    with pytest.raises(IntegrityError), transaction.atomic():
        MetricResult.objects.create(key="extraction:system", family="extraction", scope="system")


def test_family_is_served_by_the_index_that_starts_with_it() -> None:
    assert _indexes_on(["family"]) == []
    assert _indexes_on(["family", "scope", "run_id", "status"])
