"""Two auditors' codings of one statement that differ in one event's date."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest

from audit.models import Feedback, Statement
from audit.services import feedback_reject, feedback_save, feedback_submit
from tests.factories import SIMPLE_PDP, ExtractionFactory, FeedbackFactory, StatementFactory

MOVED = {"kind": "moved", "person": -1, "description": "Moved to Boston", "dateTime": "1990"}


def coding(*, moved_in: str, offset: int = 0) -> dict:
    """SIMPLE_PDP plus a move, with every id shifted by offset (coders number items apart)."""
    payload = copy.deepcopy(SIMPLE_PDP)
    payload["events"].append({**MOVED, "id": -5, "dateTime": moved_in})

    def shift(value):
        return value - offset if isinstance(value, int) and value < 0 else value

    for kind in ("people", "events", "pair_bonds"):
        for item in payload[kind]:
            for name in ("id", "person", "spouse", "person_a", "person_b"):
                if name in item:
                    item[name] = shift(item[name])
    return payload


@dataclass
class Codings:
    statement: Statement
    alice: Feedback
    bob: Feedback


@pytest.fixture
def second_admin(make_user):
    return make_user("dave", role="admin")


@pytest.fixture
def two_codings(auditor, second_auditor) -> Codings:
    statement = StatementFactory()
    ExtractionFactory(statement=statement)
    alice = FeedbackFactory(statement=statement, auditor=auditor, edited_extraction=coding(
        moved_in="1990"))  # fmt: skip
    bob = FeedbackFactory(
        statement=statement, auditor=second_auditor, edited_extraction=coding(moved_in="1991",
        offset=10))  # fmt: skip
    return Codings(statement, alice, bob)


def alice_resubmits_the_move_as_a_new_event(codings, admin) -> None:
    """alice's coding is sent back and she codes the move afresh (a new event id)."""
    feedback_reject(feedback=codings.alice, admin=admin, reason="Check the move")
    payload = copy.deepcopy(codings.alice.edited_extraction)
    move = next(e for e in payload["events"] if e["id"] == -5)
    move.update(id=-9, description="Moved to Ohio")
    codings.alice.refresh_from_db()
    saved = feedback_save(
        feedback=codings.alice, user=codings.alice.auditor, edited_extraction=payload,
        base_version=None,
    )  # fmt: skip
    feedback_submit(feedback=saved, user=codings.alice.auditor)
