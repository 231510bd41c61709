"""The site under load: N clients for S seconds mixing page views, autosaves and approvals
against gunicorn (gunicorn.conf.py) and a Celery worker for both queues, on this database and
broker.

Seeds discussions with one coder's submitted coding on every statement (what the approvers
approve, discussion by discussion, several admins in the same discussion at once) and a draft
of each autosaving auditor on those same statements. Clients sign in through the login form,
then loop without pause:

- auditors: an autosave of one of their drafts (API), its editor page, the presence poll;
- admins: the approval of the next submitted coding (API), then its discussion's page;
- readers: the queue, the discussion list, the team page, the review queue, the progress API.

Prints per kind of request the count, the answers by status and the p50 / p95 / p99 latency,
the deadlocks PostgreSQL counted in this database meanwhile (the web processes and the worker
alike), and lost writes: an autosave or approval answered 200 that the database does not hold
at the end. Everything seeded is deleted afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from audit.derived.tallies import tallies_refresh
from audit.models import Feedback
from evalsite.access import ensure_role_groups
from tests.bench.data import SeededWorkload

PASSWORD = "load-test-password-1"
REQUEST_TIMEOUT = 60.0
SIGN_IN_TIMEOUT = 300.0
SIGNING_IN_AT_ONCE = 4
NO_ANSWER = 0  # the status recorded for a request that got no answer in time
SIGN_IN = "sign-in"
READER_PAGES = (
    "/",
    "/audit/discussions/{discussion}/",
    "/audit/team/",
    "/audit/review/",
    "/api/v1/progress/",
    "/metrics/discussions/",
)


@dataclass
class Seeded:
    workload: SeededWorkload
    pending: list[tuple[int, int, int]]  # (feedback, version, discussion) to approve
    drafts: dict[str, list[int]]  # auditor username -> their draft feedback ids
    admins: list[str]
    readers: list[str]
    discussions: list[int]
    users: list[int]


@dataclass
class Results:
    timings: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    errors: list[str] = field(default_factory=list)
    saved: dict[int, tuple[int, int]] = field(default_factory=dict)  # feedback -> (seq, version)
    approved: dict[int, int] = field(default_factory=dict)  # feedback -> version answered
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, seconds: float, status: int, detail: str = "") -> None:
        with self.lock:
            self.timings[kind].append(seconds)
            self.statuses[kind][status] += 1
            if (status >= 500 or status == NO_ANSWER) and len(self.errors) < 20:
                self.errors.append(f"{kind} {status}: {detail[:300]}")


class Command(BaseCommand):
    help = "Load: clients mixing page views, autosaves and approvals against gunicorn + a worker."

    def add_arguments(self, parser):
        parser.add_argument("--clients", type=int, default=40)
        parser.add_argument("--seconds", type=float, default=120.0)
        parser.add_argument("--discussions", type=int, default=40)
        parser.add_argument("--statements", type=int, default=40, help="per discussion")
        parser.add_argument("--web-processes", type=int, default=3, help="WEB_CONCURRENCY")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        if connection.vendor != "postgresql" or not settings.REDIS_URL:
            raise CommandError("Needs PostgreSQL (DATABASE_URL) and a broker (REDIS_URL).")
        if options["clients"] < 3:
            raise CommandError("--clients: at least 3 (an auditor, an admin, a reader).")
        rng = random.Random(options["seed"])
        started = time.perf_counter()
        seeded = _seed(options, rng)
        self.stdout.write(
            f"seeded {options['discussions']} discussions × {options['statements']} statements, "
            f"{len(seeded.pending)} codings to approve, in {time.perf_counter() - started:.1f} s"
        )
        try:
            with _site(options["web_processes"]) as site:
                deadlocks_before = _deadlocks()
                results = _load(site, seeded, options, rng)
                time.sleep(1.5)  # PostgreSQL reports its counters within a second
                deadlocks = _deadlocks() - deadlocks_before
            lost = _lost_writes(results)
            self._report(results, deadlocks, site.deadlock_lines(), lost, options)
        finally:
            _unseed(seeded)

    def _report(self, results: Results, deadlocks: int, logged: int, lost: list[str], options):
        seconds = options["seconds"]
        # Sign-ins come before the clock starts: apart from the load's own figures.
        timed = {kind: t for kind, t in results.timings.items() if kind != SIGN_IN}
        every = [t for times in timed.values() for t in times]
        self.stdout.write(
            f"{options['clients']} clients for {seconds:.0f} s: {len(every)} requests "
            f"({len(every) / seconds:.1f}/s) after signing in"
        )
        for kind in sorted(results.timings):
            times, statuses = results.timings[kind], results.statuses[kind]
            answers = ", ".join(f"{code}: {n}" for code, n in sorted(statuses.items()))
            self.stdout.write(f"  {kind:<9} {len(times):>6}  {_percentiles(times)}  ({answers})")
        self.stdout.write(f"  all       {len(every):>6}  {_percentiles(every)}  (sign-in apart)")
        server_errors = sum(n for s in results.statuses.values() for c, n in s.items() if c >= 500)
        unanswered = sum(s[NO_ANSWER] for s in results.statuses.values())
        self.stdout.write(
            f"5xx answers: {server_errors}; no answer within {REQUEST_TIMEOUT:.0f} s: {unanswered}"
        )
        self.stdout.write(
            f"deadlocks: {deadlocks} (PostgreSQL's count for this database); "
            f"'deadlock detected' in the web and worker logs: {logged}"
        )
        self.stdout.write(
            f"writes answered 200: {len(results.saved)} codings autosaved, "
            f"{len(results.approved)} approved; lost: {len(lost)}"
        )
        for line in [*results.errors[:10], *lost[:10]]:
            self.stdout.write(f"  {line}")


def _percentiles(times: list[float]) -> str:
    if not times:
        return "no requests"
    ordered = sorted(times)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000

    return f"p50 {at(0.5):7.1f} ms  p95 {at(0.95):7.1f} ms  p99 {at(0.99):7.1f} ms"


# --- the data ------------------------------------------------------------------------------------


def _seed(options: dict[str, Any], rng: random.Random) -> Seeded:
    workload = SeededWorkload.create(
        discussions=options["discussions"],
        statements=options["statements"],
        seed=options["seed"],
        approved_share=0,
    )
    n = options["clients"]
    n_auditors, n_admins = max(1, n * 2 // 5), max(1, n // 4)
    names = [f"{workload.tag}-{i}" for i in range(n)]
    auditors, admins, readers = (
        names[:n_auditors],
        names[n_auditors : n_auditors + n_admins],
        names[n_auditors + n_admins :],
    )
    users = _users(auditors=auditors, admins=[*admins, *readers])
    with transaction.atomic():
        statements = list(
            workload.run.extractions.order_by("statement__discussion_id", "statement__order")
            .select_related("statement")
            .values_list("statement_id", "statement__discussion_id", "pdp_deltas")
        )
        coder = users[auditors[0]] if len(auditors) == 1 else _user(f"{workload.tag}-coder")
        submitted = Feedback.objects.bulk_create(
            Feedback(
                statement_id=s, auditor=coder, edited_extraction=p, status=Feedback.Status.SUBMITTED
            )
            for s, _, p in statements
        )
        # Each auditor's drafts: statements spread over every discussion, approved meanwhile.
        drafts: dict[str, list[int]] = {}
        for name in auditors:
            chosen = rng.sample(statements, min(5, len(statements)))
            rows = Feedback.objects.bulk_create(
                Feedback(statement_id=s, auditor=users[name], edited_extraction=p)
                for s, _, p in chosen
            )
            drafts[name] = [row.pk for row in rows]
        tallies_refresh(
            pairs={(d, u.pk) for _, d, _ in statements for u in [coder, *users.values()]}
        )
    discussion_of = {s: d for s, d, _ in statements}
    pending = [(f.pk, f.version, discussion_of[f.statement_id]) for f in submitted]
    return Seeded(
        workload=workload,
        pending=pending,
        drafts=drafts,
        admins=admins,
        readers=readers,
        discussions=sorted(set(discussion_of.values())),
        users=[coder.pk, *(u.pk for u in users.values())],
    )


def _user(username: str, group: Any = None) -> Any:
    user = get_user_model().objects.create(username=username, password=_hashed())
    if group is not None:
        user.groups.add(group)
    return user


@functools.cache
def _hashed() -> str:
    """Hashed once (it costs most of a second), with the hasher the site checks by default
    (not a faster one this process may be set to use)."""
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(PASSWORD, hasher.salt())


def _users(*, auditors: list[str], admins: list[str]) -> dict[str, Any]:
    """Auditors autosave; admins approve or read every page."""
    auditor_group, admin_group = ensure_role_groups()
    users = {name: _user(name, auditor_group) for name in auditors}
    users |= {name: _user(name, admin_group) for name in admins}
    return users


def _unseed(seeded: Seeded) -> None:
    seeded.workload.delete()  # the discussions, with every coding of them
    get_user_model().objects.filter(pk__in=seeded.users).delete()


def _lost_writes(results: Results) -> list[str]:
    """Autosaves and approvals answered 200 that the database does not hold."""
    lost = []
    rows = Feedback.objects.filter(pk__in=[*results.saved, *results.approved])
    stored = {
        pk: (comment, v, s)
        for pk, comment, v, s in rows.values_list("pk", "comment", "version", "status")
    }
    for pk, (seq, version) in results.saved.items():
        comment, stored_version, _ = stored[pk]
        found = re.search(r"#(\d+)$", comment)
        if found is None or int(found.group(1)) < seq or stored_version < version:
            lost.append(f"autosave #{seq} (v{version}) of feedback {pk}: stored {comment!r}")
    for pk, version in results.approved.items():
        _, stored_version, status = stored[pk]
        if status != Feedback.Status.APPROVED or stored_version != version:
            lost.append(f"approval v{version} of feedback {pk}: stored {status} v{stored_version}")
    return lost


def _deadlocks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


# --- the processes -------------------------------------------------------------------------------


class _Site:
    def __init__(self, port: int, logs: list[Path]):
        self.url = f"http://127.0.0.1:{port}"
        self.logs = logs

    def deadlock_lines(self) -> int:
        return sum(p.read_text(errors="replace").count("deadlock detected") for p in self.logs)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment() -> dict[str, str]:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_EAGER": "0",
        "DEBUG": "0",
        "SECURE_COOKIES": "0",
        # DEBUG is off there: a key the settings accept, whatever the caller's (a test's) is.
        "SECRET_KEY": "load-test-only-secret-key-" + "abcdefghijklmnopqrstuvwxyz0123456789",
    }


@contextlib.contextmanager
def _site(web_processes: int) -> Iterator[_Site]:
    """gunicorn on a free port and one worker for both queues; both stopped on exit."""
    port, folder = _free_port(), Path(tempfile.mkdtemp(prefix="benchmark-load-"))
    env = {**_environment(), "PORT": str(port), "WEB_CONCURRENCY": str(web_processes)}
    web_log, worker_log = folder / "web.log", folder / "worker.log"
    web = [sys.executable, "-m", "gunicorn", "evalsite.wsgi:application"]
    web += [
        "--config",
        str(Path(settings.BASE_DIR) / "gunicorn.conf.py"),
        "--bind",
        f"127.0.0.1:{port}",
    ]
    worker = [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "-Q", "celery,slow"]
    worker += ["-c", "2", "-n", f"load-{port}@%h", "--without-mingle", "--without-gossip"]
    worker += ["--loglevel=warning"]
    processes = []
    try:
        for command, log in ((web, web_log), (worker, worker_log)):
            with log.open("w") as output:
                processes.append(
                    subprocess.Popen(
                        command, cwd=settings.BASE_DIR, env=env, stdout=output, stderr=output
                    )
                )
        _wait_until_up(f"http://127.0.0.1:{port}/accounts/login/", web_log)
        yield _Site(port, [web_log, worker_log])
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_until_up(url: str, log: Path, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise CommandError(f"the web server did not answer within {timeout:.0f} s; see {log}")


# --- the clients ---------------------------------------------------------------------------------


def _load(site: _Site, seeded: Seeded, options: dict[str, Any], rng: random.Random) -> Results:
    results, pending = Results(), queue.SimpleQueue[tuple[int, int, int]]()
    for item in seeded.pending:
        pending.put(item)
    names = [*seeded.drafts, *seeded.admins, *seeded.readers]
    # Every client signs in (through the form) before the clock starts, a few at a time: the
    # password hash takes most of a second of a core.
    with ThreadPoolExecutor(max_workers=SIGNING_IN_AT_ONCE) as pool:
        clients = dict(
            zip(names, pool.map(lambda n: _Client(site, n, results), names), strict=True)
        )
    deadline = time.monotonic() + options["seconds"]
    loops: list[Callable[[], None]] = []
    for name, drafts in seeded.drafts.items():
        loops.append(_auditor(clients[name], drafts, deadline, random.Random(rng.random())))
    for name in seeded.admins:
        loops.append(_approver(clients[name], pending, deadline))
    for name in seeded.readers:
        loops.append(
            _reader(clients[name], seeded.discussions, deadline, random.Random(rng.random()))
        )
    threads = [threading.Thread(target=loop, daemon=True) for loop in loops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(options["seconds"] + 120)
    return results


class _Client:
    """One signed-in browser session: API writes carry its CSRF token as the site's pages do."""

    def __init__(self, site: _Site, username: str, results: Results):
        self.site, self.results, self.session = site, results, requests.Session()
        self.username = username
        self.session.get(f"{site.url}/accounts/login/", timeout=SIGN_IN_TIMEOUT)
        answer = self._send(
            SIGN_IN,
            self.session.post,
            "/accounts/login/",
            {"data": {"username": username, "password": PASSWORD}},
            timeout=SIGN_IN_TIMEOUT,
        )
        if answer is None or answer.status_code != 302:
            raise CommandError(f"{username} could not sign in: {answer and answer.status_code}")

    def get(self, kind: str, path: str) -> requests.Response | None:
        return self._timed(
            kind, lambda: self.session.get(self.site.url + path, timeout=REQUEST_TIMEOUT)
        )

    def post(self, kind: str, path: str, **body: Any) -> requests.Response | None:
        return self._send(kind, self.session.post, path, body)

    def put(self, kind: str, path: str, **body: Any) -> requests.Response | None:
        return self._send(kind, self.session.put, path, body)

    def _send(
        self, kind: str, method: Any, path: str, body: dict, timeout: float = REQUEST_TIMEOUT
    ) -> requests.Response | None:
        headers = {"X-CSRFToken": self.session.cookies.get("csrftoken", "")}
        return self._timed(
            kind,
            lambda: method(
                self.site.url + path,
                headers=headers,
                allow_redirects=False,
                timeout=timeout,
                **body,
            ),
        )

    def _timed(self, kind: str, call: Callable[[], requests.Response]) -> requests.Response | None:
        began = time.perf_counter()
        try:
            answer = call()
        except requests.RequestException as exc:  # no answer (counted apart from the 5xx)
            self.results.record(kind, time.perf_counter() - began, NO_ANSWER, repr(exc))
            return None
        self.results.record(kind, time.perf_counter() - began, answer.status_code, answer.text)
        return answer


def _ok(answer: requests.Response | None) -> dict | None:
    return answer.json() if answer is not None and answer.status_code == 200 else None


def _auditor(
    client: _Client, drafts: list[int], deadline: float, rng: random.Random
) -> Callable[[], None]:
    """Autosaves of the auditor's drafts (each save's comment numbered), the editor page and
    its presence poll now and then."""

    def loop() -> None:
        sequence, results = 0, client.results
        known: dict[int, dict] = {}  # feedback id -> its latest answer
        while time.monotonic() < deadline:
            pk = rng.choice(drafts)
            if pk not in known:
                client.get("page", f"/audit/feedback/{pk}/edit/")
                if (found := _ok(client.get("api-read", f"/api/v1/feedback/{pk}/"))) is None:
                    continue
                known[pk] = found
            sequence += 1
            body = {
                "version": known[pk]["version"],
                "edited_extraction": known[pk]["edited_extraction"],
                "comment": f"{client.username} #{sequence}",
            }
            saved = _ok(client.put("autosave", f"/api/v1/feedback/{pk}/", json=body))
            if saved is None:
                known.pop(pk)  # read it again
                continue
            known[pk] = saved
            with results.lock:
                results.saved[pk] = (sequence, saved["version"])
            if sequence % 4 == 0:
                client.get("page", f"/audit/feedback/{pk}/edit/")
                client.post("presence", f"/audit/statements/{saved['statement']}/presence/")

    return loop


def _approver(client: _Client, pending: queue.SimpleQueue, deadline: float) -> Callable[[], None]:
    """The next submitted coding approved, then its discussion's page."""

    def loop() -> None:
        results = client.results
        while time.monotonic() < deadline:
            try:
                pk, version, discussion = pending.get_nowait()
            except queue.Empty:
                client.get("page", "/audit/review/")
                continue
            approved = _ok(
                client.post("approve", f"/api/v1/feedback/{pk}/approve/", json={"version": version})
            )
            if approved is not None:
                with results.lock:
                    results.approved[pk] = approved["version"]
            client.get("page", f"/audit/discussions/{discussion}/")

    return loop


def _reader(
    client: _Client, discussions: list[int], deadline: float, rng: random.Random
) -> Callable[[], None]:
    def loop() -> None:
        while time.monotonic() < deadline:
            page = rng.choice(READER_PAGES).format(discussion=rng.choice(discussions))
            client.get("page", page)

    return loop
