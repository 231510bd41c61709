"""Fixtures for the REST API tests: token-authenticated clients and a small world to query.

Import the fixtures a test module needs by name (``from tests.api_fixtures import api, world``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Speaker, Statement
from audit.services import feedback_approve, feedback_start, feedback_submit
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    SpeakerFactory,
    StatementFactory,
)


@pytest.fixture
def api(db):
    """``api(user)``: an APIClient sending the user's token; ``api()``: anonymous."""

    def make(user=None) -> APIClient:
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@dataclass
class World:
    discussion: Discussion
    other_discussion: Discussion
    expert: Statement
    subject: Statement
    subject2: Statement
    run: ExtractionRun
    extraction: Extraction
    mine: Feedback  # the auditor's, submitted
    theirs: Feedback  # the second auditor's, draft


def make_discussion(summary: str, n_subject: int = 2) -> tuple[Discussion, list[Statement]]:
    discussion = DiscussionFactory(summary=summary)
    expert_speaker = SpeakerFactory(
        discussion=discussion, name="Interviewer", type=Speaker.Type.EXPERT
    )
    statements = [
        StatementFactory(discussion=discussion, speaker=expert_speaker, order=0, text="Tell me.")
    ]
    for order in range(1, n_subject + 1):
        statements.append(StatementFactory(discussion=discussion, order=order))
    return discussion, statements


def approve(statement: Statement, *, auditor, admin) -> Feedback:
    feedback = feedback_start(statement=statement, auditor=auditor)
    feedback = feedback_submit(feedback=feedback, user=auditor)
    return feedback_approve(feedback=feedback, admin=admin)


@pytest.fixture
def world(db, auditor, second_auditor, admin_user) -> World:
    discussion, (expert, subject, subject2) = make_discussion("Smith family")
    other, _ = make_discussion("Jones family", n_subject=1)
    run = ExtractionRunFactory(model_name="gpt-test", prompt_version="v1")
    extraction = ExtractionFactory(statement=subject, run=run)
    ExtractionFactory(statement=subject2, run=run)
    mine = feedback_submit(
        feedback=feedback_start(statement=subject, auditor=auditor), user=auditor
    )
    theirs = feedback_start(statement=subject, auditor=second_auditor)
    return World(
        discussion=discussion,
        other_discussion=other,
        expert=expert,
        subject=subject,
        subject2=subject2,
        run=run,
        extraction=extraction,
        mine=mine,
        theirs=theirs,
    )
