"""The inter-auditor card's item-level agreement before adjudication, and the adjudicated coding
not counted as one more coder."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.services.adjudication_state import adjudication_choice_set, adjudication_submit
from metrics.families.interauditor import items_agreement
from metrics.own_data.interauditor import interauditor_result_compute

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.audit.adjudication_fixtures"]


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 50


def test_items_agreement_by_hand():
    assert items_agreement([(4, 1), (2, 3)]) == {
        "n_statements": 2, "n_items": 10, "n_unanimous": 6, "share_unanimous": 0.6,
    }  # fmt: skip
    assert items_agreement([])["share_unanimous"] is None


def test_the_card_shows_items_unanimous_before_adjudication(admin_client, admin_user, two_codings):
    statement = two_codings.statement
    adjudication_choice_set(statement=statement, admin=admin_user, key="events:0:-5",
                            choice={"coder": 0})  # fmt: skip
    adjudication_submit(statement=statement, admin=admin_user)
    values = interauditor_result_compute(force=True).values
    assert values["adjudication"] == {
        "n_statements": 1, "n_items": 5, "n_unanimous": 4, "share_unanimous": 0.8,
    }  # fmt: skip
    # The merge is not a third coder: one pair, alice and bob.
    assert values["n_auditors"] == 2 and values["overall"]["n_comparisons"] == 1
    html = admin_client.get(reverse("metrics:interauditor_card")).content.decode()
    assert 'data-testid="items-before-adjudication"' in html
    assert "0.800" in html and "4 of 5 aligned items in 1 adjudicated statement" in html


def test_without_adjudication_the_figure_is_absent(admin_client, two_codings):
    values = interauditor_result_compute(force=True).values
    assert values["adjudication"]["n_items"] == 0
    html = admin_client.get(reverse("metrics:interauditor_card")).content.decode()
    assert "items-before-adjudication" not in html
