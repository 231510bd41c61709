"""What a coder may not see yet (the blind rule, docs/coding-together.md): the statements whose
F1, ground truth and other codings are sealed from them until they submit their own coding."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Q, QuerySet

from audit.models import BlindReview, Feedback
from evalsite.access import is_admin

SENT = (Feedback.Status.SUBMITTED, Feedback.Status.APPROVED, Feedback.Status.REJECTED)


def submitted_statement_ids(user: User, statements: QuerySet | list[int] | None = None) -> QuerySet:
    """Statements the user has submitted a coding of (at any time: a later edit keeps it so),
    among ``statements`` if given (a page's window: not every coding the user ever made; ids
    are best, the planner then starts from them and not from the user's rows)."""
    mine = Feedback.objects.filter(auditor=user)
    if statements is not None:
        mine = mine.filter(statement__in=statements)
    return mine.filter(Q(status__in=SENT) | Q(revisions__action="submit")).values("statement_id")


def blind_sealed_statement_ids(
    *, user: User, statements: QuerySet | list[int] | None = None
) -> set[int]:
    """Statements whose F1, ground truth and other codings the user may not see yet, because
    they code it as a second coder, whose agreement must be independent:

    - statements of the blind sample they have not submitted. Auditors are sealed from the
      moment the mark exists; admins only while they code it themselves (an admin reviewing is
      not a coder);
    - statements they are coding (a draft never submitted) that someone else has already coded
      (submitted or approved).
    """
    submitted = submitted_statement_ids(user, statements)
    marked = BlindReview.objects.exclude(statement_id__in=submitted)
    drafts = Feedback.objects.filter(auditor=user, status=Feedback.Status.DRAFT).exclude(
        statement_id__in=submitted
    )
    others_coded = Feedback.objects.filter(
        statement_id=OuterRef("statement_id"),
        status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
    ).exclude(auditor=user)
    second = drafts.filter(Exists(others_coded))
    if statements is not None:
        marked = marked.filter(statement__in=statements)
        second = second.filter(statement__in=statements)
    if is_admin(user):
        marked = marked.filter(statement__feedback__auditor=user)
    return set(marked.values_list("statement_id", flat=True)) | set(
        second.values_list("statement_id", flat=True)
    )


def coding_sealed_statement_ids(*, user: User) -> set[int]:
    """Statements whose ground truth an auditor may not read through stored results: the
    blind-sealed ones and every statement they are still coding (a draft never submitted).
    Admins review everything: none."""
    if is_admin(user):
        return set()
    drafts = Feedback.objects.filter(auditor=user, status=Feedback.Status.DRAFT).exclude(
        statement_id__in=submitted_statement_ids(user)
    )
    return blind_sealed_statement_ids(user=user) | set(
        drafts.values_list("statement_id", flat=True)
    )
