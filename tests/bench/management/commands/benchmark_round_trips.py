"""A coder's and a reviewer's round trips at N discussions x M statements: the server time of
opening the editor ("code my next"), an autosave, submit-and-next and approve-and-next
(median and p95 over --repeat, with this process's CPU beside them) and what a browser parses
for the editor (its HTML's size and the elements it builds), then in headless
Chromium the time from the key press (n, Enter to confirm) to the next statement's editor
loaded (median over --presses) and the CPU the page's renderer used for it.

Seeds ``benchmark_dashboard``'s data and commits it (the browser's server reads it through its
own connections), deleting it at the end unless --keep; --seeded times the data a --keep run
left. Every step writes (drafts, submissions, approvals): a kept seed has that much less work
waiting after each run. Approvals queue their recompute tasks to the broker as the site does.
"""

from __future__ import annotations

import statistics
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test import override_settings

from evalsite.perf.planner import planner_statistics_refresh
from tests.bench.browser_steps import chromium_page, key_to_next_ms, live_server, renderer_cpu
from tests.bench.management.commands.benchmark_dashboard import (
    SEEDED,
    dashboard_data_create,
    pages_data_create,
    percentile,
)
from tests.bench.profiling import profiled
from tests.bench.round_trips import (
    SECOND,
    Steps,
    Timing,
    clean_work_to_code,
    logged_in,
    page_figures,
    seeded_delete,
    timed,
)

GOAL_SERVER_MS = 150.0
GOAL_BROWSER_MS = 600.0


class Command(BaseCommand):
    help = "Time a coder's and a reviewer's round trips: server time, and key to next in Chromium."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=5000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument("--repeat", type=int, default=20, help="timed runs per step")
        parser.add_argument("--presses", type=int, default=10, help="timed key presses (0: none)")
        parser.add_argument("--keep", action="store_true", help="keep the seeded data")
        parser.add_argument("--seeded", action="store_true", help="time a --keep run's data")
        parser.add_argument(
            "--profile",
            metavar="FILE",
            help="then profile --repeat more submit-and-next and approve-and-next runs with "
            "pyinstrument and write its report here (HTML for .html, else text)",
        )

    def handle(self, *args, **options):
        if options["repeat"] < 1 or options["presses"] < 0:
            raise CommandError("--repeat must be at least 1 and --presses at least 0.")
        if not options["seeded"]:
            self._seed(options["discussions"], options["statements"])
        try:
            self._server(options["repeat"], options["profile"])
            if options["presses"]:
                self._browser(options["presses"])
        finally:
            if not (options["keep"] or options["seeded"]):
                seeded_delete()

    def _seed(self, discussions: int, statements: int) -> None:
        started = time.perf_counter()
        with transaction.atomic():
            data = dashboard_data_create(
                discussions=discussions, statements=statements, runs=1, long_statements=0
            )
            pages_data_create(data)
            # As a site this large plans its queries (the update below joins three tables).
            planner_statistics_refresh(models=SEEDED)
            clean_work_to_code(data)
        self.stdout.write(
            f"seeded {discussions} discussions x {statements} statements in "
            f"{time.perf_counter() - started:.1f} s"
        )

    def _server(self, repeat: int, profile: str | None) -> None:
        steps = Steps(coder=logged_in(SECOND), admin=logged_in("bench-dashboard-admin"))
        hosts = [*settings.ALLOWED_HOSTS, "testserver"]
        with override_settings(ALLOWED_HOSTS=hosts):
            steps.code_next()
            self._report("open the editor (code my next)", timed(steps.code_next, repeat))
            self._report("the editor page alone", timed(steps.editor, repeat))
            self._page(steps.page.content.decode())
            self._report("an autosave", timed(steps.autosave, repeat))
            self._report("submit and next", timed(steps.submit_next, repeat))
            self._report("approve and next", timed(steps.approve_next, repeat))
            if profile:  # apart from the timed runs, which the profiler would slow
                with profiled(profile):
                    for _ in range(repeat):
                        steps.submit_next()
                        steps.approve_next()
                self.stdout.write(
                    f"profile of {repeat} submit-and-next and approve-and-next: {profile}"
                )

    def _page(self, html: str) -> None:
        """What the browser parses for the editor, which the host's load does not move."""
        f = page_figures(html)
        self.stdout.write(
            f"{'the editor page, as parsed':<32} {f['bytes'] / 1000:,.1f} KB of HTML, "
            f"{f['elements']:,} elements ({f['select']:,} selects, {f['option']:,} options, "
            f"{f['input']:,} inputs)"
        )

    def _report(self, name: str, times: list[Timing]) -> None:
        wall = [t[0] for t in times]
        median, cpu = statistics.median(wall), statistics.median(t[1] for t in times)
        queries, commits = (
            statistics.median(t[2] for t in times),
            statistics.median(t[3] for t in times),
        )
        verdict = "OK" if median <= GOAL_SERVER_MS else f"SLOWER than {GOAL_SERVER_MS:.0f} ms"
        self.stdout.write(
            f"{name:<32} median {median:6.1f} ms (CPU {cpu:5.1f} ms)  "
            f"p95 {percentile(wall, 0.95):6.1f} ms  ({len(wall)} runs)  "
            f"{queries:g} queries, {commits:g} commits  {verdict}"
        )

    def _browser(self, presses: int) -> None:
        coder = logged_in(SECOND)
        session = coder.cookies[settings.SESSION_COOKIE_NAME].value
        with live_server() as base_url, chromium_page(base_url, session) as page:
            page.goto(base_url + "/", wait_until="load")  # the coder's home
            page.locator("[data-key=code-next]").click()
            page.wait_for_selector("form[data-autosave]")
            key_to_next_ms(page)  # warm-up
            cpu = renderer_cpu(page)
            times, used = [], []
            for _ in range(presses):
                started = cpu()
                times.append(key_to_next_ms(page))
                used.append(cpu() - started)
        median = statistics.median(times)
        verdict = "OK" if median <= GOAL_BROWSER_MS else f"SLOWER than {GOAL_BROWSER_MS:.0f} ms"
        self.stdout.write(
            f"{'Chromium: key to next usable':<32} median {median:6.1f} ms  "
            f"p95 {percentile(times, 0.95):6.1f} ms  ({len(times)} presses)  {verdict}"
        )
        self.stdout.write(
            f"{'Chromium: its CPU a press':<32} median {statistics.median(used):6.1f} ms  "
            f"p95 {percentile(used, 0.95):6.1f} ms  (the page's renderer process, all threads)"
        )
