"""The workflow's refusals, each with the HTTP status the API answers and a message meant for
the user. The feedback and assignment services raise them; views and the API show them."""

from __future__ import annotations

from audit.models import Feedback
from evalsite.api import DomainError
from metrics.families.payload.schema import PayloadError, PayloadIssue


class WorkflowError(DomainError):
    """A request the workflow refuses, with a message meant for the user."""

    status_code = 400


class NotAllowed(WorkflowError):
    status_code = 403


class UnknownItems(WorkflowError):
    """A well-formed request naming objects that do not exist where it says (404)."""

    status_code = 404


class WrongState(WorkflowError):
    """A well-formed request the object's current state refuses (e.g. approving a draft)."""

    status_code = 409


class StaleVersion(WorkflowError):
    """A save based on an old version; the current one is attached so the client can merge."""

    status_code = 409

    def __init__(self, feedback: Feedback, base_version: int | None):
        self.feedback = feedback
        self.current_version = feedback.version
        super().__init__(
            f"This feedback was changed by someone else (you edited version {base_version}, "
            f"the current version is {feedback.version}). Reload to see their changes."
        )


class NotReady(PayloadError, WorkflowError):
    """Coding with problems (see metrics.families.payload.rules): submit and approve refuse it, naming each one."""

    status_code = 422

    def __init__(self, issues: list[PayloadIssue], *, action: str):
        super().__init__(issues)
        self.detail = f"Fix these problems before you {action}."

    def __str__(self) -> str:
        return f"{self.detail} " + "; ".join(self.messages())
