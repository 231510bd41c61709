"""manage.py evaluate_agreement --input tests.csv [--study-groups JSON] [-o OUT.json] [--store]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from metrics.evaluations.cli import EvaluateCommand


class Command(EvaluateCommand):
    family = "agreement"
    help = (
        "PAS (raw) and ECS (CCC) agreement of replicated studies, with the auxiliary "
        "normalised PAS and ECS_Strict, from per-test results (CSV or JSON)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True, metavar="tests.csv")
        parser.add_argument(
            "--study-groups",
            help='per-domain ECS groups as JSON, e.g. \'{"Cognition": ["study_001"]}\'',
        )
        parser.add_argument(
            "--plain-finding-ids",
            action="store_true",
            help="identify a finding by Finding_ID alone (not with Sub_Study_ID)",
        )
        self.add_common_arguments(parser)

    def handle(self, *args, **opts: Any) -> None:
        options: dict[str, Any] = {}
        if opts["study_groups"]:
            options["study_groups"] = opts["study_groups"]
        if opts["plain_finding_ids"]:
            options["composite_finding_ids"] = False
        self.run_family(
            files={"tests": [opts["input"]]},
            options=options,
            output=opts["output"],
            store=opts["store"],
            name=opts["name"],
        )
