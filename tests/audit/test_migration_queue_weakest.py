"""Migration 0020 stores the weakest-first queue's lowest scores of a site that already had
review triage: each scored discussion's (a row for one nobody worked in) and each coder's own."""

from __future__ import annotations

from django.contrib.auth import get_user_model

BEFORE = [("audit", "0019_triage_weakest_first_index")]
AFTER = [("audit", "0020_queue_weakest")]


def test_the_migration_stores_each_discussion_s_and_each_coder_s_lowest_score(migrated_to):
    coder = get_user_model().objects.create(username="coder")
    old = migrated_to(BEFORE)
    model = old.get_model
    run = model("audit", "ExtractionRun").objects.create(model_name="m", prompt_version="1")
    worked, untouched = (
        model("audit", "Discussion").objects.create(summary=name) for name in ("worked", "new")
    )
    scores = {worked: (0.1, 0.5, 0.7), untouched: (0.3, 0.2, 0.9)}
    statements = {}
    for discussion, confidences in scores.items():
        subject = model("audit", "Speaker").objects.create(
            discussion=discussion, name="Ann", type="subject"
        )
        for order, confidence in enumerate(confidences):
            statement = model("audit", "Statement").objects.create(
                discussion=discussion, speaker=subject, order=order, text="..."
            )
            statements[(discussion.pk, order)] = statement
            model("audit", "TriageStatement").objects.create(
                run=run, statement=statement, confidence=confidence, provisional=order == 2
            )
    # The coder coded the weakest statement of "worked"; its row exists, "new" has none.
    model("audit", "Feedback").objects.create(
        statement=statements[(worked.pk, 0)], auditor_id=coder.pk
    )
    model("audit", "DiscussionFigures").objects.create(discussion=worked, to_code=2)
    model("audit", "CodingTally").objects.create(discussion=worked, auditor_id=coder.pk, coded=1)

    new = migrated_to(AFTER)

    figures = new.get_model("audit", "DiscussionFigures").objects
    assert dict(figures.values_list("pk", "weakest")) == {worked.pk: 0.1, untouched.pk: 0.2}
    assert figures.get(pk=untouched.pk).to_code == 2  # the accepted statement left out
    assert figures.get(pk=untouched.pk).label == "new"
    tally = new.get_model("audit", "CodingTally").objects.get()
    assert tally.weakest == 0.5  # the coder's own: the 0.1 they coded left out
