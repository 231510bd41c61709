"""Property-based run of the whole v1 API against its own OpenAPI schema (schemathesis).

Runs on pytest-django's live_server with an admin token, over a small world of data, with
positive and negative examples (bounded: MAX_EXAMPLES per operation). Every answer must be
documented, match its schema, never be a 5xx; invalid input must be rejected with a 4xx and
valid input accepted (or refused for a reason the schema cannot state: tests/schemathesis.toml
lists those per operation, and the CLI reads the same file).
"""

import os
from pathlib import Path

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

pytest_plugins = ["tests.api_fixtures"]

MAX_EXAMPLES = 10
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    missing_required_header,
    unsupported_method,
]
CONFIG = schemathesis.config.SchemathesisConfig.from_path(
    Path(__file__).with_name("schemathesis.toml")
)

# The schema the site serves at /api/schema/ (generated in-process: it is needed at collection,
# before the live server exists; tests/test_openapi.py checks the served one is the same).
schema = schemathesis.openapi.from_dict(
    SchemaGenerator().get_schema(request=None, public=True), config=CONFIG
)
schema.config.generation.update(
    modes=["positive", "negative"], max_examples=MAX_EXAMPLES, deterministic=True
)
# Bounded by default (explicit examples + MAX_EXAMPLES fuzzed cases per operation, ~1 min).
# SCHEMATHESIS_COVERAGE=1 adds the deterministic boundary-value phase (~1000 more cases, ~3 min).
schema.config.phases.update(
    phases=["examples", "fuzzing"]
    + (["coverage"] if os.environ.get("SCHEMATHESIS_COVERAGE") else [])
)
# Uploads (multipart files) belong to the evaluations API and its own tests.
schema = schema.include(path_regex=r"^/api/v1/(?!evaluations)")


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Every operation re-creates the users (transactional DB): skip the slow hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def admin_headers(live_server, world, admin_user) -> dict:
    token, _ = Token.objects.get_or_create(user=admin_user)
    return {"Authorization": f"Token {token.key}"}


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_api_conforms_to_its_schema(case, live_server, admin_headers):
    case.call_and_validate(base_url=live_server.url, headers=admin_headers, checks=CHECKS)
