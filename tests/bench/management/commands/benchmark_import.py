"""Benchmark: export N discussions x M statements of approved ground truth to a file, then import
that file into a site without them; prints the time and peak memory of each.

Each phase runs in a process of its own (forked), so its peak memory is its own: the figure is
the phase's peak resident size above what the process held when the phase began. The seeded
data, and what the import made of it, are deleted afterwards.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connections, transaction
from django.db.models import Q

from audit.models import Discussion, ExtractionRun, history_purge
from audit.services import discussions_import_file
from audit.services.exports import ground_truth_export_text
from audit.services.imports import IMPORT_RUN_MODEL, ImportRun
from tests.bench.data import DELETE_CHUNK, SeededWorkload
from tests.bench.profiling import profiled

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _resident_kb() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_KB


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _in_child(phase: Callable[[], str]) -> tuple[float, float, float, str]:
    """Run ``phase`` in a forked process: (seconds, its CPU seconds, peak MB above its start,
    what it said). The CPU seconds tell a loaded host's figure from the work itself."""
    connections.close_all()  # the child opens its own
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        _drop_inherited_connections()
        start_kb, started, cpu_before = _resident_kb(), time.perf_counter(), _cpu_seconds()
        try:
            said = phase()
            seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
            peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start_kb) / 1024
            line = f"{seconds}\t{cpu}\t{peak_mb}\t{said}"
        except Exception as exc:  # reported by the parent
            line = f"-1\t-1\t-1\t{type(exc).__name__}: {str(exc)[:500]}"
        with os.fdopen(write, "w") as out:
            out.write(line)
        connections.close_all()
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        took, used, peak, said = answer.read().split("\t", 3)
    os.waitpid(pid, 0)
    if float(took) < 0:
        raise RuntimeError(said)
    return float(took), float(used), float(peak), said


def _drop_inherited_connections() -> None:
    """In the child, leave any connection the parent still holds (close_all reaches only the
    wrappers of the caller's context) to the parent: the child opens its own. The objects are
    kept, never closed: closing one would end the parent's session on the shared socket."""
    for db in connections.all(initialized_only=True):
        if db.connection is not None:
            _INHERITED.append(db.connection)
            db.connection = None


_INHERITED: list[object] = []


class Command(BaseCommand):
    help = "Time and peak memory of exporting N x M approved ground truth and importing it back."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50)
        parser.add_argument(
            "--include-f1",
            action="store_true",
            help="export each statement's F1 for the seeded run too (computed by the export)",
        )
        parser.add_argument(
            "--profile",
            metavar="FILE",
            help="profile the import with pyinstrument and write its report here (HTML for "
            "FILE.html, else text)",
        )

    def handle(
        self,
        *args,
        discussions: int,
        statements: int,
        include_f1: bool,
        profile: str | None,
        **options,
    ):
        self.stdout.write(f"seeding {discussions} x {statements} ...")
        workload = SeededWorkload.create(discussions=discussions, statements=statements)
        ids = list(
            Discussion.objects.filter(external_id__startswith=f"{workload.tag}-").values_list(
                "pk", flat=True
            )
        )
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "ground-truth.json"
            f1_run = workload.run if include_f1 else None
            seconds, cpu, peak, _ = _in_child(lambda: _export(ids, path, f1_run))
            size_mb = path.stat().st_size / 1e6
            self.stdout.write(
                f"export{' with F1' if include_f1 else ''}: {seconds:.1f} s ({cpu:.1f} s of CPU), "
                f"peak memory +{peak:.0f} MB, file {size_mb:.0f} MB"
            )
            workload.delete()  # the import finds none of them: it creates everything again
            admin = get_user_model().objects.create(
                username=f"{workload.tag}-importer", is_superuser=True
            )
            try:
                seconds, cpu, peak, said = _in_child(lambda: _import(path, admin, profile))
                self.stdout.write(
                    f"import: {seconds:.1f} s ({cpu:.1f} s of CPU), peak memory "
                    f"+{peak:.0f} MB ({said}); load average {os.getloadavg()[0]:.1f}"
                )
            finally:
                _delete_imported(workload.tag)


def _export(ids: list[int], path: Path, f1_run: ExtractionRun | None = None) -> str:
    with path.open("w", encoding="utf-8") as out:
        pieces = ground_truth_export_text(discussion_ids=ids, run=f1_run, include_f1=bool(f1_run))
        for piece in pieces:
            out.write(piece)
    return ""


def _import(path: Path, admin, profile: str | None = None) -> str:
    with profiled(profile):
        summary = discussions_import_file(
            open_file=lambda: path.open("rb"), by=admin, run=ImportRun(source=path.name)
        )
    return summary.line()


def _delete_imported(tag: str) -> None:
    """What the import made: the discussions (a few per transaction, as the seed goes), its
    run, the users it named, with the history it wrote (the benchmark's own)."""
    ids = list(
        Discussion.objects.filter(external_id__startswith=f"{tag}-").values_list("pk", flat=True)
    )
    with history_purge():
        for start in range(0, len(ids), DELETE_CHUNK):
            with transaction.atomic():
                Discussion.objects.filter(pk__in=ids[start : start + DELETE_CHUNK]).delete()
        # The import's own run, and the seeded run it registered again from the file.
        ExtractionRun.objects.filter(
            Q(model_name=IMPORT_RUN_MODEL, prompt_version__startswith="ground-truth.json")
            | Q(prompt_version=tag)
        ).delete()
        get_user_model().objects.filter(username__startswith=tag).delete()
