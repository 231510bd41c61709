from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.jsonin import JsonInputError, parse_json
from audit.management.progress import ProgressBar
from audit.schemas import PayloadError
from audit.services import discussions_import
from evalsite.access import is_admin


def _read(path: Path) -> Any:
    """The file's JSON, checked like an API body (same limits), or a CommandError saying why."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise CommandError(f"{path}: nothing imported.\n  no such file") from None
    except OSError as exc:
        raise CommandError(
            f"{path}: nothing imported.\n  cannot read it ({exc.strerror})"
        ) from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: nothing imported.\n  not UTF-8 text ({exc.reason})") from None
    try:
        return parse_json(text)
    except JsonInputError as exc:
        message = str(exc).removeprefix("invalid JSON: ")
        raise CommandError(f"{path}: nothing imported.\n  not valid JSON: {message}") from None


class Command(BaseCommand):
    help = "Import discussions (ground-truth export format); idempotent, all or nothing per file."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--run-model", default="imported", help="model name of the AI run")
        parser.add_argument("--run-prompt", default="unknown", help="prompt version of the AI run")
        parser.add_argument(
            "--by",
            required=True,
            metavar="USERNAME",
            help="the importing admin: imported ground truth is approved by them",
        )

    def handle(self, *args, files, run_model, run_prompt, by, **options):
        admin = get_user_model().objects.filter(username=by).first()
        if admin is None or not is_admin(admin):
            raise CommandError(f"--by {by}: no admin with that username; nothing imported.")
        for path in files:
            data = _read(path)
            try:
                summary = discussions_import(
                    data=data,
                    by=admin,
                    default_run=(run_model, run_prompt),
                    progress=ProgressBar(f"import {path.name}"),
                )
            except PayloadError as exc:
                details = "\n  ".join(exc.messages())
                raise CommandError(f"{path}: nothing imported.\n  {details}") from None
            self.stdout.write(f"{path.name}: {summary.line()}")
