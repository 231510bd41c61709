"""API: stored metric results (read, filters), recompute (202 + job), job polling."""

import pytest

from metrics.models import ComputeJob, MetricResult

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

RESULTS = "/api/v1/metric-results/"


@pytest.fixture
def results(world):
    def row(scope, status="fresh", **ids):
        key = MetricResult.make_key(
            "extraction",
            scope,
            run_id=ids.get("run") and ids["run"].pk,
            discussion_id=ids.get("discussion") and ids["discussion"].pk,
            statement_id=ids.get("statement") and ids["statement"].pk,
        )
        return MetricResult.objects.create(
            key=key, family="extraction", scope=scope, status=status, values={"f1": 0.5}, **ids
        )

    return [
        row("statement", run=world.run, discussion=world.discussion, statement=world.subject),
        row(
            "statement",
            "stale",
            run=world.run,
            discussion=world.discussion,
            statement=world.subject2,
        ),
        row("discussion", run=world.run, discussion=world.discussion),
        row("run", "failed", run=world.run),
        row("system"),
    ]


def test_auditor_reads_results_with_filters(api, auditor, world, results):
    client = api(auditor)
    page = client.get(RESULTS).json()
    assert page["count"] == 5
    assert [r["id"] for r in page["results"]] == sorted(r.pk for r in results)
    assert client.get(RESULTS, {"scope": "statement"}).json()["count"] == 2
    assert client.get(RESULTS, {"status": "stale"}).json()["results"][0]["id"] == results[1].pk
    assert client.get(RESULTS, {"run": world.run.pk}).json()["count"] == 4
    assert client.get(RESULTS, {"family": "verdicts"}).json()["count"] == 0
    assert client.get(RESULTS, {"discussion": world.discussion.pk}).json()["count"] == 3
    assert client.get(RESULTS, {"statement": world.subject.pk}).json()["count"] == 1
    assert client.get(RESULTS, {"page_size": 2}).json()["next"]
    detail = client.get(f"{RESULTS}{results[0].pk}/").json()
    assert detail["values"] == {"f1": 0.5} and detail["scope"] == "statement"


@pytest.mark.parametrize(
    ("params", "field"),
    [({"scope": "galaxy"}, "scope"), ({"run": "-1"}, "run"), ({"status": "rotten"}, "status")],
)
def test_bad_result_filters_are_400(api, auditor, params, field):
    response = api(auditor).get(RESULTS, params)
    assert response.status_code == 400
    assert response.json()["errors"][0].startswith(f"{field}:")


def test_results_need_a_role(api, outsider):
    assert api(outsider).get(RESULTS).status_code == 403
    assert api().get(RESULTS).status_code == 401


def test_recompute_is_admin_only(api, auditor, outsider):
    assert api(auditor).post("/api/v1/recompute/", {}, format="json").status_code == 403
    assert api(outsider).post("/api/v1/recompute/", {}, format="json").status_code == 403
    assert api().post("/api/v1/recompute/", {}, format="json").status_code == 401
    assert not ComputeJob.objects.exists()


def test_recompute_returns_a_job_to_poll(
    api, admin_user, world, django_capture_on_commit_callbacks
):
    client = api(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/recompute/", {}, format="json")
    assert response.status_code == 202
    body = response.json()
    job = ComputeJob.objects.get(pk=body["job_id"])
    assert job.kind == ComputeJob.Kind.RECOMPUTE
    assert job.created_by == admin_user
    assert "download_url" not in body
    status = client.get(body["url"]).json()
    assert status["status"] == "done"  # Celery runs eagerly in tests
    assert {"done", "total", "percent"} <= status.keys()
    assert status["percent"] == 100


def test_recompute_while_one_is_active_returns_it(api, admin_user, world):
    client = api(admin_user)
    first = client.post("/api/v1/recompute/", {"run": world.run.pk}, format="json").json()
    second = client.post("/api/v1/recompute/", {}, format="json").json()
    assert first["job_id"] == second["job_id"]
    assert ComputeJob.objects.get().params["run_id"] == world.run.pk


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"run": 999999}, 404, "run: No extraction run 999999"),
        ({"family": "nope"}, 400, '"nope" is not a valid choice'),
        ({"stale_only": "yes"}, 400, "stale_only"),
        ({"stale_onyl": True}, 400, "stale_onyl: unknown field; expected one of: family, run"),
    ],
)
def test_recompute_bad_input(api, admin_user, body, status, message):
    response = api(admin_user).post("/api/v1/recompute/", body, format="json")
    assert response.status_code == status
    assert message in response.json()["detail"]
    assert not ComputeJob.objects.exists()


def test_jobs_list_and_detail_are_admin_only(api, admin_user, auditor):
    job = ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, total=4, done=1)
    ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT)
    client = api(admin_user)
    page = client.get("/api/v1/jobs/", {"kind": "recompute"}).json()
    assert [j["id"] for j in page["results"]] == [job.pk]
    detail = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert (detail["done"], detail["total"], detail["percent"]) == (1, 4, 25)
    assert detail["download_url"] is None
    assert client.get("/api/v1/jobs/999999/").status_code == 404
    assert api(auditor).get(f"/api/v1/jobs/{job.pk}/").status_code == 403
    assert api(auditor).get("/api/v1/jobs/").status_code == 403
