"""The trend across prompt versions: each configuration's figures over its replicates (mean,
min-max, SD) with an interval of the mean, in time order, on one ground truth (live or a
snapshot), with a break wherever two neighbours are not comparable.

One stored row per configuration and ground truth (``configuration_summary:c<id>[:g<s>]``),
computed by a worker from the stored counts of its runs (``experiments.configuration_intervals``)
and outdated when any of its runs' results change; the trend page reads those rows only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from audit.models import ExtractionRun, GroundTruthSnapshot, RunConfiguration
from evalsite.queue import named_task, task_enqueue
from metrics.engine import comparison
from metrics.engine.derived import (
    CONFIGURATION_SUMMARY,
    Derived,
    _claim,
    _derived,
    _input_hash,
    derived_compute,
    results_fingerprint,
)
from metrics.engine.services import EXTRACTION
from metrics.families.extraction.experiments import LABELS, configuration_intervals
from metrics.models import MetricResult
from metrics.results import run_key

SUMMARY_TASK = "metrics.tasks.compute_configuration_summary"
TREND_FIGURES = ("aggregate", "cumulative", "people", "events", "pair_bonds", "exact_match")
N_RESAMPLES = 1000
SEED = 42
Scope = MetricResult.Scope


def summary_key(configuration_id: int, snapshot_id: int | None) -> str:
    key = f"{CONFIGURATION_SUMMARY}:c{configuration_id}"
    return key if snapshot_id is None else f"{key}:g{snapshot_id}"


def _fingerprint(runs: list[ExtractionRun], snapshot_id: int | None) -> str:
    return f"{[r.pk for r in runs]}|" + results_fingerprint(*runs, snapshot_id=snapshot_id)


def _settings_hash(settings: Any) -> str:
    text = json.dumps(settings or {}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def configuration_summary_compute(
    *, configuration_id: int, snapshot: int | None = None
) -> MetricResult | None:
    """One configuration's figures over its replicates with intervals, stored."""
    configuration = RunConfiguration.objects.filter(pk=configuration_id).first()
    try:
        frozen = comparison.snapshot_get(snapshot)
    except comparison.ComparisonInputError:
        return None
    runs = list(configuration.runs.order_by("replicate")) if configuration else []
    if configuration is None or not runs:
        return None
    snapshot_id = frozen.pk if frozen else None
    comparison.snapshot_results_ensure(runs, snapshot_id)
    return derived_compute(
        family=CONFIGURATION_SUMMARY,
        key=summary_key(configuration_id, snapshot_id),
        run_id=runs[0].pk,
        fingerprint=lambda: _fingerprint(runs, snapshot_id),
        compute=lambda: _summary(configuration, runs, snapshot_id),
    )


def _summary(
    configuration: RunConfiguration, runs: list[ExtractionRun], snapshot_id: int | None
) -> dict[str, Any]:
    run_ids = [r.pk for r in runs]
    tables = comparison.tables_read(run_ids, snapshot_id)
    intervals = configuration_intervals(
        [tables.per_run[r] for r in run_ids],
        layout=tables.layout,
        n_resamples=N_RESAMPLES,
        seed=SEED,
        figures=TREND_FIGURES,
    )
    run_settings = [
        _settings_hash(s)
        for s in comparison.basis_rows(snapshot_id)
        .filter(scope=Scope.RUN, run_id__in=run_ids)
        .values_list("match_settings", flat=True)
    ]
    return {
        "configuration": configuration.pk,
        "label": configuration.label,
        "unit": configuration.unit,
        "runs": [
            {
                "id": r.pk,
                "replicate": r.replicate,
                "notes": r.notes,
                "created_at": r.created_at.isoformat(),
            }
            for r in runs
        ],
        "notes": configuration.notes,
        "match_settings": sorted(set(run_settings)),
        "discussions": [int(d) for d in tables.discussions],
        "n_statements": int(tables.statements.size),
        "figures": {name: asdict(result) for name, result in intervals.items()},
    }


# --- reading (the trend page) ------------------------------------------------------------------


def trend_read(snapshot: GroundTruthSnapshot | None) -> list[dict[str, Any]]:
    """Every configuration with runs, oldest first: its stored summary (None before the
    first), whether it is being brought up to date (then queued), and its runs. A few queries
    whatever the number of configurations."""
    snapshot_id = snapshot.pk if snapshot else None
    runs_by: dict[int, list[ExtractionRun]] = {}
    for run in ExtractionRun.objects.select_related("configuration").order_by(
        "created_at", "replicate", "pk"
    ):
        runs_by.setdefault(run.configuration_id, []).append(run)
    keys = {cid: summary_key(cid, snapshot_id) for cid in runs_by}
    rows = {row.key: row for row in MetricResult.objects.filter(key__in=list(keys.values()))}
    fingerprints = _fingerprints(runs_by, snapshot_id)
    out = []
    for cid, runs in runs_by.items():
        row = rows.get(keys[cid])
        wanted = _input_hash(CONFIGURATION_SUMMARY, fingerprints[cid])
        current = row is not None and row.input_hash == wanted and row.status != "stale"
        if not current and _claim(key=keys[cid], family=CONFIGURATION_SUMMARY, run_id=runs[0].pk):
            task_enqueue(named_task(SUMMARY_TASK), configuration_id=cid, snapshot=snapshot_id)
        stored = (
            _derived(row, updating=not current)
            if row is not None
            else Derived(values=None, updating=True)
        )
        out.append({"configuration": runs[0].configuration, "runs": runs, "stored": stored})
    return out


def _fingerprints(
    runs_by: dict[int, list[ExtractionRun]], snapshot_id: int | None
) -> dict[int, str]:
    """Each configuration's fingerprint, as ``_fingerprint`` computes it, in one query."""
    all_runs = [r for runs in runs_by.values() for r in runs]
    rows = {
        run_id: (h, status, str(at))
        for run_id, h, status, at in comparison.basis_rows(snapshot_id)
        .filter(scope=Scope.RUN, run_id__in=[r.pk for r in all_runs])
        .values_list("run_id", "input_hash", "status", "computed_at")
    }
    out = {}
    for cid, runs in runs_by.items():
        text = "|".join(f"{run_key(EXTRACTION, r.pk)}={rows.get(r.pk)}" for r in runs)
        if snapshot_id is not None:
            text += f"|g{snapshot_id}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        out[cid] = f"{[r.pk for r in runs]}|{digest}"
    return out


def figure_label(figure: str) -> str:
    return LABELS[figure]
