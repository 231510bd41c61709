"""API tokens: the management command, the admin-only token page, token authentication."""

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def test_command_prints_a_token_that_authenticates(client, admin_user, capsys):
    call_command("create_api_token", "carol")
    key = capsys.readouterr().out.strip()
    assert Token.objects.get(user=admin_user).key == key
    response = client.get("/api/v1/discussions/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200


def test_command_is_idempotent_unless_regenerating(admin_user, capsys):
    call_command("create_api_token", "carol")
    first = capsys.readouterr().out.strip()
    call_command("create_api_token", "carol")
    assert capsys.readouterr().out.strip() == first
    call_command("create_api_token", "carol", "--regenerate")
    assert capsys.readouterr().out.strip() != first
    assert Token.objects.filter(user=admin_user).count() == 1


def test_command_refuses_unknown_and_roleless_users(outsider):
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("create_api_token", "nobody")
    with pytest.raises(CommandError, match="no role group"):
        call_command("create_api_token", "mallory")
    assert not Token.objects.exists()


def test_token_page_needs_a_role(client, outsider):
    assert client.get("/api/tokens/").status_code == 302  # to the login page
    client.force_login(outsider)
    assert client.get("/api/tokens/").status_code == 403
    assert client.post("/api/tokens/", {"action": "create"}).status_code == 403
    assert not Token.objects.exists()


@pytest.mark.parametrize("persona", ["admin_user", "auditor"])
def test_each_role_creates_and_regenerates_own_token_on_the_page(client, request, persona):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    page = client.get("/api/tokens/")
    assert page.status_code == 200
    assert b"no API token yet" in page.content
    assert b'href="/api/tokens/"' in page.content  # the menu leads there
    created = client.post("/api/tokens/", {"action": "create"})
    key = Token.objects.get(user=user).key
    assert key.encode() in created.content
    assert key.encode() in client.get("/api/tokens/").content
    client.post("/api/tokens/", {"action": "regenerate"})
    assert Token.objects.get(user=user).key != key
    assert Token.objects.count() == 1  # only their own
