import json
import resource
import uuid
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.management.progress import ProgressBar
from audit.models import ExtractionRun
from audit.services import discussions_import_file
from audit.services.imports import ImportRun
from evalsite.access import is_admin
from metrics.families.json_input import JsonInputError
from metrics.families.payload.schema import PayloadError


def _readable(path: Path) -> None:
    """A CommandError saying why the file cannot be read, before anything is checked."""
    try:
        with path.open("rb"):
            pass
    except FileNotFoundError:
        raise CommandError(f"{path}: nothing imported.\n  no such file") from None
    except OSError as exc:
        raise CommandError(
            f"{path}: nothing imported.\n  cannot read it ({exc.strerror})"
        ) from None


def _not_json(path: Path, exc: JsonInputError) -> CommandError:
    if exc.message.startswith("not UTF-8 text"):
        return CommandError(f"{path}: nothing imported.\n  {exc}")
    message = str(exc).removeprefix("invalid JSON: ")
    return CommandError(f"{path}: nothing imported.\n  not valid JSON: {message}")


def _parameter(text: str) -> tuple[str, Any]:
    """NAME=VALUE, the value read as JSON when it is JSON (0.2, true, null), else as text."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CommandError(f"--run-parameter {text!r}: expected NAME=VALUE; nothing imported.")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def _run_info(options: dict[str, Any]) -> dict[str, Any] | None:
    """The run the command names (a new replicate, registered once for all its files: the
    first file's import registers it under an external id the others then find), or None."""
    if not options["run_model"]:
        if any(options[k] for k in ("run_prompt", "run_parameter", "run_unit", "run_prompt_hash")):
            raise CommandError("--run-model is needed to describe a run; nothing imported.")
        return None
    info: dict[str, Any] = {
        "model_name": options["run_model"],
        "prompt_version": options["run_prompt"] or "unknown",
        "parameters": dict(_parameter(text) for text in options["run_parameter"]),
        "notes": options["run_notes"],
        "external_id": options["run_external_id"] or uuid.uuid4().hex,
    }
    if options["run_prompt_hash"]:
        info["prompt_hash"] = options["run_prompt_hash"]
    if options["run_unit"]:
        info["unit"] = options["run_unit"]
    return info


class Command(BaseCommand):
    help = (
        "Import discussions and ground truth (evalsite's export, one discussion, an admin export "
        "with speakers, or a list of cases); idempotent, all or nothing per file. "
        "Files are read one discussion at a time, so memory stays flat in their size."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument(
            "--run",
            type=int,
            metavar="ID",
            help="an existing run: the extractions the file gives no run of their own go there",
        )
        parser.add_argument(
            "--run-model",
            help="model of the run the file's extractions without a run of their own belong to: "
            "a new replicate of this configuration (without --run or --run-model: a run of the "
            "import's own, named after the file and the time; none without extractions)",
        )
        parser.add_argument("--run-prompt", help="its prompt version (default: unknown)")
        parser.add_argument(
            "--run-parameter",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a parameter of its configuration (repeat: --run-parameter temperature=0.2)",
        )
        parser.add_argument("--run-prompt-hash", help="SHA-256 of its prompt text")
        parser.add_argument(
            "--run-unit", choices=["statement", "discussion"], help="what one extraction covers"
        )
        parser.add_argument("--run-notes", default="", help="this replicate's notes")
        parser.add_argument(
            "--run-external-id",
            help="your key for the run: importing again with it adds to that run instead of "
            "registering another replicate",
        )
        parser.add_argument(
            "--by",
            required=True,
            metavar="USERNAME",
            help="the importing admin: imported ground truth is approved by them",
        )

    def handle(self, *args, files, by, **options):
        admin = get_user_model().objects.filter(username=by).first()
        if admin is None or not is_admin(admin):
            raise CommandError(f"--by {by}: no admin with that username; nothing imported.")
        run_info = _run_info(options)
        existing = None
        if options["run"] is not None:
            existing = ExtractionRun.objects.filter(pk=options["run"]).first()
            if existing is None:
                raise CommandError(f"--run {options['run']}: no such run; nothing imported.")
            if run_info is not None:
                raise CommandError("--run or --run-model, not both; nothing imported.")
        for path in files:
            _readable(path)
            try:
                summary = discussions_import_file(
                    open_file=lambda path=path: path.open("rb"),
                    by=admin,
                    run=ImportRun(run=existing, source=path.name),
                    run_info=run_info,
                    progress=ProgressBar(f"import {path.name}", uncounted="checking the file"),
                )
            except JsonInputError as exc:
                raise _not_json(path, exc) from None
            except PayloadError as exc:
                details = "\n  ".join(exc.messages())
                raise CommandError(f"{path}: nothing imported.\n  {details}") from None
            self.stdout.write(f"{path.name}: {summary.line()}")
            for line in summary.details():
                self.stdout.write(f"  {line}")
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stderr.write(f"peak memory {peak_mb:.0f} MB")
