"""Compare a candidate with a baseline and fail (exit 1) when it is worse beyond noise: the gate
a CI job calls after registering the candidate run and posting its extractions."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from metrics.engine import comparison as cmp
from metrics.engine.derived import comparison_result_compute
from metrics.families.extraction.experiments import DEFAULT_LEVEL, FIGURES, LEVELS
from metrics.models import MetricResult


class Command(BaseCommand):
    help = (
        "Compare --candidate with --baseline (a run id, r12, or a configuration with all its "
        "replicates, c3) on live ground truth or --snapshot, print every figure with its "
        "interval and verdict, and with --fail-on worse exit 1 when a gated figure (--figures; "
        "by default the overall F1) is worse beyond noise; exit 2 when the comparison cannot "
        "be made (a side or snapshot that does not exist, a failed computation)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--baseline", required=True, help="r<run id>, <run id> or c<configuration id>"
        )
        parser.add_argument("--candidate", required=True, help="as --baseline")
        parser.add_argument("--snapshot", default="live", help="a snapshot id, or live (default)")
        parser.add_argument(
            "--fail-on", choices=["worse"], help="exit 1 when a gated figure is worse"
        )
        parser.add_argument(
            "--figures",
            nargs="+",
            choices=FIGURES,
            metavar="FIGURE",
            help=f"the figures the gate checks (default: aggregate). One of: {', '.join(FIGURES)}",
        )
        parser.add_argument(
            "--level",
            type=int,
            default=round(DEFAULT_LEVEL * 100),
            choices=[round(level * 100) for level in LEVELS],
            help="confidence level in percent",
        )
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def handle(self, *args, baseline, candidate, snapshot, fail_on, figures, level, **options):
        try:
            sides = (
                cmp.side_get(baseline, name="--baseline"),
                cmp.side_get(candidate, name="--candidate"),
            )
            frozen = cmp.snapshot_get(snapshot)
        except cmp.ComparisonInputError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        row = comparison_result_compute(
            baseline=sides[0].spec, candidate=sides[1].spec, snapshot=frozen.pk if frozen else None
        )
        if row is None or row.status != MetricResult.Status.FRESH or not row.values:
            raise CommandError(
                f"the comparison could not be computed: {row.error if row else ''}", returncode=2
            )
        values = row.values
        gate = cmp.comparison_gate(values, level=level / 100, figures=figures)
        if options["json"]:
            self.stdout.write(json.dumps(_report(values, gate), indent=2))
        else:
            self._table(values, gate)
        if fail_on == "worse" and gate["worse"]:
            raise SystemExit(1)

    def _table(self, values: dict[str, Any], gate: dict[str, Any]) -> None:
        level = gate["level"]
        self.stdout.write(
            f"{values['baseline']['label']} (baseline) vs {values['candidate']['label']} "
            f"(candidate), {values['ground_truth']['label']}: {values['n_statements']} statements "
            f"in {values['n_discussions']} discussions; intervals over {values['method']}, "
            f"{level:.0%}"
        )
        for figure in cmp.figure_summaries(values, level):
            key = figure["key"]
            delta = "n/a" if figure["delta"] is None else f"{figure['delta']:+.3f}"
            bounds = (
                f"[{figure['low']:+.3f}, {figure['high']:+.3f}]"
                if figure["low"] is not None
                else ""
            )
            mark = " (gated)" if key in gate["gated"] else ""
            self.stdout.write(f"  {key:<22} {delta:>7} {bounds:<18} {figure['verdict']}{mark}")
        worse = gate["worse"]
        verdict = f"WORSE beyond noise on {', '.join(worse)}" if worse else "not worse beyond noise"
        self.stdout.write(f"gate: {verdict}")


def _report(values: dict[str, Any], gate: dict[str, Any]) -> dict[str, Any]:
    return {
        "baseline": values["baseline"],
        "candidate": values["candidate"],
        "ground_truth": values["ground_truth"],
        "method": values["method"],
        **gate,
        "figures": cmp.figure_summaries(values, gate["level"]),
    }
