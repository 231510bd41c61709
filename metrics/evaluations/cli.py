"""Shared plumbing of the evaluation management commands (``import_evaluation`` and the
``evaluate_*`` family commands): argument parsing helpers and the common run-and-print step.
Every command goes through the services, hence through the registry's parse and compute."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.evaluations import services
from metrics.evaluations.registry import InputFile, upload_get
from metrics.families.json_input import InputError
from metrics.models import Evaluation


def split_assignment(text: str, what: str) -> tuple[str, str]:
    """'key=value' → (key, value); CommandError naming `what` otherwise."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise CommandError(f"expected {what} as KEY=VALUE, got {text!r}")
    return key.strip(), value


def read_files(assignments: Mapping[str, Sequence[str]]) -> dict[str, list[InputFile]]:
    """{role: [path, ...]} → {role: [InputFile, ...]} (sizes checked before reading)."""
    try:
        return {
            role: [services.input_file_from_path(path) for path in paths]
            for role, paths in assignments.items()
        }
    except InputError as exc:
        raise CommandError(str(exc)) from exc


def refusal(exc: Exception) -> CommandError:
    if isinstance(exc, ValidationError):
        return CommandError("; ".join(exc.messages))
    return CommandError(str(exc))


class EvaluateCommand(BaseCommand):
    """Base of the evaluate_* commands: compute one family's artifact from local files and
    print its report; -o writes the artifact JSON; --store also keeps it as an evaluation."""

    family: str = ""

    def add_common_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "-o",
            "--output",
            help="write the artifact JSON to this file ('-' prints it instead of the report)",
        )
        parser.add_argument(
            "--store",
            action="store_true",
            help="also store the run as an imported evaluation (computed in this process)",
        )
        parser.add_argument("--name", help="name of the stored evaluation (with --store)")

    def run_family(
        self,
        *,
        files: dict[str, list[str]],
        options: dict[str, Any],
        output: str | None,
        store: bool,
        name: str | None,
    ) -> dict[str, Any]:
        inputs = read_files(files)
        try:
            if store:
                artifact = self._store(inputs, options, name)
            else:
                artifact = services.artifact_compute(
                    family=self.family, files=inputs, options=options
                )
        except (InputError, ValidationError) as exc:
            raise refusal(exc) from exc
        self._emit(artifact, output)
        return artifact

    def _store(self, inputs: dict, options: dict, name: str | None) -> dict[str, Any]:
        evaluation = services.evaluation_create(
            family=self.family, name=name, files=inputs, options=options, queue=False
        )
        evaluation = services.evaluation_compute(evaluation_id=evaluation.pk) or evaluation
        if evaluation.status != Evaluation.Status.DONE:
            raise CommandError(f"evaluation {evaluation.pk} failed: {evaluation.error}")
        self.stderr.write(f"stored as evaluation {evaluation.pk} ({evaluation.name})")
        return evaluation.artifact or {}

    def _emit(self, artifact: dict[str, Any], output: str | None) -> None:
        text = json.dumps(artifact, indent=2)
        if output == "-":
            self.stdout.write(text)
            return
        report = upload_get(self.family).report
        self.stdout.write(report(artifact) if report else text)
        if output:
            Path(output).write_text(text + "\n", encoding="utf-8")
            self.stderr.write(f"artifact written to {output}")
