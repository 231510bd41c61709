"""JsonListReader: a JSON file's top-level list read an element at a time (no database)."""

import hashlib
import io
import json
from unittest import mock

import pytest

from metrics.families import json_input
from metrics.families.json_input import MAX_JSON_DEPTH, JsonInputError, JsonListReader, parse_json

DOC = {
    "schema_version": "1",
    "discussions": [
        {"id": 1, "text": 'she said "no" \\ then \u00e9t\u00e9 \U0001f600', "n": [0, -12, 3.25e-3]},
        12345678901234567,
        -0.5e10,
        True,
        None,
        "tail",
        [],
        {},
    ],
    "exported_at": "2026-01-01T00:00:00",
}
TEXT = json.dumps(DOC, indent=2, ensure_ascii=False).encode()


class SplitFile(io.BytesIO):
    """A file whose first read stops at ``cut``: the chunk boundary falls there."""

    def __init__(self, data: bytes, cut: int):
        super().__init__(data)
        self.cut = cut

    def read(self, size: int | None = -1) -> bytes:
        if self.cut is not None:
            size, self.cut = self.cut, None
        return super().read(size)


def read(data: bytes, *, chunk_size: int = 64 * 1024, cut: int | None = None):
    file = SplitFile(data, cut) if cut is not None else io.BytesIO(data)
    reader = JsonListReader(file, list_key="discussions", chunk_size=chunk_size)
    return reader, list(reader)


def error_of(call) -> str:
    with pytest.raises(JsonInputError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize("cut", range(1, len(TEXT)))
def test_a_chunk_boundary_anywhere_gives_the_same_elements(cut):
    reader, items = read(TEXT, chunk_size=4096, cut=cut)
    assert items == DOC["discussions"]
    assert reader.members == {"schema_version": "1", "exported_at": "2026-01-01T00:00:00"}
    assert reader.has_list and reader.is_object


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 8, 13])
def test_tiny_chunks_read_every_element_and_the_digest_of_the_file(chunk_size):
    reader, items = read(TEXT, chunk_size=chunk_size)
    assert items == DOC["discussions"]
    assert reader.sha256 == hashlib.sha256(TEXT).hexdigest()


@pytest.mark.parametrize("chunk_size", [3, 64 * 1024])
def test_a_verified_pass_reads_what_the_checking_pass_read(chunk_size):
    """An import's second pass over a file its first pass checked: the same elements, members
    and digest (the limits are not checked again; the caller compares the digests)."""
    checking, first = read(TEXT, chunk_size=chunk_size)
    verified = JsonListReader(
        io.BytesIO(TEXT), list_key="discussions", chunk_size=chunk_size, verified=True
    )
    assert list(verified) == first == DOC["discussions"]
    assert (verified.members, verified.sha256) == (checking.members, checking.sha256)


@pytest.mark.parametrize(
    "number", ["12345", "-0.000125", "6.02e23", "1E-7", "-9223372036854775807"]
)
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 4, 7])
def test_numbers_split_by_a_chunk_are_read_whole(number, chunk_size):
    data = f'{{"discussions": [{number}, {number}]}}'.encode()
    _, items = read(data, chunk_size=chunk_size)
    assert items == [json.loads(number)] * 2


def test_elements_are_handed_out_before_the_file_is_read_to_its_end():
    file = io.BytesIO(b'{"discussions": [1, 2, ' + b"3, " * 100_000 + b"4]}")
    reader = iter(JsonListReader(file, list_key="discussions", chunk_size=64))
    assert [next(reader), next(reader)] == [1, 2]
    assert file.tell() < 200


def test_other_members_and_a_list_member_that_is_not_a_list_are_kept():
    reader, items = read(b'{"discussion": {"a": 1}, "statements": [1, 2], "discussions": 5}')
    assert items == [] and not reader.has_list
    assert reader.members == {"discussion": {"a": 1}, "statements": [1, 2], "discussions": 5}


def test_a_document_that_is_a_list_is_read_an_element_at_a_time():
    reader, items = read(b" [1, [2, 3], {}] ", chunk_size=2)
    assert items == [1, [2, 3], {}] and reader.is_list and not reader.is_object
    assert read(b"[]")[1] == []
    file = io.BytesIO(b"[1, 2, " + b"3, " * 100_000 + b"4]")
    elements = iter(JsonListReader(file, list_key="discussions", chunk_size=64))
    assert [next(elements), next(elements)] == [1, 2]
    assert file.tell() < 200
    assert error_of(lambda: read(b"[1, 2, {]")) == error_of(lambda: parse_json("[1, 2, {]"))
    assert "nested deeper" in error_of(lambda: read(b"[" * 70 + b"]" * 70))


def test_a_document_that_is_neither_an_object_nor_a_list_is_read_whole():
    reader, items = read(b' "text" ', chunk_size=2)
    assert items == [] and not reader.is_object and not reader.is_list and reader.top == "text"


BAD = [
    '{"discussions": [1, 2 3]}',
    '{"discussions": [1,]}',
    '{"discussions": [1, 2',
    '{"a": 1,}',
    '{"a" 1}',
    '{"a": 1} x',
    "{",
    "",
    '{"discussions": [{"a": tru}]}',
    '{"discussions": [{"a": "unterminated}]}',
    '{"x":\n  [1,\n   2,, 3]}',
    '{"discussions": [\n  {"a": 1},\n  {"b": [1 2]}\n]}',
    '{"discussions": ["bad \\x escape"]}',
    '{"discussions": ["a\tb"]}',
    "[1, 2",
]


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("chunk_size", [1, 4, 64 * 1024])
def test_syntax_errors_are_located_as_parse_json_locates_them(text, chunk_size):
    expected = error_of(lambda: parse_json(text))
    assert "line" in expected
    assert error_of(lambda: read(text.encode(), chunk_size=chunk_size)) == expected


@pytest.mark.parametrize(
    ("element", "message"),
    [
        ("1e400", "number 1e400 is out of range"),
        ("NaN", "NaN is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("123456789012345678901234", "integer 123456789012345678901234 is out of range"),
        ('"a\\u0000b"', "text must not contain NUL"),
        ('"\\ud800"', "text must not contain a lone surrogate"),
        ('{"k\\u0000": 1}', "text must not contain NUL"),
    ],
)
@pytest.mark.parametrize("chunk_size", [1, 3, 64 * 1024])
def test_the_limits_of_parse_json_name_the_element(element, message, chunk_size):
    data = f'{{"discussions": [1, {element}]}}'.encode()
    assert message in error_of(lambda: parse_json(data.decode()))
    error = error_of(lambda: read(data, chunk_size=chunk_size))
    assert message in error and "(discussions[1])" in error


@pytest.mark.parametrize("inner", ["", '1, "a", {}', '{"a": {}}', '{"a": 1}'])
@pytest.mark.parametrize(
    "levels", [MAX_JSON_DEPTH - 4, MAX_JSON_DEPTH - 3, MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH, 5000]
)
def test_nesting_counts_from_the_top_of_the_document(levels, inner):
    text = '{"discussions": [' + "[" * levels + inner + "]" * levels + "]}"
    try:
        parse_json(text)
        whole = None
    except JsonInputError as exc:
        whole = exc.message
    try:
        read(text.encode(), chunk_size=16)
        streamed = None
    except JsonInputError as exc:
        streamed = exc.message
    assert streamed == whole
    # An empty container at the limit is within it; one holding anything puts that below it.
    below = 0 if not inner else 2 if inner.startswith("{") else 1
    assert (whole is None) == (levels <= MAX_JSON_DEPTH - 2 - below)


@pytest.mark.parametrize(
    "element",
    [
        '"NaN, Infinity and 1e400"',
        '"12345678901234567890123"',
        '"a \\\\u0000 b \\\\ud800"',
        '"\\ud83d\\ude00"',
        '{"n": [1e308, -1.5e-300, 123456789012345678]}',
    ],
)
def test_what_only_looks_out_of_limits_is_read_as_parse_json_reads_it(element):
    data = f'{{"discussions": [{element}]}}'
    _, items = read(data.encode(), chunk_size=5)
    assert items == parse_json(data)["discussions"]


def test_a_member_too_deep_is_refused():
    text = '{"x": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}"
    assert "nested deeper than 64" in error_of(lambda: read(text.encode()))


def test_bytes_that_are_not_utf8_are_refused_where_they_are():
    data = b'{"discussions": ["ok", "\xff"]}'
    error = error_of(lambda: read(data, chunk_size=4))
    assert "not UTF-8 text" in error and "byte 24" in error


def test_the_list_given_twice_is_refused():
    assert "'discussions' is given twice" in error_of(
        lambda: read(b'{"discussions": [1], "discussions": [2]}')
    )


def test_elements_alike_are_each_decoded_once_whatever_the_chunks():
    """Text for twice the last element is read before the next is decoded: a cut element
    would be decoded again (an export's discussions are alike in size)."""
    elements = [{"n": n, "text": "x" * 300} for n in range(20)]
    data = json.dumps({"discussions": elements}).encode()
    with mock.patch.object(
        json_input._PLAIN_DECODER, "raw_decode", wraps=json_input._PLAIN_DECODER.raw_decode
    ) as decode:
        _, items = read(data, chunk_size=512)
    assert items == elements and decode.call_count == 1 + len(elements)  # and the key
