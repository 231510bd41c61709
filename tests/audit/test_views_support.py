"""Helpers for the audit view tests (no tests here): a small discussion, htmx requests, and
reading the editor form back out of the rendered HTML so tests post what a browser would."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from django.test import Client
from django.urls import reverse

from audit.models import Discussion, Extraction, ExtractionRun, Speaker, Statement
from tests.factories import (
    SIMPLE_PDP,
    DiscussionFactory,
    ExtractionFactory,
    SpeakerFactory,
    StatementFactory,
    pdp,
)

HX = {"HTTP_HX_REQUEST": "true"}


@dataclass
class Scene:
    discussion: Discussion
    run: ExtractionRun
    first: Statement  # subject, with the SIMPLE_PDP extraction
    expert: Statement
    second: Statement  # subject, with a shift event on John
    extraction: Extraction


SHIFT_PDP = pdp(
    events=[
        {
            "id": -10,
            "kind": "shift",
            "person": -1,
            "description": "John started drinking",
            "dateTime": "1990",
            "dateCertainty": "approximate",
            "symptom": "up",
            "relationship": "conflict",
            "relationshipTargets": [-2],
            "confidence": 0.6,
        }
    ]
)


def make_scene(summary: str = "The Smith family") -> Scene:
    discussion = DiscussionFactory(summary=summary)
    subject = SpeakerFactory(discussion=discussion, name="Ann", type=Speaker.Type.SUBJECT)
    expert = SpeakerFactory(discussion=discussion, name="Coach", type=Speaker.Type.EXPERT)
    run, _ = ExtractionRun.objects.get_or_create(model_name="gpt-test", prompt_version="v1")
    first = StatementFactory(
        discussion=discussion, speaker=subject, order=1, text="My parents John and Mary married."
    )
    expert_statement = StatementFactory(
        discussion=discussion, speaker=expert, order=2, text="How did that go?"
    )
    second = StatementFactory(
        discussion=discussion, speaker=subject, order=3, text="Dad began drinking around 1990."
    )
    extraction = ExtractionFactory(statement=first, run=run, pdp_deltas=_copy(SIMPLE_PDP))
    ExtractionFactory(statement=second, run=run, pdp_deltas=_copy(SHIFT_PDP))
    return Scene(discussion, run, first, expert_statement, second, extraction)


def _copy(payload: dict) -> dict:
    import copy

    return copy.deepcopy(payload)


def hx_get(client: Client, url: str, data: dict | None = None):
    return client.get(url, data or {}, **HX)


def hx_post(client: Client, url: str, data: dict | None = None):
    return client.post(url, data or {}, **HX)


class _FormReader(HTMLParser):
    """The successful controls of one form, as a browser would submit them (minus buttons)."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self._select: tuple[str, bool] | None = None
        self._select_values: list[str] = []
        self._first_option: str | None = None
        self._in_option = False
        self._option_value: str | None = None
        self._option_text = ""
        self._option_selected = False
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if not self.inside or ("disabled" in a and tag in ("input", "select", "textarea")):
            return  # a disabled control is not sent
        if tag == "input" and a.get("name") and a.get("type", "text") not in ("submit", "button"):
            if a.get("type") in ("radio", "checkbox") and "checked" not in a:
                return
            self.fields.append((a["name"], a.get("value", "")))
        elif tag == "select":
            self._select = (a.get("name", ""), "multiple" in a)
            self._select_values, self._first_option = [], None
        elif tag == "option" and self._select:
            self._in_option = True
            self._option_value = a.get("value")
            self._option_selected = "selected" in a
            self._option_text = ""
        elif tag == "textarea":
            self._textarea, self._text = a.get("name"), ""

    def handle_data(self, data):
        if self._in_option:
            self._option_text += data
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag):
        if not self.inside:
            return
        if tag == "option" and self._select:
            value = self._option_value if self._option_value is not None else self._option_text
            if self._first_option is None:
                self._first_option = value
            if self._option_selected:
                self._select_values.append(value)
            self._in_option, self._option_value, self._option_selected = False, None, False
        elif tag == "select" and self._select:
            name, multiple = self._select
            values = self._select_values or ([] if multiple else [self._first_option or ""])
            self.fields += [(name, v) for v in values]
            self._select = None
        elif tag == "textarea" and self._textarea:
            self.fields.append((self._textarea, self._text))
            self._textarea = None
        elif tag == "form":
            self.inside = False


def form_fields(html: str, form_id: str) -> list[tuple[str, str]]:
    reader = _FormReader(form_id)
    reader.feed(html)
    assert reader.fields, f"form #{form_id} not found or empty"
    return reader.fields


def as_post(fields: list[tuple[str, str]], **overrides) -> dict:
    """Form fields as a dict for the test client (lists for repeated names)."""
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    for name, value in overrides.items():
        data[name] = value if isinstance(value, list) else [value]
    return data


def editor_fields(client: Client, feedback) -> list[tuple[str, str]]:
    response = client.get(reverse("audit:feedback_edit", args=[feedback.pk]), **HX)
    assert response.status_code == 200
    return form_fields(response.content.decode(), f"editor-form-{feedback.pk}")


def set_field(fields: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    assert any(n == name for n, _ in fields), f"no field {name}"
    return [(n, value if n == name else v) for n, v in fields]
