"""Review triage with a guarantee: which statements may skip human review, with a proven bound
on the share of unacceptable extractions let through.

Three pieces, all plain data in and out:

- **A statement confidence score** (``statement_signals``, ``statement_score``): from the
  item confidences (weakest item, mean, and the count-weighted product, which falls with every
  extra item), the number of items, and the agreement between two extraction runs of the same
  statement when there are two (a consistency signal). ``calibrated_scores`` turns the signals
  into P(acceptable) with a logistic calibrator fitted, for each discussion, on the approved
  statements of *other* discussions (cross-fitting by discussion).
- **A loss per approved statement** (``statement_loss``): 1 when the extraction is not
  acceptable, i.e. its aggregate F1 against the ground truth is below the chosen level
  (default 1.0: every item right).
- **``risk_controlled_threshold(scores, losses, *, alpha, delta, clusters)``**: Learn then Test
  (Angelopoulos, Bates, Candès, Jordan, Lei 2021). Every distinct score is a candidate
  threshold; each threshold's null hypothesis "the accepted set's risk exceeds alpha" gets a
  finite-sample p-value, and fixed-sequence testing walks from the most confident threshold
  down, stopping at the first one it cannot reject. The lowest rejected threshold is returned:
  with probability >= 1 - delta over the calibration data, its risk is <= alpha.

**The unit of independence.** Statements of one discussion share a speaker, a family and an AI
context, so their errors are not independent. With ``clusters`` (the discussion of each
statement) the test is run on discussions: a discussion's loss at threshold t is the share of
its accepted statements that are unacceptable (discussions with none accepted do not count at
t), and the risk controlled is the expected share of wrong statements among a new discussion's
auto-accepted ones. Those per-discussion shares lie in [0, 1] but are not 0/1, so the exact
binomial tail of Clopper-Pearson does not apply; the p-value is Hoeffding-Bentkus (the smaller
of Hoeffding's bound and e times the binomial tail), valid for any losses in [0, 1]. Without
clusters (every statement independent) losses must be 0/1 and the p-value is the exact
Clopper-Pearson binomial tail. The guarantee needs discussions exchangeable with future ones
(the calibration discussions a random draw of the same stream); it says nothing about a
population that drifts, which is what the QA monitor (``risk_monitor``) watches for.

**The monitor.** ``risk_monitor(losses, *, alpha, delta)`` is a sequential test of "the risk of
what triage accepts is <= alpha" on the QA sample's losses in the order they were coded: a
betting e-process (a mixture of three bets ``1 + lambda (loss - alpha)``), a nonnegative
supermartingale while the risk is <= alpha, so by Ville's inequality it reaches 1/delta with
probability <= delta; reaching it means the evidence says the risk exceeds alpha. It may be
looked at after every item (anytime-valid).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metrics.families.calibration import fit_logistic_calibrator
from metrics.families.extraction import MatchSettings, calculate_statement_f1
from metrics.families.payload.items import payload_items

DEFAULT_ACCEPTABLE_F1 = 1.0
EMPTY_CONFIDENCE = 1.0  # "nothing to extract": nothing in it is uncertain (as review savings)
UNSCORED_CONFIDENCE = 0.0  # items without any confidence: never accepted ahead of a scored one
SCORE_KINDS = ("min", "mean", "weighted")
DEFAULT_SCORE_KIND = "min"
MONITOR_BETS = (0.1, 0.25, 0.5)  # lambda * alpha of each bet of the monitor's mixture
MAX_CURVE_POINTS = 200
_EPS = 1e-12


# --- the statement score -------------------------------------------------------------------------


@dataclass(frozen=True)
class StatementSignals:
    """What the run says about one statement: its item confidences' summaries, the number of
    items, and the agreement (F1) with a second run's extraction when there is one."""

    min: float
    mean: float
    weighted: float  # product of the item confidences: each extra item may be wrong
    n_items: int
    agreement: float | None = None

    def features(self) -> list[float]:
        """The calibrator's features (agreement read as 1.0 when there is no second run)."""
        agreement = 1.0 if self.agreement is None else self.agreement
        return [self.min, self.mean, self.weighted, math.log1p(self.n_items), agreement]


def _confidence(item: dict) -> float | None:
    value = item.get("confidence")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return min(1.0, max(0.0, float(value)))


def run_agreement(
    payload: dict | None, other: dict | None, *, settings: MatchSettings | None = None
) -> float:
    """How much two runs' extractions of one statement agree: the aggregate F1 of one against
    the other (symmetric; 1.0 when both are empty)."""
    f1 = calculate_statement_f1(payload, other, settings=settings).aggregate_micro_f1
    return 1.0 if f1 is None else float(f1)


def statement_signals(
    payload: dict | None,
    *,
    other: dict | None = None,
    settings: MatchSettings | None = None,
) -> StatementSignals:
    """The signals of one extraction; ``other`` is a second run's extraction of the statement."""
    items = payload_items(payload)
    agreement = None if other is None else run_agreement(payload, other, settings=settings)
    if not items:
        return StatementSignals(EMPTY_CONFIDENCE, EMPTY_CONFIDENCE, EMPTY_CONFIDENCE, 0, agreement)
    values = [c for c in (_confidence(item) for item in items) if c is not None]
    if not values:
        c = UNSCORED_CONFIDENCE
        return StatementSignals(c, c, c, len(items), agreement)
    mean = math.fsum(values) / len(values)
    return StatementSignals(min(values), mean, math.prod(values), len(items), agreement)


def statement_score(signals: StatementSignals, *, kind: str = DEFAULT_SCORE_KIND) -> float:
    """One confidence per statement without fitting anything: the chosen summary of the item
    confidences, times the agreement with the second run when there is one (two runs that
    disagree cannot both be right)."""
    if kind not in SCORE_KINDS:
        raise ValueError(f"score kind must be one of {SCORE_KINDS}, got {kind!r}")
    base = float(getattr(signals, kind))
    return base if signals.agreement is None else base * signals.agreement


def calibrated_scores(
    signals: Sequence[StatementSignals],
    acceptable: Sequence[bool | None],
    groups: Sequence[Hashable],
) -> list[float]:
    """P(acceptable) for every statement from a logistic calibrator over the signals.

    A statement's calibrator is fitted on the approved statements (``acceptable`` not None) of
    the *other* discussions (``groups``), so no approved statement is scored by a model that saw
    it. Where the other discussions hold fewer than two classes, the raw score stands in.
    """
    if not len(signals) == len(acceptable) == len(groups):
        raise ValueError("signals, acceptable and groups must have the same length")
    x = np.array([s.features() for s in signals], dtype=float).reshape(len(signals), 5)
    labelled = np.array([a is not None for a in acceptable], dtype=bool)
    y = np.array([bool(a) for a in acceptable], dtype=float)
    index_of: dict[Hashable, int] = {}
    group_of = np.array([index_of.setdefault(g, len(index_of)) for g in groups], dtype=int)
    scores = [statement_score(s) for s in signals]
    for group in set(group_of.tolist()):
        train = labelled & (group_of != group)
        if len(set(y[train].tolist())) < 2:
            continue
        model = fit_logistic_calibrator(x[train], y[train])
        here = np.flatnonzero(group_of == group)
        for index, p in zip(here, model.predict_proba(x[here]), strict=True):
            scores[index] = float(p)
    return scores


# --- the loss ------------------------------------------------------------------------------------


def statement_loss(f1: float | None, *, acceptable_f1: float = DEFAULT_ACCEPTABLE_F1) -> int:
    """1 when the extraction is not acceptable: its aggregate F1 is below the chosen level
    (no F1, i.e. nothing to compare on either side, counts as a perfect 1.0)."""
    if not 0.0 < acceptable_f1 <= 1.0:
        raise ValueError(f"acceptable_f1 must be in (0, 1], got {acceptable_f1}")
    value = 1.0 if f1 is None else f1
    return 0 if value >= acceptable_f1 - _EPS else 1


# --- p-values and bounds ---------------------------------------------------------------------------


def _kl_bernoulli(a: float, b: float) -> float:
    """KL(Bernoulli(a) || Bernoulli(b)), the exponent of Hoeffding's inequality (a <= b)."""
    left = 0.0 if a <= 0 else a * math.log(a / b)
    right = 0.0 if a >= 1 else (1 - a) * math.log((1 - a) / (1 - b))
    return left + right


def _binom_cdf(k: Any, n: Any, p: float) -> Any:
    # Imported here: every process of the site would pay scipy.stats's import at start-up.
    from scipy.stats import binom

    return binom.cdf(k, n, p)


def clopper_pearson_pvalue(n_wrong: int, n: int, alpha: float) -> float:
    """P(Binomial(n, alpha) <= n_wrong): the exact p-value of "risk > alpha" for 0/1 losses."""
    if n == 0:
        return 1.0
    return float(min(1.0, _binom_cdf(n_wrong, n, alpha)))


def hoeffding_bentkus_pvalue(mean_loss: float, n: int, alpha: float) -> float:
    """p-value of "mean risk > alpha" for losses in [0, 1] (Bates et al. 2021): the smaller of
    Hoeffding's exp(-n KL(min(mean, alpha) || alpha)) and Bentkus's e * P(Bin(n, alpha) <=
    ceil(n * mean))."""
    if n == 0:
        return 1.0
    hoeffding = math.exp(-n * _kl_bernoulli(min(mean_loss, alpha), alpha))
    bentkus = math.e * float(_binom_cdf(math.ceil(n * mean_loss - _EPS), n, alpha))
    return min(1.0, hoeffding, bentkus)


def _pvalue(total_loss: float, n: int, alpha: float, *, exact: bool) -> float:
    if exact:
        return clopper_pearson_pvalue(round(total_loss), n, alpha)
    return hoeffding_bentkus_pvalue(total_loss / n if n else 0.0, n, alpha)


def _pvalues(total_loss: np.ndarray, n: np.ndarray, alpha: float, *, exact: bool) -> np.ndarray:
    """``_pvalue`` for many candidates at once (the same formulas, vectorised)."""
    if exact:
        return np.minimum(1.0, _binom_cdf(np.rint(total_loss), n, alpha))
    mean = np.minimum(total_loss / n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(mean > 0, mean * np.log(mean / alpha), 0.0)
        right = (1 - mean) * np.log((1 - mean) / (1 - alpha))
    hoeffding = np.exp(-n * (left + right))
    bentkus = math.e * _binom_cdf(np.ceil(total_loss - _EPS), n, alpha)
    return np.minimum(1.0, np.minimum(hoeffding, bentkus))


def fewest_units(alpha: float, delta: float) -> int:
    """The fewest units that can prove risk <= alpha at level delta, all of them correct:
    (1 - alpha)^n <= delta. The walk starts at the first threshold accepting that many (a
    threshold above it could not be rejected, and fixed-sequence testing would stop there)."""
    return max(1, math.ceil(math.log(delta) / math.log1p(-alpha) - _EPS))


def upper_bound(total_loss: float, n: int, delta: float, *, exact: bool) -> float:
    """The (1 - delta) upper confidence bound on the risk: the smallest alpha whose test
    rejects "risk > alpha" at level delta (bisection; the p-value falls as alpha grows)."""
    if n == 0:
        return 1.0
    low, high = total_loss / n, 1.0
    if _pvalue(total_loss, n, high - _EPS, exact=exact) > delta:
        return 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if _pvalue(total_loss, n, middle, exact=exact) <= delta:
            high = middle
        else:
            low = middle
    return high


# --- the threshold -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriageThreshold:
    """The answer: accept every statement whose score >= ``threshold`` (None: accept none).

    ``bound`` is the (1 - delta) upper confidence bound on the accepted set's risk (<= alpha
    when a threshold was found), ``risk`` the observed risk there, ``coverage`` the expected
    share of statements accepted (the share of calibration statements at or above it).
    ``curve`` has every candidate (thinned for plotting): threshold, coverage, risk, p-value.
    """

    threshold: float | None
    bound: float | None
    risk: float | None
    coverage: float
    n_accepted: int
    n_statements: int
    n_units: int
    alpha: float
    delta: float
    method: str
    curve: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Candidate:
    threshold: float
    n_accepted: int
    units: int
    total_loss: float  # sum of the units' losses (per-discussion shares, or 0/1 statements)


def _candidates(
    scores: np.ndarray, losses: np.ndarray, clusters: Sequence[Hashable] | None
) -> list[_Candidate]:
    """For every distinct score, most confident first: what accepting down to it accepts.

    With clusters, a discussion's loss is the share of its accepted statements that are wrong,
    kept up to date as statements join (sum of shares = sum over discussions of wrong/accepted).
    """
    order = np.argsort(-scores, kind="stable")
    wrong: dict[Hashable, float] = {}
    accepted: dict[Hashable, int] = {}
    share_sum = 0.0
    out: list[_Candidate] = []
    for position, index in enumerate(order):
        unit = index if clusters is None else clusters[index]
        if unit in accepted:
            share_sum -= wrong[unit] / accepted[unit]
        wrong[unit] = wrong.get(unit, 0.0) + float(losses[index])
        accepted[unit] = accepted.get(unit, 0) + 1
        share_sum += wrong[unit] / accepted[unit]
        last_of_tie = position + 1 == len(order) or scores[order[position + 1]] != scores[index]
        if last_of_tie:
            out.append(_Candidate(float(scores[index]), position + 1, len(accepted), share_sum))
    return out


def _check(scores: np.ndarray, losses: np.ndarray, alpha: float, delta: float) -> None:
    if scores.shape != losses.shape:
        raise ValueError(f"{scores.size} scores but {losses.size} losses")
    if not (0.0 < alpha < 1.0 and 0.0 < delta < 1.0):
        raise ValueError(f"alpha and delta must be in (0, 1), got {alpha} and {delta}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite numbers")
    if losses.size and (losses.min() < 0.0 or losses.max() > 1.0):
        raise ValueError("losses must be in [0, 1]")


def _thinned_curve(candidates: list[_Candidate], pvalues: list[float], n: int) -> dict:
    step = max(1, math.ceil(len(candidates) / MAX_CURVE_POINTS))
    keep = sorted({*range(0, len(candidates), step), len(candidates) - 1} - {-1})
    return {
        "threshold": [candidates[i].threshold for i in keep],
        "coverage": [candidates[i].n_accepted / n for i in keep],
        "risk": [candidates[i].total_loss / candidates[i].units for i in keep],
        "p_value": [pvalues[i] for i in keep],
    }


def risk_controlled_threshold(
    scores: Sequence[float],
    losses: Sequence[float],
    *,
    alpha: float,
    delta: float,
    clusters: Sequence[Hashable] | None = None,
) -> TriageThreshold:
    """The lowest threshold whose accepted set has risk <= alpha with probability >= 1 - delta
    (Learn then Test with fixed-sequence testing from the most confident threshold down).

    ``clusters`` names each statement's discussion (the unit of independence, see the module
    docstring); without it every statement is its own unit and losses must be 0/1.
    """
    s, loss = np.asarray(scores, dtype=float), np.asarray(losses, dtype=float)
    _check(s, loss, alpha, delta)
    if clusters is not None and len(clusters) != s.size:
        raise ValueError(f"{s.size} scores but {len(clusters)} clusters")
    exact = clusters is None
    if exact and not np.all((loss == 0.0) | (loss == 1.0)):
        raise ValueError("without clusters, losses must be 0 or 1 (Clopper-Pearson)")
    method = "clopper-pearson" if exact else "hoeffding-bentkus by discussion"
    n = int(s.size)
    candidates = _candidates(s, loss, clusters)
    pvalues = _pvalues(
        np.array([c.total_loss for c in candidates]),
        np.array([c.units for c in candidates]),
        alpha,
        exact=exact,
    ).tolist()
    first = fewest_units(alpha, delta)
    chosen: _Candidate | None = None
    for candidate, p in zip(candidates, pvalues, strict=True):
        if candidate.units < first:
            continue  # fixed in advance from the scores alone: too few to test
        if p > delta:  # fixed sequence: the first threshold not rejected ends the walk
            break
        chosen = candidate
    curve = _thinned_curve(candidates, pvalues, n) if candidates else {}
    n_units = len(set(clusters)) if clusters is not None else n
    if chosen is None:
        return TriageThreshold(None, None, None, 0.0, 0, n, n_units, alpha, delta, method, curve)
    return TriageThreshold(
        threshold=chosen.threshold,
        bound=upper_bound(chosen.total_loss, chosen.units, delta, exact=exact),
        risk=chosen.total_loss / chosen.units,
        coverage=chosen.n_accepted / n,
        n_accepted=chosen.n_accepted,
        n_statements=n,
        n_units=n_units,
        alpha=alpha,
        delta=delta,
        method=method,
        curve=curve,
    )


# --- the QA monitor ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MonitorState:
    """The sequential test after every QA item: ``e_values[i]`` is the evidence against "risk
    <= alpha" after item i; ``tripped_at`` the first item where it reached 1/delta (or None)."""

    alpha: float
    delta: float
    n: int
    n_unacceptable: int
    e_values: list[float]
    tripped_at: int | None

    @property
    def tripped(self) -> bool:
        return self.tripped_at is not None

    @property
    def level(self) -> float:
        return 1.0 / self.delta

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tripped": self.tripped, "level": self.level}


def risk_monitor(losses: Sequence[float], *, alpha: float, delta: float) -> MonitorState:
    """The betting e-process over the QA losses, in order (see the module docstring)."""
    if not (0.0 < alpha < 1.0 and 0.0 < delta < 1.0):
        raise ValueError(f"alpha and delta must be in (0, 1), got {alpha} and {delta}")
    wealth = [1.0] * len(MONITOR_BETS)
    e_values: list[float] = []
    tripped_at = None
    for i, raw in enumerate(losses):
        loss = float(raw)
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"QA loss {i} must be in [0, 1], got {raw}")
        wealth = [
            w * (1.0 + (c / alpha) * (loss - alpha))
            for w, c in zip(wealth, MONITOR_BETS, strict=True)
        ]
        e_values.append(math.fsum(wealth) / len(wealth))
        if tripped_at is None and e_values[-1] >= 1.0 / delta:
            tripped_at = i
    n_bad = sum(1 for raw in losses if float(raw) > 0.0)
    return MonitorState(alpha, delta, len(e_values), n_bad, e_values, tripped_at)


__all__ = [
    "DEFAULT_ACCEPTABLE_F1",
    "DEFAULT_SCORE_KIND",
    "SCORE_KINDS",
    "MonitorState",
    "StatementSignals",
    "TriageThreshold",
    "calibrated_scores",
    "clopper_pearson_pvalue",
    "hoeffding_bentkus_pvalue",
    "risk_controlled_threshold",
    "risk_monitor",
    "run_agreement",
    "statement_loss",
    "statement_score",
    "statement_signals",
    "upper_bound",
]
