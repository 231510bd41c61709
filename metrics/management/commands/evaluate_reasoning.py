"""manage.py evaluate_reasoning --generations G.jsonl --vignettes V.json
[--bias-cases B.json --bias-generations BG.jsonl] [-o OUT.json] [--store]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from metrics.evaluations.cli import EvaluateCommand


class Command(EvaluateCommand):
    family = "reasoning"
    help = (
        "Reasoning faithfulness (gap, accuracies, step-F1, silent bias rate with bootstrap "
        "CIs) of a model's generations; prints the report."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--generations", required=True, metavar="G.jsonl")
        parser.add_argument("--vignettes", required=True, metavar="V.json")
        parser.add_argument("--bias-cases", metavar="B.json")
        parser.add_argument("--bias-generations", metavar="BG.jsonl")
        parser.add_argument("--step-threshold", type=float)
        parser.add_argument("--strategy", choices=["optimal", "greedy"])
        parser.add_argument("--bootstrap-resamples", type=int)
        parser.add_argument("--seed", type=int)
        self.add_common_arguments(parser)

    def handle(self, *args, **opts: Any) -> None:
        files = {"generations": [opts["generations"]], "vignettes": [opts["vignettes"]]}
        for role in ("bias_cases", "bias_generations"):
            if opts[role]:
                files[role] = [opts[role]]
        options = {
            key: opts[key]
            for key in ("step_threshold", "strategy", "bootstrap_resamples", "seed")
            if opts[key] is not None
        }
        self.run_family(
            files=files,
            options=options,
            output=opts["output"],
            store=opts["store"],
            name=opts["name"],
        )
