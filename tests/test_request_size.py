"""Every request body over the limit is refused by its declared length, before anything reads
it (multipart uploads included, on every path, signed in or not): 413. Evaluation uploads
have their own, larger limit (their files' EVALUATION_MAX_FILE_BYTES each)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

pytestmark = pytest.mark.django_db
HALF_GIB = str(500 * 1024 * 1024)
MULTIPART = "multipart/form-data; boundary=BoUnDaRy"
BODY = (
    b"--BoUnDaRy\r\n"
    b'Content-Disposition: form-data; name="file"; filename="big.bin"\r\n'
    b"Content-Type: application/octet-stream\r\n\r\n" + b"x" * 64
)


@pytest.mark.parametrize(
    "path", ["/accounts/login/", "/django-admin/login/", "/api/v1/ground-truth/import", "/nowhere/"]
)
def test_a_declared_half_gigabyte_is_refused_unread(client, path):
    """The test client's body holds 64 bytes of the 500 MiB it declares: reading past them
    raises, so a 413 here means nothing read the body."""
    answer = client.generic("POST", path, BODY, content_type=MULTIPART, CONTENT_LENGTH=HALF_GIB)
    assert answer.status_code == 413
    assert "the limit is 10,485,760 bytes" in answer.content.decode()


@pytest.fixture
def small_limit(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.EVALUATION_MAX_FILE_BYTES = 4000


def upload(size: int) -> SimpleUploadedFile:
    return SimpleUploadedFile("run.json", b"[" + b" " * (size - 2) + b"]")


def test_a_multipart_sign_in_over_the_limit_is_413(client, small_limit):
    answer = client.post(reverse("login"), {"username": "a", "password": "b", "f": upload(5000)})
    assert answer.status_code == 413
    assert answer["Content-Type"].startswith("text/plain")


def test_a_page_form_and_an_api_write_over_the_limit_are_413(admin_client, small_limit):
    page = admin_client.post(reverse("audit:assignments"), {"q": "x" * 5000})
    assert page.status_code == 413
    api = admin_client.post("/api/v1/discussions/", {"f": upload(5000)})
    assert api.status_code == 413
    assert "the limit is 1,000 bytes" in api.json()["detail"]


def test_evaluation_uploads_keep_their_own_limit(admin_client, small_limit):
    url = reverse("metrics:evaluation_upload")
    within = admin_client.post(url, {"file-run": upload(3000)})
    assert within.status_code in (200, 302, 400)  # read by the form, not refused unread
    api = admin_client.post("/api/v1/evaluations/", {"file-run": upload(3000)})
    assert api.status_code != 413
    huge = admin_client.generic("POST", url, BODY, content_type=MULTIPART, CONTENT_LENGTH=HALF_GIB)
    assert huge.status_code == 413
