"""The own-data families follow changes from stored per-statement pieces: after any sequence
of approvals, ground-truth edits, extraction edits and deletions, the incrementally updated
figures equal a computation from scratch and the full recompute, value for value; and one
approval computes one statement's piece, not the run's (review triage: none of its own, the
statement's F1 is the review-savings piece)."""

from __future__ import annotations

import hashlib
import io
import json
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from audit.derived.tallies import tallies_batched
from audit.models import Extraction, ExtractionRun, Feedback, Speaker, Statement
from audit.services.inputs import inputs_delete
from audit.services.triage import triage_settings_get
from evalsite.match_settings import match_settings
from metrics.models import MetricResult, StatementPiece
from metrics.own_data import calibration, pieces, triage
from metrics.own_data import interauditor as agreement
from metrics.own_data import review_savings as selective
from metrics.own_data.common import (
    CODE_VERSIONS,
    INTERAUDITOR_KEY,
    ground_truth_load,
    own_result_compute,
    own_result_force,
    run_pairs_load,
)
from metrics.registry import CALIBRATION, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE
from metrics.results import input_hash, run_key
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    UserFactory,
    pdp,
)

S = Feedback.Status
NAMES = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus"]
KINDS = ["birth", "married", "death", "moved"]


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 50


def _payload(rng: random.Random, *, confident: bool) -> dict:
    people = [
        {"id": i + 1, "name": name, **({"confidence": rng.random()} if confident else {})}
        for i, name in enumerate(rng.sample(NAMES, rng.randint(0, 4)))
    ]
    events = [
        {
            "id": 10 + i,
            "kind": rng.choice(KINDS),
            "description": f"{rng.choice(KINDS)} of {person['name']}",
            "person": person["id"],
            "dateTime": f"19{rng.randint(50, 59)}-01-01",
            **({"confidence": rng.random()} if confident and rng.random() < 0.8 else {}),
        }
        for i, person in enumerate(people[: rng.randint(0, len(people))])
    ]
    return pdp(people=people, events=events)


def _perturbed(rng: random.Random, payload: dict) -> dict:
    """An AI's take on a payload: some items dropped, one added, confidences drawn."""
    people = [dict(p, confidence=rng.random()) for p in payload["people"] if rng.random() < 0.8]
    if rng.random() < 0.4:
        people.append({"id": 99, "name": rng.choice(NAMES), "confidence": rng.random()})
    kept = {p["id"] for p in people}
    events = [
        dict(e, confidence=rng.random())
        for e in payload["events"]
        if e["person"] in kept and rng.random() < 0.8
    ]
    return pdp(people=people, events=events)


class World:
    """Discussions of statements, two runs, three auditors and an admin, driven by a seed."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.auditors = [UserFactory(username=f"coder{seed}-{i}") for i in range(3)]
        self.admin = UserFactory(username=f"admin{seed}")
        self.runs = [ExtractionRunFactory(), ExtractionRunFactory()]
        self.statements: list[Statement] = []
        for _ in range(3):
            discussion = DiscussionFactory()
            for _ in range(4):
                self.statements.append(StatementFactory(discussion=discussion))
        with tallies_batched():  # the team page's counts, which no figure here reads: once
            for statement in self.statements:
                self._coded(statement)

    def _coded(self, statement: Statement) -> None:
        """The statement's ground truth (or a coding waiting for review), each run's extraction
        nine times in ten and a second coding half the time."""
        rng = self.rng
        truth = _payload(rng, confident=False)
        if rng.random() < 0.8:
            self._coding(statement, self.auditors[0], truth, S.APPROVED)
        else:
            self._coding(statement, self.auditors[0], truth, S.SUBMITTED)
        for run in self.runs:
            if rng.random() < 0.9:
                ExtractionFactory(statement=statement, run=run, pdp_deltas=_perturbed(rng, truth))
        if rng.random() < 0.5:
            self._second_coding(statement)

    def _coding(self, statement, auditor, payload, status, **fields) -> Feedback:
        approved = {"approved_by": self.admin} if status == S.APPROVED else {}
        return FeedbackFactory(
            statement=statement,
            auditor=auditor,
            edited_extraction=payload,
            status=status,
            **approved,
            **fields,
        )

    def _second_coding(self, statement: Statement) -> bool:
        coded = set(Feedback.objects.filter(statement=statement).values_list("auditor", flat=True))
        free = [a for a in self.auditors if a.pk not in coded]
        if not free:
            return False
        extraction = Extraction.objects.filter(statement=statement).first()
        blind = extraction is None or self.rng.random() < 0.5
        base = self._truth(statement) or _payload(self.rng, confident=False)
        self._coding(
            statement,
            self.rng.choice(free),
            _perturbed(self.rng, base) if self.rng.random() < 0.7 else base,
            S.SUBMITTED,
            blind=blind,
            source_extraction=None if blind else extraction,
        )
        return True

    def _truth(self, statement: Statement) -> dict | None:
        found = Feedback.objects.filter(statement=statement, status=S.APPROVED).first()
        return found.edited_extraction if found else None

    # --- the changes -------------------------------------------------------------------------

    def step(self) -> tuple[str, bool]:
        """A change drawn at random: its name, and whether it changed anything (an approval
        with nothing waiting, an extraction that is there already or a statement coded by every
        auditor changes nothing)."""
        action = self.rng.choice(
            [
                "approve",
                "edit_truth",
                "edit_extraction",
                "delete_extraction",
                "unapprove",
                "second_coding",
                "add_extraction",
            ]
        )
        return action, getattr(self, action)()

    def approve(self) -> bool:
        waiting = Feedback.objects.filter(status=S.SUBMITTED).exclude(
            statement__feedback__status=S.APPROVED
        )
        feedback = self.rng.choice(list(waiting) or [None])
        if feedback is None:
            return False
        feedback.status, feedback.approved_by = S.APPROVED, self.admin
        feedback.version += 1
        feedback.save()
        return True

    def edit_truth(self) -> bool:
        feedback = self.rng.choice(list(Feedback.objects.filter(status=S.APPROVED)))
        feedback.edited_extraction = _perturbed(self.rng, feedback.edited_extraction)
        feedback.version += 1
        feedback.save()
        return True

    def unapprove(self) -> bool:
        feedback = self.rng.choice(list(Feedback.objects.filter(status=S.APPROVED)))
        feedback.status, feedback.approved_by = S.SUBMITTED, None
        feedback.version += 1
        feedback.save()
        return True

    def edit_extraction(self) -> bool:
        extraction = self.rng.choice(list(Extraction.objects.all()))
        extraction.pdp_deltas = _perturbed(self.rng, extraction.pdp_deltas)
        extraction.save()
        return True

    def delete_extraction(self) -> bool:
        gone = self.rng.choice(list(Extraction.objects.all()))
        inputs_delete(rows=Extraction.objects.filter(pk=gone.pk))
        return True

    def add_extraction(self) -> bool:
        statement, run = self.rng.choice(self.statements), self.rng.choice(self.runs)
        if Extraction.objects.filter(statement=statement, run=run).exists():
            return False
        base = self._truth(statement) or _payload(self.rng, confident=True)
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_perturbed(self.rng, base))
        return True

    def second_coding(self) -> bool:
        return self._second_coding(self.rng.choice(self.statements))


# --- figures three ways --------------------------------------------------------------------------


def _plain(values: dict | None) -> Any:
    """The stored figures without the clock of the inputs, as JSON reads them back."""
    values = dict(values or {})
    values.pop("inputs_read_at", None)
    return json.loads(json.dumps(values))


def _stored(family: str, run_id: int | None) -> Any:
    key = INTERAUDITOR_KEY if family == INTERAUDITOR else run_key(family, run_id)
    row = MetricResult.objects.get(key=key)
    assert row.status == MetricResult.Status.FRESH, row.error
    return _plain(row.values)


def _from_scratch(family: str, run_id: int | None) -> Any:
    """The figures with every piece computed now from the inputs, nothing stored read."""
    gt = ground_truth_load()

    def fresh(pieces: dict) -> dict:
        return json.loads(json.dumps(dict(sorted(pieces.items()))), object_hook=_int_keys)

    if family == REVIEW_SAVINGS:
        run = next(r for r in selective.ExtractionRun.objects.filter(pk=run_id))
        others = selective._comparison_inputs(run, gt)
        pieces = {p.statement_id: selective.review_piece(p) for p in run_pairs_load(run_id, gt)}
        other_pieces = [
            (
                o.run,
                fresh(
                    {
                        p.statement_id: selective.review_piece(p)
                        for p in run_pairs_load(o.run.pk, gt)
                    }
                ),
            )
            for o in others
        ]
        values = selective.review_savings_values(fresh(pieces), other_pieces, resamples=50)
    elif family == CALIBRATION:
        pairs = run_pairs_load(run_id, gt)
        pieces = fresh({p.statement_id: calibration.calibration_piece(p) for p in pairs})
        items, skipped = calibration.pieces_arrays(pieces)
        values = {
            **calibration.calibration_values(items, skipped=skipped),
            "n_statements": len(pieces),
            "n_discussions": len({p["discussion_id"] for p in pieces.values()}),
        }
    elif family == TRIAGE:
        values = _triage_from_scratch(run_id, fresh)
    else:
        codings = agreement.codings_load()
        grouped = agreement.by_statement(codings)
        ai = agreement.ai_payloads_load(agreement._blind_statements(grouped))
        pieces = fresh(
            {
                s: agreement.agreement_piece(group, ai.get(s))
                for s, group in grouped.items()
                if len(group) > 1
            }
        )
        values = agreement.interauditor_values(
            agreement.codings_load(payloads=False), pieces, resamples=50
        )
    return _plain(values)


def _triage_from_scratch(run_id: int, fresh: Any) -> dict:
    """Triage's figures from every statement's payloads read now: its signals against the
    partner run's extraction, its F1 against the ground truth."""
    run = ExtractionRun.objects.get(pk=run_id)
    partner = triage._partner_run(run)
    others = dict(
        Extraction.objects.filter(run=partner).values_list("statement_id", "pdp_deltas")
        if partner
        else []
    )
    extracted = Extraction.objects.filter(
        run=run, statement__speaker__type=Speaker.Type.SUBJECT
    ).values_list("statement_id", "statement__discussion_id", "pdp_deltas")
    signals = {
        sid: triage.signals_piece(d, ai, others.get(sid), settings=match_settings())
        for sid, d, ai in extracted
    }
    f1s = {
        p.statement_id: selective.review_piece(p)["f1"]
        for p in run_pairs_load(run_id, ground_truth_load())
    }
    settings = triage_settings_get(run=run)
    return triage.triage_values(
        fresh(signals),
        fresh(f1s),
        settings,
        triage.qa_results_load(settings, f1s),
        triage.seconds_per_statement(),
    )


def _int_keys(mapping: dict) -> dict:
    return {int(k) if k.isdigit() else k: v for k, v in mapping.items()}


def _targets(world: World) -> list[tuple[str, int | None]]:
    runs = [run.pk for run in world.runs]
    return [
        *((family, run_id) for family in (REVIEW_SAVINGS, CALIBRATION, TRIAGE) for run_id in runs),
        (INTERAUDITOR, None),
    ]


@pytest.mark.django_db
@pytest.mark.no_cover  # random changes through code the example tests cover, 6 times
@pytest.mark.parametrize("seed", range(6))
def test_incremental_equals_full_recompute_after_random_changes(seed) -> None:
    world = World(seed)
    for target in _targets(world):
        own_result_compute(family=target[0], run_id=target[1])
    checked = False
    for _ in range(8):
        action, changed = world.step()
        if not changed and checked:
            continue  # nothing changed: the figures checked after the last change still hold
        for family, run_id in _targets(world):
            own_result_compute(family=family, run_id=run_id)
            incremental = _stored(family, run_id)
            assert incremental == _from_scratch(family, run_id), (action, family, run_id)
        checked = True
    # The full recompute (every piece computed again) ends where the increments did.
    for family, run_id in _targets(world):
        incremental = _stored(family, run_id)
        own_result_force(family=family, run_id=run_id)
        assert _stored(family, run_id) == incremental, (family, run_id)


@pytest.mark.django_db
class TestOneWorld:
    """One seeded world, made once for these tests: each runs in a savepoint of its
    transaction, rolled back after the last one."""

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, django_db_setup, django_db_blocker):
        with django_db_blocker.unblock(), transaction.atomic():
            yield World(seed=3)
            transaction.set_rollback(True)

    def test_an_approval_computes_one_statement_piece(self, world, monkeypatch) -> None:
        run_id = world.runs[0].pk
        for family in (REVIEW_SAVINGS, CALIBRATION):
            own_result_compute(family=family, run_id=run_id)
        own_result_compute(family=INTERAUDITOR)
        waiting = (
            Feedback.objects.filter(status=S.SUBMITTED, statement__extractions__run_id=run_id)
            .exclude(statement__feedback__status=S.APPROVED)
            .first()
        )
        assert waiting is not None
        scored: list[int] = []
        for module, name in (
            (selective, "review_piece"),
            (calibration, "calibration_piece"),
        ):
            real = getattr(module, name)
            monkeypatch.setattr(
                module, name, lambda pair, real=real: scored.append(pair.statement_id) or real(pair)
            )
        compared: list[int] = []
        real_piece = agreement.agreement_piece
        monkeypatch.setattr(
            agreement,
            "agreement_piece",
            lambda codings, ai: compared.append(codings[0].statement_id) or real_piece(codings, ai),
        )
        waiting.status, waiting.approved_by = S.APPROVED, world.admin
        waiting.save()
        for family in (REVIEW_SAVINGS, CALIBRATION):
            own_result_compute(family=family, run_id=run_id)
        own_result_compute(family=INTERAUDITOR)
        # The new ground truth's statement only: for review savings of this run and of the run
        # it is compared with (when that run extracted it too), and for calibration.
        other = Extraction.objects.filter(statement=waiting.statement, run=world.runs[1]).exists()
        assert scored == [waiting.statement_id] * (3 if other else 2)
        # Inter-auditor: only that statement's codings changed (its piece, if it has two codings).
        assert set(compared) <= {waiting.statement_id}
        assert (
            StatementPiece.objects.filter(family=REVIEW_SAVINGS, run_id=run_id).count()
            == (
                MetricResult.objects.get(key=run_key(REVIEW_SAVINGS, run_id)).values["n_statements"]
            )
        )

    def test_an_approval_computes_no_triage_piece_and_one_f1(self, world, monkeypatch) -> None:
        run_id = world.runs[0].pk
        own_result_compute(family=TRIAGE, run_id=run_id)
        waiting = (
            Feedback.objects.filter(status=S.SUBMITTED, statement__extractions__run_id=run_id)
            .exclude(statement__feedback__status=S.APPROVED)
            .first()
        )
        assert waiting is not None
        unreviewed = MetricResult.objects.get(key=run_key(TRIAGE, run_id)).values["n_unreviewed"]
        scored: list[int] = []
        real_review = selective.review_piece
        monkeypatch.setattr(
            selective,
            "review_piece",
            lambda pair: scored.append(pair.statement_id) or real_review(pair),
        )
        signalled: list[int] = []
        real_signals = triage.signals_piece
        monkeypatch.setattr(
            triage,
            "signals_piece",
            lambda d, ai, other, **kw: signalled.append(d) or real_signals(d, ai, other, **kw),
        )
        waiting.status, waiting.approved_by = S.APPROVED, world.admin
        waiting.save()
        own_result_compute(family=TRIAGE, run_id=run_id)
        assert scored == [waiting.statement_id]
        assert signalled == []
        values = _stored(TRIAGE, run_id)
        assert values["n_unreviewed"] == unreviewed - 1
        assert str(waiting.statement_id) not in values["scores"]
        assert (
            StatementPiece.objects.filter(family=TRIAGE, run_id=run_id).count()
            == (values["n_statements"])
        )

    def test_the_command_recomputes_in_full_or_follows_the_pieces(self, world, monkeypatch) -> None:
        run_id = world.runs[0].pk
        out = io.StringIO()
        call_command(
            "recompute_own_data", "--family", CALIBRATION, "--run", str(run_id), stdout=out
        )
        assert f"calibration (run {run_id})" in out.getvalue()
        before = _stored(CALIBRATION, run_id)
        n_pieces = StatementPiece.objects.filter(family=CALIBRATION, run_id=run_id).count()
        scored: list[int] = []
        real = calibration.calibration_piece
        monkeypatch.setattr(
            calibration,
            "calibration_piece",
            lambda pair: scored.append(pair.statement_id) or real(pair),
        )
        call_command(
            "recompute_own_data", "--family", CALIBRATION, "--run", str(run_id), stdout=out
        )
        assert scored == []  # nothing changed: every piece is read back
        call_command("recompute_own_data", "--family", CALIBRATION, "--full", stdout=io.StringIO())
        assert len(scored) >= n_pieces > 0  # every piece again (of every run with ground truth)
        assert _stored(CALIBRATION, run_id) == before
        with pytest.raises(CommandError, match="No extraction run 0"):
            call_command("recompute_own_data", "--run", "0")

    def test_a_new_piece_format_computes_every_piece_again(self, world, monkeypatch) -> None:
        run_id = world.runs[0].pk
        own_result_compute(family=CALIBRATION, run_id=run_id)
        before = _stored(CALIBRATION, run_id)
        n_pieces = StatementPiece.objects.filter(family=CALIBRATION, run_id=run_id).count()
        scored: list[int] = []
        real = calibration.calibration_piece
        monkeypatch.setattr(
            calibration,
            "calibration_piece",
            lambda pair: scored.append(pair.statement_id) or real(pair),
        )
        MetricResult.objects.filter(key=run_key(CALIBRATION, run_id)).delete()
        own_result_compute(family=CALIBRATION, run_id=run_id)
        assert scored == []  # the row was computed again from the stored pieces
        monkeypatch.setitem(pieces.PIECE_FORMATS, CALIBRATION, 99)
        MetricResult.objects.filter(key=run_key(CALIBRATION, run_id)).delete()
        own_result_compute(family=CALIBRATION, run_id=run_id)
        assert len(scored) == n_pieces > 0
        assert _stored(CALIBRATION, run_id) == before

    def test_the_command_releases_memory_after_each_row(self, world, monkeypatch) -> None:
        """Rows computed in process send no task_postrun: the command releases after each."""
        from metrics.management.commands import recompute_own_data

        released: list[int] = []
        monkeypatch.setattr(recompute_own_data, "memory_release", lambda: released.append(1))
        out = io.StringIO()
        call_command(
            "recompute_own_data",
            "--family",
            CALIBRATION,
            REVIEW_SAVINGS,
            "--run",
            str(world.runs[0].pk),
            stdout=out,
        )
        assert len(released) == 2 == out.getvalue().count(f"(run {world.runs[0].pk})")

    def test_pieces_written_or_deleted_are_reported_for_the_planner_statistics(
        self, world, planner_refreshes, django_capture_on_commit_callbacks
    ) -> None:
        run_id = world.runs[0].pk
        asked = planner_refreshes
        with django_capture_on_commit_callbacks(execute=True):
            own_result_compute(family=CALIBRATION, run_id=run_id)  # every piece written
            stored = StatementPiece.objects.filter(family=CALIBRATION, run_id=run_id).count()
            own_result_compute(family=CALIBRATION, run_id=run_id)  # fresh: no piece is read
            own_result_force(family=CALIBRATION, run_id=run_id)  # every piece written again

        written = [(["StatementPiece"], n) for n in (stored, stored)]
        assert stored > 0 and asked == written


@pytest.mark.django_db
def test_a_diff_among_some_statements_reads_only_their_pieces() -> None:
    run = ExtractionRunFactory()
    statements = [StatementFactory() for _ in range(4)]
    stamps = {s.pk: f"stamp {s.pk}" for s in statements}
    diff = pieces.pieces_diff(family=CALIBRATION, run_id=run.pk, stamps=stamps)
    pieces.pieces_store(
        family=CALIBRATION, run_id=run.pk, pieces={pk: {} for pk in stamps}, hashes=diff.hashes
    )
    first, second, third, _ = (s.pk for s in statements)
    # The first changed, the second went away, the third is unchanged; the fourth (not among
    # them, and without a stamp) would be gone if its piece were read.
    among = pieces.pieces_diff(
        family=CALIBRATION,
        run_id=run.pk,
        stamps={first: "changed", third: stamps[third]},
        among=[first, second, third],
    )
    assert (among.outdated, among.gone, set(among.kept), among.stored) == (
        [first],
        [second],
        {third},
        3,
    )


@pytest.mark.django_db
def test_a_stamp_hashes_as_it_did_when_its_piece_was_stored() -> None:
    """The hasher reuses one encoder; a stored piece's hash must still match it, or every
    piece of every run would be computed again after an upgrade."""
    salt = input_hash(
        None,
        code_version=CODE_VERSIONS[TRIAGE],
        settings=match_settings().to_dict(),
        piece_format=pieces.PIECE_FORMATS[TRIAGE],
    )
    at = datetime(2026, 11, 28, 10, 50, 17, 305636, tzinfo=UTC)
    stamps = [
        (7, at, None, 3),
        (8, (9, 2, at), 11, at),
        ("ünï", [1.5, -0.0, 1e300], {"b": 1, "a": None}),
    ]
    hash_of = pieces.piece_hasher(TRIAGE)

    for stamp in stamps:
        text = json.dumps(stamp, default=str, separators=(",", ":"))
        assert hash_of(stamp) == hashlib.sha256(salt.encode() + text.encode()).hexdigest()
    assert len({hash_of(stamp) for stamp in stamps}) == len(stamps)
