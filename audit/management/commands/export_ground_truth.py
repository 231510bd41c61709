import resource
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.management.progress import ProgressBar
from audit.models import ExtractionRun
from audit.services.exports import ExportOptionError, NothingToExport, ground_truth_export_text


class Command(BaseCommand):
    help = "Export approved ground truth as JSON (schema version 1)."

    def add_arguments(self, parser):
        parser.add_argument("--discussion-ids", default="", help="comma-separated ids")
        parser.add_argument("--all", action="store_true", dest="all_discussions")
        parser.add_argument("--run", type=int, help="extraction run id for pdp_deltas")
        parser.add_argument(
            "--include-provisional",
            action="store_true",
            help="add each statement's provisional_ground_truth (accepted by review triage, "
            "not human ground truth)",
        )
        parser.add_argument(
            "--include-notes",
            action="store_true",
            help="add each approved coding's auditor note and its statement's comment thread",
        )
        parser.add_argument(
            "--include-f1",
            action="store_true",
            help="add, for --run, each statement's F1 figures and its matched, missed and "
            "spurious items",
        )
        parser.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    def handle(
        self,
        *args,
        discussion_ids,
        all_discussions,
        run,
        output,
        include_provisional,
        include_notes,
        include_f1,
        **options,
    ):
        ids = _parse_ids(discussion_ids)
        if not ids and not all_discussions:
            raise CommandError("Give --discussion-ids 1,2 or --all.")
        chosen_run = None
        if run is not None:
            chosen_run = ExtractionRun.objects.filter(pk=run).first()
            if chosen_run is None:
                raise CommandError(f"No extraction run {run}.")
        tally = _Tally(ProgressBar("export"))
        try:
            pieces = ground_truth_export_text(
                discussion_ids=ids,
                all_discussions=all_discussions,
                run=chosen_run,
                progress=tally,
                include_provisional=include_provisional,
                include_notes=include_notes,
                include_f1=include_f1,
            )
        except (NothingToExport, ExportOptionError) as exc:
            raise CommandError(str(exc)) from exc
        if output:
            with output.open("w", encoding="utf-8") as file:
                file.writelines(pieces)
        else:
            sys.stdout.writelines(pieces)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stderr.write(
            f"exported {tally.done} discussions"
            + (f" to {output}" if output else "")
            + f" (peak memory {peak_mb:.0f} MB)"
        )


class _Tally:
    """The progress bar, remembering how many discussions were written."""

    def __init__(self, bar: ProgressBar):
        self.bar, self.done = bar, 0

    def __call__(self, done: int, total: int) -> None:
        self.done = done
        self.bar(done, total)


def _parse_ids(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise CommandError(
            f"--discussion-ids must be comma-separated integers, got {text!r}"
        ) from exc
