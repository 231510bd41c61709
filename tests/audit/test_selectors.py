"""audit.selectors.lists and history: the API's reads, in id order, showing each user what they may see."""

import pytest

from audit.models import ComputeJob, Feedback
from audit.selectors import history, lists
from audit.selectors.alignment import item_alignment
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
)

pytestmark = pytest.mark.django_db


def test_discussions_count_statements_and_filter_on_approved_ground_truth():
    coded, empty = DiscussionFactory(), DiscussionFactory()
    statement = StatementFactory(discussion=coded)
    FeedbackFactory(statement=statement, status=Feedback.Status.APPROVED)
    listed = {d.pk: d for d in lists.discussions_list()}
    assert listed[coded.pk].n_approved == 1 and listed[empty.pk].n_approved == 0
    assert [d.pk for d in lists.discussions_list(filters={"has_approved": True})] == [coded.pk]
    assert [d.pk for d in lists.discussions_list(filters={"has_approved": False})] == [empty.pk]


def test_auditors_list_their_own_feedback_admins_everyones(auditor, admin_user):
    mine, theirs = FeedbackFactory(auditor=auditor), FeedbackFactory()
    assert [f.pk for f in lists.feedback_list(user=auditor)] == [mine.pk]
    assert [f.pk for f in lists.feedback_list(user=admin_user)] == [mine.pk, theirs.pk]


def test_jobs_filter_on_kind_and_status():
    export = ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT)
    ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, status=ComputeJob.Status.DONE)
    assert [j.pk for j in lists.compute_jobs_list(filters={"kind": "export"})] == [export.pk]
    assert lists.compute_jobs_list(filters={"status": "queued"}).get() == export


def test_list_filters_apply_only_what_was_given_in_id_order():
    from_v1 = ExtractionRunFactory(model_name="m", prompt_version="v1")
    from_v2 = ExtractionRunFactory(model_name="m", prompt_version="v2")
    ExtractionRunFactory(model_name="other", prompt_version="v1")
    runs = lists.extraction_runs_list(filters={"model_name": "m", "ignored": "x"})
    assert list(runs) == [from_v1, from_v2]
    assert list(
        lists.extraction_runs_list(filters={"model_name": "m", "prompt_version": "v2"})
    ) == [from_v2]
    extraction = ExtractionFactory(run=from_v1)
    ExtractionFactory(run=from_v2)
    assert list(lists.extractions_list(filters={"run": from_v1.pk})) == [extraction]
    assert (
        list(
            lists.extractions_list(
                filters={"statement": extraction.statement_id, "run": from_v2.pk}
            )
        )
        == []
    )


ODD_IDS = [-1, 7, "p-ä", "", 0, True, None, 1.0, 2.5, [3], {"id": 4}, 10**20, -(10**20)]


def _odd_payload(rng) -> dict:
    """A payload with every kind of item and id the stored JSON may hold, valid or not."""
    payload: dict = {}
    for kind in ("people", "events", "pair_bonds"):
        shape = rng.random()
        if shape < 0.1:
            payload[kind] = {"id": rng.choice(ODD_IDS)}  # not a list: no items
        elif shape < 0.2:
            continue  # the list is missing
        else:
            items: list = []
            for _ in range(rng.randrange(4)):
                item = rng.choice([{"id": rng.choice(ODD_IDS)}, {"name": "no id"}, "id", 5])
                items.append(item)
            payload[kind] = items
    payload["delete"] = [rng.choice(ODD_IDS)]  # deletions name ids, they are not items
    return payload


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_earlier_item_ids_are_the_ids_of_every_earlier_payload(seed, auditor, second_auditor):
    import random

    from metrics.families.payload.items import payload_ids

    rng = random.Random(seed)
    discussion = DiscussionFactory()
    runs = [ExtractionRunFactory(), ExtractionRunFactory()]
    statements = [StatementFactory(discussion=discussion, order=i) for i in range(6)]
    payloads: list[list[dict]] = []
    for statement in statements:
        here = []
        for run in runs:
            here.append(_odd_payload(rng))
            ExtractionFactory(statement=statement, run=run, pdp_deltas=here[-1])
        for coder in (auditor, second_auditor):
            here.append(_odd_payload(rng))
            FeedbackFactory(statement=statement, auditor=coder, edited_extraction=here[-1])
        payloads.append(here)
    elsewhere = StatementFactory(order=0)  # another discussion's ids are not known here
    ExtractionFactory(statement=elsewhere, run=runs[0], pdp_deltas={"people": [{"id": -999}]})
    for index, statement in enumerate(statements):
        above = [payload for here in payloads[:index] for payload in here]
        assert history.earlier_item_ids(statement=statement) == payload_ids(above), index


def test_item_alignment_pairs_items_by_the_matcher_not_by_position_or_id():
    ai = {
        "people": [{"id": -1, "name": "Ann", "last_name": "Lee"}, {"id": -2, "name": "Bob"}],
        "events": [],
        "pair_bonds": [],
    }
    coded = {  # Bob first, Ann re-created under a new id, and someone the AI missed
        "people": [
            {"id": -2, "name": "Bob"},
            {"id": -7, "name": "Ann", "last_name": "Lee"},
            {"id": -8, "name": "Zed", "last_name": "Quill"},
        ],
        "events": [],
        "pair_bonds": [],
    }
    pairs = item_alignment(ai=ai, coded=coded)
    assert sorted(pairs["people"]) == [(-2, -2), (-1, -7)]
    assert pairs["events"] == [] and pairs["pair_bonds"] == []


def test_discussion_runs_lists_each_run_once_newest_first_labels_in_one_query(
    django_assert_num_queries,
):
    from audit.selectors.queues import discussion_runs

    discussion = DiscussionFactory()
    first, second = StatementFactory(discussion=discussion), StatementFactory(discussion=discussion)
    older, newer, elsewhere = ExtractionRunFactory(), ExtractionRunFactory(), ExtractionRunFactory()
    for run in (older, newer):
        ExtractionFactory(run=run, statement=first)
        ExtractionFactory(run=run, statement=second)
    ExtractionFactory(run=elsewhere)
    with django_assert_num_queries(1):  # the configurations come with the runs
        runs = discussion_runs(discussion=discussion)
        labels = [run.label for run in runs]
    assert [run.pk for run in runs] == [newer.pk, older.pk]
    assert labels == [newer.configuration.label, older.configuration.label]
