"""The API as a script sees it through a generated client: `openapi-python-client` (default
settings) generates a client from the schema without a warning, and tests/client_workflow.py,
written only against that client, does a team's work on a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from audit.models import Feedback, Speaker
from metrics.registry import example_files
from tests.api_fixtures import make_discussion
from tests.factories import ExtractionFactory

GENERATE = [sys.executable, "-m", "openapi_python_client", "generate"]
WORKFLOW = Path(__file__).with_name("client_workflow.py")
EXAMPLES = Path(__file__).resolve().parent.parent / "metrics" / "families" / "examples"


@pytest.fixture(scope="module")
def generated_client(tmp_path_factory) -> Path:
    """The client generated into a temporary directory (never committed), once per module."""
    where = tmp_path_factory.mktemp("client")
    call_command("spectacular", "--format", "openapi-json", "--file", str(where / "schema.json"))
    bin_dir = str(Path(sys.executable).parent)  # the generator runs ruff on its output
    result = subprocess.run(
        [*GENERATE, "--path", str(where / "schema.json"), "--output-path", str(where / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    return where / "out"


def test_the_client_has_one_payload_model_for_reading_and_writing(generated_client):
    models = generated_client / "evalsite_api_client" / "models"
    names = {path.stem for path in models.glob("*.py")}
    assert {"pdp_deltas", "pdp_person", "pdp_event", "pdp_pair_bond"} <= names
    # No inline copy of the payload or of its items under another name.
    assert not [name for name in names if name.endswith(("_people_item", "_events_item"))]
    assert {"ground_truth_file", "import_summary", "extraction_statement_values"} <= names


@pytest.fixture
def import_file(tmp_path) -> Path:
    path = tmp_path / "ground-truth.json"
    statement = {
        "id": 1,
        "order": 1,
        "text": "My mother moved to Ohio.",
        "speaker_type": "Subject",
        "approved_feedback": {
            "auditor": "patrick",
            "approved": True,
            "edited_extraction": {"people": [{"id": -1, "name": "Mother"}]},
        },
    }
    discussion = {"id": 77, "summary": "Imported family", "statements": [statement]}
    document = {"schema_version": "1", "exported_at": "2025-01-15T10:30:00Z"}
    path.write_text(json.dumps({**document, "discussions": [discussion]}))
    return path


@pytest.mark.django_db(transaction=True)
def test_a_script_on_the_generated_client_does_a_teams_work(
    generated_client, live_server, auditor, admin_user, import_file
):
    _, statements = make_discussion("Smith family", n_subject=1)
    subject = next(s for s in statements if s.speaker.type == Speaker.Type.SUBJECT)
    ExtractionFactory(statement=subject)
    tokens = [Token.objects.create(user=user).key for user in (admin_user, auditor)]
    run_file = EXAMPLES / next(name for name in example_files() if name.startswith("selective"))
    result = subprocess.run(
        [sys.executable, str(WORKFLOW), live_server.url, *tokens, str(import_file), str(run_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(generated_client)},
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads(result.stdout)
    assert seen["statement"] == subject.pk
    assert seen["approved_status"] == "approved"
    assert (seen["f1_type"], seen["people_tp_type"]) == ("float", "int")
    assert 0 <= seen["f1"] <= 1
    assert seen["exported_ground_truth"] == 1
    assert (seen["imported_discussions"], seen["imported_ground_truth"]) == (1, 1)
    assert seen["evaluation_status"] == "done"
    assert seen["evaluation_mode"]  # the first mode of the file, as the upload page takes it
    coding = Feedback.objects.get(statement=subject, auditor=auditor)
    assert coding.edited_extraction["people"][0]["name"] == "Corrected Name"
