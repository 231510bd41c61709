"""manage.py evaluate_selective_prediction --input RUN.json [--input RUN2.json] --mode few_shot
--loss abs --bootstrap-resamples 10000 --seed 42 [-o OUT.json] [--store]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from metrics.evaluations.cli import EvaluateCommand


class Command(EvaluateCommand):
    family = "selective_prediction"
    help = (
        "Selective-prediction metrics (AURC, AUGRC, MAE@coverage with bootstrap CIs) of one "
        "run, or paired deltas of two (second - first). Prints a summary; -o writes the "
        "artifact JSON. Give --mode once for every input or once per input."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", action="append", required=True, metavar="RUN.json")
        parser.add_argument("--mode", action="append", default=[], help="experiment mode")
        parser.add_argument("--loss", choices=["abs", "abs_norm"])
        parser.add_argument("--confidence", action="append", help="confidence variant (repeat)")
        parser.add_argument("--bootstrap-resamples", type=int)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--coverage-grid", help="comma-separated coverages")
        parser.add_argument("--area-coverage", type=float)
        parser.add_argument("--intersection-only", action="store_true", default=None)
        self.add_common_arguments(parser)

    def handle(self, *args, **opts: Any) -> None:
        inputs, modes = opts["input"], opts["mode"]
        if len(inputs) > 2:
            raise CommandError("at most two --input files (a paired comparison)")
        if len(modes) > 1 and len(modes) != len(inputs):
            raise CommandError("give --mode once, or once per --input")
        options = {
            "mode": modes[0] if modes else None,
            "second_mode": modes[1] if len(modes) > 1 else None,
            "loss": opts["loss"],
            "confidence_variants": opts["confidence"],
            "bootstrap_resamples": opts["bootstrap_resamples"],
            "seed": opts["seed"],
            "coverage_grid": opts["coverage_grid"],
            "area_coverage": opts["area_coverage"],
            "intersection_only": opts["intersection_only"],
        }
        self.run_family(
            files={"run": inputs},
            options={key: value for key, value in options.items() if value is not None},
            output=opts["output"],
            store=opts["store"],
            name=opts["name"],
        )
