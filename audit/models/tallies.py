"""Stored counts of the team's work (tallies, team and discussion figures, coding time), kept
true by ``audit.derived``, so pages read a row instead of counting codings.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from audit.models.discussions import Discussion, Statement
from evalsite.indexes import NullsLastIndex


class CodingTally(models.Model):
    """One auditor's work in one discussion, counted by status, so pages that show progress or
    what waits for review read a row per discussion and auditor instead of every coding.

    Kept true by ``audit.derived.tallies``: every save or deletion of a feedback or an assignment
    refreshes the pairs it touches in the same transaction; bulk writes refresh theirs in
    batches; ``tallies_rebuild`` recounts everything from the rows themselves. Counts cover
    subject statements (the only ones coded)."""

    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="+")
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    coded = models.PositiveIntegerField(default=0)
    submitted = models.PositiveIntegerField(default=0, help_text="Sent: not a draft.")
    approved = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    in_review = models.PositiveIntegerField(default=0, help_text="Submitted, not yet decided.")
    waiting = models.PositiveIntegerField(default=0, help_text="In the review stream.")
    assigned = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    open = models.PositiveIntegerField(default=0, help_text="Assigned, not submitted or skipped.")
    open_unsent = models.PositiveIntegerField(
        default=0, help_text="Open assignments of statements the auditor has not sent."
    )
    to_adjudicate = models.PositiveIntegerField(
        default=0,
        help_text="Statements the auditor's sent coding shares with another auditor's, "
        "not yet merged by an adjudication and without approved ground truth.",
    )
    sent_to_code = models.PositiveIntegerField(
        default=0, help_text="Sent codings of statements still to code (not AI accepted)."
    )
    weakest = models.FloatField(
        null=True,
        blank=True,
        help_text="When the auditor has coded something here: the lowest review triage score "
        "among the statements still to code they have not coded (none: none scored), their "
        "weakest-first queue's order. Kept by audit.derived.tallies and audit.derived.team_figures.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["discussion", "auditor"], name="one_tally_per_pair")
        ]
        indexes = [
            models.Index(fields=["auditor", "discussion"]),
            # The auditor's own weakest-first order, from the lowest score up.
            models.Index(
                fields=["auditor", "weakest", "discussion"],
                condition=Q(weakest__isnull=False),
                name="tally_weakest_first",
            ),
            models.Index(
                fields=["discussion", "auditor"], condition=Q(waiting__gt=0), name="tally_waiting"
            ),
            models.Index(
                fields=["discussion", "auditor"],
                condition=Q(in_review__gt=0),
                name="tally_in_review",
            ),
            models.Index(
                fields=["discussion"], condition=Q(to_adjudicate__gt=0), name="tally_to_adjudicate"
            ),
            # the auditor's discussions with open assignments to code (``my_open_assignments``),
            # without reading a tally per discussion they ever worked in
            models.Index(
                fields=["auditor", "discussion"],
                condition=Q(open_unsent__gt=0),
                name="tally_open_unsent",
            ),
        ]

    def __str__(self) -> str:
        return f"tally of auditor {self.auditor_id} in discussion {self.discussion_id}"


class TeamFigures(models.Model):
    """The team page's figures of one discussion or one auditor, stored so a page reads its
    rows instead of summing every tally and replaying every coder's history on each view.

    - The counts are the sums of the row's ``CodingTally`` rows (``pairs``: how many have
      work), changed by the difference each tally refresh makes, in its transaction
      (``audit.derived.team_figures``); ``tallies_rebuild`` recounts them with the tallies.
    - Active time, median and statements per day are written by the worker that follows the
      recorded changes (``audit.derived.coding_times``: the changed days of the changed coders'
      history, from the stored ``CodingTime`` rows).
    - Agreement is written by the worker that computes the inter-auditor family (``None``:
      not measured yet)."""

    pairs = models.PositiveIntegerField(default=0, help_text="Tallies with work.")
    coded = models.PositiveIntegerField(default=0)
    submitted = models.PositiveIntegerField(default=0)
    approved = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    in_review = models.PositiveIntegerField(default=0)
    waiting = models.PositiveIntegerField(default=0)
    to_adjudicate = models.PositiveIntegerField(default=0)
    assigned = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    open = models.PositiveIntegerField(default=0)
    open_unsent = models.PositiveIntegerField(default=0)
    active_seconds = models.FloatField(default=0.0)
    median_seconds = models.FloatField(null=True, blank=True)
    per_day = models.FloatField(null=True, blank=True)
    agreement_gt = models.FloatField(null=True, blank=True)
    agreement_coders = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True


# The per-discussion table's sort columns (the page's names) and the stored field each reads.
TEAM_SORT_FIELDS = {
    "label": "label",
    "assigned": "assigned",
    "coded": "coded",
    "submitted": "submitted",
    "approved": "approved",
    "rejected": "rejected",
    "skipped": "skipped",
    "active_minutes": "active_seconds",
    "median_minutes": "median_seconds",
    "per_day": "per_day",
    "agreement_gt": "agreement_gt",
    "agreement_coders": "agreement_coders",
}
LISTED = Q(pairs__gt=0)


def _team_sort_indexes() -> list[models.Index]:
    """One index per sort column and direction over the listed discussions, in the order the
    page asks (missing figures last, then by discussion): a page is read in index order."""
    indexes: list[models.Index] = []
    for name, field in TEAM_SORT_FIELDS.items():
        for suffix, order in (
            ("a", models.F(field).asc(nulls_last=True)),
            ("d", models.F(field).desc(nulls_last=True)),
        ):
            indexes.append(
                NullsLastIndex(
                    order,
                    models.F("discussion"),
                    condition=LISTED,
                    name=f"team_{name[:14]}_{suffix}",
                )
            )
    return indexes


class DiscussionFigures(TeamFigures):
    """One discussion's row of the team page (see ``TeamFigures``)."""

    discussion = models.OneToOneField(
        Discussion, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    label = models.CharField(max_length=80, blank=True, help_text="The summary's start.")
    to_code = models.PositiveIntegerField(
        default=0,
        help_text="Subject statements still to code (not AI accepted by review triage): the "
        "queue's 'done' is every one of them sent. Kept by audit.derived.team_figures.",
    )
    weakest = models.FloatField(
        null=True,
        blank=True,
        help_text="The lowest review triage score among its statements still to code (none: "
        "none scored): its place in the weakest-first queue of whoever has coded none of them. "
        "Kept by audit.derived.team_figures.",
    )

    class Meta:
        indexes = [
            *_team_sort_indexes(),
            # The weakest-first queue reads the discussions from the lowest score up.
            models.Index(
                fields=["weakest", "discussion"],
                condition=Q(weakest__isnull=False),
                name="figures_weakest_first",
            ),
        ]

    def __str__(self) -> str:
        return f"team figures of discussion {self.discussion_id}"


class AuditorFigures(TeamFigures):
    """One auditor's row of the team page and their own progress (see ``TeamFigures``)."""

    auditor = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )

    def __str__(self) -> str:
        return f"team figures of auditor {self.auditor_id}"


class CodingTime(models.Model):
    """Active coding time of one auditor on one statement on one day (UTC), in microseconds
    (integers: sums in any order are exact), derived from the auditor's history by
    ``audit.derived.coding_times``. A day's rows depend only on that day's moments and the last one
    before it, so a change replays the auditor's history from its day on, not all of it."""

    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="+")
    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    micros = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["auditor", "day", "statement"], name="coding_time_auditor_day"
            )
        ]
        indexes = [models.Index(fields=["discussion", "day"], name="coding_time_discussion")]

    def __str__(self) -> str:
        return f"{self.micros} µs of auditor {self.auditor_id} on statement {self.statement_id}"


class CodingTimeChange(models.Model):
    """What the stored active time must follow, written in the transaction of the change (so a
    late commit is never skipped, as a high-water mark would): ``since`` a day from which the
    auditor's history changed (a revision, a deleted coding), or none when only the
    discussion's and auditor's figures must be read again (a coding sent or taken back, a
    changed count of sent codings). Plain ids: the row outlives what it names."""

    auditor_id = models.BigIntegerField()
    discussion_id = models.BigIntegerField(null=True, blank=True)
    since = models.DateField(null=True, blank=True)

    def __str__(self) -> str:
        return f"time change of auditor {self.auditor_id} since {self.since}"
