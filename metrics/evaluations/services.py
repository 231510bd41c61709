"""Imported evaluations: validate and store an uploaded run, compute its family in the
background, retry a failure, pair two runs for a comparison.

The upload page, ``POST /api/v1/evaluations/`` and ``manage.py import_evaluation`` all call
`evaluation_create`; the Celery task ``metrics.tasks.evaluation_compute`` calls
`evaluation_compute`. Files are parsed and validated (through the family's registry entry)
before anything is stored: a bad file raises `InputError` naming the file, the row or key and
the problem, a bad option `OptionError`, and nothing is written.
"""

from __future__ import annotations

import json
import logging
import secrets
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import SuspiciousFileOperation, ValidationError
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.text import get_valid_filename

from audit.services.audit_log import Action, audit_log_record
from evalsite.post_commit import after_commit
from evalsite.queue import TRANSIENT_ERRORS, task_enqueue_named
from metrics.evaluations.registry import UPLOADS, Family, InputFile, upload_get
from metrics.families.json_input import InputError
from metrics.families.selective.run_file import experiment_modes
from metrics.models import Evaluation, EvaluationFile
from metrics.results import json_ready

log = logging.getLogger(__name__)

Status = Evaluation.Status
Files = Mapping[str, Sequence[InputFile]]
NAME_MAX = 200
ORIGINAL_NAME_MAX = 255


class EvaluationStateError(ValidationError):
    """The evaluation is not in a state that allows this (e.g. retrying one that is done)."""


# --- input files -----------------------------------------------------------------------------


def max_file_bytes() -> int:
    return int(settings.EVALUATION_MAX_FILE_BYTES)


def max_upload_bytes() -> int:
    """The largest upload request: every file of the family taking the most, each at its
    limit, plus the usual limit for the rest of the form."""
    files = max(sum(role.max_files for role in family.roles) for family in UPLOADS.values())
    return max_file_bytes() * files + int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def _check_size(name: str, size: int) -> None:
    limit = max_file_bytes()
    if size > limit:
        raise InputError(name, "", f"file is {size:,} bytes; the limit is {limit:,} bytes")
    if size == 0:
        raise InputError(name, "", "file is empty")


def _check_text(item: InputFile) -> None:
    """Every input is text (JSON, JSON Lines, CSV): NUL bytes are refused before anything is
    stored, since they can be neither parsed reliably nor stored in PostgreSQL text."""
    position = item.data.find(b"\x00")
    if position >= 0:
        line = item.data.count(b"\n", 0, position) + 1
        raise InputError(item.name, f"line {line}", "contains a NUL byte; expected a text file")


def input_file_from_upload(upload: UploadedFile) -> InputFile:
    """An uploaded file as an InputFile; its size is checked before it is read."""
    name = upload.name or "upload"
    _check_size(name, upload.size or 0)
    upload.seek(0)
    return InputFile(name=name, data=upload.read())


def input_file_from_path(path: str | Path) -> InputFile:
    """A file on disk (management commands); its size is checked before it is read."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "", "no such file")
    _check_size(path.name, path.stat().st_size)
    return InputFile(name=path.name, data=path.read_bytes())


def _checked_files(family: Family, files: Files) -> dict[str, list[InputFile]]:
    """Roles known, required ones present, not too many per role, sizes within the limit."""
    known = [role.name for role in family.roles]
    checked: dict[str, list[InputFile]] = {}
    for role_name, items in files.items():
        role = family.role(role_name)
        if role is None:
            raise InputError(
                role_name, "", f"unknown file role for {family.name}; expected {', '.join(known)}"
            )
        items = list(items)
        if len(items) > role.max_files:
            raise InputError(role_name, "", f"at most {role.max_files} file(s), got {len(items)}")
        for item in items:
            _check_size(item.name, item.size)
            _check_text(item)
        if items:
            checked[role_name] = items
    for role in family.roles:
        if role.required and role.name not in checked:
            raise InputError(role.name, "", f"required file ({role.label}) is missing")
    return checked


@contextmanager
def _named_files(files: Mapping[str, Sequence[InputFile]]) -> Iterator[None]:
    """Families name a file by its role where they only see bytes: use the uploaded name."""
    try:
        yield
    except InputError as exc:
        items = files.get(exc.file)
        if items:
            raise InputError(f"{items[0].name} ({exc.file})", exc.location, exc.message) from exc
        raise


def _parse(family: Family, files: Files, options: Mapping[str, Any]) -> Any:
    with _named_files(files):
        try:
            return family.parse(files, options)
        except (InputError, ValidationError):
            raise
        except ValueError as exc:  # the family refused an option combination
            raise ValidationError(str(exc)) from exc


# --- create ----------------------------------------------------------------------------------


def _default_name(files: Mapping[str, Sequence[InputFile]]) -> str:
    first = next((items[0] for items in files.values() if items), None)
    return Path(first.name).stem if first else "evaluation"


def _storage_name(name: str) -> str:
    try:
        return get_valid_filename(Path(name).name)[:100] or "input"
    except SuspiciousFileOperation:
        return "input"


def _store_files(evaluation: Evaluation, files: Mapping[str, Sequence[InputFile]]) -> None:
    for role, items in files.items():
        for item in items:
            stored = EvaluationFile(
                evaluation=evaluation,
                role=role,
                original_name=item.name[:ORIGINAL_NAME_MAX],
                size=item.size,
            )
            stored.file.save(_storage_name(item.name), ContentFile(item.data), save=False)
            stored.save()


MODE_ROLE = "run"  # the file whose experiments a "mode" option names


def _first_mode_default(
    entry: Family, files: Mapping[str, Sequence[InputFile]], options: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """An empty ``mode`` is the first experiment's mode in the run file: a file with several
    experiments uploads as it is, from the page, the API and the command alike."""
    if options is not None and options.get("mode"):
        return dict(options)
    if not any(option.name == "mode" for option in entry.options):
        return dict(options) if options is not None else None
    modes = [mode for item in files.get(MODE_ROLE, []) for mode in experiment_modes(item.data)]
    defaulted = dict(options or {})
    if modes:
        defaulted["mode"] = modes[0]
    return defaulted


def evaluation_create(
    *,
    family: str,
    name: str | None,
    files: Files,
    options: Mapping[str, Any] | None,
    user: Any = None,
    paired: tuple[Evaluation, Evaluation] | None = None,
    queue: bool = True,
) -> Evaluation:
    """Validate the options and files, store the evaluation with its files, and queue its
    computation once the transaction commits (``queue=False``: the caller computes it, e.g.
    a management command in its own process). Raises InputError / OptionError; a refused
    upload stores nothing."""
    entry = upload_get(family)
    checked = _checked_files(entry, files)
    resolved = entry.resolve_options(_first_mode_default(entry, checked, options))
    _parse(entry, checked, resolved)
    name = (name or "").strip()[:NAME_MAX] or _default_name(checked)
    with transaction.atomic():
        evaluation = Evaluation.objects.create(
            family=entry.name,
            name=name,
            options=json_ready(resolved),
            uploaded_by=user if getattr(user, "is_authenticated", False) else None,
            paired_left=paired[0] if paired else None,
            paired_right=paired[1] if paired else None,
        )
        _store_files(evaluation, checked)
        _log_upload(evaluation, user, checked)
        if queue:
            after_commit(lambda: _enqueue(evaluation.pk))
    log.info("evaluation %s (%s) created by %s", evaluation.pk, entry.name, user)
    return evaluation


def _log_upload(
    evaluation: Evaluation, user: Any, files: Mapping[str, Sequence[InputFile]]
) -> None:
    names = {role: [f.name for f in items] for role, items in files.items()}
    audit_log_record(
        actor=evaluation.uploaded_by,
        action=Action.RUN_UPLOAD,
        target=evaluation,
        message=f"Uploaded evaluation run {evaluation.name!r} ({evaluation.family}).",
        details={"family": evaluation.family, "files": names, "by": str(user or "")},
    )


def _enqueue(evaluation_id: int) -> None:
    if task_enqueue_named("metrics.tasks.evaluation_compute", evaluation_id=evaluation_id):
        Evaluation.objects.filter(pk=evaluation_id).update(enqueued_at=timezone.now())


def evaluations_requeue(*, older_than: timedelta, after_outage: bool = False) -> int:
    """The sweep's part: queue again evaluations the broker never got (uploaded while it was
    down), or, after an outage, every queued one (the broker may have lost its queue)."""
    queued = Evaluation.objects.filter(
        status=Status.QUEUED, created_at__lte=timezone.now() - older_than
    )
    if not after_outage:
        queued = queued.filter(enqueued_at__isnull=True)
    ids = list(queued.values_list("pk", flat=True))
    for evaluation_id in ids:
        _enqueue(evaluation_id)
    return len(ids)


# --- compute ---------------------------------------------------------------------------------


def artifact_compute(
    *, family: str, files: Files, options: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Validate and compute without storing anything (the ``evaluate_*`` commands): the same
    registry parse and compute functions as a stored evaluation."""
    entry = upload_get(family)
    checked = _checked_files(entry, files)
    resolved = entry.resolve_options(_first_mode_default(entry, checked, options))
    return _as_json(entry.compute(_parse(entry, checked, resolved), resolved))


def _as_json(artifact: Any) -> dict[str, Any]:
    """The artifact as stored: plain JSON, or a ValueError/TypeError (a family bug)."""
    return json.loads(json.dumps(json_ready(artifact), allow_nan=False))


def evaluation_files(evaluation: Evaluation) -> dict[str, list[InputFile]]:
    """The stored input files, by role, in upload order."""
    files: dict[str, list[InputFile]] = {}
    for stored in evaluation.files.order_by("id"):
        with stored.file.open("rb") as handle:
            data = handle.read()
        files.setdefault(stored.role, []).append(InputFile(stored.original_name, data))
    return files


def _claim(evaluation_id: int) -> bool:
    """Queued → running. A redelivered task (acks late) finds it running and recomputes;
    a done or failed evaluation is left alone."""
    return bool(
        Evaluation.objects.filter(
            pk=evaluation_id, status__in=[Status.QUEUED, Status.RUNNING]
        ).update(status=Status.RUNNING, started_at=timezone.now(), finished_at=None, error="")
    )


def error_text(exc: BaseException) -> str:
    """What a user sees of a failure: input and option errors in full; for a bug, the last
    line of the traceback and where it was raised (the full traceback goes to the log)."""
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    lines = traceback.format_exception_only(type(exc), exc)
    last = lines[-1].strip() if lines else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        frame = frames[-1]
        last += f"\n  at {_short_path(frame.filename)}:{frame.lineno} in {frame.name}"
    return last


def _short_path(filename: str) -> str:
    base = str(settings.BASE_DIR) + "/"
    return filename[len(base) :] if filename.startswith(base) else filename


def _finish(evaluation_id: int, **fields: Any) -> None:
    Evaluation.objects.filter(pk=evaluation_id).update(finished_at=timezone.now(), **fields)


def evaluation_record_failure(*, evaluation_id: int, error: str) -> None:
    _finish(evaluation_id, status=Status.FAILED, error=error, artifact=None)


def evaluation_compute(*, evaluation_id: int) -> Evaluation | None:
    """Compute a queued evaluation's artifact: running → done, or failed with the error text.
    Transient database errors propagate (the task retries them)."""
    if not _claim(evaluation_id):
        return None
    evaluation = Evaluation.objects.get(pk=evaluation_id)
    try:
        entry = upload_get(evaluation.family)
        options = entry.resolve_options(evaluation.options)
        files = evaluation_files(evaluation)
        artifact = _as_json(entry.compute(_parse(entry, files, options), options))
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        if not isinstance(exc, InputError | ValidationError):
            log.exception("evaluation %s (%s) failed", evaluation_id, evaluation.family)
        evaluation_record_failure(evaluation_id=evaluation_id, error=error_text(exc))
    else:
        _finish(evaluation_id, status=Status.DONE, artifact=artifact, error="")
    evaluation.refresh_from_db()
    return evaluation


@contextmanager
def evaluation_failure_recorded(*, evaluation_id: int) -> Iterator[None]:
    """For the task: anything escaping the service (but a transient database error, which is
    retried) marks the evaluation failed instead of vanishing."""
    try:
        yield
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        log.exception("evaluation task %s failed", evaluation_id)
        evaluation_record_failure(evaluation_id=evaluation_id, error=error_text(exc))


def evaluation_retry(*, evaluation: Evaluation, user: Any = None) -> Evaluation:
    """Queue a failed evaluation again (same stored files and options), or queue again one
    still waiting (e.g. uploaded while the task broker was down)."""
    with transaction.atomic():
        updated = Evaluation.objects.filter(
            pk=evaluation.pk, status__in=[Status.FAILED, Status.QUEUED]
        ).update(status=Status.QUEUED, error="", artifact=None, started_at=None, finished_at=None)
        if not updated:
            raise EvaluationStateError("Only a failed or queued evaluation can be retried.")
        after_commit(lambda: _enqueue(evaluation.pk))
    log.info("evaluation %s retried by %s", evaluation.pk, user)
    evaluation.refresh_from_db()
    return evaluation


# --- pairs (comparison) ----------------------------------------------------------------------


def evaluation_pair_get(*, left: Evaluation, right: Evaluation) -> Evaluation | None:
    """The latest paired evaluation computed from these two, if any."""
    return Evaluation.objects.filter(paired_left=left, paired_right=right).first()


def _single_mode(evaluation: Evaluation) -> str | None:
    inputs = (evaluation.artifact or {}).get("inputs") or []
    if evaluation.status != Status.DONE or len(inputs) != 1:
        raise EvaluationStateError(
            f"Evaluation {evaluation.pk} must be done and hold a single run to be paired."
        )
    return inputs[0].get("mode")


def evaluation_pair_create(
    *, left: Evaluation, right: Evaluation, user: Any = None, intersection_only: bool = False
) -> Evaluation:
    """A new evaluation computing the paired artifact (deltas = right − left) from the two
    evaluations' stored inputs, with the left one's options. It is computed in the
    background like any other and linked to both (`evaluation_pair_get`)."""
    entry = upload_get(left.family)
    if left.pk == right.pk or left.family != right.family or not entry.pairable:
        raise EvaluationStateError("Pick two different evaluations of a family that pairs.")
    options = {
        **left.options,
        "mode": _single_mode(left),
        "second_mode": _single_mode(right),
        "intersection_only": intersection_only,
    }
    (role,) = [role.name for role in entry.roles]
    files = {role: evaluation_files(left)[role] + evaluation_files(right)[role]}
    return evaluation_create(
        family=entry.name,
        name=f"{left.name} vs {right.name} (paired)",
        files=files,
        options=options,
        user=user,
        paired=(left, right),
    )


# --- reading ---------------------------------------------------------------------------------


def evaluations_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Evaluation]:
    """Evaluations, newest first; filters: family, status, q (name contains)."""
    filters = filters or {}
    queryset = Evaluation.objects.select_related("uploaded_by").prefetch_related("files")
    if filters.get("family"):
        queryset = queryset.filter(family=filters["family"])
    if filters.get("status"):
        queryset = queryset.filter(status=filters["status"])
    if filters.get("q"):
        queryset = queryset.filter(name__icontains=filters["q"])
    return queryset


def evaluation_card(evaluation: Evaluation) -> dict[str, Any] | None:
    """The family card's context of a done evaluation (None otherwise)."""
    if evaluation.status != Status.DONE or not evaluation.artifact:
        return None
    return upload_get(evaluation.family).card_context(evaluation.artifact)


# --- files kept between tries of the upload form -----------------------------------------

KEPT_SECONDS = 3600


def _kept_key(user: Any, token: str) -> str:
    return f"evaluation-upload-kept:{getattr(user, 'pk', None)}:{token}"


def upload_kept_store(*, user: Any, files: Mapping[str, Sequence[InputFile]]) -> str:
    """Keep the files of a refused upload for an hour, for this user only; the token goes
    back with the form so that the next try need not choose them again."""
    if not files:
        return ""
    token = secrets.token_urlsafe(16)
    stored = {role: [(item.name, item.data) for item in items] for role, items in files.items()}
    cache.set(_kept_key(user, token), stored, KEPT_SECONDS)
    return token


def upload_kept_read(*, user: Any, token: str) -> dict[str, list[InputFile]]:
    """The files kept under this user's token ({} when unknown, expired or someone else's)."""
    if not token or len(token) > 64:
        return {}
    stored = cache.get(_kept_key(user, token)) or {}
    return {role: [InputFile(name, data) for name, data in items] for role, items in stored.items()}
