"""Failure packets on demo-like data: a packet of missed pair bonds counts what the error
analysis counts, and every item it lists as missed is missed."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from audit.models import Extraction, Feedback
from evalsite.match_settings import match_settings
from metrics import dashboard as dash
from metrics import packets, selectors
from metrics.engine.comparison import side_get, side_of_run
from metrics.engine.derived import error_analysis_read
from metrics.families.extraction import calculate_statement_f1
from metrics.models import StatementError
from metrics.packets import packet as packet_module

pytest_plugins = ["tests.metrics.loop_data"]
pytestmark = pytest.mark.django_db


def test_missed_pair_bonds_count_as_the_error_analysis_and_are_missed(loop):
    run = loop.replicates[0]
    packet = packets.failure_packet(user=loop.admin, side=side_of_run(run), pattern="pair_bonds_fn")
    counts = packet["counts"]
    # What the error analysis page shows: "missed pair bonds" and its statements.
    totals = (selectors.run_row(run).contribution or {})["statements"]
    shown = {k["kind"]: k["count"] for k in dash.error_kinds(totals)}
    figures = error_analysis_read(run).values["figures"]
    assert counts["count"] == shown["pair_bonds_fn"] == figures["pair_bonds_fn"][1] > 0
    assert counts["statements"] == figures["pair_bonds_fn"][0]
    rows = StatementError.objects.filter(run=run, figure="pair_bonds_fn")
    assert counts["discussions"] == rows.values("discussion_id").distinct().count()
    assert counts["total_errors"] == sum(k["count"] for k in dash.error_kinds(totals))
    assert counts["share_of_errors"] == pytest.approx(counts["count"] / counts["total_errors"])

    listed = packet["statements"]
    assert len(listed) == min(packets.DEFAULT_STATEMENTS, counts["statements"])
    assert [s["count"] for s in listed] == sorted((s["count"] for s in listed), reverse=True)
    for s in listed:  # scored again from the payloads: every listed bond is missed
        ai = Extraction.objects.get(run=run, statement_id=s["statement_id"]).pdp_deltas
        gt = Feedback.objects.approved().get(statement_id=s["statement_id"]).edited_extraction
        scored = calculate_statement_f1(ai, gt, settings=match_settings())
        missed = {item["id"] for item in s["gt_items"]}
        assert missed and missed <= set(scored.pair_bonds_fn_ids), s
        assert not missed & {m["gt_id"] for m in scored.pair_bonds_matches}
        assert len(missed) == s["count"]
        assert {item["id"] for item in s["ai_items"]} == set(scored.pair_bonds_fp_ids)
        assert all(item["summary"].startswith("Bond ") for item in s["gt_items"])


def test_the_packet_carries_context_notes_comments_and_guidelines(loop):
    side = side_get(f"c{loop.configuration.pk}")
    packet = packets.failure_packet(user=loop.admin, side=side, pattern="pair_bonds_fn", n=50)
    per_run = packet["counts"]["per_run"]
    assert packet["counts"]["count"] == sum(per_run.values()) and len(per_run) == 3
    by_id = {s["statement_id"]: s for s in packet["statements"]}
    noted = [by_id[i] for i in loop.noted if i in by_id]
    commented = [by_id[i] for i in loop.comments if i in by_id]
    assert noted and commented
    assert all(s["coding"]["note"] == loop.noted[s["statement_id"]] for s in noted)
    assert all(
        [c["body"] for c in s["comments"]] == loop.comments[s["statement_id"]] for s in commented
    )
    assert all(len(s["before"]) <= packets.CONTEXT_BEFORE for s in packet["statements"])
    assert packet["guidelines"]["version"] == 1 and packet["guidelines"]["sections"]

    markdown = packets.packet_markdown(packet)
    first = packet["statements"][0]
    assert markdown.startswith("# Failure packet: missed pair bonds\n")
    assert packet["summary"] in markdown and first["text"][:60] in markdown
    assert f"Auditor's note ({loop.auditor.username}" in markdown
    assert "| AI | Ground truth |" in markdown
    assert json.loads(packets.packet_json(packet))["counts"] == packet["counts"]


def test_sarf_and_parent_patterns_list_what_they_count(loop):
    run = loop.replicates[0]
    for key in ("sarf_high:anxiety", "sarf_low:symptom", "sarf_wrong:relationship", "parent_links"):
        packet = packets.failure_packet(user=loop.admin, side=side_of_run(run), pattern=key, n=50)
        listed = sum(s["count"] for s in packet["statements"])
        assert listed == packet["counts"]["count"], key  # all of them fit in 50
        for s in packet["statements"]:
            assert len(s["pairs"]) == len(s["gt_items"]) == s["count"], (key, s)


def test_a_packet_is_bounded(loop, monkeypatch):
    monkeypatch.setattr(packet_module, "MAX_MARKDOWN", 3000)
    packet = packets.failure_packet(
        user=loop.admin, side=side_of_run(loop.degraded), pattern="pair_bonds_fn", n=50
    )
    assert len(packets.packet_markdown(packet)) <= 3000
    assert packet["statements"] and "left out" in packet["truncated"]


def test_the_download_and_who_may_have_it(loop, client):
    url = reverse("metrics:failure_packet")
    query = {"run": loop.replicates[0].pk, "pattern": "pair_bonds_fn"}
    client.force_login(loop.auditor)
    assert client.get(url, query).status_code == 403
    client.force_login(loop.admin)
    markdown = client.get(url, query)
    assert markdown.status_code == 200 and markdown["Content-Type"].startswith("text/markdown")
    assert "packet-run-" in markdown["Content-Disposition"]
    assert b"# Failure packet: missed pair bonds" in markdown.content
    as_json = client.get(url, {**query, "format": "json", "n": "2"})
    assert len(as_json.json()["statements"]) == 2
    assert as_json.json()["statements"][0]["url"].startswith("http://testserver/audit/")
    bad = client.get(url, {**query, "pattern": "pair_bonds_x"})
    assert bad.status_code == 400 and b"pattern: expected" in bad.content
    assert client.get(url, {**query, "n": "51"}).status_code == 400


def test_the_error_page_offers_a_packet_for_each_pattern(loop, client):
    run = loop.replicates[0]
    client.force_login(loop.admin)
    html = client.get(reverse("metrics:errors"), {"run": run.pk}).content.decode()
    card = html.split('data-testid="failure-packets"')[1].split("</section>")[0]
    packet = reverse("metrics:failure_packet")
    for key in (
        "pair_bonds_fn",
        "people_fp",
        "events_fn:shift",
        "sarf_low:anxiety",
        "parent_links",
    ):
        assert (
            f"{packet}?run={run.pk}&amp;pattern={key.replace(':', '%3A')}&amp;format=json" in card
        )
    row = card.split("Missed pair bonds</td>")[1].split("</tr>")[0]
    figures = error_analysis_read(run).values["figures"]
    assert f'<td class="num">{figures["pair_bonds_fn"][1]}</td>' in row


def test_the_api_and_the_command_give_the_same_packet(loop, client):
    from django.core.management import call_command
    from rest_framework.test import APIClient

    run = loop.replicates[0]
    api = APIClient()
    api.force_authenticate(loop.admin)
    query = {"side": f"r{run.pk}", "pattern": "pair_bonds_fn", "n": 3}
    answer = api.get("/api/v1/failure-packets/", query)
    assert answer.status_code == 200, answer.content
    assert len(answer.json()["statements"]) == 3
    expected = packets.failure_packet(
        user=loop.admin, side=side_of_run(run), pattern="pair_bonds_fn"
    )
    assert answer.json()["counts"] == {
        **expected["counts"],
        "per_run": {str(run.pk): expected["counts"]["count"]},
    }
    assert api.get("/api/v1/failure-packets/", {**query, "side": "c999999"}).status_code == 404
    api.force_authenticate(loop.auditor)
    assert api.get("/api/v1/failure-packets/", query).status_code == 403

    out = io.StringIO()
    call_command(
        "failure_packet", "--run", f"r{run.pk}", "--pattern", "pair_bonds_fn", "-n", "2", stdout=out
    )
    assert out.getvalue().startswith("# Failure packet: missed pair bonds\n")
    assert out.getvalue().count("\n## ") == 3  # the guidelines and two statements
