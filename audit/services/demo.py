"""The deterministic demo data set: family-history discussions, two AI runs, two auditors;
beside it, runs as experiments (replicates, a whole-discussion run, a ground-truth snapshot) and
the review-triage example."""

from __future__ import annotations

import copy
import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from audit.definitions import definitions_markdown
from audit.derived.tallies import codings_created, tallies_batched
from audit.models import (
    Comment,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    GroundTruthSnapshot,
    GuidelineVersion,
    RunConfiguration,
    Speaker,
    Statement,
    TriageSettings,
)
from audit.services.assignments import AssignmentPlan, assignments_create
from audit.services.feedback import feedback_problems
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from audit.services.snapshots import snapshot_freeze
from audit.signals import (
    coding_changed_send,
    extractions_changed_send,
    ground_truth_changed_send,
    triage_changed_send,
)
from audit.synthetic import SyntheticDiscussion, extraction_run, generate_discussion, noisy_delta
from evalsite.access import ensure_role_groups
from metrics.families.payload.items import cumulative, payload_items
from metrics.families.payload.schema import validate_pdp

DEMO_USERS = (
    ("admin", "admin-demo-pass", "admin"),
    ("auditor1", "auditor-demo-pass", "auditor"),
    ("auditor2", "auditor-demo-pass", "auditor"),
)
N_DISCUSSIONS = 12
DEMO_UNTOUCHED = ("demo-10", "demo-11", "demo-12")  # no coding; assigned to the auditors
RUNS = (("gpt-4o-mini", "v1-baseline", 0.45, 1), ("gpt-4o", "v2-examples", 0.2, 2))


@dataclass
class DemoSummary:
    discussions_created: int
    statements_created: int
    users: tuple[tuple[str, str, str], ...] = DEMO_USERS


def demo_users_ensure() -> dict[str, User]:
    """Create (or reset the passwords of) the demo accounts."""
    user_model = get_user_model()
    auditor_group, admin_group = ensure_role_groups()
    users: dict[str, User] = {}
    for username, password, role in DEMO_USERS:
        user, _ = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@example.com"}
        )
        user.set_password(password)
        user.is_staff = role == "admin"
        user.save()
        user.groups.add(admin_group if role == "admin" else auditor_group)
        users[username] = user
    return users


def _statement_count(index: int) -> int:
    """10–20 subject statements (20–40 with the expert's questions), varied per discussion."""
    return 10 + (index * 7) % 11


GUIDELINES_INTRO = """# Coding guidelines

Code what **this statement** adds to the family picture: the people, events and pair bonds it
mentions for the first time, and changes to ones already coded. Code what is said, not what
you guess.

## When to create a person

- Create a person when the statement names them or refers to exactly one person
  ("my mother", "her second husband"), even without a name.
- Do not create a person for groups ("the cousins"), hypothetical people or people only
  mentioned as a comparison.
- Someone already coded in an earlier statement is the *same* person: refer to them, do not
  create them again. Correct a wrong name there with a delete and a new item only if the
  earlier coding is wrong.

## Events

Every event has a kind (definitions below). Code a **shift** when the statement describes a
change in a person's symptom, anxiety, relationship pattern or functioning, and code the
variables that changed; leave the others empty. Date it as precisely as the statement allows
and set the date certainty.

### Examples

- "After Dad lost his job he started drinking again" → a `shift` for Dad: symptom `up`,
  anxiety `up`.
- "I stopped calling my sister after the funeral" → a `shift` for the speaker: relationship
  `cutoff`, R target the sister.
- "Mom does everything for my brother" → a `shift` for Mom: relationship `overfunctioning`,
  R target the brother.

"""


def demo_guidelines_text() -> str:
    """The demo's first guidelines: how to code, then the definitions of every code."""
    return GUIDELINES_INTRO + definitions_markdown()


def demo_guidelines_ensure(admin: User) -> GuidelineVersion:
    """The guidelines in force, or the demo's as v1 when there are none yet."""
    current = GuidelineVersion.objects.order_by("-number").first()
    if current is not None:
        return current
    return GuidelineVersion.objects.create(
        number=1, text=demo_guidelines_text(), note="Demo guidelines", author=admin
    )


@transaction.atomic
def demo_seed(*, users: dict[str, User] | None = None) -> DemoSummary:
    """Idempotent: discussions already present (by external id) are left as they are.
    ``users``: the demo accounts ``demo_users_ensure`` already made (each password is hashed
    on every reset, the most of a seed with nothing left to create)."""
    users = users or demo_users_ensure()
    guidelines = demo_guidelines_ensure(users["admin"])
    runs = [_first_run(model, prompt, noise) for model, prompt, noise, _ in RUNS]
    created = statements = 0
    with tallies_batched():  # one recount per (discussion, coder) pair, not one per coding
        for index in range(N_DISCUSSIONS):
            external_id = _external_id(index)
            if Discussion.objects.filter(external_id=external_id).exists():
                continue
            synthetic = _synthetic(index)
            statements += _store_discussion(index, external_id, synthetic, runs, users, guidelines)
            created += 1
    touched = list(
        Statement.objects.filter(discussion__external_id__startswith="demo-").values_list(
            "pk", flat=True
        )
    )
    if created:
        ground_truth_changed_send(statement_ids=touched, reason="demo data")
        coding_changed_send(reason="coding changed")  # the seeded codings, sent ones among them
        _assign_untouched(users)
    return DemoSummary(discussions_created=created, statements_created=statements)


def _first_run(model: str, prompt: str, noise: float) -> ExtractionRun:
    """The first replicate of a demo configuration, created if new."""
    configuration = RunConfiguration.plain(model_name=model, prompt_version=prompt)
    run = configuration.runs.filter(replicate=1).first()
    if run is None:
        run = ExtractionRun.objects.create(
            configuration=configuration, notes=f"demo run, noise {noise}"
        )
    return run


def _external_id(index: int) -> str:
    return f"demo-{index + 1:02d}"


def _synthetic(index: int) -> SyntheticDiscussion:
    return generate_discussion(
        f"demo-{index}", _statement_count(index), noise=RUNS[0][2], ai_run=RUNS[0][3]
    )


def _assign_untouched(users: dict[str, User]) -> None:
    """The discussions nobody coded yet (10–12) go to the two auditors in turn, a fifth of
    their statements to both, so "My assignments" and the team page have something to show."""
    plan = AssignmentPlan(
        discussions=list(
            Discussion.objects.filter(external_id__in=DEMO_UNTOUCHED).order_by("external_id")
        ),
        auditors=[users["auditor1"], users["auditor2"]],
        overlap_share=0.2,
        due=timezone.localdate() + dt.timedelta(days=7),
    )
    assignments_create(plan=plan, admin=users["admin"])


def _store_discussion(
    index: int, external_id: str, synthetic: SyntheticDiscussion, runs, users, guidelines
) -> int:
    discussion = Discussion.objects.create(
        summary=synthetic.summary,
        external_id=external_id,
        date=dt.date(2025, 1, 6) + dt.timedelta(days=9 * index),
    )
    subject = Speaker.objects.create(
        discussion=discussion, name=synthetic.subject_name, type=Speaker.Type.SUBJECT
    )
    expert = Speaker.objects.create(
        discussion=discussion, name="Dr. Bowen (expert)", type=Speaker.Type.EXPERT
    )
    run_deltas = [
        extraction_run(synthetic, noise=noise, ai_run=ai_run) for _, _, noise, ai_run in RUNS
    ]
    subject_index = 0
    for item in synthetic.statements:
        statement = Statement.objects.create(
            discussion=discussion,
            speaker=subject if item.speaker == "subject" else expert,
            order=item.order,
            text=item.text,
        )
        if item.speaker != "subject":
            continue
        extractions = [
            Extraction.objects.create(
                statement=statement, run=run, pdp_deltas=validate_pdp(deltas[subject_index])
            )
            for run, deltas in zip(runs, run_deltas, strict=True)
        ]
        _store_feedback(
            index, subject_index, statement, item.gt_delta, extractions[-1], users, guidelines
        )
        subject_index += 1
    return len(synthetic.statements)


def _store_feedback(
    index: int,
    position: int,
    statement,
    gt_delta: dict[str, Any] | None,
    source,
    users,
    guidelines: GuidelineVersion,
) -> None:
    """Discussions 1–6 approved, 7–8 submitted, 9 drafted with one rejection, 10–12 untouched;
    auditor2 double-codes discussions 1–3 so inter-auditor agreement has data.

    Every submitted or approved coding passes the ground-truth checks (metrics.families.payload.rules), as one
    coded through the UI would."""
    if index >= 9:
        return
    status = Feedback.Status.APPROVED if index < 6 else Feedback.Status.SUBMITTED
    if index == 8:
        status = Feedback.Status.REJECTED if position == 0 else Feedback.Status.DRAFT
    now = timezone.now()
    coding = _codable(statement, validate_pdp(gt_delta))
    reason = "Missing the father's remarriage."
    feedback = Feedback.objects.create(
        statement=statement,
        auditor=users["auditor1"],
        edited_extraction=coding,
        source_extraction=source,
        status=status,
        approved_by=users["admin"] if status == Feedback.Status.APPROVED else None,
        approved_at=now if status == Feedback.Status.APPROVED else None,
        rejection_reason=reason if status == Feedback.Status.REJECTED else "",
        guideline_version=None if status == Feedback.Status.DRAFT else guidelines,
    )
    if status == Feedback.Status.REJECTED:  # the reason is also a comment in the thread
        Comment.objects.create(
            statement=statement,
            feedback=feedback,
            author=users["admin"],
            kind=Comment.Kind.REJECTION,
            body=reason,
        )
    codings = [feedback]
    if index < 3:
        codings.append(
            Feedback.objects.create(
                statement=statement,
                auditor=users["auditor2"],
                edited_extraction=_second_coding(statement, position, coding, source.pdp_deltas),
                source_extraction=source,
                status=Feedback.Status.SUBMITTED,
                guideline_version=guidelines,
            )
        )
    codings_created(feedbacks=codings)


def _problems(statement, payload: dict) -> list:
    return feedback_problems(feedback=Feedback(statement=statement), payload=payload)


def _codable(statement, payload: dict) -> dict:
    """The generator's family links a person to their parents' bond even where no statement
    names that bond; a coder would leave the link out, so the demo does too."""
    unresolved = {
        issue.path for issue in _problems(statement, payload) if issue.path.endswith(".parents")
    }
    for index, person in enumerate(payload.get("people") or []):
        if f"people[{index}].parents" in unresolved:
            person["parents"] = None
    return payload


def _second_coding(statement, position: int, coding: dict, ai_delta: dict) -> dict:
    """auditor2 keeps the AI's extraction on every third statement (a real disagreement),
    unless it would not pass the checks; then they code like auditor1 but miss the last event."""
    if position % 3 == 0:
        kept = _codable(statement, validate_pdp(ai_delta))
        if not _problems(statement, kept):
            return kept
        events = coding.get("events") or []
        return {**coding, "events": events[:-1]} if events else coding
    return coding


# --- runs as experiments -------------------------------------------------------------------------

# Each demo configuration is run three times (replicates 2 and 3: the same prompt again, another
# draw of its noise), one configuration extracts each demo discussion whole (one PDP per
# discussion, scored by cumulative F1), and the approved ground truth is frozen as a snapshot.
REPLICATES = 3
WHOLE_RUN = ("gpt-4o", "v3-extract-full", 0.2, 5)  # model, prompt version, noise, AI seed
SNAPSHOT_NAME = "GT v1"


@dataclass
class DemoExperiments:
    runs_created: int
    discussion_extractions_created: int
    snapshot: GroundTruthSnapshot | None  # the one frozen now (None: it was there)


@transaction.atomic
def demo_experiments_seed(*, users: dict[str, User] | None = None) -> DemoExperiments:
    """Add the replicates, the whole-discussion run and the snapshot to the demo discussions
    (idempotent: each run by its external id, each extraction once, the snapshot by its name).
    Kept apart from ``demo_seed`` so the figures of the original demo set stay as they were."""
    users = users or demo_users_ensure()
    subjects = _demo_subject_statements()
    runs_created = 0
    new: list[Extraction] = []
    for model, prompt, noise, ai_run in RUNS:
        for replicate in range(2, REPLICATES + 1):
            run, created = run_register(
                spec=ConfigurationSpec(model_name=model, prompt_version=prompt),
                notes=f"demo replicate {replicate}, noise {noise}",
                external_id=f"demo:{prompt}:{replicate}",
                by=users["admin"],
            )
            runs_created += int(created)
            new += _replicate_extractions(
                run, subjects, noise=noise, ai_run=ai_run + 10 * replicate
            )
    Extraction.objects.bulk_create(new)
    if new:  # one announcement: the results of every replicate follow together
        extractions_changed_send(
            statement_ids=[e.statement_id for e in new],
            run_ids=[e.run_id for e in new],
            reason="demo replicates",
        )
    whole, created = _whole_run(users["admin"])
    runs_created += int(created)
    extracted = _whole_extractions(whole, subjects)
    snapshot = None
    if not GroundTruthSnapshot.objects.filter(name=SNAPSHOT_NAME).exists():
        snapshot = snapshot_freeze(
            name=SNAPSHOT_NAME,
            note="The approved ground truth when the demo data was loaded (on a fresh database: "
            "discussions demo-01 to demo-06, before the review-triage example).",
            by=users["admin"],
        )
    return DemoExperiments(runs_created, extracted, snapshot)


def _demo_subject_statements() -> dict[int, tuple[Discussion, list[Statement], Any]]:
    """Per demo discussion index: the discussion, its subject statements in order, and the
    synthetic discussion they were made from."""
    found = {}
    for index in range(N_DISCUSSIONS):
        discussion = Discussion.objects.filter(external_id=_external_id(index)).first()
        if discussion is None:
            continue
        statements = list(discussion.statements.subjects().order_by("order"))
        found[index] = (discussion, statements, _synthetic(index))
    return found


def _replicate_extractions(
    run: ExtractionRun, subjects: dict, *, noise: float, ai_run: int
) -> list[Extraction]:
    """The replicate's extraction of every demo subject statement it has none of yet (not
    saved)."""
    have = set(Extraction.objects.filter(run=run).values_list("statement_id", flat=True))
    new = []
    for _discussion, statements, synthetic in subjects.values():
        deltas = extraction_run(synthetic, noise=noise, ai_run=ai_run)
        for statement, delta in zip(statements, deltas, strict=True):
            if statement.pk not in have:
                new.append(Extraction(statement=statement, run=run, pdp_deltas=validate_pdp(delta)))
    return new


def _whole_run(admin: User) -> tuple[ExtractionRun, bool]:
    model, prompt, noise, _ = WHOLE_RUN
    spec = ConfigurationSpec(
        model_name=model,
        prompt_version=prompt,
        unit=RunConfiguration.Unit.DISCUSSION,
        configuration_notes="One extraction per whole discussion (extract_full).",
    )
    return run_register(
        spec=spec, notes=f"demo run, noise {noise}", external_id=f"demo:{prompt}:1", by=admin
    )


def _whole_extractions(run: ExtractionRun, subjects: dict) -> int:
    """One PDP per demo discussion without one: what the AI extracted reading it whole."""
    _, _, noise, ai_run = WHOLE_RUN
    have = set(run.discussion_extractions.values_list("discussion_id", flat=True))
    items = [
        {
            "discussion": discussion.pk,
            "pdp": {
                **cumulative(
                    validate_pdp(d) for d in extraction_run(synthetic, noise=noise, ai_run=ai_run)
                ),
                "delete": [],
            },
        }
        for discussion, _statements, synthetic in subjects.values()
        if discussion.pk not in have
    ]
    if items:
        discussion_extractions_import(run=run, items=items)
    return len(items)


# --- the review-triage example -------------------------------------------------------------------

# A later batch the second run extracted alone, on which it is good: 5 subject statements per
# discussion, most extracted exactly and confidently; 34 discussions approved (the calibration
# set: at 10% risk and 10% failure probability the bound needs at least 22 discussions), 8 left
# for the auditors, where triage accepts the confident statements.
TRIAGE_DISCUSSIONS = 42
TRIAGE_APPROVED = 34
TRIAGE_STATEMENTS = 5
TRIAGE_ERROR_RATE = 0.15


@transaction.atomic
def demo_triage_seed(*, users: dict[str, User] | None = None) -> int:
    """Add the triage example and turn triage on for the second run (idempotent). Kept apart
    from ``demo_seed`` so the figures of the original demo set stay as they were. Returns
    how many discussions were created."""
    users = users or demo_users_ensure()
    run = _first_run(*RUNS[1][:3])
    created: list[int] = []
    with tallies_batched():
        for index in range(TRIAGE_DISCUSSIONS):
            external_id = f"demo-triage-{index + 1:02d}"
            if Discussion.objects.filter(external_id=external_id).exists():
                continue
            created += _store_triage_discussion(index, external_id, run, users)
    TriageSettings.objects.get_or_create(
        run=run,
        defaults={
            "enabled": True,
            "alpha": 0.10,
            "delta": 0.10,
            "acceptable_f1": 1.0,
            "qa_rate": 0.10,
            "enabled_at": timezone.now(),
            "updated_by": users["admin"],
        },
    )
    if created:
        ground_truth_changed_send(statement_ids=created, reason="demo triage data")
        coding_changed_send(reason="coding changed")
        triage_changed_send(run_id=run.pk, reason="demo triage data")
    return TRIAGE_DISCUSSIONS if created else 0


def _confident(payload: dict, rng: random.Random, low: float, high: float) -> dict:
    out = copy.deepcopy(payload)
    for item in payload_items(out):
        item["confidence"] = round(rng.uniform(low, high), 2)
    return out


def _store_triage_discussion(index: int, external_id: str, run, users) -> list[int]:
    synthetic = generate_discussion(external_id, TRIAGE_STATEMENTS, noise=0.0, expert_turns=False)
    discussion = Discussion.objects.create(
        summary=synthetic.summary,
        external_id=external_id,
        date=dt.date(2025, 6, 2) + dt.timedelta(days=3 * index),
    )
    subject = Speaker.objects.create(
        discussion=discussion, name=synthetic.subject_name, type=Speaker.Type.SUBJECT
    )
    rng = random.Random(f"triage/{external_id}")
    ids = []
    for position, item in enumerate(synthetic.statements):
        statement = Statement.objects.create(
            discussion=discussion, speaker=subject, order=position, text=item.text
        )
        coding = _codable(statement, validate_pdp(item.gt_delta))
        if rng.random() < TRIAGE_ERROR_RATE:  # the AI's slips come with lower confidence
            noisy = noisy_delta(coding, seed=f"{external_id}/{position}", noise=0.9)
            ai = _confident(noisy, rng, 0.4, 0.85)
        else:
            ai = _confident(coding, rng, 0.9, 1.0)
        source = Extraction.objects.create(
            statement=statement, run=run, pdp_deltas=validate_pdp(ai)
        )
        if index < TRIAGE_APPROVED:
            approved = Feedback.objects.create(
                statement=statement,
                auditor=users["auditor1"],
                edited_extraction=coding,
                source_extraction=source,
                status=Feedback.Status.APPROVED,
                approved_by=users["admin"],
                approved_at=timezone.now(),
            )
            codings_created(feedbacks=[approved])
        ids.append(statement.pk)
    return ids
