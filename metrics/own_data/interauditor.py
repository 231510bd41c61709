"""Inter-auditor agreement on evalsite's own data, and blind vs pre-filled coding.

A *coding* is an auditor's submitted or approved feedback on a subject statement (drafts are
work in progress; rejected coding is being redone), compared as its auditor first submitted it:
submitting lifts the seal (the F1, the other codings), so a change after it is no independent
coding (docs/review.md, "Final once submitted"). Figures:

- auditor pairs on the statements both coded: the symmetric mean of F1(a→b) and F1(b→a) (the
  extraction-F1 engine with one auditor as the reference), Cohen's kappa per SARF variable on
  the events the matching paired, and Lin's CCC of the per-statement entity counts;
- per auditor: F1 of their coding against the approved ground truth of the same statement,
  the approved feedback itself excluded ("who needs calibration");
- blind vs pre-filled: on statements coded both ways, F1 of the AI extraction against each
  coding; the difference pre-filled − blind (discussion-cluster bootstrap CI) estimates how
  much starting from the AI's extraction anchors auditors to it.

Stored as one MetricResult(interauditor, system), and per auditor and discussion on the team
page's rows (``team_agreement_write``). The review screen's "auditors disagree" marker is
audit's own (``audit.selectors.disagreement``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from django.db.models import Case, F, JSONField, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit.models import BlindReview, Extraction, Feedback, Speaker
from audit.selectors.adjudication import adjudication_counts
from evalsite.match_settings import match_settings
from metrics.cards import FRESH, UPDATING, card_state, whole_family_card_base, whole_family_row
from metrics.families.extraction import SARF_VARIABLES, StatementF1Metrics, calculate_statement_f1
from metrics.families.interauditor import (
    cluster_bootstrap_mean_diff,
    cohens_kappa,
    items_agreement,
    lins_ccc,
    symmetric_mean,
)
from metrics.families.payload.items import payload_items
from metrics.models import MetricResult
from metrics.own_data.common import INTERAUDITOR_KEY, SEED, Scope, n_resamples, result_compute
from metrics.own_data.pieces import pieces_refresh
from metrics.own_data.team_agreement import team_agreement_write
from metrics.registry import INTERAUDITOR

CODED = (Feedback.Status.SUBMITTED, Feedback.Status.APPROVED)
MAX_DISAGREEMENTS = 20


@dataclass(frozen=True)
class Coding:
    feedback_id: int
    statement_id: int
    discussion_id: int
    order: int
    auditor_id: int
    auditor: str
    payload: dict | None  # as first submitted; None when loaded without payloads
    approved: bool
    blind: bool
    source_extraction_id: int | None
    stamp: tuple
    truth: dict | None = None  # an approved coding's ground truth as it is now

    @property
    def prefilled(self) -> bool:
        return not self.blind and self.source_extraction_id is not None


def _codings(queryset: Any, *, payloads: bool = True, as_submitted: bool = True) -> list[Coding]:
    """Submitted and approved coding of subject statements, in (statement, auditor) order;
    without ``payloads`` the payload is None (what tells which statements' pieces changed).
    ``as_submitted``: each payload as first submitted (what agreement compares), else as it is
    now (what an adjudication merges)."""
    payload: Any = F("edited_extraction")
    if as_submitted:
        payload = Coalesce("submitted_extraction", "edited_extraction")
    truth = Case(
        When(status=Feedback.Status.APPROVED, then=F("edited_extraction")),
        default=None,
        output_field=JSONField(),
    )
    rows = (
        queryset.filter(status__in=CODED, statement__speaker__type=Speaker.Type.SUBJECT)
        .filter(adjudication__isnull=True)  # a merge of codings is not another coder
        .order_by("statement_id", "auditor_id")
        .annotate(payload=payload if payloads else F("statement_id"))
        .annotate(truth=truth if payloads else F("statement_id"))
        .values_list(
            "id",
            "statement_id",
            "statement__discussion_id",
            "statement__order",
            "auditor_id",
            "auditor__username",
            "payload",
            "truth",
            "status",
            "blind",
            "source_extraction_id",
            "version",
            "updated_at",
        )
        .iterator(chunk_size=2000)
    )
    return [
        Coding(
            pk,
            statement,
            discussion,
            order,
            auditor_id,
            auditor,
            payload if payloads else None,
            status == Feedback.Status.APPROVED,
            blind,
            source,
            (pk, version, updated, status, blind, source),
            truth if payloads else None,
        )
        for pk, statement, discussion, order, auditor_id, auditor, payload, truth, status, blind, source, version, updated in rows
    ]


def codings_load(*, payloads: bool = True) -> list[Coding]:
    return _codings(Feedback.objects.all(), payloads=payloads)


def _f1(ai: dict | None, gt: dict | None) -> StatementF1Metrics:
    return calculate_statement_f1(ai, gt, settings=match_settings())


def entity_count(payload: dict | None) -> int:
    return len(payload_items(payload))


def by_statement(codings: Iterable[Coding]) -> dict[int, list[Coding]]:
    grouped: dict[int, list[Coding]] = defaultdict(list)
    for coding in codings:
        grouped[coding.statement_id].append(coding)
    return dict(grouped)


# --- auditor pairs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PairComparison:
    """Two auditors' coding of one statement (a = the auditor with the smaller id)."""

    a: Coding
    b: Coding
    f1_ab: float  # a's coding scored with b's as the reference
    f1_ba: float
    sarf_pairs: dict[str, list[list[str]]]  # [a value, b value] per matched event
    count_a: int  # entities in a's coding
    count_b: int

    @property
    def symmetric_f1(self) -> float:
        mean = symmetric_mean(self.f1_ab, self.f1_ba)
        if mean is None:  # F1 scores are finite by construction; refuse to rank a broken one
            raise ValueError(f"non-finite F1 between codings {self.a.stamp} and {self.b.stamp}")
        return mean


def codings_compare(a: Coding, b: Coding) -> PairComparison:
    if b.auditor_id < a.auditor_id:
        a, b = b, a
    ab, ba = _f1(a.payload, b.payload), _f1(b.payload, a.payload)
    return PairComparison(
        a,
        b,
        ab.aggregate_micro_f1,
        ba.aggregate_micro_f1,
        ab.sarf_pairs,
        entity_count(a.payload),
        entity_count(b.payload),
    )


def statement_comparisons(codings: Sequence[Coding]) -> list[PairComparison]:
    """Every pair of distinct auditors' coding of one statement."""
    return [
        codings_compare(a, b) for a, b in combinations(codings, 2) if a.auditor_id != b.auditor_id
    ]


def _mean_ci(values_by_cluster: dict[Any, list[float]], resamples: int) -> dict[str, Any]:
    """Mean with a cluster-bootstrap 95% CI (the mean difference against a constant 0)."""
    pairs = {cluster: [(v, 0.0) for v in values] for cluster, values in values_by_cluster.items()}
    result = cluster_bootstrap_mean_diff(pairs, n_resamples=resamples, seed=SEED)
    return {"point": result["point"], "ci95": result["ci95"], "n": result["n_pairs"]}


def agreement_summary(comparisons: Sequence[PairComparison], *, resamples: int) -> dict[str, Any]:
    """Mean symmetric F1 (CI), kappa per SARF variable and CCC of entity counts."""
    f1_by_discussion: dict[int, list[float]] = defaultdict(list)
    for c in comparisons:
        f1_by_discussion[c.a.discussion_id].append(c.symmetric_f1)
    kappa = {}
    for variable in SARF_VARIABLES:
        labels = [pair for c in comparisons for pair in c.sarf_pairs.get(variable, [])]
        kappa[variable] = cohens_kappa([a for a, _ in labels], [b for _, b in labels])
    counts_a = [c.count_a for c in comparisons]
    counts_b = [c.count_b for c in comparisons]
    return {
        "n_statements": len({c.a.statement_id for c in comparisons}),
        "n_comparisons": len(comparisons),
        "n_discussions": len(f1_by_discussion),
        "symmetric_f1": _mean_ci(dict(f1_by_discussion), resamples),
        "n_matched_events": sum(len(c.sarf_pairs.get(SARF_VARIABLES[0], [])) for c in comparisons),
        "kappa": kappa,
        "ccc_entity_counts": lins_ccc(counts_a, counts_b),
        "n_disagreeing": sum(1 for c in comparisons if c.symmetric_f1 < 1.0),
    }


def pairwise_agreement(
    comparisons: Sequence[PairComparison], *, resamples: int
) -> list[dict[str, Any]]:
    """agreement_summary per auditor pair."""
    grouped: dict[tuple[int, int], list[PairComparison]] = defaultdict(list)
    for c in comparisons:
        grouped[(c.a.auditor_id, c.b.auditor_id)].append(c)
    return [
        {
            "auditor_a": group[0].a.auditor,
            "auditor_b": group[0].b.auditor,
            **agreement_summary(group, resamples=resamples),
        }
        for _, group in sorted(grouped.items())
    ]


def disagreements(comparisons: Sequence[PairComparison]) -> list[dict[str, Any]]:
    """Statements whose least-agreeing auditor pair has symmetric F1 < 1, worst first."""
    worst: dict[int, PairComparison] = {}
    auditors: dict[int, set[str]] = defaultdict(set)
    for c in comparisons:
        auditors[c.a.statement_id] |= {c.a.auditor, c.b.auditor}
        current = worst.get(c.a.statement_id)
        if current is None or c.symmetric_f1 < current.symmetric_f1:
            worst[c.a.statement_id] = c
    rows = [
        {
            "statement_id": statement_id,
            "discussion_id": c.a.discussion_id,
            "order": c.a.order,
            "f1": c.symmetric_f1,
            "auditors": sorted(auditors[statement_id]),
        }
        for statement_id, c in worst.items()
        if c.symmetric_f1 < 1.0
    ]
    return sorted(rows, key=lambda r: (r["f1"], r["statement_id"]))[:MAX_DISAGREEMENTS]


# --- auditors against the ground truth ---------------------------------------------------------


@dataclass(frozen=True)
class TruthScore:
    """One coding scored against the approved ground truth of its statement."""

    coding: Coding
    f1: float
    tp: int
    errors: int  # false positives + false negatives


def statement_truth_scores(codings: Sequence[Coding]) -> list[TruthScore]:
    """Each coding of one statement against its approved coding (none without one)."""
    truth = next((c for c in codings if c.approved), None)
    if truth is None:
        return []
    scores = []
    for coding in codings:
        if coding.feedback_id != truth.feedback_id:
            m = _f1(coding.payload, truth.truth)
            scores.append(
                TruthScore(
                    coding, m.aggregate_micro_f1, m.aggregate_tp, m.aggregate_fp + m.aggregate_fn
                )
            )
    return scores


def auditors_against_ground_truth(
    truth_scores: Iterable[TruthScore], *, resamples: int
) -> list[dict[str, Any]]:
    """Per auditor: F1 of their coding against the approved GT of the same statement (the
    approved coding itself excluded), lowest mean first."""
    scores: dict[int, list[TruthScore]] = defaultdict(list)
    for score in truth_scores:
        scores[score.coding.auditor_id].append(score)
    rows = []
    for scored in scores.values():
        by_discussion: dict[int, list[float]] = defaultdict(list)
        for score in scored:
            by_discussion[score.coding.discussion_id].append(score.f1)
        tp = sum(score.tp for score in scored)
        errors = sum(score.errors for score in scored)
        rows.append(
            {
                "auditor": scored[0].coding.auditor,
                "n_statements": len(scored),
                "mean_f1": _mean_ci(dict(by_discussion), resamples),
                "micro_f1": 1.0 if 2 * tp + errors == 0 else 2 * tp / (2 * tp + errors),
            }
        )
    return sorted(rows, key=lambda r: (r["mean_f1"]["point"], r["auditor"]))


# --- blind vs pre-filled -----------------------------------------------------------------------


def _blind_statements(grouped: dict[int, list[Coding]]) -> dict[int, list[Coding]]:
    return {
        statement_id: codings
        for statement_id, codings in grouped.items()
        if any(c.blind for c in codings) and any(c.prefilled for c in codings)
    }


def ai_payloads_load(grouped: dict[int, list[Coding]]) -> dict[int, tuple[int, Any, dict]]:
    """The AI extraction each statement's pre-filled coding started from (or, if that one is
    gone, the statement's latest extraction): statement id -> (extraction id, updated, payload)."""
    wanted = {
        statement_id: next(c.source_extraction_id for c in codings if c.prefilled)
        for statement_id, codings in grouped.items()
    }
    rows = Extraction.objects.filter(statement_id__in=list(wanted)).order_by(
        "statement_id", "-run__created_at", "-run_id"
    )
    found: dict[int, tuple[int, Any, dict]] = {}
    for pk, statement_id, updated, payload in rows.values_list(
        "id", "statement_id", "updated_at", "pdp_deltas"
    ):
        if pk == wanted[statement_id] or statement_id not in found:
            found[statement_id] = (pk, updated, payload)
    return found


def blind_pair(codings: Sequence[Coding], ai_payload: dict) -> tuple[float, float]:
    """One statement coded both ways: mean F1 of the AI extraction against its pre-filled
    codings and against its blind ones."""
    prefilled = [_f1(ai_payload, c.payload).aggregate_micro_f1 for c in codings if c.prefilled]
    blind = [_f1(ai_payload, c.payload).aggregate_micro_f1 for c in codings if c.blind]
    return (math.fsum(prefilled) / len(prefilled), math.fsum(blind) / len(blind))


def blind_vs_prefilled(
    pairs_by_statement: dict[int, tuple[int, tuple[float, float]]], *, resamples: int
) -> dict[str, Any]:
    """Agreement with the AI (F1 of the AI extraction against the coding), pre-filled vs blind,
    on the statements coded both ways (statement id -> (discussion id, blind_pair));
    difference = pre-filled − blind."""
    pairs_by_discussion: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for _, (discussion_id, pair) in sorted(pairs_by_statement.items()):
        pairs_by_discussion[discussion_id].append(tuple(pair))  # type: ignore[arg-type]
    pairs = [pair for rows in pairs_by_discussion.values() for pair in rows]
    clusters: dict[int, list[tuple[float, float]]] = dict(pairs_by_discussion)
    difference = cluster_bootstrap_mean_diff(clusters, n_resamples=resamples, seed=SEED)
    return {
        "n_statements": len(pairs),
        "n_discussions": len(pairs_by_discussion),
        "prefilled_mean_f1": math.fsum(p for p, _ in pairs) / len(pairs) if pairs else None,
        "blind_mean_f1": math.fsum(b for _, b in pairs) / len(pairs) if pairs else None,
        "difference": difference,
    }


# --- the system result -------------------------------------------------------------------------


def _compared(codings: Sequence[Coding]) -> bool:
    """A statement contributes a piece when two auditors coded it or one coding is to be
    judged against an approved one."""
    return len(codings) > 1


def agreement_piece(codings: Sequence[Coding], ai: tuple[int, Any, dict] | None) -> dict[str, Any]:
    """What one statement contributes (``metrics.own_data.pieces``): its auditor pairs'
    F1 both ways, matched SARF labels and entity counts; each coding's F1 against the
    approved one; and, coded blind and pre-filled, the pair of mean F1 against the AI."""
    return {
        "pairs": [
            [c.a.feedback_id, c.b.feedback_id, c.f1_ab, c.f1_ba, c.sarf_pairs, c.count_a, c.count_b]
            for c in statement_comparisons(codings)
        ],
        "truth": [
            [s.coding.feedback_id, s.f1, s.tp, s.errors] for s in statement_truth_scores(codings)
        ],
        "blind": list(blind_pair(codings, ai[2])) if ai is not None else None,
    }


def agreement_pieces(
    grouped: dict[int, list[Coding]], ai: dict[int, tuple[int, Any, dict]], *, force: bool = False
) -> dict[int, dict]:
    """The statements' pieces: stored ones whose codings are unchanged, the others computed."""
    compared = {s: codings for s, codings in grouped.items() if _compared(codings)}
    stamps = {
        s: [[c.stamp for c in codings], list(ai[s][:2]) if s in ai else None]
        for s, codings in compared.items()
    }

    def compute(statement_ids: list[int]) -> dict[int, dict]:
        found = by_statement(_codings(Feedback.objects.filter(statement_id__in=statement_ids)))
        return {
            s: agreement_piece(codings, ai.get(s))
            for s, codings in found.items()
            if _compared(codings)
        }

    return pieces_refresh(
        family=INTERAUDITOR, run_id=None, stamps=stamps, compute=compute, force=force
    )


def interauditor_values(
    codings: Sequence[Coding], pieces: dict[int, dict], *, resamples: int
) -> dict[str, Any]:
    """The system figures from the codings (without payloads) and the statements' pieces."""
    grouped = by_statement(codings)
    by_id = {c.feedback_id: c for c in codings}
    comparisons, truth_scores, blind = [], [], {}
    for statement_id, piece in pieces.items():
        for a, b, f1_ab, f1_ba, sarf_pairs, count_a, count_b in piece["pairs"]:
            comparisons.append(
                PairComparison(by_id[a], by_id[b], f1_ab, f1_ba, sarf_pairs, count_a, count_b)
            )
        for feedback_id, f1, tp, errors in piece["truth"]:
            truth_scores.append(TruthScore(by_id[feedback_id], f1, tp, errors))
        if piece["blind"] is not None:
            blind[statement_id] = (grouped[statement_id][0].discussion_id, piece["blind"])
    return {
        "n_codings": len(codings),
        "n_statements": len(grouped),
        "n_auditors": len({c.auditor_id for c in codings}),
        "overall": agreement_summary(comparisons, resamples=resamples),
        "pairs": pairwise_agreement(comparisons, resamples=resamples),
        "auditors": auditors_against_ground_truth(truth_scores, resamples=resamples),
        "blind": {
            **blind_vs_prefilled(blind, resamples=resamples),
            "n_marked": BlindReview.objects.count(),
            "n_blind_codings": sum(1 for c in codings if c.blind),
        },
        "disagreements": disagreements(comparisons),
        "adjudication": items_agreement(adjudication_counts()),
        "n_resamples": resamples,
    }


def interauditor_result_compute(*, force: bool = False) -> MetricResult:
    """Inter-auditor agreement over all coding, stored as MetricResult(interauditor, system).

    Derived from per-statement pieces: only the statements whose codings changed are compared
    again; ``force`` (the full recompute) compares every statement again."""
    read_at = timezone.now()
    codings = codings_load(payloads=False)
    grouped = by_statement(codings)
    ai = ai_payloads_load(_blind_statements(grouped))
    inputs = {
        "codings": [c.stamp for c in codings],
        "ai": sorted([s, pk, updated] for s, (pk, updated, _) in ai.items()),
        "marked": BlindReview.objects.count(),
        "adjudicated": adjudication_counts(),
    }
    resamples = n_resamples()

    def compute() -> dict[str, Any]:
        pieces = agreement_pieces(grouped, ai, force=force)
        return interauditor_values(codings, pieces, resamples=resamples)

    result = result_compute(
        family=INTERAUDITOR,
        key=INTERAUDITOR_KEY,
        scope=Scope.SYSTEM,
        run_id=None,
        inputs=inputs,
        compute=compute,
        read_at=read_at,
        force=force,
    )
    team_agreement_write()
    return result


# --- the card (stored row only) ----------------------------------------------------------------


def interauditor_card() -> dict[str, Any]:
    """The inter-auditor card, admins only (templates/metrics/cards/_interauditor.html)."""
    row = whole_family_row(INTERAUDITOR)
    values = (row.values if row else None) or {}
    overall = values.get("overall") or {}
    blind = values.get("blind") or {}
    has_data = bool(
        overall.get("n_comparisons") or values.get("auditors") or blind.get("n_statements")
    )
    state = card_state(row, has_data=has_data)
    return {
        **whole_family_card_base(INTERAUDITOR, row, state),
        # Updating shows the last figures only when there were codings to compare.
        "has_figures": state == FRESH or (state == UPDATING and bool(values.get("n_codings"))),
        "values": values,
        "overall": overall,
        "pairs": values.get("pairs") or [],
        "auditors": values.get("auditors") or [],
        "blind": blind,
        "disagreements": values.get("disagreements") or [],
        "adjudication": values.get("adjudication") or {},
    }
