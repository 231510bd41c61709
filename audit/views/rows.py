"""What a statement card shows, built for a whole discussion in a bounded number of queries."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import DatabaseError

from audit.context_processors import unread_comments
from audit.display import (
    Labels,
    PayloadView,
    SubmitSummary,
    f1_rows,
    f1_tone,
    present,
    sarf_scores,
    submit_summary,
)
from audit.models import (
    BlindReview,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    Statement,
    TriageStatement,
    empty_pdp,
)
from audit.selectors.blind import blind_sealed_statement_ids
from audit.selectors.statement_f1 import StatementF1, run_statement_f1
from audit.selectors.threads import UnreadComments
from audit.services.feedback import (
    feedback_can_submit,
    feedback_opens_in_editor,
    feedback_unsubmit_refusals,
)
from evalsite.access import is_admin
from evalsite.http import HtmxHttpRequest
from evalsite.params import parse_id

log = logging.getLogger(__name__)


def choose_run(request: HtmxHttpRequest, runs: list[ExtractionRun]) -> ExtractionRun | None:
    """The run named in ?run= (GET or POST) if it has extractions here, else the latest."""
    wanted = parse_id(request.GET.get("run") or request.POST.get("run"), name="run")
    for run in runs:
        if run.pk == wanted:
            return run
    return runs[0] if runs else None


@dataclass
class F1View:
    status: str  # fresh / failed
    value: float | None
    tone: str
    rows: list = field(default_factory=list)
    sarf: list = field(default_factory=list)
    exact_match: bool | None = None
    totals: tuple[int, int, int] = (0, 0, 0)
    error: str = ""


@dataclass(frozen=True)
class NamedPayloads:
    """What a statement above the shown ones names things with."""

    ai: dict | None  # the run's extraction (None: not extracted)
    coded: bool  # the owner coded it
    coding: dict | None


@dataclass
class StatementRow:
    statement: Statement
    extraction: Extraction | None = None
    mine: Feedback | None = None
    others: list[Feedback] = field(default_factory=list)  # admins: everyone else's feedback
    has_approved: bool = False
    ai_hidden: bool = False  # blind review: the auditor codes without seeing the AI
    sealed: bool = False  # blind sample, not yet submitted: no F1, ground truth or other codings
    provisional: bool = False  # review triage accepted the run's extraction (not human GT)
    ai_view: PayloadView | None = None
    mine_view: PayloadView | None = None
    f1: F1View | None = None
    quick_approve: Feedback | None = None  # the one submission the "a" key approves
    can_edit: bool = False  # the viewer may open `mine` in the editor
    can_submit: bool = False
    can_unsubmit: bool = False  # its auditor may take the submit back (no reviewer opened it)
    submit_summary: SubmitSummary | None = None  # what the submit confirm says (can_submit)
    can_skip: bool = False  # an auditor may skip what they have not submitted
    lazy: bool = False  # rendered as a placeholder that loads itself when scrolled into view
    unread: int = 0  # comments in the statement's thread the viewer has not read
    presented: bool = False  # cards built (rows loaded only for names and payloads have none)
    # A statement above the shown ones is read for its payloads alone (no model instances:
    # building them was half of reading a long discussion's): the AI's, and the owner's coding.
    named: NamedPayloads | None = None

    @property
    def pk(self) -> int:
        return self.statement.pk

    @property
    def ai_payload(self) -> dict:
        if self.extraction:
            return self.extraction.pdp_deltas
        found = self.named.ai if self.named else None
        return found if found is not None else empty_pdp()

    @property
    def coded(self) -> bool:
        """The owner has a coding of the statement."""
        return self.mine is not None or (self.named is not None and self.named.coded)

    @property
    def coding_payload(self) -> dict | None:
        """The owner's coding (None without one)."""
        if self.mine is not None:
            return self.mine.edited_extraction
        return self.named.coding if self.named else None

    @property
    def pending_review(self) -> list[Feedback]:
        return [f for f in self.others if f.status == Feedback.Status.SUBMITTED]


@dataclass
class LazyBatch:
    """Consecutive placeholders of a window (and the expert lines between them), loaded by one
    request when any of them scrolls into view: one read of the names above serves them all."""

    rows: list[StatementRow]
    url: str  # the discussion page's window of just these statements (htmx)
    is_batch: bool = True

    @property
    def first_order(self) -> int:
        return self.rows[0].statement.order


def lazy_batches(
    rows: list[StatementRow], *, size: int, url: str
) -> list[StatementRow | LazyBatch]:
    """The rows, with each run of about `size` placeholders (and the expert lines between
    them) made one batch; `url`: the discussion page's, with its query (the run) if any."""
    n_lazy = sum(row.lazy for row in rows)
    # Each request reads the names above once: a short batch left over joins the others
    # (17 placeholders: 5, 5, 5, 2, not 4, 4, 4, 4, 1).
    size = -(-n_lazy // max(1, round(n_lazy / size))) if n_lazy else size
    items: list[StatementRow | LazyBatch] = []
    pending: list[StatementRow] = []  # a batch being gathered: it starts with a placeholder
    n_pending = 0  # placeholders in it

    def close() -> None:
        nonlocal n_pending
        ends = max((i for i, row in enumerate(pending) if row.lazy), default=-1) + 1
        if ends:
            first, last = pending[0].statement.order, pending[ends - 1].statement.order
            joiner = "&" if "?" in url else "?"
            window = f"{url}{joiner}from={first}&through={last}"
            items.append(LazyBatch(rows=pending[:ends], url=window))
        items.extend(pending[ends:])  # expert lines after the last placeholder
        pending.clear()
        n_pending = 0

    for row in rows:
        if row.lazy:
            pending.append(row)
            n_pending += 1
            if n_pending == size:
                close()
        elif pending and not row.statement.is_subject:
            pending.append(row)
        else:  # a card in full ends a batch
            close()
            items.append(row)
    close()
    return items


@dataclass
class DiscussionData:
    """Everything the cards need, loaded with one query per kind of row, for the statements
    read (up to the last one shown) only: never the rest of the discussion."""

    statements: list[Statement]
    extractions: dict[int, Extraction]  # of the shown statements
    feedback: list[Feedback]  # of the shown statements
    named_ai: dict[int, dict]  # the run's payloads of the statements above the shown ones
    named_coding: dict[int, dict]  # the owner's payloads of those
    approved_ids: set[int]
    blind_ids: set[int]
    sealed_ids: set[int]
    provisional_ids: set[int]
    run_id: int | None = None
    shown_from: int = 0  # statements before this order only name things

    def named(self, statement_id: int) -> NamedPayloads:
        """What a statement above the shown ones names things with."""
        return NamedPayloads(
            ai=self.named_ai.get(statement_id),
            coded=statement_id in self.named_coding,
            coding=self.named_coding.get(statement_id),
        )


def load_discussion(
    discussion: Discussion,
    user: User,
    run: ExtractionRun | None,
    *,
    upto_order: int | None = None,
    owner: User | None = None,
    shown_from: int = 0,
) -> DiscussionData:
    """The rows up to `upto_order`; statements before `shown_from` only name things (their
    payloads and blind marks are read), so what only a shown card says is read for the shown
    ones alone."""
    statements = discussion.statements.select_related("speaker").order_by("order")
    if upto_order is not None:
        statements = statements.filter(order__lte=upto_order)
    loaded = list(statements)
    # Every other read names these statements by id: a window near the top of a long
    # discussion reads its own rows, not the whole discussion's payloads.
    ids = [statement.pk for statement in loaded]
    shown = [statement.pk for statement in loaded if statement.order >= shown_from]
    naming = [statement.pk for statement in loaded if statement.order < shown_from]
    visible = Feedback.objects.visible_to(user)
    feedback = visible.filter(statement_id__in=shown)
    if owner is not None:
        feedback = feedback.filter(auditor=owner)
    # Above the shown statements only the owner's coding names things: its payload, read as
    # such (a long discussion's full rows cost more than its payloads).
    named_by = visible.filter(statement_id__in=naming, auditor=owner or user)
    approved = Feedback.objects.approved().filter(statement_id__in=shown)
    blind = BlindReview.objects.filter(statement_id__in=ids)
    shown_extractions = Extraction.objects.filter(statement_id__in=shown, run=run)
    named_extractions = Extraction.objects.filter(statement_id__in=naming, run=run)
    return DiscussionData(
        statements=loaded,
        extractions={e.statement_id: e for e in shown_extractions} if run else {},
        feedback=list(feedback.select_related("auditor").order_by("statement_id", "auditor_id")),
        named_ai=dict(named_extractions.values_list("statement_id", "pdp_deltas")) if run else {},
        named_coding=dict(named_by.values_list("statement_id", "edited_extraction")),
        approved_ids=set(approved.values_list("statement_id", flat=True)),
        blind_ids=set(blind.values_list("statement_id", flat=True)),
        sealed_ids=blind_sealed_statement_ids(user=user, statements=shown),
        provisional_ids=set(
            TriageStatement.objects.filter(statement_id__in=shown, run=run)
            .provisional()
            .values_list("statement_id", flat=True)
        )
        if run
        else set(),
        run_id=run.pk if run else None,
        shown_from=shown_from,
    )


def build_rows(
    data: DiscussionData,
    user: User,
    *,
    owner=None,
    full_cards: int | None = None,
    only_last: bool = False,
    first_order: int = 0,
    focus: int | None = None,
) -> list[StatementRow]:
    """One row per statement, cards labelled with the names known up to that statement.

    Subject statements after the first `full_cards` become lazy placeholders (no cards), but
    for `focus` (the statement a link points at: it is what the reader came to see);
    with `only_last`, earlier rows are loaded for their names and payloads only. Statements
    before `first_order` (a window further down) only feed the names and are not returned.
    """
    owner = owner or user
    by_statement: dict[int, list[Feedback]] = {}
    for feedback in data.feedback:
        by_statement.setdefault(feedback.statement_id, []).append(feedback)
    # The AI column names people as the AI did; the coding column as the owner coded them.
    labels, ai_labels, rows, subjects = Labels(), Labels(), [], 0
    for statement in data.statements:
        row = _row(statement, data, by_statement.get(statement.pk, []), owner, user)
        shown = statement.order >= first_order
        if statement.is_subject:
            subjects += shown
            row.lazy = full_cards is not None and subjects > full_cards and statement.pk != focus
            labels.feed(row.coding_payload if row.coded else _visible_ai(row))
            ai_labels.feed(_visible_ai(row))
            last = statement is data.statements[-1]
            if shown and not row.lazy and (last or not only_last):
                _present_row(row, labels, ai_labels)
        if shown:
            rows.append(row)
    _attach_unsubmit(rows, user)
    return rows


def _attach_unsubmit(rows: list[StatementRow], viewer: User) -> None:
    """Which of the viewer's own submissions they may take back, looked up for all at once."""
    mine = [row.mine for row in rows if row.mine is not None and row.mine.auditor_id == viewer.pk]
    submitted = [f for f in mine if f.status == Feedback.Status.SUBMITTED]
    if not submitted:
        return
    refusals = feedback_unsubmit_refusals(feedbacks=submitted, user=viewer)
    for row in rows:
        if row.mine is not None and row.mine.pk in refusals:
            row.can_unsubmit = not refusals[row.mine.pk]


def _row(statement, data: DiscussionData, feedback: list[Feedback], owner, viewer) -> StatementRow:
    admin = is_admin(viewer)
    if statement.order < data.shown_from:  # it only names things: its payloads are all it has
        ai_hidden = statement.pk in data.blind_ids and not admin
        return StatementRow(
            statement=statement, named=data.named(statement.pk), ai_hidden=ai_hidden
        )
    mine = next((f for f in feedback if f.auditor_id == owner.pk), None)
    sealed = statement.pk in data.sealed_ids
    others = [f for f in feedback if f.auditor_id != owner.pk] if admin and not sealed else []
    row = StatementRow(
        statement=statement,
        extraction=data.extractions.get(statement.pk),
        mine=mine,
        others=others,
        has_approved=statement.pk in data.approved_ids and not sealed,
        ai_hidden=statement.pk in data.blind_ids and not admin,
        sealed=sealed,
        provisional=statement.pk in data.provisional_ids,
    )
    if mine is not None:
        row.can_edit = feedback_opens_in_editor(feedback=mine, user=viewer)
        row.can_submit = feedback_can_submit(feedback=mine, user=viewer)
        if row.can_submit:
            row.submit_summary = _submit_summary(mine, row.extraction)
    row.can_skip = (
        not admin
        and owner.pk == viewer.pk
        and (mine is None or mine.status == Feedback.Status.DRAFT)
    )
    pending = row.pending_review
    # Replacing approved ground truth is confirmed on the review page, never by one key.
    if admin and len(pending) == 1 and not row.has_approved:
        row.quick_approve = pending[0]
    return row


def _submit_summary(feedback: Feedback, shown: Extraction | None) -> SubmitSummary:
    """The card's submit confirm: changes against the AI's extraction the coding started from
    (the one shown beside it, mostly)."""
    if feedback.source_extraction_id is None:
        ai = None
    elif shown is not None and shown.pk == feedback.source_extraction_id:
        ai = shown.pdp_deltas
    else:
        ai = Extraction.objects.only("pdp_deltas").get(pk=feedback.source_extraction_id).pdp_deltas
    return submit_summary(
        feedback_id=feedback.pk, ai=ai, coded=feedback.edited_extraction, problems=0
    )


def _visible_ai(row: StatementRow) -> dict | None:
    return None if row.ai_hidden else row.ai_payload


def _present_row(row: StatementRow, labels: Labels, ai_labels: Labels) -> None:
    row.presented = True
    row.ai_view = None if row.ai_hidden else present(row.ai_payload, ai_labels)
    if row.mine is not None:
        base = None if row.ai_hidden or row.mine.blind else row.ai_payload
        row.mine_view = present(row.mine.edited_extraction, labels, base=base)


def attach_f1(rows: list[StatementRow], data: DiscussionData, user, *, earlier: int = 0) -> None:
    """Score the statement F1 of the run (``audit.selectors.statement_f1``: the figures metrics
    stores) for statements with ground truth that the run extracted; statements before the
    order `earlier` (not among the rows) only name the items."""
    # Only the cards shown in full show an F1: they are the only ones scored, and without any
    # (a draft far down, no ground truth yet) nothing needs the names either.
    wanted = [
        row.pk for row in rows if row.has_approved and row.presented and row.extraction is not None
    ]
    if not wanted or not data.run_id:
        return
    # The approved codings the viewer may read, for naming their items (the F1 is scored on
    # the approved coding itself, which the selector reads).
    approved = {f.statement_id: f for f in data.feedback if f.status == Feedback.Status.APPROVED}
    labels = Labels()
    if earlier:
        for statement in data.statements:
            if statement.order < earlier and statement.is_subject:
                row = StatementRow(statement=statement, named=data.named(statement.pk))
                hidden = statement.pk in data.blind_ids and not is_admin(user)
                labels.feed(
                    row.coding_payload if row.coded else (None if hidden else row.ai_payload)
                )
    try:
        scored = run_statement_f1(
            run_id=data.run_id,
            statement_ids=wanted,
            extractions={  # read with the cards
                row.pk: (row.statement.discussion_id, row.extraction.pdp_deltas)
                for row in rows
                if row.pk in wanted and row.extraction is not None
            },
        )
        error = ""
    except DatabaseError:
        raise
    except Exception as exc:
        # A bug in the library shows on the cards instead of taking the page down.
        log.exception("scoring the statement F1 of run %s failed", data.run_id)
        scored, error = {}, f"{type(exc).__name__}: {exc}"
    for row in rows:
        if row.statement.is_subject:
            labels.feed(row.coding_payload if row.coded else _visible_ai(row))
        result = scored.get(row.pk)
        if row.pk in wanted and (result is not None or error):
            gt = approved.get(row.pk)
            row.f1 = f1_view(
                result,
                ai=None if row.ai_hidden else row.ai_payload,
                gt=gt.edited_extraction if gt else None,
                labels=labels,
                error=error,
            )


def f1_view(
    result: StatementF1 | None, *, ai: dict | None, gt: dict | None, labels, error: str = ""
) -> F1View:
    if result is None:
        return F1View(status="failed", value=None, tone="bad", error=error)
    values = result.values
    value = values.get("aggregate_micro_f1")
    view = F1View(status="fresh", value=value, tone=f1_tone(value))
    view.rows = f1_rows(values, ai or {}, gt, labels)
    view.sarf = sarf_scores(values)
    view.exact_match = values.get("exact_match")
    view.totals = tuple(sum(getattr(r, count) for r in view.rows) for count in ("tp", "fp", "fn"))
    return view


def statement_rows(
    request: HtmxHttpRequest, statement: Statement, run: ExtractionRun | None, *, owner=None
) -> list[StatementRow]:
    """The viewer's rows of the statement's discussion up to it, with only it presented (its
    card, the family so far, the review's context; the rows above are read for their payloads);
    `owner` codes it (default: the viewer)."""
    user = request.user
    data = load_discussion(
        statement.discussion, user, run, upto_order=statement.order, owner=owner,
        shown_from=statement.order,
    )  # fmt: skip
    rows = build_rows(data, user, owner=owner, only_last=True)
    attach_f1(rows, data, user)
    attach_unread(rows[-1:], unread_comments(request))
    return rows


def attach_unread(rows: list[StatementRow], unread: UnreadComments) -> None:
    """Each row's unread comments, from the page's (the header's badge counts the same)."""
    for row in rows:
        row.unread = unread.by_statement.get(row.statement.pk, 0)


def discussion_window(
    discussion: Discussion,
    user,
    run: ExtractionRun | None,
    *,
    first_order: int,
    last_order: int,
    unread: UnreadComments,
    full_cards: int | None = None,
    focus: int | None = None,
) -> list[StatementRow]:
    """The rows of the statements from `first_order` to `last_order` (a window of the page).
    Earlier statements are read for the names the cards use (their payloads), never shown."""
    data = load_discussion(discussion, user, run, upto_order=last_order, shown_from=first_order)
    rows = build_rows(data, user, full_cards=full_cards, first_order=first_order, focus=focus)
    attach_f1(rows, data, user, earlier=first_order)
    attach_unread(rows, unread)
    return rows


def ai_payloads(rows: list[StatementRow]) -> list[dict]:
    """Per subject statement, the AI delta the viewer may see (empty when hidden)."""
    return [_visible_ai(row) or empty_pdp() for row in rows if row.statement.is_subject]


def coded_payloads(rows: list[StatementRow]) -> list[dict]:
    """Per subject statement, the owner's coding where present, else the visible AI delta."""
    payloads = []
    for row in rows:
        if row.statement.is_subject:
            mine = row.coding_payload
            payloads.append(mine if mine is not None else (_visible_ai(row) or empty_pdp()))
    return payloads
