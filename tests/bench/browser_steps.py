"""From a key press in the editor to the next statement usable, in headless Chromium (Debian's,
driven by Playwright) against a server of this process on the committed data."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.test import override_settings
from django.test.testcases import LiveServerThread

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
USABLE = "form[data-autosave]"  # the editor's form, there once the page has loaded


@contextmanager
def live_server() -> Iterator[str]:
    """A threaded server of this process on a free port (static files from the finders, as
    the development server serves them); its address."""
    with override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "127.0.0.1"]):
        server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
        server.daemon = True
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error
        try:
            yield f"http://127.0.0.1:{server.port}"
        finally:
            server.terminate()


@contextmanager
def chromium_page(base_url: str, session_cookie: str) -> Iterator[Any]:
    """A page of headless Chromium logged in with this session."""
    # Playwright's sync API runs an event loop in this thread; the ORM calls stay synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": session_cookie, "url": base_url}]
            )
            yield context.new_page()
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def key_to_next_ms(page: Any) -> float:
    """Milliseconds from the key press (n: submit and open the next; Enter confirms) to the
    next statement's editor loaded, its form on the page."""
    before = page.url
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys act
    started = time.perf_counter()
    page.keyboard.press("n")
    confirm = page.locator("dialog[open] button[data-confirm-op=submit_next]:not([hidden])")
    confirm.wait_for(timeout=10_000)
    confirm.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != before, wait_until="load", timeout=30_000)
    page.wait_for_selector(USABLE, timeout=30_000)
    return (time.perf_counter() - started) * 1000


def renderer_cpu(page: Any) -> Callable[[], float]:
    """A clock of the CPU milliseconds the page's renderer process has used (Chromium's count,
    all its threads): what the browser parsed, laid out and ran, which the host's load moves
    far less than the wall time. Navigations within the site keep the process."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def now() -> float:
        metrics = cdp.send("Performance.getMetrics")["metrics"]
        return next(m["value"] for m in metrics if m["name"] == "ProcessTime") * 1000

    return now
