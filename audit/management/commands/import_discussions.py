import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.management.progress import ProgressBar
from audit.roles import is_admin
from audit.schemas import PayloadError
from audit.services import discussions_import


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
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError as exc:
                raise CommandError(f"{path}: no such file") from exc
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise CommandError(f"{path}: not valid JSON ({exc})") from exc
            try:
                summary = discussions_import(
                    data=data,
                    by=admin,
                    default_run=(run_model, run_prompt),
                    progress=ProgressBar(f"import {path.name}"),
                )
            except PayloadError as exc:
                details = "\n  ".join(exc.messages())
                raise CommandError(f"{path}: nothing imported.\n  {details}") from exc
            self.stdout.write(f"{path.name}: {summary.line()}")
