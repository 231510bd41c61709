"""Statements whose codings wait for an admin to adjudicate them, and why each does."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Count,
    Exists,
    Max,
    OuterRef,
    Q,
    QuerySet,
    TextField,
)
from django.db.models.functions import MD5, Cast

from audit.models import (
    Adjudication,
    CodingTally,
    Feedback,
    Statement,
)
from evalsite.match_settings import match_settings
from evalsite.perf.digest_cache import digest_cached
from metrics.families.extraction.adjudication import DELETE_KEY, align_codings


def adjudication_codings(*, statement_id: int) -> QuerySet[Feedback]:
    """The codings an adjudication merges: submitted or approved, not an adjudication's own
    result, in auditor id order (the first is the alignment's pivot): the same codings always
    align the same way, whoever started or resubmitted first."""
    return _codings([statement_id])


def _codings(statement_ids: list[int]) -> QuerySet[Feedback]:
    return (
        Feedback.objects.filter(
            statement_id__in=statement_ids,
            status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            adjudication__isnull=True,
        )
        .select_related("auditor")
        .order_by("auditor_id", "pk")
    )


def approved_ground_truth(statement: str = "statement_id") -> Exists:
    """The outer row's statement (its id under ``statement``) has approved ground truth: its
    other codings then serve agreement, and nothing is left to decide (as ``waiting_q``)."""
    approved = Feedback.objects.filter(
        statement_id=OuterRef(statement), status=Feedback.Status.APPROVED
    )
    return Exists(approved)


def adjudicable_statement_ids(*, statement_ids: list[int]) -> set[int]:
    """Of these statements, those with two or more codings to adjudicate and no approved
    ground truth."""
    rows = (
        Feedback.objects.filter(
            statement_id__in=statement_ids,
            status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            adjudication__isnull=True,
        )
        .filter(~approved_ground_truth())
        .values("statement_id")
        .annotate(n=Count("id"))
        .filter(n__gte=2)
    )
    return {row["statement_id"] for row in rows}


def statements_to_adjudicate(*, limit: int = 50) -> QuerySet[Statement]:
    """Subject statements (the only ones ground truth is taken from) with two or more codings,
    no adjudicated coding yet and no approved ground truth, in discussion order (the review
    home and queue list them). Once a coding is approved the others serve agreement: nothing
    is left to decide."""
    codings = Count(
        "feedback",
        filter=Q(
            feedback__status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            feedback__adjudication__isnull=True,
        ),
    )
    return (
        Statement.objects.subjects()
        .filter(discussion_id__in=_discussions_to_adjudicate(limit))
        .annotate(n_codings=codings)
        .filter(n_codings__gte=2, adjudication__feedback__isnull=True)
        .filter(~approved_ground_truth("pk"))
        .select_related("discussion")
        .order_by("discussion_id", "order")[:limit]
    )


def _discussions_to_adjudicate(limit: int) -> list[int]:
    """The first discussions (in id order) that hold the first ``limit`` statements to
    adjudicate, read from the stored tallies. A tally's ``to_adjudicate`` counts statements
    its auditor shares with another auditor, each of them one the list shows, so a
    discussion holds at least its largest tally's count: the discussions are taken until
    those counts reach ``limit``, and only their statements are counted (about 10 of 50
    discussions when each has 5 to adjudicate)."""
    largest = (
        CodingTally.objects.filter(to_adjudicate__gt=0)
        .order_by("discussion_id")
        .values("discussion_id")
        .annotate(most=Max("to_adjudicate"))
        .values_list("discussion_id", "most")[:limit]
    )
    wanted, at_least = [], 0
    for discussion_id, most in largest:
        wanted.append(discussion_id)
        at_least += most
        if at_least >= limit:
            break
    return wanted


def adjudication_counts() -> list[tuple[int, int]]:
    """(unanimous, adjudicated) item counts of every statement whose merge was produced."""
    rows = Adjudication.objects.filter(feedback__isnull=False).order_by("statement_id")
    return [tuple(r) for r in rows.values_list("unanimous_items", "adjudicated_items")]  # type: ignore[misc]


# --- why each statement needs a decision -------------------------------------------------------

KIND_WORDS = {
    "people": ("person", "people"),
    "events": ("event", "events"),
    "pair_bonds": ("pair bond", "pair bonds"),
}


@dataclass(frozen=True)
class ToAdjudicate:
    """A statement to adjudicate with why it needs a decision, in words: who coded it and on
    which items their codings disagree ("alice and bob disagree on 1 event")."""

    statement: Statement
    coders: list[str]
    disputed: dict[str, int]  # kind (people, events, pair_bonds, delete) -> items disputed

    @property
    def why(self) -> str:
        who = _and(self.coders)
        if not self.disputed:
            return f"{who} agree on every item: the merge is ready to submit"
        parts = [
            f"{n} {KIND_WORDS[kind][n != 1]}"
            for kind, n in self.disputed.items()
            if kind in KIND_WORDS
        ]
        if DELETE_KEY in self.disputed:
            parts.append("what to remove from the family")
        return f"{who} disagree on {_and(parts)}"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def statements_to_adjudicate_why(*, limit: int = 50) -> list[ToAdjudicate]:
    """``statements_to_adjudicate`` with why each needs a decision: the statements' codings
    aligned as the adjudication screen aligns them, their disputed items counted by kind.
    The alignment is the matcher's, run per statement, so a page lists at most ``limit``;
    its counts are kept in the cache under a digest of the codings' contents and the match
    settings (``_disputed``), so a page aligns only the statements whose codings changed."""
    statements = list(statements_to_adjudicate(limit=limit))
    coders: defaultdict[int, list[str]] = defaultdict(list)
    digests: defaultdict[int, list[str]] = defaultdict(list)
    rows = (
        _codings([s.pk for s in statements])
        .annotate(digest=_digest())
        .values_list("statement_id", "auditor__username", "digest")
    )
    for statement_id, name, digest in rows:
        coders[statement_id].append(name)
        digests[statement_id].append(digest)
    disputed = _disputed(digests)
    return [ToAdjudicate(s, coders[s.pk], disputed.get(s.pk, {})) for s in statements]


WHY_CACHE_SECONDS = 7 * 24 * 3600  # a statement's codings rarely stay unchanged longer
WHY_CACHE_VERSION = 1  # raised when the alignment or the counting changes what it says


def _digest() -> MD5:
    """A coding's payload digested by the database: its key changes whenever its content does."""
    return MD5(Cast("edited_extraction", output_field=TextField()))


def _disputed(digests: dict[int, list[str]]) -> dict[int, dict[str, int]]:
    """Per statement, its disputed items by kind: kept in the cache under its codings'
    digests and the match settings (``evalsite.perf.digest_cache``), else aligned here."""
    return digest_cached(
        namespace=f"adjudicate-why:{WHY_CACHE_VERSION}",
        basis=repr(match_settings()),
        digests=digests,
        derive=_aligned,
        seconds=WHY_CACHE_SECONDS,
    )


def _aligned(statement_ids: list[int]) -> dict[int, tuple[Sequence[str], dict[str, int]]]:
    """The statements' codings read again and aligned: each one's digests as read, and its
    disputed counts."""
    payloads: defaultdict[int, list[Any]] = defaultdict(list)
    read: defaultdict[int, list[str]] = defaultdict(list)
    rows = (
        _codings(statement_ids)
        .annotate(digest=_digest())
        .values_list("statement_id", "digest", "edited_extraction")
    )
    for statement_id, digest, payload in rows:
        payloads[statement_id].append(payload)
        read[statement_id].append(digest)
    return {pk: (read[pk], _disputed_counts(payloads[pk])) for pk in statement_ids}


def _disputed_counts(payloads: list[Any]) -> dict[str, int]:
    alignment = align_codings(payloads, settings=match_settings())
    counted = Counter(item.kind for item in alignment.disputed)
    return {kind: counted[kind] for kind in [*KIND_WORDS, DELETE_KEY] if counted[kind]}
