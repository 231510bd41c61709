"""manage.py evaluate_verdicts --results R.json --ground-truth GT.json [--reviews REV.json]
[--policy-id ID] [--method M] [-o OUT.json] [--store]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from metrics.evaluations.cli import EvaluateCommand


class Command(EvaluateCommand):
    family = "verdicts"
    help = "The seven verdict and evidence metrics of a run; prints the console table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--results", required=True, metavar="R.json")
        parser.add_argument("--ground-truth", required=True, metavar="GT.json")
        parser.add_argument("--reviews", metavar="REV.json", help="review texts (optional)")
        parser.add_argument("--policy-id", help="scoring policy (default: the results file's)")
        parser.add_argument("--method", help="method label (default: the results file's)")
        self.add_common_arguments(parser)

    def handle(self, *args, **opts: Any) -> None:
        files = {"results": [opts["results"]], "ground_truth": [opts["ground_truth"]]}
        if opts["reviews"]:
            files["reviews"] = [opts["reviews"]]
        options = {"policy_id": opts["policy_id"], "method": opts["method"]}
        self.run_family(
            files=files,
            options={key: value for key, value in options.items() if value is not None},
            output=opts["output"],
            store=opts["store"],
            name=opts["name"],
        )
