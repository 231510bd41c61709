"""Each auditor's and each discussion's agreement, read from the stored inter-auditor result and
its per-statement pieces, and written on the team page's rows (``team_agreement_store``) each
time the family is computed: the team page reads them there without aggregating the pieces."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

from audit.derived.team_figures import team_agreement_store
from metrics.families.interauditor import symmetric_mean
from metrics.models import MetricResult, StatementPiece
from metrics.own_data.common import INTERAUDITOR_KEY
from metrics.registry import INTERAUDITOR


@dataclass(frozen=True)
class AuditorAgreement:
    """One auditor's (or discussion's) agreement from the stored result (None: not measured)."""

    with_ground_truth: float | None  # mean F1 of their coding against approved ground truth
    with_coders: float | None  # mean symmetric F1 with other auditors on shared statements
    status: str = "fresh"  # of the stored result: fresh / stale / failed


def auditor_agreement_read() -> dict[str, AuditorAgreement]:
    """Per auditor, from the stored inter-auditor result: mean F1 against the approved ground
    truth, and the mean symmetric F1 over the pairs they are part of (weighted by the number
    of statements compared)."""
    result = MetricResult.objects.filter(key=INTERAUDITOR_KEY).first()
    if result is None or not result.values:
        return {}
    values = result.values
    pooled: dict[str, list[float]] = {}
    for pair in values.get("pairs", []):
        point, n = (pair.get("symmetric_f1") or {}).get("point"), pair.get("n_comparisons", 0)
        if point is None or not n:
            continue
        for name in (pair["auditor_a"], pair["auditor_b"]):
            sums = pooled.setdefault(name, [0.0, 0.0])
            sums[0] += point * n
            sums[1] += n
    truth = {
        row["auditor"]: (row.get("mean_f1") or {}).get("point")
        for row in values.get("auditors", [])
    }
    return {
        name: AuditorAgreement(
            with_ground_truth=truth.get(name),
            with_coders=pooled[name][0] / pooled[name][1] if name in pooled else None,
            status=result.status,
        )
        for name in sorted(set(truth) | set(pooled))
    }


def discussion_agreement_read() -> dict[int, AuditorAgreement]:
    """Per discussion, from the inter-auditor family's stored per-statement pieces: the mean F1
    of its codings against the approved ground truth, and the mean symmetric F1 of its auditor
    pairs (each statement's pair counted once). As fresh as the stored result (its status)."""
    result = MetricResult.objects.filter(key=INTERAUDITOR_KEY).only("status").first()
    if result is None:
        return {}
    truth: dict[int, list[float]] = defaultdict(list)
    coders: dict[int, list[float]] = defaultdict(list)
    pieces = StatementPiece.objects.filter(family=INTERAUDITOR, run=None)
    for discussion_id, piece in pieces.values_list("statement__discussion_id", "piece").iterator(
        chunk_size=2000
    ):
        for _a, _b, f1_ab, f1_ba, *_rest in piece["pairs"]:
            mean = symmetric_mean(f1_ab, f1_ba)
            if mean is not None:
                coders[discussion_id].append(mean)
        truth[discussion_id].extend(f1 for _feedback, f1, *_rest in piece["truth"])
    return {
        discussion_id: AuditorAgreement(
            with_ground_truth=fmean(truth[discussion_id]) if truth[discussion_id] else None,
            with_coders=fmean(coders[discussion_id]) if coders[discussion_id] else None,
            status=result.status,
        )
        for discussion_id in sorted(set(truth) | set(coders))
    }


def team_agreement_write() -> None:
    """Store each discussion's and auditor's agreement on the team page's rows (read there
    without aggregating the pieces on every view), from the stored result and pieces."""

    def figures(found: dict) -> dict:
        return {key: (a.with_ground_truth, a.with_coders) for key, a in found.items()}

    team_agreement_store(
        discussions=figures(discussion_agreement_read()),
        auditors=figures(auditor_agreement_read()),
    )
