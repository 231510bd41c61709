"""Migration 0011 turns stored extraction contributions' float F1 sums into the fixed-point
integers the code now adds, and sets each run's totals aside to be rebuilt exactly."""

from __future__ import annotations

from metrics.engine.services import run_result_compute
from metrics.families.extraction import (
    calculate_statement_f1,
    statement_contribution,
    total_contributions,
)
from metrics.models import MetricResult

# audit as it was then too (runs had no configuration yet); after: every app at its latest
# migration, since the test then calls today's code.
BEFORE = [("metrics", "0010_stale_rows_by_run"), ("audit", "0024_feedback_review_opened_at")]
AFTER = None


def _statement_metrics(discussion_id: int, statement_id: int):
    ann = {"id": 1, "name": "Ann", "last_name": "Smith"}
    bob = {"id": 2, "name": "Bob", "last_name": "Smith"}
    sick = {"id": 4, "kind": "shift", "description": "Ann got sick", "person": 1}
    return calculate_statement_f1(
        {"people": [ann, bob], "events": [{**sick, "symptom": "up", "anxiety": "down"}]},
        {"people": [ann], "events": [{**sick, "symptom": "up", "anxiety": "up"}]},
        statement_id=statement_id,
        discussion_id=discussion_id,
    )


def _as_stored_before(metrics) -> dict:
    """The contribution as the code before 0011 stored it: float sums, old keys."""
    old = statement_contribution(metrics)
    for key in ("f1_total", "f1_total_nontrivial", "sarf_f1_total"):
        del old[key]
    old["sum_f1"] = old["sum_f1_nontrivial"] = metrics.aggregate_micro_f1
    old["sarf_f1_sum"] = {var: getattr(metrics, f"{var}_macro_f1") for var in old["sarf_f1_count"]}
    return old


def test_the_migration_stores_exact_sums_and_the_run_rebuilds_from_them(migrated_to):
    old = migrated_to(BEFORE)
    model = old.get_model
    run = model("audit", "ExtractionRun").objects.create(model_name="m", prompt_version="1")
    discussion = model("audit", "Discussion").objects.create(summary="d")
    speaker = model("audit", "Speaker").objects.create(
        discussion=discussion, name="Ann", type="subject"
    )
    results = model("metrics", "MetricResult").objects
    metrics = []
    for order in range(3):
        statement = model("audit", "Statement").objects.create(
            discussion=discussion, speaker=speaker, order=order, text="..."
        )
        metrics.append(_statement_metrics(discussion.pk, statement.pk))
        results.create(
            key=f"extraction:statement:{run.pk}:{statement.pk}",
            family="extraction",
            scope="statement",
            run=run,
            statement=statement,
            status="fresh",
            contribution=_as_stored_before(metrics[-1]),
        )
    stale_totals = {"statements": {"count": 3, "sum_f1": 1.5}, "discussions": {}}
    results.create(
        key=f"extraction:run:{run.pk}",
        family="extraction",
        scope="run",
        run=run,
        status="fresh",
        contribution=stale_totals,
    )
    other = results.create(key="calibration:run:x", family="calibration", scope="run",
                           contribution={"sum_f1": 0.5})  # fmt: skip

    migrated_to(AFTER)

    stored = MetricResult.objects.filter(scope="statement").order_by("statement_id")
    assert [row.contribution for row in stored] == [statement_contribution(m) for m in metrics]
    run_row = MetricResult.objects.get(scope="run", family="extraction")
    assert run_row.contribution is None  # set aside: rebuilt when the run next changes
    assert MetricResult.objects.get(pk=other.pk).contribution == {"sum_f1": 0.5}
    rebuilt = run_result_compute(run_id=run.pk)
    assert rebuilt is not None
    assert rebuilt.contribution["statements"] == total_contributions(
        statement_contribution(m) for m in metrics
    )
    assert rebuilt.values["system"]["mean_statement_f1"] == metrics[0].aggregate_micro_f1
