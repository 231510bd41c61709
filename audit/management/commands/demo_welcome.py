"""`make run`'s last words: once the site answers, print where to go and how to sign in
(the workers start after it, quiet, so nothing scrolls the credentials away)."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from django.core.management.base import BaseCommand

from audit.services.demo import DEMO_USERS

POLL_SECONDS = 0.5


def site_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP reply (the login redirect, say) means the server is up
    except OSError:
        return False


class Command(BaseCommand):
    help = "Wait until the development site answers, then print its URL and demo users."

    def add_arguments(self, parser):
        parser.add_argument("url", help="the site's address, e.g. http://127.0.0.1:8000/")
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait at most")

    def handle(self, *args, url: str, timeout: float, **options):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not site_answers(url):
            time.sleep(POLL_SECONDS)
        self.stdout.write(self.banner(url))
        self.stdout.flush()

    def banner(self, url: str) -> str:
        lines = ["", "=" * 64, f"  evalsite is running: {url}", "", "  Sign in as"]
        lines += [f"    {name:<9} {password:<18} ({role})" for name, password, role in DEMO_USERS]
        lines += ["", "  Another port: make run PORT=8001 · stop with Ctrl-C", "=" * 64, ""]
        return "\n".join(lines)
