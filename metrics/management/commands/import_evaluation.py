"""manage.py import_evaluation --family FAMILY [--name N] [--option key=value ...] ROLE=FILE ..."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from metrics.evaluations import services
from metrics.evaluations.cli import read_files, refusal, split_assignment
from metrics.families.json_input import InputError
from metrics.registry import UPLOADED


class Command(BaseCommand):
    help = (
        "Import an evaluation run's output files to compute its metric family: the same "
        "validation and storage as the upload page and POST /api/v1/evaluations/. "
        "Files are given as ROLE=PATH (e.g. run=out.json; a role may repeat)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--family", required=True, choices=sorted(UPLOADED))
        parser.add_argument("--name", help="defaults to the first file's name")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a family option (repeatable), e.g. --option loss=abs",
        )
        parser.add_argument(
            "--file", action="append", default=[], metavar="ROLE=PATH", help="an input file"
        )
        parser.add_argument("files", nargs="*", metavar="ROLE=PATH", help="input files")
        parser.add_argument(
            "--now",
            action="store_true",
            help="compute in this process instead of queueing the Celery task",
        )

    def handle(self, *args, family, name, option, file, files, now, **options) -> None:
        assignments: dict[str, list[str]] = {}
        for text in [*file, *files]:
            role, path = split_assignment(text, "an input file")
            assignments.setdefault(role, []).append(path)
        if not assignments:
            raise CommandError("give at least one input file as ROLE=PATH")
        family_options = dict(split_assignment(text, "an option") for text in option)
        try:
            evaluation = services.evaluation_create(
                family=family,
                name=name,
                files=read_files(assignments),
                options=family_options,
                queue=not now,
            )
            if now:
                # None: another process claimed it meanwhile; it is still this evaluation.
                evaluation = services.evaluation_compute(evaluation_id=evaluation.pk) or evaluation
        except (InputError, ValidationError) as exc:
            raise refusal(exc) from exc
        page = reverse("metrics:evaluation_detail", args=[evaluation.pk])
        self.stdout.write(
            f"evaluation {evaluation.pk} ({evaluation.family}, {evaluation.name}): "
            f"{evaluation.status} · {page}"
        )
        if evaluation.status == evaluation.Status.FAILED:
            raise CommandError(evaluation.error)
