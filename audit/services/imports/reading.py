"""Reading an import file (or parsed data) a discussion at a time, in the one shape the
check and the writing take (audit/services/import_shapes.py turns the others into it)."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import IO, Any, Protocol

from audit.services.import_shapes import (
    EVALSITE,
    TOP_KEYS,
    ImportNotes,
    case_discussions,
    discussion_item,
    single_discussion,
)
from metrics.families.json_input import JsonListReader
from metrics.families.payload.schema import PayloadError, PayloadIssue


class Reading(Protocol):
    """One pass over an import file: its discussions one at a time (iterating), then what
    else its top level holds (JsonListReader's attributes)."""

    is_object: bool
    is_list: bool
    top: Any
    members: dict[str, Any]
    has_list: bool

    def __iter__(self) -> Iterator[Any]: ...


class _ParsedReading:
    """Parsed data read like a file, so both take the same way."""

    def __init__(self, data: Any):
        self.is_object = isinstance(data, dict)
        self.is_list = isinstance(data, list)
        self.top = None if self.is_list else data
        items = data.get("discussions") if self.is_object else data if self.is_list else None
        self.has_list = isinstance(items, list)
        self.members = (
            {k: v for k, v in data.items() if k != "discussions" or not self.has_list}
            if self.is_object
            else {}
        )
        self._items: list[Any] = items if isinstance(items, list) else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


class Source(Protocol):
    def reading(self, *, verified: bool = False) -> contextlib.AbstractContextManager[Reading]:
        """A pass over the source; ``verified``: a pass before this one checked it (and
        check_unchanged compares the two afterwards)."""
        ...

    def check_unchanged(self, first: Reading, second: Reading) -> None: ...

    def total_estimate(self, reading: Reading, read: int) -> int:
        """How many discussions the source holds, as far as a pass that has read ``read`` of
        them can tell (0: it cannot)."""
        ...


class ParsedSource:
    def __init__(self, data: Any):
        self.data = data

    @contextlib.contextmanager
    def reading(self, *, verified: bool = False) -> Iterator[Reading]:
        yield _ParsedReading(self.data)

    def check_unchanged(self, first: Reading, second: Reading) -> None:
        pass

    def total_estimate(self, reading: Reading, read: int) -> int:
        # Counted: the list's discussions, or the one discussion of its own.
        return max(len(reading._items) if isinstance(reading, _ParsedReading) else 0, read)


class FileSource:
    """A file opened afresh for each pass and read a chunk at a time."""

    def __init__(self, open_file: Callable[[], IO[bytes]], chunk_size: int):
        self.open_file, self.chunk_size = open_file, chunk_size
        self.size = 0  # of the file the last pass opened (0: not known)

    @contextlib.contextmanager
    def reading(self, *, verified: bool = False) -> Iterator[Reading]:
        with self.open_file() as file:
            self.size = _size_of(file)
            yield JsonListReader(
                file, list_key="discussions", chunk_size=self.chunk_size, verified=verified
            )

    def total_estimate(self, reading: Reading, read: int) -> int:
        """The discussions read so far, scaled by the share of the file they took."""
        done = getattr(reading, "bytes_done", 0)
        if not self.size or not done:
            return 0
        return max(read, round(read * self.size / done))

    def check_unchanged(self, first: Reading, second: Reading) -> None:
        # A case list's second reading imports what the first one checked, or nothing.
        if getattr(first, "sha256", None) != getattr(second, "sha256", None):
            raise PayloadError([PayloadIssue("", "the file changed while it was imported")])


def _size_of(file: IO[bytes]) -> int:
    """A file's size in bytes, 0 when it does not say (a stored file knows it as ``size``)."""
    size = getattr(file, "size", None)
    if isinstance(size, int):
        return size
    try:
        return os.fstat(file.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return 0


def top_level_problem(reading: Reading, notes: ImportNotes) -> PayloadError | None:
    """What is wrong with the file's top level for an import, once it has been read through
    (``notes``: what the reading found)."""
    if not reading.is_object:
        if reading.is_list and notes.cases and notes.bad_case is None:
            return None  # a case list
        where = f" ([{notes.bad_case}] is not an object)" if notes.bad_case is not None else ""
        message = f"expected a JSON object at the top level, or a list of case objects{where}"
        return PayloadError([PayloadIssue("", message)])
    if reading.has_list:
        return None
    if "discussions" in reading.members:
        return PayloadError([PayloadIssue("discussions", "expected a list of discussions")])
    if "discussion" in reading.members:
        return None
    return PayloadError(
        [PayloadIssue("", "expected a 'discussion' object or a 'discussions' list")]
    )


def canonical(
    reading: Reading, notes: ImportNotes, *, case_digest: str = ""
) -> Iterator[tuple[str, Any]]:
    """(path, discussion) for each discussion of the file, as it is read, in the one shape the
    import checks and writes (audit/services/import_shapes.py); the single-discussion form
    ({"discussion": ..., "statements": ...}) is read whole, a case list a case at a time (its
    discussions named by ``case_digest``, what the check found: notes.case_digest)."""
    notes.shape = EVALSITE
    read: Iterator[Any] = iter(reading)
    first = next(read, _END)  # a reading knows whether the file is a list once it has begun
    items: Iterator[Any] = itertools.chain([first], read) if first is not _END else iter(())
    if reading.is_list:
        yield from case_discussions(items, notes, digest=case_digest)
        return
    for index, item in enumerate(items):
        path = f"discussions[{index}]"
        yield path, discussion_item(item, path, notes)
    if not reading.is_object:
        return
    notes.ignore("", set(reading.members) - TOP_KEYS - {"statements"})
    if not reading.has_list and "discussion" in reading.members:
        if isinstance(reading.members["discussion"], dict):
            yield "discussion", single_discussion(reading.members, notes)
        else:
            yield "", reading.members  # the check names what is wrong


_END = object()


def split_discussion(item: Any, path: str) -> tuple[str, dict, list]:
    if not isinstance(item, dict):
        raise PayloadError([PayloadIssue(path, "expected a discussion object")])
    fields = item.get("discussion", item)
    statements = item.get("statements", [])
    if not isinstance(fields, dict):
        raise PayloadError([PayloadIssue(join(path, "discussion"), "expected an object")])
    fields_path = join(path, "discussion") if "discussion" in item else path
    return fields_path, fields, statements


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def ground_truth_of(statement: dict) -> tuple[dict | None, dict]:
    """The approved extraction and its metadata, from either the new or the legacy key."""
    approved = statement.get("approved_feedback")
    if isinstance(approved, dict) and approved.get("approved", True):
        return approved.get("edited_extraction"), approved
    if statement.get("ground_truth") is not None:
        return statement["ground_truth"], {}
    return None, {}


def gt_entry(statement: dict) -> tuple[str, Any]:
    payload, meta = ground_truth_of(statement)
    key = "approved_feedback.edited_extraction" if meta else "ground_truth"
    return key, payload


def prefixed(issues: list[PayloadIssue], prefix: str) -> list[PayloadIssue]:
    return [replace(i, path=join(prefix, i.path) if i.path else prefix) for i in issues]


def external_id_of(fields: dict) -> str | None:
    value = fields.get("external_id") or fields.get("id")
    return None if value is None else str(value)
