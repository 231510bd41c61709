import resource
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.management.progress import ProgressBar
from audit.services import discussions_import_file
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


class Command(BaseCommand):
    help = (
        "Import discussions (ground-truth export format); idempotent, all or nothing per file. "
        "Files are read one discussion at a time, so memory stays flat in their size."
    )

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
            _readable(path)
            try:
                summary = discussions_import_file(
                    open_file=lambda path=path: path.open("rb"),
                    by=admin,
                    default_run=(run_model, run_prompt),
                    progress=ProgressBar(f"import {path.name}"),
                )
            except JsonInputError as exc:
                raise _not_json(path, exc) from None
            except PayloadError as exc:
                details = "\n  ".join(exc.messages())
                raise CommandError(f"{path}: nothing imported.\n  {details}") from None
            self.stdout.write(f"{path.name}: {summary.line()}")
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stderr.write(f"peak memory {peak_mb:.0f} MB")
