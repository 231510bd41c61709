"""A coder's and a reviewer's round trips, as the site serves them: the requests each step
sends, with the form an editor page holds read back from its HTML.

The data is ``benchmark_dashboard``'s (``dashboard_data_create`` and ``pages_data_create``):
the second auditor has open assignments to code (one statement in ten) and submitted codings
waiting for review (another one in ten), which the admin approves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import OuterRef, Subquery
from django.test import Client

from audit.models import (
    Assignment,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    history_purge,
)

HTMX = {"HX-Request": "true"}
SECOND = "bench-dashboard-auditor2"
USERS = ("bench-dashboard-admin", "bench-dashboard-auditor", SECOND)
DELETE_CHUNK = 100  # discussions per transaction when the seed goes


class _EditorForm(HTMLParser):
    """The fields of the editor's autosave form (``form[data-autosave]``) as a browser sends
    them: named inputs, selects (their selected option, else the first) and textareas, not
    the disabled ones."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[tuple[str, str]] = []
        self.depth = 0  # inside the form while > 0
        self.select: str | None = None
        self.options: list[tuple[str, bool]] = []
        self.option_text = False
        self.textarea: str | None = None
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.depth += 1 if (self.depth or "data-autosave" in a) else 0
            return
        if not self.depth or ("disabled" in a and tag in ("input", "select", "textarea")):
            return
        if tag == "input" and a.get("name") and a.get("type") not in ("submit", "button"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.fields.append((a["name"], a.get("value", "on")))
        elif tag == "select" and a.get("name"):
            self.select, self.options = a["name"], []
        elif tag == "option" and self.select is not None:
            # Without a value attribute an option sends its text (added as it is read).
            self.options.append((a.get("value", ""), "selected" in a))
            self.option_text = "value" not in a
        elif tag == "textarea" and a.get("name"):
            self.textarea, self.text = a["name"], ""

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.text += data
        elif self.select is not None and self.option_text and self.options:
            value, selected = self.options[-1]
            self.options[-1] = (value + data, selected)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.depth:
            self.depth -= 1
        elif tag == "option":
            self.option_text = False
        elif tag == "select" and self.select is not None:
            chosen = [v for v, selected in self.options if selected] or [
                v for v, _ in self.options[:1]
            ]
            self.fields += [(self.select, v) for v in chosen]
            self.select = None
        elif tag == "textarea" and self.textarea is not None:
            self.fields.append((self.textarea, self.text.lstrip("\n")))
            self.textarea = None


class _Elements(HTMLParser):
    """The elements a browser running scripts builds from a page: a <noscript>'s content is
    text to it. Counted by tag."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.noscript = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.noscript:
            self.tags[tag] = self.tags.get(tag, 0) + 1
        self.noscript += tag == "noscript"

    def handle_endtag(self, tag: str) -> None:
        if tag == "noscript" and self.noscript:
            self.noscript -= 1


def page_figures(html: str) -> dict[str, int]:
    """What a browser parses for a page: its HTML's bytes and the elements it builds."""
    parser = _Elements()
    parser.feed(html)
    tags = parser.tags
    return {
        "bytes": len(html.encode()),
        "elements": sum(tags.values()),
        "select": tags.get("select", 0),
        "option": tags.get("option", 0),
        "input": tags.get("input", 0),
    }


def editor_fields(html: str) -> dict[str, Any]:
    """The autosave form's fields, a list for a name sent more than once."""
    parser = _EditorForm()
    parser.feed(html)
    fields: dict[str, Any] = {}
    for name, value in parser.fields:
        if name in fields:
            kept = fields[name]
            fields[name] = [*kept, value] if isinstance(kept, list) else [kept, value]
        else:
            fields[name] = value
    return fields


def clean_work_to_code(data: Any) -> None:
    """The AI extraction of the statements the second auditor is assigned is the ground truth
    (the seed's AI has the typos a coder fixes): each submit then goes through, as a coder's
    does once the coding is right."""
    assigned = Assignment.objects.filter(auditor__username=SECOND, status=Assignment.Status.OPEN)
    truth = Feedback.objects.filter(
        auditor=data.auditor, statement_id=OuterRef("statement_id")
    ).values("edited_extraction")[:1]
    Extraction.objects.filter(
        run=data.runs[-1], statement_id__in=assigned.values("statement_id")
    ).update(pdp_deltas=Subquery(truth))


def _ok(response: Any, what: str) -> Any:
    if response.status_code >= 400:
        raise RuntimeError(f"{what}: HTTP {response.status_code}: {response.content[:600]!r}")
    return response


def _followed(client: Client, response: Any, what: str) -> tuple[str, Any]:
    """The page a step opens next: htmx's HX-Redirect (or a plain redirect), requested."""
    target = response.get("HX-Redirect") or response.get("Location")
    if not target:
        raise RuntimeError(f"{what}: no next page (HTTP {response.status_code})")
    return target, _ok(client.get(target), f"{what}: {target}")


# (wall, CPU of this process) in milliseconds, then the SQL queries and the commits sent
Timing = tuple[float, float, int, int]


class _Clock:
    """Wall and CPU milliseconds of the requests a step sends (its preparation left out), and
    the queries and commits they sent (the test client serves on this connection)."""

    def __enter__(self) -> _Clock:
        self.queries = self.commits = 0
        self._wrapper = connection.execute_wrapper(self._counted)
        self._wrapper.__enter__()
        self._commit = connection.commit
        connection.commit = self._committed  # type: ignore[method-assign]
        self.started, self.cpu = time.perf_counter(), time.process_time()
        return self

    def _counted(self, execute: Callable, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.queries += 1
        return execute(sql, params, many, context)

    def _committed(self) -> None:
        self.commits += 1
        self._commit()

    def __exit__(self, *exc: Any) -> None:
        wall, cpu = time.perf_counter() - self.started, time.process_time() - self.cpu
        connection.commit = self._commit  # type: ignore[method-assign]
        self._wrapper.__exit__(*exc)
        self.took = (wall * 1000, cpu * 1000, self.queries, self.commits)


@dataclass
class Steps:
    """The steps timed, each returning the (wall, CPU) milliseconds of its requests."""

    coder: Client
    admin: Client
    editor_url: str = ""
    page: Any = None  # the last editor page served

    def code_next(self) -> Timing:
        """ "Code my next statement": the POST and the editor it opens."""
        with _Clock() as clock:
            response = _ok(self.coder.post("/audit/next/", headers=HTMX), "code my next")
            self.editor_url, self.page = _followed(self.coder, response, "code my next")
        return clock.took

    def editor(self) -> Timing:
        with _Clock() as clock:
            self.page = _ok(self.coder.get(self.editor_url), "editor")
        return clock.took

    def autosave(self) -> Timing:
        fields = editor_fields(self.page.content.decode())
        with _Clock() as clock:
            _ok(self.coder.post(_save_url(self.editor_url), fields, headers=HTMX), "autosave")
        return clock.took

    def submit_next(self) -> Timing:
        """Submit (the editor's "Submit and open the next") and the next editor it opens."""
        fields = {**editor_fields(self.page.content.decode()), "op": "submit_next"}
        with _Clock() as clock:
            url = _save_url(self.editor_url)
            response = _ok(self.coder.post(url, fields, headers=HTMX), "submit")
            self.editor_url, self.page = _followed(self.coder, response, "submit and next")
        return clock.took

    def approve_next(self) -> Timing:
        """Approve a submitted coding and open the next statement waiting for review."""
        waiting = _waiting_review()
        data = {"version": waiting.version, "and_next": "1"}
        with _Clock() as clock:
            url = f"/audit/feedback/{waiting.pk}/approve/"
            response = _ok(self.admin.post(url, data, headers=HTMX), "approve")
            _followed(self.admin, response, "approve and next")
        return clock.took


def _save_url(editor_url: str) -> str:
    return editor_url.split("?")[0].replace("/edit/", "/save/")


def _waiting_review() -> Feedback:
    """The second auditor's first submitted coding (another's too waits on its statement)."""
    found = (
        Feedback.objects.filter(auditor__username=SECOND, status=Feedback.Status.SUBMITTED)
        .order_by("pk")
        .first()
    )
    if found is None:
        raise RuntimeError("no submitted coding left to approve: seed more discussions")
    return found


def logged_in(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def timed(step: Callable[[], Timing], repeat: int) -> list[Timing]:
    """``repeat`` runs after one warm-up run."""
    step()
    return [step() for _ in range(repeat)]


def seeded_delete() -> None:
    """What the seed committed (benchmark_dashboard's data), a few discussions per transaction."""
    with history_purge():
        ids = list(
            Discussion.objects.filter(
                external_id__startswith="bench-", summary__startswith="Benchmark discussion "
            )
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        for start in range(0, len(ids), DELETE_CHUNK):
            with transaction.atomic():
                Discussion.objects.filter(pk__in=ids[start : start + DELETE_CHUNK]).delete()
        with transaction.atomic():
            ExtractionRun.objects.filter(model_name="bench-model").delete()
            get_user_model().objects.filter(username__in=USERS).delete()
