"""A run's totals summed by the database equal folding its stored contributions in Python."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

from audit.models import ExtractionRun
from metrics.engine.totals import PART, _folded, _integer, run_totals_sum
from metrics.families.extraction import (
    FIXED_ONE,
    SARF_VARIABLES,
    empty_totals,
    fixed,
    total_contributions,
)
from metrics.models import MetricResult

pytestmark = pytest.mark.django_db
Scope = MetricResult.Scope
VALUES = ["up", "down", "same", "null"]


def random_contribution(rng: random.Random) -> dict:
    """A contribution of any shape a statement or discussion can have, with every kind of sum:
    counts, fixed-point F1 sums up to 1, SARF tables, per-variable sums and counts."""
    contribution = empty_totals()
    contribution.update(count=1, trivial=rng.randint(0, 1), exact=rng.randint(0, 1))
    for key in ("people_tp", "events_fp", "pair_bonds_fn"):
        contribution[key] = rng.randint(0, 9)
    contribution["f1_total"] = contribution["f1_total_nontrivial"] = fixed(rng.random())
    for variable in rng.sample(SARF_VARIABLES, rng.randint(0, 4)):
        contribution["sarf"][variable] = {
            ai: {gt: rng.randint(1, 3) for gt in rng.sample(VALUES, rng.randint(1, 2))}
            for ai in rng.sample(VALUES, rng.randint(1, 3))
        }
        contribution["sarf_f1_total"][variable] = fixed(rng.random())
        contribution["sarf_f1_count"][variable] = 1
    contribution["discussions"] = {str(rng.randint(1, 5)): 1}
    return json.loads(json.dumps(contribution))  # as stored: string keys


def store(run, rng, n: int, *, family: str = "extraction") -> list[MetricResult]:
    rows = []
    for index in range(n):
        scope = Scope.STATEMENT if index % 5 else Scope.DISCUSSION
        rows.append(
            MetricResult.objects.create(
                key=f"{family}:{scope}:{run.pk if run else '-'}:{index}",
                family=family,
                scope=scope,
                run=run,
                contribution=random_contribution(rng),
            )
        )
    return rows


def expected(rows: list[MetricResult]) -> dict:
    return {
        part: total_contributions(r.contribution for r in rows if PART[r.scope] == part)
        for part in PART.values()
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_database_sum_is_the_python_fold_exactly(seed):
    rng = random.Random(seed)
    run = ExtractionRun.objects.create(model_name="m", prompt_version="1")
    other_run = ExtractionRun.objects.create(model_name="m", prompt_version="2")
    rows = store(run, rng, 60)
    store(other_run, rng, 7)  # another run's rows
    store(run, rng, 4, family="calibration")  # another family's
    MetricResult.objects.create(key="no-sum", family="extraction", scope=Scope.STATEMENT, run=run)
    MetricResult.objects.create(
        key="run-row", family="extraction", scope=Scope.RUN, run=run, contribution={"count": 9}
    )

    totals = run_totals_sum(family="extraction", run_id=run.pk)

    assert totals == expected(rows)
    assert totals == _folded("extraction", run.pk)  # the other database's path, same rows
    assert totals["statements"]["count"] == 48 and totals["discussions"]["count"] == 12
    assert totals["statements"]["f1_total"] > FIXED_ONE  # beyond 64 bits when summed


def test_a_run_without_rows_and_rows_of_no_run():
    run = ExtractionRun.objects.create(model_name="m", prompt_version="1")
    assert run_totals_sum(family="extraction", run_id=run.pk) == {
        "statements": empty_totals(),
        "discussions": empty_totals(),
    }
    rows = store(None, random.Random(4), 6)
    assert run_totals_sum(family="extraction", run_id=None) == expected(rows)


def test_a_sum_that_is_not_an_integer_is_refused():
    assert _integer(None) == 0 and _integer(Decimal(2**70)) == 2**70
    with pytest.raises(ValueError, match=r"not an integer: 1\.5"):
        _integer(Decimal("1.5"))
