"""Pages read a bounded slice however much data there is: the audit page renders one window of
statements (the next loads on scroll, a link without JavaScript), the queue counts only the
discussions of its page, and their query counts do not grow with the data."""

from __future__ import annotations

import json
import random
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.derived.tallies import queue_changed, tallies_batched
from audit.models import (
    DiscussionFigures,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
    TriageSettings,
    TriageStatement,
)
from audit.selectors.queues import discussion_queue, discussion_queue_counted
from audit.views import discussion as discussion_views
from audit.views.discussion import WINDOW, statement_url
from audit.views.queue import REVIEW_GROUPS
from audit.views.team import ASSIGN_DISCUSSIONS_PER_PAGE
from tests.bench.management.commands.benchmark_dashboard import (
    dashboard_data_create,
    pages_data_create,
)
from tests.factories import (
    DiscussionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    SpeakerFactory,
    StatementFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

LONG = 2 * WINDOW + 10  # three windows: WINDOW, WINDOW and 10 statements


def seeded(discussions: int = 3, statements: int = 4, long: int = LONG, prefix: str = "p"):
    data = dashboard_data_create(
        discussions=discussions, statements=statements, runs=2, long_statements=long, prefix=prefix
    )
    extras = pages_data_create(data)
    return data, extras


@contextmanager
def shared_data(django_db_blocker):
    """Data made once for a class of tests that only read it (or change it in their own
    savepoint): each test runs in a savepoint of this transaction, rolled back after the
    class's last test."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def shown_orders(html: str) -> list[int]:
    """Statement numbers of the cards (full or placeholder) on a page or fragment."""
    return [int(n) for n in re.findall(r'class="stmt-order"[^>]*>#(\d+)<', html)]


def queries_of(client: Client, url: str, **headers) -> int:
    client.get(url, **headers)  # warm: sessions, content types
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url, **headers).status_code == 200
    return len(queries)


class TestTheLongDiscussionAndTheQueue:
    """Read from one world: four discussions of six statements and the long one."""

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            yield seeded(discussions=4, statements=6)

    def test_the_audit_page_renders_its_first_window_and_a_sentinel_for_the_next(self, world):
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])

        html = client_for(data.auditor).get(url).content.decode()

        assert shown_orders(html) == list(range(WINDOW))
        sentinel = re.search(r'<p id="load-more"[^>]*>.*?</p>', html, re.S).group(0)
        assert 'hx-trigger="revealed, load-more"' in sentinel
        assert f'hx-get="?from={WINDOW}"' in sentinel
        assert f'href="?from={WINDOW}"' in sentinel  # the link works without JavaScript
        assert 'id="load-earlier"' not in html

    def test_the_load_more_fragment_is_the_next_window_with_its_own_sentinel_until_the_end(
        self, world
    ):
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])
        client = client_for(data.auditor)
        htmx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "load-more"}

        second = client.get(url, {"from": WINDOW}, **htmx).content.decode()
        last = client.get(url, {"from": 2 * WINDOW}, **htmx).content.decode()

        assert "<html" not in second and 'id="statements"' not in second
        assert shown_orders(second) == list(range(WINDOW, 2 * WINDOW))
        assert f'hx-get="?from={2 * WINDOW}"' in second
        assert shown_orders(last) == list(range(2 * WINDOW, LONG))
        assert 'id="load-more"' not in last

    def test_without_javascript_from_opens_a_later_window_with_a_link_back(self, world):
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])

        html = client_for(data.auditor).get(url, {"from": WINDOW}).content.decode()

        assert "<html" in html
        assert shown_orders(html) == list(range(WINDOW, 2 * WINDOW))
        assert 'href="?from=0"' in html
        assert f'hx-get="?before={WINDOW}"' in html

    def test_earlier_statements_load_above_without_repeating_the_window(self, world):
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])
        htmx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "load-earlier"}

        before = WINDOW + 10
        html = client_for(data.auditor).get(url, {"before": before}, **htmx).content.decode()

        assert shown_orders(html) == list(range(10, before))
        assert 'id="load-more"' not in html
        assert 'hx-get="?before=10"' in html

    def test_a_link_to_a_far_statement_lands_on_the_window_that_holds_it(self, world):
        """ "Needs changes" points at the rejected coding far down the long discussion."""
        data, extras = world
        rejected = extras["rejected"]
        far = rejected.statement
        assert far.order >= WINDOW

        link = statement_url(far)
        assert f"at={far.pk}" in link and link.endswith(f"#stmt-{far.pk}")
        html = client_for(data.auditor).get(link.split("#")[0]).content.decode()

        assert f'id="stmt-{far.pk}"' in html
        assert shown_orders(html)[0] == far.order - 2
        assert 'id="load-earlier"' in html

    def test_a_statement_of_another_discussion_or_a_bad_window_is_refused(self, world):
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])
        other = Statement.objects.exclude(discussion=data.long_discussion).first()
        client = client_for(data.auditor)

        missing = client.get(url, {"at": other.pk})
        bad = client.get(url, {"from": "-3"})

        assert missing.status_code == 404
        assert bad.status_code == 400 and b"from: expected a statement number" in bad.content

    def test_names_in_a_later_window_come_from_the_statements_above_it(self, world, monkeypatch):
        """A card far down labels people the way the whole discussion named them (the first
        window read with every card in full, to compare with)."""
        data, _ = world
        url = reverse("audit:discussion", args=[data.long_discussion.pk])
        client = client_for(data.auditor)

        with monkeypatch.context() as every_card_full:
            every_card_full.setattr(discussion_views, "FULL_CARDS", WINDOW)
            whole = client.get(url, {"from": 0}).content.decode()
        window = client.get(url, {"from": 5}).content.decode()

        card = re.compile(r'<article class="stmt subject" id="stmt-(\d+)".*?</article>', re.S)
        whole_cards = {m.group(1): m.group(0) for m in card.finditer(whole)}
        compared = 0
        for match in card.finditer(window):
            if match.group(1) in whole_cards:
                assert match.group(0) == whole_cards[match.group(1)]
                compared += 1
        assert compared == discussion_views.FULL_CARDS

    @pytest.mark.parametrize("accepted", [False, True])
    def test_the_queue_counts_its_page_as_the_whole_query_does(self, world, accepted):
        data, extras = world
        if accepted:
            # Review triage AI accepts every third subject statement, some of them coded and sent:
            # what is left to code counts neither (the page reads what I sent from my tally).
            subjects = list(Statement.objects.subjects().order_by("pk"))[::3]
            for statement in subjects:
                TriageStatement.objects.create(
                    run=data.runs[-1], statement=statement, confidence=0.9, provisional=True
                )
            queue_changed(statement_ids=[s.pk for s in subjects])  # as the triage service does
        for user in (data.auditor, extras["second"]):
            ids = list(discussion_queue(user=user).order_by("id").values_list("pk", flat=True))
            fields = [
                "n_subject", "n_left", "mine_coded", "mine_sent", "mine_approved", "mine_rejected",
                "all_coded", "all_sent", "all_approved", "next_uncoded", "weakest",
            ]  # fmt: skip
            whole = [
                [getattr(d, f) for f in fields] for d in discussion_queue(user=user).order_by("id")
            ]
            page = [
                [getattr(d, f) for f in fields]
                for d in discussion_queue_counted(user=user, ids=ids)
            ]
            assert page == whole


STATUS_OF_LABEL = {
    "Not started": "not_started",
    "In progress": "in_progress",
    "Done": "done",
    "Needs changes": "needs_changes",
}


def _random_queue(
    rng: random.Random, auditor, other, *, scored: float = 0.25, accepted: float = 0.8
) -> None:
    """Discussions of 1-4 subject statements (and a guide's line), coded by the auditor and
    another at random: drafts, sent, approved, sent back; some statements AI accepted by review
    triage (out of the queue), sometimes after someone coded them. The tallies are counted once
    at the end, as an import counts them (a refresh recounts its pairs from the rows)."""
    run = ExtractionRunFactory()
    scores: list[int] = []
    with tallies_batched():
        for _ in range(14):
            _random_discussion(rng, run, auditor, other, scores, scored=scored, accepted=accepted)
    queue_changed(statement_ids=scores)  # as the triage service does, once for its scores


def _random_discussion(
    rng: random.Random, run, auditor, other, scores: list[int], *, scored: float, accepted: float
) -> None:
    """One discussion of ``_random_queue``; the statements it scores are added to ``scores``."""
    statuses = [None, None, *Feedback.Status.values]
    discussion = DiscussionFactory()
    StatementFactory(
        discussion=discussion,
        speaker=SpeakerFactory(discussion=discussion, name="Guide", type=Speaker.Type.EXPERT),
    )
    for _ in range(rng.randint(1, 4)):
        statement = StatementFactory(discussion=discussion)
        chosen = {who: rng.choice(statuses) for who in (auditor, other)}
        if chosen[auditor] == chosen[other] == Feedback.Status.APPROVED:
            chosen[other] = Feedback.Status.SUBMITTED  # one approved coding per statement
        for who, status in chosen.items():
            if status is not None:
                FeedbackFactory(statement=statement, auditor=who, status=status)
        if rng.random() < scored:
            TriageStatement.objects.create(
                run=run,
                statement=statement,
                confidence=round(rng.random(), 1),  # ties: then by discussion id
                provisional=rng.random() < accepted,
            )
            scores.append(statement.pk)


SEEDS = range(4)


class TestEachProgressFilter:
    """One random queue per seed, read with either order."""

    @pytest.fixture(scope="class", params=SEEDS, ids=lambda seed: f"seed{seed}")
    @classmethod
    def coder(cls, request, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            auditor, other = UserFactory(username="coder"), UserFactory(username="other")
            _random_queue(random.Random(request.param), auditor, other)
            yield auditor

    @pytest.mark.parametrize("lowest_first", [False, True])
    def test_each_progress_filter_lists_the_discussions_whose_row_says_it(
        self, coder, lowest_first
    ):
        """Every filter of the queue, in either order, lists exactly the discussions whose row
        shows that status; the statuses the rows show cover all four."""
        from audit.selectors.queues import discussion_queue_page
        from audit.views.queue import queue_status

        if lowest_first:
            TriageSettings.objects.create(
                run=ExtractionRun.objects.get(), enabled=True, lowest_first=True
            )

        def listed(status: str) -> list:
            _, rows = discussion_queue_page(
                user=coder, visible=None, status=status, q="", page=1, per_page=100
            )
            return rows

        shown = {d.pk: STATUS_OF_LABEL[queue_status(d)[0]] for d in listed("")}
        for status in STATUS_OF_LABEL.values():
            found = listed(status)
            assert sorted(d.pk for d in found) == sorted(
                pk for pk, s in shown.items() if s == status
            )
            assert all(STATUS_OF_LABEL[queue_status(d)[0]] == status for d in found)
        assert set(shown.values()) == set(STATUS_OF_LABEL.values())


class TestTheWeakestFirstPages:
    """One random queue per seed, half of it scored, ordered weakest first."""

    @pytest.fixture(scope="class", params=SEEDS, ids=lambda seed: f"seed{seed}")
    @classmethod
    def coder(cls, request, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            auditor, other = UserFactory(username="coder"), UserFactory(username="other")
            _random_queue(random.Random(request.param), auditor, other, scored=0.5, accepted=0.3)
            TriageSettings.objects.create(
                run=ExtractionRun.objects.get(), enabled=True, lowest_first=True
            )
            yield auditor

    @pytest.mark.parametrize("status", ["", "in_progress", "not_started", "done", "needs_changes"])
    @pytest.mark.parametrize("viewer", ["coder", "newcomer"])
    def test_the_weakest_first_pages_follow_the_whole_querys_order(self, coder, status, viewer):
        """Review triage's weakest-first order, paged three at a time (pages that end among the
        scored discussions, cross into the unscored ones and end among them), lists what the
        whole annotated query sorted by each discussion's lowest score lists, in its order: the
        stored lowest scores where the viewer coded nothing, merged with the viewer's own
        scores where they did (a coder who worked in most discussions; a newcomer who coded
        nothing)."""
        from audit.selectors.queues import discussion_queue_page, progress_status_filter

        user = coder if viewer == "coder" else UserFactory(username="newcomer")
        whole = discussion_queue(user=user)
        if status:
            whole = whole.filter(progress_status_filter(user=user, status=status))
        order = whole.order_by(F("weakest").asc(nulls_last=True), "id")
        expected = [(d.pk, d.weakest) for d in order]

        paged, number = [], 1
        while True:
            page, rows = discussion_queue_page(
                user=user, visible=None, status=status, q="", page=number, per_page=3
            )
            paged += [(d.pk, d.weakest) for d in rows]
            if not page.has_next():
                break
            number += 1
        assert paged == expected
        if not status:  # the seeds give both kinds and pages across their boundary
            assert any(w is None for _, w in expected) and any(w is not None for _, w in expected)
            if viewer == "coder":  # the coder's own order differs from the stored one somewhere
                stored = dict(DiscussionFigures.objects.values_list("pk", "weakest"))
                assert any(stored.get(pk) != w for pk, w in expected)


def _rejected_copy(far: Feedback, *, order: int) -> Feedback:
    statement = Statement.objects.get(discussion=far.statement.discussion, order=order)
    Feedback.objects.filter(statement=statement, auditor=far.auditor).update(status=far.status)
    return Feedback.objects.get(statement=statement, auditor=far.auditor)


# --- the admins' lists: assign, skipped, blind, runs, per-discussion table ---------------------


def test_error_statements_of_a_count_are_read_and_summed_by_the_database():
    data, _ = seeded(discussions=6, statements=5, long=0)
    run = data.runs[-1]
    url = f"{reverse('metrics:error_statements')}?run={run.pk}&kind=events_fn"
    html = client_for(data.admin).get(url).content.decode()

    from metrics.models import MetricResult

    counts = [
        (r.values or {}).get("events_fn") or 0
        for r in MetricResult.objects.filter(scope="statement", run=run, family="extraction")
    ]
    assert sum(counts) > 0
    n = sum(1 for c in counts if c)
    assert f"{sum(counts)} in {n} statement" in html
    # Each row has a cell naming the items (metrics.error_items; these results are made up,
    # their ids name nothing: tests/metrics/test_error_items.py checks the names).
    assert html.count('data-testid="error-items"') == n


def test_the_drill_down_reads_only_the_payload_lists_its_items_are_named_from():
    """The payloads are read for their people and the list the figure counts only, the stored
    values with the listed rows: the items read as from the whole payloads, read apart."""
    from metrics import selectors
    from metrics.engine.derived import error_analysis_result_compute
    from metrics.error_items import error_items, payload_lists, payload_sides, value_keys

    data, _ = seeded(discussions=4, statements=6, long=0)
    run = data.runs[-1]
    figures = error_analysis_result_compute(run_id=run.pk).values["figures"]
    named = cut_read = 0
    for figure in figures:
        sides, keys = payload_sides(figure), value_keys(figure)
        rows = list(selectors.error_statements_listed(run, figure=figure, keys=keys))
        whole = selectors.error_statement_payloads(run, rows=rows, sides=sides, keys=keys)
        with_rows = selectors.listed_values(rows, keys)
        cut = selectors.error_statement_payloads(
            run, rows=rows, sides=sides, keys=keys, lists=payload_lists(figure), values=with_rows
        )
        for row in rows:
            assert with_rows[row["statement_id"]] == whole[row["statement_id"]].values, figure
            items = error_items(figure, cut[row["statement_id"]])
            assert items == error_items(figure, whole[row["statement_id"]]), figure
            named += sum("no longer" not in item for item in items)
            payload = getattr(cut[row["statement_id"]], sides[0]) if sides else None
            if payload is not None and payload_lists(figure):
                assert set(payload) == {"people", *payload_lists(figure)}
                cut_read += 1
    assert named and cut_read  # items named from the payloads, not only counted


def test_the_skipped_and_blind_lists_are_paged_newest_first():
    from datetime import timedelta

    from django.utils import timezone

    from audit.models import Assignment, BlindReview
    from audit.views.blind import MARKS_PER_PAGE
    from audit.views.team import SKIPPED_PER_PAGE

    data, _ = seeded(discussions=6, statements=12, long=0)
    statements = list(Statement.objects.exclude(blind_review__isnull=False).order_by("pk"))
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(
            statement=s, discussion_id=s.discussion_id, auditor=data.admin,
            assigned_by=data.admin, status="skipped",
            skip_reason="other", skip_note=f"note {s.pk}", released_at=now - timedelta(minutes=i),
        )
        for i, s in enumerate(statements)
    )  # fmt: skip
    BlindReview.objects.bulk_create(
        BlindReview(statement=s, marked_by=data.admin) for s in statements[:MARKS_PER_PAGE]
    )
    client = client_for(data.admin)
    skipped = Assignment.objects.filter(status="skipped").count()
    marked = BlindReview.objects.count()
    assert skipped > SKIPPED_PER_PAGE and marked > MARKS_PER_PAGE

    for url, per_page, total, name in (
        (reverse("audit:skipped"), SKIPPED_PER_PAGE, skipped, "skipped"),
        (reverse("audit:blind_reviews"), MARKS_PER_PAGE, marked, "blind-marks"),
    ):
        first = client.get(url).content.decode()
        last = client.get(url, {"page": 2}).content.decode()
        rows = [
            html.split(f'data-testid="{name}"')[1]
            .split("<tbody>")[1]
            .split("</tbody>")[0]
            .count("<tr>")
            for html in (first, last)
        ]
        assert rows == [per_page, total - per_page], url
        assert f"{total} statements" in first and 'href="?page=2"' in first
    newest, oldest = f"note {statements[0].pk}<", f"note {statements[-1].pk}<"
    first = client.get(reverse("audit:skipped")).content.decode()
    assert newest in first and oldest not in first


# --- query counts: a small world, then a large one added -----------------------------------------


def audit_pages(small, extras) -> list[tuple]:
    return [(small.auditor, reverse("audit:discussion", args=[small.long_discussion.pk]))]


def queue_pages(small, extras) -> list[tuple]:
    return [(small.auditor, reverse("home"))]


def review_pages(small, extras) -> list[tuple]:
    run = small.runs[-1].pk
    urls = [
        reverse("audit:review_queue"),
        reverse("home"),
        f"{reverse('metrics:error_statements')}?run={run}&kind=events_fn",
    ]
    return [(small.admin, url) for url in urls]


def coding_pages(small, extras) -> list[tuple]:
    """The statement page, the editor far down the long discussion, the auditor's dashboard
    and the admin's review of one statement."""
    far = extras["rejected"].statement
    auditor_pages = [
        reverse("audit:statement", args=[far.pk]),
        reverse("audit:feedback_edit", args=[extras["rejected"].pk]),
        reverse("metrics:dashboard"),
    ]
    review = reverse("audit:statement_review", args=[extras["submitted"].statement_id])
    return [(small.auditor, url) for url in auditor_pages] + [(small.admin, review)]


def team_pages(small, extras) -> list[tuple]:
    as_admin = [reverse("audit:team"), reverse("api-progress"), reverse("audit:review_queue")]
    as_auditor = [reverse("audit:my_queue"), reverse("api-progress")]
    return [(small.admin, url) for url in as_admin] + [(small.auditor, url) for url in as_auditor]


def admin_list_pages(small, extras) -> list[tuple]:
    """The admins' lists: assign, skipped, blind, runs, per-discussion table."""
    run = small.runs[-1].pk
    discussions = reverse("metrics:discussions")
    urls = [
        reverse("audit:assignments"),
        reverse("audit:skipped"),
        reverse("audit:blind_reviews"),
        reverse("metrics:runs"),
        f"{discussions}?run={run}&sort=f1",
        f"{discussions}?run={run}&sort=-people&page=2",
    ]
    return [(small.admin, url) for url in urls]


PAGES = (audit_pages, queue_pages, review_pages, coding_pages, team_pages, admin_list_pages)


def counted(pages: list[tuple]) -> list[int]:
    return [queries_of(client_for(user), url) for user, url in pages]


@dataclass
class TwoSizes:
    small: Any
    extras: dict
    before: dict[str, list[int]]  # by the name of the function that lists the pages
    coded: int  # the small world's auditor's codings

    def counts(self, pages) -> tuple[list[int], list[int]]:
        """The pages' query counts on the small world alone, and now."""
        return self.before[pages.__name__], counted(pages(self.small, self.extras))


class TestQueriesDoNotGrowWithTheData:
    """Every page's queries counted on a small world (two discussions and the long one), then
    with a large one added: sixty discussions, a longer discussion, and the same auditor's
    codings of every one of their statements."""

    @pytest.fixture(scope="class")
    @classmethod
    def sizes(cls, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            small, extras = seeded(discussions=2, statements=4, long=LONG, prefix="small")
            before = {pages.__name__: counted(pages(small, extras)) for pages in PAGES}
            coded = Feedback.objects.filter(auditor=small.auditor).count()
            seeded(discussions=60, statements=5, long=LONG + 40, prefix="large")
            yield TwoSizes(small, extras, before, coded)

    def test_audit_page_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(audit_pages)
        assert before == after, (before, after)

    def test_queue_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(queue_pages)
        assert before == after, (before, after)
        assert Feedback.objects.count() > 200

    def test_review_pages_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(review_pages)
        assert before == after, (before, after)

    def test_coding_pages_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(coding_pages)
        assert before == after, (before, after)
        assert Feedback.objects.filter(auditor=sizes.small.auditor).count() > 2 * sizes.coded

    def test_team_progress_and_my_queue_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(team_pages)
        assert before == after, (before, after)

    def test_admin_lists_queries_do_not_grow_with_the_data(self, sizes):
        before, after = sizes.counts(admin_list_pages)
        assert before == after, (before, after)


class TestThirtyDiscussionsOfTenStatements:
    """Read (or changed in a test's savepoint) from one world: the review queue and home, the
    assign page and its groups of who has what (one page of twenty and a second)."""

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            yield seeded(discussions=ASSIGN_DISCUSSIONS_PER_PAGE + 5, statements=10, long=0)

    def test_the_review_queue_pages_its_groups_and_keeps_the_filter_in_its_links(self, world):
        data, extras = world
        client = client_for(data.admin)
        url = reverse("audit:review_queue")

        first = client.get(url, {"auditor": extras["second"].pk}).content.decode()
        second = client.get(url, {"auditor": extras["second"].pk, "page": 2}).content.decode()

        groups = (
            Feedback.objects.filter(status="submitted").values("statement__discussion").distinct()
        )
        assert f"in {groups.count()} groups" in first
        assert groups.count() > REVIEW_GROUPS
        assert first.count('class="group-head"') == REVIEW_GROUPS
        assert second.count('class="group-head"') == min(
            REVIEW_GROUPS, groups.count() - REVIEW_GROUPS
        )
        assert f'href="?auditor={extras["second"].pk}&amp;page=2"' in first

    def test_the_review_home_lists_the_first_discussions_and_links_to_all(self, world):
        data, _ = world
        html = client_for(data.admin).get(reverse("home")).content.decode()
        table = html.split('data-testid="waiting-by-discussion"')[1].split("</table>")[0]
        assert table.count("<tr>") == 1 + 20
        assert f"All {len(data.discussion_ids)} discussions with work waiting" in html

    def test_the_review_home_counts_what_waits_as_the_rows_say(self, world):
        data, extras = world
        waiting = Feedback.objects.filter(status="submitted").exclude(
            statement__feedback__status="approved"
        )
        html = client_for(data.admin).get(reverse("home")).content.decode()
        assert f"Start reviewing ({waiting.count()} waiting)" in html
        mine = re.search(
            rf"<td>{extras['second'].username}</td><td class=\"num\">(\d+)</td>", html
        ).group(1)
        assert int(mine) == waiting.filter(auditor=extras["second"]).count() > 0

    def test_the_assign_page_offers_one_page_of_the_filtered_discussions(self, world):
        from audit.views.team import ASSIGN_DISCUSSIONS_PER_PAGE as PER_PAGE

        data, _ = world
        assert len(data.discussion_ids) == PER_PAGE + 5
        client = client_for(data.admin)
        url = reverse("audit:assignments")
        picker = re.compile(r'<input type="checkbox" name="discussions" value="(\d+)"')

        first = client.get(url).content.decode()
        second = client.get(url, {"page": 2}).content.decode()
        found = client.get(url, {"q": f"#{data.discussion_ids[7]}"}).content.decode()

        first_ids, second_ids = picker.findall(first), picker.findall(second)
        assert len(first_ids) == PER_PAGE and len(second_ids) == 5
        assert not set(first_ids) & set(second_ids)
        assert f"All {PER_PAGE + 5} discussions of the site" in first
        assert picker.findall(found) == [str(data.discussion_ids[7])]
        assert "All 1 discussion that match the filter" in found

    def test_assigning_every_discussion_the_filter_matches_assigns_them_all(self, world):
        from audit.models import Assignment, Discussion
        from audit.views.team import ASSIGN_DISCUSSIONS_PER_PAGE as PER_PAGE

        data, extras = world
        assert len(data.discussion_ids) == PER_PAGE + 5
        Assignment.objects.all().delete()
        Discussion.objects.filter(pk__in=data.discussion_ids[:3]).update(summary="Needle story")
        url = reverse("audit:assignments")
        client = client_for(data.admin)
        form = {"auditors": [extras["second"].pk], "strategy": "round_robin", "overlap_percent": 0}
        form |= {"overlap_k": 2}

        nothing = client.post(url, form)
        response = client.post(url, {**form, "q": "needle", "all_matching": "on"})

        assert (
            nothing.status_code == 400
            and "Choose at least one discussion" in nothing.content.decode()
        )
        assert response.status_code == 302
        assigned = set(Assignment.objects.values_list("statement__discussion_id", flat=True))
        assert assigned == set(data.discussion_ids[:3])
        unassigned = client.get(url, {"unassigned": "on"}).content.decode()
        assert f"All {PER_PAGE + 2} discussions that match the filter" in unassigned

    def test_the_groups_of_who_has_what_come_a_page_of_discussions_at_a_time(self, world):
        from audit.views.team import GROUPS_DISCUSSIONS_PER_PAGE as PER_PAGE

        data, _ = world
        assert PER_PAGE < len(data.discussion_ids) <= 2 * PER_PAGE
        client = client_for(data.admin)
        url = reverse("audit:assignments")
        row = re.compile(r'<input type="hidden" name="discussion" value="(\d+)">')

        first = client.get(url).content.decode()
        second = client.get(url, {"groups": 2}).content.decode()

        shown = {int(pk) for pk in row.findall(first)}
        assert shown == set(data.discussion_ids[:PER_PAGE])
        assert {int(pk) for pk in row.findall(second)} == set(data.discussion_ids[PER_PAGE:])
        assert 'href="?groups=2"' in first and 'href="?groups=1"' in second
        assert client.get(url, {"groups": "x"}).status_code == 400


class TestSixtyDiscussions:
    """The team page's discussions: more than its page of 50."""

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            yield seeded(discussions=60, statements=12, long=0)

    def test_the_team_page_pages_its_discussions_and_the_downloads_hold_all(self, world):
        data, _ = world
        client = client_for(data.admin)
        url = reverse("audit:team")

        first = client.get(url, {"dsort": "-coded"}).content.decode()
        second = client.get(url, {"dsort": "-coded", "dpage": 2}).content.decode()
        rows = json.loads(client.get(url, {"download": "json"}).content)["discussions"]

        table = re.compile(r'data-testid="team-discussions".*?</table>', re.S)
        assert table.search(first).group(0).count('<tr data-row="') == 50
        assert table.search(second).group(0).count('<tr data-row="') == len(rows) - 50 > 0
        assert "page 1 of 2 · 60 discussions" in first and "dsort=-coded&amp;dpage=2" in first

    def test_the_team_page_reads_its_stored_rows_in_the_order_the_computed_rows_sort(self, world):
        """Every column, both ways: the page's first 50 discussions are the computed rows' first 50
        (ties by discussion), with the same figures, agreement included (the seed stores the
        inter-auditor pieces of one statement in ten)."""
        from audit.derived.team_figures import discussion_figures_sorted
        from audit.selectors.progress import COLUMNS, discussion_progress, rows_sorted

        computed = discussion_progress()
        assert {r.agreement_coders for r in computed} - {None}, "the seed stores agreement"
        for column in ("id", "label", *COLUMNS):
            for dsort in (column, f"-{column}"):
                expected = rows_sorted(computed, dsort)[:50]
                shown = list(discussion_figures_sorted(dsort)[:50])
                assert [r.pk for r in shown] == [r.id for r in expected], dsort
                for stored, row in zip(shown, expected, strict=True):
                    assert stored.agreement_coders == pytest.approx(row.agreement_coders), dsort
                    assert (stored.coded, stored.submitted) == (row.coded, row.submitted), dsort


class TestTheStatementsAboveAFarOne:
    """One discussion of 80 statements beside a small one."""

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, django_db_setup, django_db_blocker):
        with shared_data(django_db_blocker):
            yield seeded(discussions=1, statements=3, long=80)

    def test_coding_pages_queries_do_not_grow_with_the_statements_above(self, world):
        """A statement near the top of the long discussion and one far down: the rows above are
        read for their payloads in the same queries, never one by one."""
        data, extras = world
        far = extras["rejected"]
        near = Feedback.objects.filter(
            auditor=data.auditor, statement__discussion=far.statement.discussion,
            statement__order__lt=5, status=far.status,
        ).first() or _rejected_copy(far, order=3)  # fmt: skip
        client = client_for(data.auditor)
        counts = {
            name: [
                queries_of(client, reverse(name, args=[pk]))
                for pk in ((near.pk, far.pk) if name == "audit:feedback_edit" else
                           (near.statement_id, far.statement_id))
            ]
            for name in ("audit:feedback_edit", "audit:statement")
        }  # fmt: skip
        assert far.statement.order - near.statement.order > 40
        assert all(a == b for a, b in counts.values()), counts

    @pytest.mark.parametrize("viewer", ["auditor", "admin"])
    def test_statements_above_read_as_payloads_name_things_as_read_in_full(self, world, viewer):
        """A far statement's rows: the statements above it are read for their payloads only. The
        family so far and the names they give are the ones the same statements give read in full
        (as shown rows), for the auditor and for an admin opening the auditor's coding; the
        seeded blind statement hides its AI from the auditor only."""
        from audit.views.rows import ai_payloads, build_rows, coded_payloads, load_discussion

        data, extras = world
        far = extras["rejected"].statement
        user = data.auditor if viewer == "auditor" else data.admin
        run = data.runs[-1]

        def rows(shown_from: int):
            loaded = load_discussion(
                far.discussion, user, run, upto_order=far.order, owner=data.auditor,
                shown_from=shown_from,
            )  # fmt: skip
            return build_rows(loaded, user, owner=data.auditor, only_last=True)

        named, full = rows(shown_from=far.order), rows(shown_from=0)
        assert coded_payloads(named) == coded_payloads(full)
        assert ai_payloads(named) == ai_payloads(full)
        assert named[-1].mine_view == full[-1].mine_view and named[-1].ai_view == full[-1].ai_view
        hidden = [row.statement.order for row in named if row.ai_hidden]
        assert hidden == ([11] if viewer == "auditor" else [])
        assert sum(1 for row in named if row.coded) == far.order + 1
