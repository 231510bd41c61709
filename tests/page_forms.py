"""Every form a page shows, read from its HTML as a browser would submit it: the form's
method and target (``action``, or htmx's ``hx-post``/``hx-get``), its controls with their
values, and its named buttons; and every element outside a form that htmx sends elsewhere
than by GET (a cancel button, a presence ping), as a form without controls. Not a test
module: tests/test_bad_input_pages.py imports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

# htmx attributes that send a request, the method each sends.
HX_VERBS = ("post", "put", "patch", "delete", "get")


@dataclass
class PageForm:
    page: str
    method: str
    action: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    buttons: list[tuple[str, str]] = field(default_factory=list)
    # Controls that send the form elsewhere (hx-post, formaction...): (method, action).
    targets: list[tuple[str, str]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        """The controls a user types or picks (not the CSRF token)."""
        found = [n for n, _ in self.fields if n != "csrfmiddlewaretoken"]
        return list(dict.fromkeys(found))

    def data(self, **overrides: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, value in self.fields:
            out.setdefault(name, []).append(value)
        for name, value in overrides.items():
            out[name] = [value]
        return out


class _Forms(HTMLParser):
    def __init__(self, page: str):
        super().__init__()
        self.page = page
        self.forms: list[PageForm] = []
        self.current: PageForm | None = None
        self._select: str | None = None
        self._options: list[str] = []
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        sends = [(v, urljoin(self.page, a[f"hx-{v}"])) for v in HX_VERBS if a.get(f"hx-{v}")]
        if tag == "form":
            method, target = sends[0] if sends else ("get", urljoin(self.page, a.get("action", "")))
            if a.get("method", "").lower() in ("post", "dialog"):  # dialog: closes, sends nothing
                method = a["method"].lower()
            self.current = PageForm(self.page, method, target)
            return
        form = self.current
        kind = a.get("type", "text").lower()
        button = (tag == "input" and kind in ("submit", "button")) or tag == "button"
        if form is None:
            # Outside a form htmx sends no values: what is not a plain read counts.
            self.forms += [PageForm(self.page, verb, url) for verb, url in sends if verb != "get"]
            return
        # In a form, htmx sends its values from a button, and from anything else by POST etc.
        form.targets += [(verb, url) for verb, url in sends if button or verb != "get"]
        if button:
            if a.get("name"):
                form.buttons.append((a["name"], a.get("value", "")))
            if a.get("formaction"):
                form.targets.append(("post", urljoin(self.page, a["formaction"])))
        elif "disabled" in a and tag in ("input", "select", "textarea"):
            return  # a disabled control is not sent
        elif tag == "input" and a.get("name") and kind != "file":
            if kind in ("radio", "checkbox") and "checked" not in a:
                if not any(n == a["name"] for n, _ in form.fields):
                    form.fields.append((a["name"], a.get("value", "on")))
                return
            form.fields.append((a["name"], a.get("value", "")))
        elif tag == "select" and a.get("name"):
            self._select, self._options = a["name"], []
        elif tag == "option" and self._select is not None:
            self._options.append(a.get("value", ""))
        elif tag == "textarea" and a.get("name"):
            self._textarea, self._text = a["name"], ""

    def handle_data(self, data):
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag):
        form = self.current
        if form is None:
            return
        if tag == "select" and self._select is not None:
            form.fields.append((self._select, self._options[0] if self._options else ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            form.fields.append((self._textarea, self._text))
            self._textarea = None
        elif tag == "form":
            if form.method != "dialog":
                self.forms.append(form)
            self.current = None


def page_forms(page: str, html: str) -> list[PageForm]:
    """Every form of the page, and once more for each button that sends it elsewhere."""
    reader = _Forms(page)
    reader.feed(html)
    forms = []
    for form in reader.forms:
        forms.append(form)
        for method, action in form.targets:
            forms.append(PageForm(page, method, action, form.fields, form.buttons))
    return forms
