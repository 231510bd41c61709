"""The OpenAPI schema: valid, warning-free, every operation documents its errors; docs self-hosted."""

import pytest
from django.core.management import call_command
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client) -> dict:
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def test_schema_is_public_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)


def test_schema_generates_without_warnings(tmp_path):
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "s.yml"))


def test_every_v1_operation_documents_auth_and_errors(schema):
    operations = [
        (path, method, op)
        for path, ops in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method, op in ops.items()
    ]
    assert len(operations) >= 20
    for path, method, op in operations:
        codes = set(op["responses"])
        assert {"400", "401", "403", "404", "414"} <= codes, (method, path)
        assert any(c.startswith("2") for c in codes), (method, path)
        assert op["security"] == [{"tokenAuth": []}, {"cookieAuth": []}], (method, path)
        if method in {"post", "put"}:
            assert {"413", "415"} <= codes, (method, path)


def test_list_operations_are_paginated_and_filterable(schema):
    feedback = schema["paths"]["/api/v1/feedback/"]["get"]
    names = {p["name"] for p in feedback["parameters"]}
    assert {"page", "page_size", "discussion", "statement", "status", "auditor", "run"} <= names
    ref = feedback["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    paginated = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert {"count", "next", "previous", "results"} <= set(paginated["properties"])


def test_stale_version_409_is_documented(schema):
    for action in ("", "submit/", "approve/", "reject/"):
        ops = schema["paths"][f"/api/v1/feedback/{{id}}/{action}"]
        op = ops.get("put") or ops["post"]
        assert "409" in op["responses"], action


def test_export_documents_the_file_and_the_job(schema):
    op = schema["paths"]["/api/v1/ground-truth/export"]["get"]
    assert {"200", "202", "400", "404"} <= set(op["responses"])
    file_schema = schema["components"]["schemas"]["GroundTruthFile"]
    assert file_schema["required"] == ["schema_version", "exported_at", "discussions"]


def test_swagger_docs_are_served_without_a_cdn(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn." not in html and "jsdelivr" not in html
    assert "drf_spectacular_sidecar/swagger-ui-dist/" in html
    # No inline script (Content-Security-Policy): the set-up script is its own URL.
    assert '<script src="/api/docs/?script="></script>' in html
    script = client.get("/api/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()


def test_redoc_is_served_without_a_cdn(client):
    html = client.get("/api/redoc/").content.decode()
    assert "drf_spectacular_sidecar/redoc/" in html and "cdn." not in html


def test_served_schema_is_the_generated_one(schema):
    """tests/test_schemathesis.py fuzzes the generated schema: it must be what clients get."""
    from drf_spectacular.generators import SchemaGenerator

    generated = SchemaGenerator().get_schema(request=None, public=True)
    assert schema["paths"].keys() == generated["paths"].keys()
    assert schema["components"]["schemas"].keys() == generated["components"]["schemas"].keys()


def _walk(node, path=()):
    """Every schema object in the document, with where it is."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, index))


def test_each_enum_states_one_spelling(schema):
    """A generated client makes a name of each value: case variants would collide."""
    for path, node in _walk(schema):
        values = [v for v in node.get("enum") or [] if isinstance(v, str)]
        assert len({v.casefold() for v in values}) == len(values), path


def test_no_two_schemas_share_a_title(schema):
    titles = [node["title"] for _, node in _walk(schema) if isinstance(node.get("title"), str)]
    assert len(titles) == len(set(titles))


def test_the_extraction_payload_is_one_shared_component(schema):
    components = schema["components"]["schemas"]
    payload = components["PdpDeltas"]["properties"]
    assert payload["people"]["items"] == {"$ref": "#/components/schemas/PdpPerson"}
    assert payload["events"]["items"] == {"$ref": "#/components/schemas/PdpEvent"}
    inline = [
        path
        for path, node in _walk(schema)
        if isinstance(node.get("properties"), dict)
        and {"people", "events"} <= set(node["properties"])
        and node["properties"]["people"].get("type") == "array"  # not counts of items
        and path != ("components", "schemas", "PdpDeltas")
    ]
    assert inline == []
    ref = {"$ref": "#/components/schemas/PdpDeltas"}
    assert components["ExtractionOutput"]["properties"]["pdp_deltas"] == ref
    edited = components["FeedbackSaveInputRequest"]["properties"]["edited_extraction"]
    assert edited.get("allOf", [edited])[0] == ref  # with its help text beside it


def test_extraction_f1_values_are_typed_per_scope(schema):
    components = schema["components"]["schemas"]
    shapes = components["MetricResultOutput"]["properties"]["values"]["anyOf"]
    names = [shape.get("$ref", "").rsplit("/", 1)[-1] for shape in shapes]
    assert names[:4] == [
        "ExtractionStatementValues",
        "ExtractionDiscussionValues",
        "ExtractionRunValues",
        "ExtractionSystemValues",
    ]
    statement = components["ExtractionStatementValues"]["properties"]
    assert statement["aggregate_micro_f1"] == {"type": "number"}
    assert statement["people_tp"] == {"type": "integer"}
    assert statement["symptom_macro_f1"] == {"type": "number", "nullable": True}


def test_import_takes_a_file_and_speaker_types_have_one_spelling(schema):
    body = schema["paths"]["/api/v1/ground-truth/import"]["post"]["requestBody"]["content"]
    upload = body["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][upload]["properties"]["file"]["format"] == "binary"
    assert schema["components"]["schemas"]["SpeakerTypeEnum"]["enum"] == ["subject", "expert"]
