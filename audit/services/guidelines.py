"""The coding guidelines: admins write them in Markdown; every save is a new, immutable
version. Feedback records the version in force when it is submitted (``feedback_submit``)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit.models import GuidelineVersion
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, WorkflowError, WrongState
from evalsite.access import is_admin
from metrics.families.json_input import text_problem

MAX_GUIDELINES = 200_000  # characters of Markdown
MAX_NOTE = 300


def guideline_current() -> GuidelineVersion | None:
    """The version in force: the newest saved."""
    return GuidelineVersion.objects.select_related("author").order_by("-number").first()


def guideline_check_text(*, text: object, note: object = "") -> tuple[str, str]:
    """The text and note as they would be stored, or WorkflowError (400) naming the problem."""
    if not isinstance(text, str):
        raise WorkflowError("text: expected the guidelines as a string of Markdown.")
    if not isinstance(note, str):
        raise WorkflowError("note: expected a string.")
    for field, value, limit in (("text", text, MAX_GUIDELINES), ("note", note, MAX_NOTE)):
        problem = text_problem(value)
        if problem:
            raise WorkflowError(f"{field}: {problem}.")
        if len(value) > limit:
            raise WorkflowError(f"{field}: at most {limit:,} characters (got {len(value):,}).")
    if not text.strip():
        raise WorkflowError("text: the guidelines must not be empty.")
    return text, note.strip()


@transaction.atomic
def guideline_save(
    *, text: object, note: object = "", admin: User, base_number: int | None = None
) -> GuidelineVersion:
    """Save the guidelines as the next version (admins only; ``created`` is set on a new one).
    ``base_number`` is the version the admin edited: if another was saved since, nothing is
    saved (409). Saving the very text in force saves nothing and returns the version in force
    (also when a simultaneous save of the same text came first)."""
    if not is_admin(admin):
        raise NotAllowed("Only admins write the coding guidelines.")
    text, note = guideline_check_text(text=text, note=note)
    # One save at a time: wait for the version in force, then read the newest afresh (a save
    # that waited sees what the one before it saved).
    GuidelineVersion.objects.select_for_update(no_key=True).order_by("-number").first()
    current = GuidelineVersion.objects.order_by("-number").first()
    current_number = current.number if current else 0
    if current is not None and current.text == text:
        return current  # the same text again (a double submit): nothing to save
    if base_number is not None and base_number != current_number:
        raise WrongState(
            f"The guidelines were saved by someone else since you opened them (you edited "
            f"v{base_number}, the current version is v{current_number}). Nothing was saved; "
            f"reload and apply your change again."
        )
    try:
        with transaction.atomic():
            version = GuidelineVersion.objects.create(
                number=current_number + 1, text=text, note=note, author=admin
            )
    except IntegrityError as exc:  # the first version, saved simultaneously: nothing to lock
        winner = GuidelineVersion.objects.order_by("-number").first()
        if winner is not None and winner.text == text:
            return winner
        raise WrongState("The guidelines were saved by someone else meanwhile; reload.") from exc
    version.created = True
    number = version.number
    audit_log_record(
        actor=admin,
        action=Action.GUIDELINES,
        target=version,
        message=f"Saved the coding guidelines v{number}" + (f": {note}" if note else "."),
        details={"number": number, "characters": len(text), "note": note},
    )
    return version
