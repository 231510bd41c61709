"""Adjudication of a statement's codings: the Django side of the library's alignment
(metrics.families.extraction.adjudication), with the F1 matcher's settings in force.

audit stores the decisions and the produced coding (audit.services.adjudication); this module
aligns the codings, checks the reviewer's choices against the alignment and hands audit the
merged payload and its counts. The HTML view and the API both call these functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User

from audit.models import Adjudication, Feedback, Statement
from audit.selectors.adjudication import adjudication_codings
from audit.services.adjudication import (
    adjudication_check_adjudicator,
    adjudication_choices_reset,
    adjudication_choose,
    adjudication_produce,
    adjudication_remerge,
)
from audit.services.errors import UnknownItems, WorkflowError, WrongState
from evalsite.match_settings import match_settings
from metrics.families.extraction.adjudication import (
    DELETE_KEY,
    AlignedItem,
    Alignment,
    BadChoice,
    align_codings,
    chosen_version,
)


class Unresolved(WorkflowError):
    status_code = 422


@dataclass
class AdjudicationState:
    """A statement's codings aligned, with the reviewer's choices so far."""

    statement: Statement
    codings: list[Feedback]
    alignment: Alignment
    record: Adjudication | None
    choices: dict[str, Any] = field(default_factory=dict)

    @property
    def coder_ids(self) -> list[int]:
        return [f.auditor_id for f in self.codings]

    @property
    def coder_names(self) -> list[str]:
        return [f.auditor.get_username() for f in self.codings]

    @property
    def basis(self) -> dict[str, int]:
        """The codings as they are now: feedback id -> version (what a choice is made on)."""
        return {str(f.pk): f.version for f in self.codings}

    @property
    def reset_choices(self) -> list[dict[str, Any]]:
        """Earlier choices reset because the codings changed under them, with the reason."""
        return list(self.record.reset_choices) if self.record is not None else []

    @property
    def unresolved(self) -> list[str]:
        return self.alignment.unresolved(self.choices)

    @property
    def merged(self) -> dict[str, Any]:
        return self.alignment.merge(self.choices)

    @property
    def feedback(self) -> Feedback | None:
        return self.record.feedback if self.record is not None else None

    def chosen(self, item: AlignedItem) -> Any:
        """The version the merge takes for an item (None: left out or not chosen yet)."""
        if item.unanimous:
            return item.agreed
        choice = self.choices.get(item.key)
        return chosen_version(item, choice) if choice is not None else None


def adjudication_state(*, statement: Statement) -> AdjudicationState:
    codings = list(adjudication_codings(statement_id=statement.pk))
    alignment = align_codings([f.edited_extraction for f in codings], settings=match_settings())
    record = (
        Adjudication.objects.select_related("feedback__auditor", "adjudicator")
        .filter(statement=statement)
        .first()
    )
    stored = record.choices if record is not None else {}
    # Choices about items the codings no longer have (a coder changed their coding since) no
    # longer apply: they are reset, with the reason kept for the reviewer and logged.
    disputed = {item.key: item for item in alignment.disputed}
    keys = set(disputed)
    stale = [
        key for key, choice in stored.items() if key not in keys or _moved(disputed[key], choice)
    ]
    if record is not None and stale and not (record.feedback and record.feedback.is_approved):
        reason, actor = _why_reset(record.basis, codings)
        adjudication_choices_reset(statement=statement, keys=stale, reason=reason, actor=actor)
        record.refresh_from_db(fields=["choices", "reset_choices", "updated_at"])
        stored = record.choices
    choices = {key: choice for key, choice in stored.items() if key in keys}
    return AdjudicationState(statement, codings, alignment, record, choices)


def _moved(item: AlignedItem, choice: Any) -> bool:
    """A coder's version was taken and that coder's version of the item differs now: the
    choice would take other content than the reviewer saw, so it no longer applies."""
    if not isinstance(choice, dict) or "took" not in choice:
        return False
    coder = choice.get("coder")
    now = (
        item.versions[coder] if isinstance(coder, int) and 0 <= coder < len(item.versions) else None
    )
    return bool(now != choice["took"])


def _why_reset(basis: dict[str, int], codings: list[Feedback]) -> tuple[str, User | None]:
    """Which coders changed their codings since the choices were made (basis: feedback id ->
    version then), as a sentence; and the one coder who did, if it was one."""
    if not basis:  # choices made before the basis was recorded
        return "a coding changed since these choices were made.", None
    changed: list[str] = []
    actors: list[User] = []
    for f in codings:
        then = basis.get(str(f.pk))
        name = f.auditor.get_username()
        if then is None:
            changed.append(f"{name}'s coding was added")
            actors.append(f.auditor)
        elif then != f.version:
            changed.append(f"{name} changed their coding (v{then} → v{f.version})")
            actors.append(f.auditor)
    current = {str(f.pk) for f in codings}
    gone = [pk for pk in basis if pk not in current]
    if gone:
        changed.append(f"{len(gone)} coding{'' if len(gone) == 1 else 's'} left the merge")
    if not changed:
        changed.append("the alignment of the codings changed")
    return "; ".join(changed) + ".", actors[0] if len(actors) == 1 else None


def adjudication_choice_set(
    *, statement: Statement, admin: User, key: str, choice: Any
) -> AdjudicationState:
    """Pick one coder's version of a disputed item ({"coder": n}) or edit it ({"edit": item})."""
    state = adjudication_state(statement=statement)
    adjudication_check_adjudicator(statement=statement, admin=admin, coder_ids=state.coder_ids)
    try:
        state.alignment.item(key)
    except BadChoice as exc:
        raise UnknownItems(str(exc)) from None
    try:
        checked = state.alignment.check_choice(key, choice)
    except BadChoice as exc:
        error = WrongState if "unanimous" in str(exc) else WorkflowError
        raise error(str(exc)) from None
    if "coder" in checked:  # what it took, to notice when that coder's version changes
        checked = {**checked, "took": chosen_version(state.alignment.item(key), checked)}
    adjudication_choose(
        statement=statement,
        admin=admin,
        coder_ids=state.coder_ids,
        key=key,
        choice=checked,
        basis=state.basis,
    )
    return adjudication_state(statement=statement)


def adjudication_reset(*, statement: Statement, admin: User) -> AdjudicationState:
    """Re-merge: drop every choice, back to the automatic merge."""
    state = adjudication_state(statement=statement)
    adjudication_remerge(statement=statement, admin=admin, coder_ids=state.coder_ids)
    return adjudication_state(statement=statement)


def adjudication_submit(*, statement: Statement, admin: User) -> AdjudicationState:
    """Produce the merged coding (every disputed item decided) as submitted ground truth."""
    state = adjudication_state(statement=statement)
    unresolved = state.unresolved
    if unresolved and len(state.codings) >= 2:
        raise Unresolved(
            f"{len(unresolved)} disputed item{'' if len(unresolved) == 1 else 's'} still "
            f"need{'s' if len(unresolved) == 1 else ''} a choice: {', '.join(unresolved)}."
        )
    adjudication_produce(
        statement=statement,
        admin=admin,
        coder_ids=state.coder_ids,
        payload=state.merged,
        choices=state.choices,
        unanimous_items=state.alignment.unanimous_count,
        adjudicated_items=state.alignment.disputed_count,
    )
    return adjudication_state(statement=statement)


def adjudication_body(state: AdjudicationState) -> dict[str, Any]:
    """The API's view of a statement's adjudication."""
    feedback = state.feedback
    return {
        "statement": state.statement.pk,
        "coders": [
            {"index": i, "auditor": f.auditor.get_username(), "feedback": f.pk}
            for i, f in enumerate(state.codings)
        ],
        "unanimous_items": state.alignment.unanimous_count,
        "disputed_items": state.alignment.disputed_count,
        "unresolved": state.unresolved,
        "reset_choices": state.reset_choices,
        "items": [
            {
                "key": item.key,
                "kind": item.kind,
                "unanimous": item.unanimous,
                "versions": item.versions,
                "choice": state.choices.get(item.key),
            }
            for item in state.alignment.items
        ],
        "merged": state.merged,
        "feedback": feedback.pk if feedback is not None else None,
        "feedback_status": feedback.status if feedback is not None else None,
        "feedback_version": feedback.version if feedback is not None else None,
    }


__all__ = [
    "DELETE_KEY",
    "AdjudicationState",
    "Unresolved",
    "adjudication_body",
    "adjudication_choice_set",
    "adjudication_reset",
    "adjudication_state",
    "adjudication_submit",
]
