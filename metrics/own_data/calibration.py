"""Item-level calibration on evalsite's own data: are the AI's confidences probabilities?

Items are the AI's people, events and pair bonds in a run's extractions of statements with
approved ground truth. An item is *correct* when the extraction-F1 matching paired it with a
ground-truth item (``StatementF1Metrics.<type>_matches``); its probability is its
``confidence``. Items without a confidence (or without an id to match by) are skipped and
counted (``n_skipped``): there is no probability to judge.

Figures per run: ECE (10 equal-width bins), NLL, the reliability diagram and a per-type
breakdown; then temperature scaling and isotonic regression fitted on the training share of
the discussions and evaluated on the held-out share. Discussions (not items) are split: the
ceil(30%) of them that come first when ordered by a salted hash of their id are held out —
deterministic, and items of one discussion never sit on both sides.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils import timezone

from audit.models import ExtractionRun
from metrics.cards import card_state, whole_family_card_base, whole_family_row
from metrics.families.calibration import (
    TemperatureScalingCalibrator,
    compute_binary_nll,
    compute_ece,
    ece_bins,
    fit_isotonic_calibrator,
)
from metrics.families.extraction import StatementF1Metrics
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.plots import Svg, line_plot
from metrics.models import MetricResult
from metrics.own_data.common import (
    Scope,
    StatementPair,
    ground_truth_load,
    pair_score,
    result_compute,
    run_pairs_load,
    run_pairs_with_payloads,
)
from metrics.own_data.pieces import pieces_refresh
from metrics.own_data.review_savings import item_confidence
from metrics.registry import CALIBRATION
from metrics.results import run_key

N_BINS = 10
HELDOUT_PERCENT = 30
SPLIT_SALT = "evalsite-calibration-split"
# Below this many training items (or with one outcome only) nothing is fitted.
MIN_FIT_ITEMS = 20


@dataclass(frozen=True)
class CalibrationItem:
    discussion_id: int
    statement_id: int
    entity: str  # people / events / pair_bonds
    probability: float
    correct: bool


# --- items (pure) ------------------------------------------------------------------------------


def statement_items(
    ai: dict | None, metrics: StatementF1Metrics, *, discussion_id: int, statement_id: int
) -> tuple[list[CalibrationItem], int]:
    """The AI items of one statement with their outcome, and how many were skipped."""
    items, skipped = [], 0
    for entity in ENTITY_KINDS:
        matched = Counter(row["ai_id"] for row in getattr(metrics, f"{entity}_matches"))
        for item in (ai or {}).get(entity) or []:
            if not isinstance(item, dict):
                continue
            probability, ident = item_confidence(item), item.get("id")
            if probability is None or ident is None:
                skipped += 1
                continue
            correct = matched[ident] > 0
            if correct:
                matched[ident] -= 1  # a duplicated id is matched at most as often as it paired
            items.append(CalibrationItem(discussion_id, statement_id, entity, probability, correct))
    return items, skipped


def split_key(discussion_id: int) -> str:
    """A discussion's place in the split order: sha256 of a salted id (stable, unguessable)."""
    return hashlib.sha256(f"{SPLIT_SALT}:{discussion_id}".encode()).hexdigest()


def heldout_discussions(discussion_ids: Iterable[int]) -> set[int]:
    """The ceil(30%) of the discussions first in hash order — at least one when there are two
    or more, so a small data set is still judged on discussions it was not fitted on."""
    ids = sorted(set(discussion_ids), key=split_key)
    if len(ids) < 2:
        return set()
    return set(ids[: math.ceil(len(ids) * HELDOUT_PERCENT / 100)])


def heldout_split(
    items: Sequence[CalibrationItem],
) -> tuple[list[CalibrationItem], list[CalibrationItem]]:
    """(training items, held-out items), whole discussions on one side."""
    heldout = heldout_discussions(i.discussion_id for i in items)
    train = [i for i in items if i.discussion_id not in heldout]
    test = [i for i in items if i.discussion_id in heldout]
    return train, test


def reliability_bins(
    p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *, n_bins: int = N_BINS
) -> list:
    """The reliability diagram: per non-empty equal-width bin (as in compute_ece), its count,
    mean confidence and accuracy."""
    p_arr, y_arr = np.clip(np.asarray(p, dtype=float), 0.0, 1.0), np.asarray(y, dtype=float)
    bin_of = ece_bins(p_arr, n_bins)
    bins = []
    for index in range(n_bins):
        inside = bin_of == index
        if inside.any():
            bins.append(
                {
                    "lo": index / n_bins,
                    "hi": (index + 1) / n_bins,
                    "count": int(inside.sum()),
                    "mean_confidence": float(p_arr[inside].mean()),
                    "accuracy": float(y_arr[inside].mean()),
                }
            )
    return bins


def calibration_figures(
    p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> dict[str, Any]:
    """n, accuracy, mean confidence, ECE, NLL and the reliability bins of (p, y)."""
    if len(p) == 0:
        return {"n": 0}
    return {
        "n": len(p),
        "accuracy": float(np.mean(y)),
        "mean_confidence": float(np.mean(p)),
        "ece": compute_ece(p, y, n_bins=N_BINS),
        "nll": compute_binary_nll(p, y),
        "reliability": reliability_bins(p, y),
    }


@dataclass(frozen=True)
class ItemArrays:
    """A run's calibration items as columns, in statement order: discussion id, entity kind
    (its index in ENTITY_KINDS), probability and outcome (1.0 matched, 0.0 not)."""

    discussion: np.ndarray
    entity: np.ndarray
    p: np.ndarray
    y: np.ndarray

    def __len__(self) -> int:
        return len(self.p)

    def where(self, mask: np.ndarray) -> ItemArrays:
        return ItemArrays(self.discussion[mask], self.entity[mask], self.p[mask], self.y[mask])


def _why_not_fitted(train: ItemArrays, test: ItemArrays) -> str:
    if len(train) < MIN_FIT_ITEMS:
        return f"only {len(train)} training items (at least {MIN_FIT_ITEMS} needed)"
    if np.unique(train.y).size < 2:
        return "the training items are all correct or all wrong"
    if not len(test):
        return "no held-out discussion has items"
    return ""


def heldout_calibration(items: ItemArrays) -> dict[str, Any]:
    """Temperature scaling and isotonic regression fitted on the training discussions,
    judged on the held-out ones (raw figures of the same held-out items alongside)."""
    heldout = heldout_discussions(items.discussion.tolist())
    in_test = np.isin(items.discussion, np.fromiter(heldout, dtype=np.int64, count=len(heldout)))
    train, test = items.where(~in_test), items.where(in_test)
    summary: dict[str, Any] = {
        "heldout_percent": HELDOUT_PERCENT,
        "n_train_items": len(train),
        "n_test_items": len(test),
        "n_train_discussions": int(np.unique(train.discussion).size),
        "n_test_discussions": int(np.unique(test.discussion).size),
    }
    reason = _why_not_fitted(train, test)
    if reason:
        return {**summary, "fitted": False, "reason": reason}
    (p_train, y_train), (p_test, y_test) = (train.p, train.y), (test.p, test.y)
    temperature = TemperatureScalingCalibrator.fit(p_train, y_train)
    isotonic = fit_isotonic_calibrator(p_train, y_train)
    return {
        **summary,
        "fitted": True,
        "temperature": temperature.temperature,
        "raw": calibration_figures(p_test, y_test),
        "temperature_scaled": calibration_figures(temperature.apply(p_test), y_test),
        "isotonic": calibration_figures(isotonic.predict_proba(p_test), y_test),
        # In-sample figures, to show how optimistic judging on the fitting data would be.
        "train_ece": {
            "raw": compute_ece(p_train, y_train, n_bins=N_BINS),
            "temperature_scaled": compute_ece(temperature.apply(p_train), y_train, n_bins=N_BINS),
            "isotonic": compute_ece(isotonic.predict_proba(p_train), y_train, n_bins=N_BINS),
        },
    }


def calibration_values(items: ItemArrays, *, skipped: int) -> dict[str, Any]:
    by_type = {}
    for index, entity in enumerate(ENTITY_KINDS):
        subset = items.where(items.entity == index)
        figures = calibration_figures(subset.p, subset.y)
        figures.pop("reliability", None)
        by_type[entity] = figures
    return {
        "n_items": len(items),
        "n_skipped": skipped,
        "n_bins": N_BINS,
        "all": calibration_figures(items.p, items.y),
        "by_type": by_type,
        "heldout": heldout_calibration(items)
        if len(items)
        else {"fitted": False, "reason": "no items"},
    }


# --- per-statement pieces ------------------------------------------------------------------------


def calibration_piece(pair: StatementPair) -> dict[str, Any]:
    """What a statement contributes (``metrics.own_data.pieces``): its items as parallel
    lists (entity kind index, probability, matched 0/1) and how many were skipped."""
    found, skipped = statement_items(
        pair.ai, pair_score(pair), discussion_id=pair.discussion_id, statement_id=pair.statement_id
    )
    return {
        "discussion_id": pair.discussion_id,
        "entity": [ENTITY_KINDS.index(i.entity) for i in found],
        "probability": [i.probability for i in found],
        "matched": [1 if i.correct else 0 for i in found],
        "skipped": skipped,
    }


def calibration_pieces(
    run_id: int, pairs: Sequence[StatementPair], *, force: bool = False
) -> dict[int, dict]:
    """The run's pieces: stored ones whose inputs are unchanged, the others computed."""

    def compute(statement_ids: list[int]) -> dict[int, dict]:
        found = run_pairs_with_payloads(run_id, statement_ids)
        return {pair.statement_id: calibration_piece(pair) for pair in found}

    return pieces_refresh(
        family=CALIBRATION,
        run_id=run_id,
        stamps={p.statement_id: p.stamp for p in pairs},
        compute=compute,
        force=force,
    )


def pieces_arrays(pieces: dict[int, dict]) -> tuple[ItemArrays, int]:
    """The run's items (statement order) and how many were skipped, from its pieces."""
    discussion: list[int] = []
    entity: list[int] = []
    probability: list[float] = []
    matched: list[int] = []
    for piece in pieces.values():
        discussion.extend([piece["discussion_id"]] * len(piece["entity"]))
        entity.extend(piece["entity"])
        probability.extend(piece["probability"])
        matched.extend(piece["matched"])
    items = ItemArrays(
        np.array(discussion, dtype=np.int64),
        np.array(entity, dtype=np.int64),
        np.array(probability, dtype=float),
        np.array(matched, dtype=float),
    )
    return items, sum(piece["skipped"] for piece in pieces.values())


# --- the run result ----------------------------------------------------------------------------


def calibration_result_compute(*, run_id: int, force: bool = False) -> MetricResult | None:
    """The run's calibration figures, stored as MetricResult(calibration, run).

    Derived from per-statement pieces: only the statements whose inputs changed are matched
    again; ``force`` (the full recompute) matches every statement of the run again."""
    if not ExtractionRun.objects.filter(pk=run_id).exists():
        return None
    read_at = timezone.now()
    pairs = run_pairs_load(run_id, ground_truth_load(payloads=False), payloads=False)

    def compute() -> dict[str, Any]:
        pieces = calibration_pieces(run_id, pairs, force=force)
        items, skipped = pieces_arrays(pieces)
        return {
            **calibration_values(items, skipped=skipped),
            "n_statements": len(pieces),
            "n_discussions": len({piece["discussion_id"] for piece in pieces.values()}),
        }

    return result_compute(
        family=CALIBRATION,
        key=run_key(CALIBRATION, run_id),
        scope=Scope.RUN,
        run_id=run_id,
        inputs=[p.stamp for p in pairs],
        compute=compute,
        read_at=read_at,
        force=force,
    )


# --- the card (stored row only) ----------------------------------------------------------------


def reliability_svg(bins: list[dict], *, title: str = "Reliability diagram") -> Svg:
    """Accuracy against mean confidence per bin, with the diagonal of perfect calibration."""
    observed = [(b["mean_confidence"], b["accuracy"]) for b in bins]
    return line_plot(
        [
            {"label": "perfect calibration", "points": [(0.0, 0.0), (1.0, 1.0)]},
            {"label": "AI items (per confidence bin)", "points": observed},
        ],
        "confidence",
        "share matched to ground truth",
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        markers=True,
        title=title,
    )


def calibration_card(run: ExtractionRun) -> dict[str, Any]:
    """The run's calibration card (templates/metrics/cards/_calibration.html)."""
    row = whole_family_row(CALIBRATION, run)
    values = (row.values if row else None) or {}
    state = card_state(row, has_data=bool(values.get("n_items")))
    overall = values.get("all") or {}
    return {
        **whole_family_card_base(CALIBRATION, row, state, run),
        "has_figures": bool(overall.get("n")),
        "run": run,
        "values": values,
        "all": overall,
        "heldout": values.get("heldout") or {},
        "by_type": values.get("by_type") or {},
        "plot": reliability_svg(overall["reliability"]) if overall.get("n") else "",
    }
