"""Figures kept in the cache under the digests of what they were derived from."""

from __future__ import annotations

import uuid

import pytest

from evalsite.perf.digest_cache import digest_cached

SECONDS = 60


@pytest.fixture
def namespace() -> str:
    return f"test-digest:{uuid.uuid4().hex}"


def _derive(contents: dict[str, str], calls: list[list[str]]):
    def derive(keys: list[str]) -> dict[str, tuple[list[str], int]]:
        calls.append(sorted(keys))
        return {key: ([contents[key]], len(contents[key])) for key in keys}

    return derive


def test_only_what_the_cache_lacks_is_derived_and_a_changed_content_afresh(namespace):
    contents = {"a": "one", "b": "three"}
    calls: list[list[str]] = []

    def figures() -> dict[str, int]:
        return digest_cached(
            namespace=namespace,
            basis="settings",
            digests={key: [text] for key, text in contents.items()},
            derive=_derive(contents, calls),
            seconds=SECONDS,
        )

    assert figures() == {"a": 3, "b": 5}
    assert figures() == {"a": 3, "b": 5}
    contents["b"] = "fourteen"
    assert figures() == {"a": 3, "b": 8}
    assert calls == [["a", "b"], ["b"]]


def test_other_settings_are_derived_apart(namespace):
    contents = {"a": "one"}
    calls: list[list[str]] = []
    for basis in ("strict", "lenient", "strict"):
        digest_cached(
            namespace=namespace,
            basis=basis,
            digests={"a": ["one"]},
            derive=_derive(contents, calls),
            seconds=SECONDS,
        )
    assert calls == [["a"], ["a"]]


def test_kept_under_the_digests_derive_read_not_those_read_before(namespace):
    """A content changed between the two reads: its figure is kept under what derive read."""
    calls: list[list[str]] = []
    read_after = {"a": "new"}
    first = digest_cached(
        namespace=namespace, basis="", digests={"a": ["old"]},
        derive=_derive(read_after, calls), seconds=SECONDS,
    )  # fmt: skip
    again = digest_cached(
        namespace=namespace, basis="", digests={"a": ["new"]},
        derive=_derive(read_after, calls), seconds=SECONDS,
    )  # fmt: skip
    assert first == again == {"a": 3}
    assert calls == [["a"]]
