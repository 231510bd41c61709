"""Bounded JSON parsing and input errors, shared by every JSON entry point.

API bodies, the JSON editor, imports and the metric families' evaluation files all parse
JSON here, within the same limits. Pure Python (no Django), so the metric library may
import it: it sits on audit's ground floor.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any


@dataclass
class InputError(Exception):
    """A bad input file: names the file, where in it, and what was expected."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"{self.file}{where}: {self.message}"


# Limits every JSON input shares (API bodies, the JSON editor, imports, evaluation files).
MAX_JSON_DEPTH = 64
MAX_JSON_INT = 2**63 - 1


class JsonInputError(ValueError):
    """JSON text that is malformed or outside the limits; ``location`` says where if known."""

    def __init__(self, message: str, location: str = ""):
        self.message = message
        self.location = location
        super().__init__(f"{message} ({location})" if location else message)


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_JSON_INT:
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"
        raise JsonInputError(f"integer {shown} is out of range (at most 2**63-1 in size)")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonInputError(f"number {text[:24]} is out of range")
    return value


def _parse_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def json_problem(data: Any, *, depth: int = 1) -> str | None:
    """Why parsed JSON data is refused (absurd nesting, NUL, lone surrogates), or None.

    ``depth`` is the level ``data`` sits at in its document (1: the document itself).
    Iterative, so deeply nested data cannot exhaust the stack. PostgreSQL cannot store NUL
    characters or lone UTF-16 surrogates, so they are refused here rather than failing later.
    """
    stack = [(data, depth)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                return problem
        elif isinstance(value, dict):
            for key, item in value.items():
                stack.append((key, depth))
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return None


def _nesting_problem(data: Any, *, depth: int) -> str | None:
    """json_problem's depth rule alone: a value nested deeper than the limit (a container at
    the limit holding anything puts that below it)."""
    return _walked(data, depth=depth)[0]


def _walked(data: Any, *, depth: int) -> tuple[str | None, bool]:
    """_nesting_problem's answer, and whether a number may be out of parse_json's limits (an
    integer beyond 64 bits, an infinity, NaN: the decoder without the number hooks takes them;
    a false alarm costs a decode with the hooks). Walks containers only, a level at a time,
    the children of a level sorted with C-level iterators: no Python step per scalar."""
    if depth > MAX_JSON_DEPTH:
        return f"nested deeper than {MAX_JSON_DEPTH} levels", False
    level, numbers = [], False
    if type(data) in _CONTAINERS:
        level = [data]
    else:
        numbers = _numbers_doubtful([data], [type(data)])
    while level:
        # A container at the limit holds nothing; past it there is none.
        if depth >= MAX_JSON_DEPTH and any(level):
            return f"nested deeper than {MAX_JSON_DEPTH} levels", numbers
        children = list(
            itertools.chain.from_iterable(
                [value.values() if type(value) is dict else value for value in level]
            )
        )
        kinds = list(map(type, children))
        level = list(itertools.compress(children, map(_IS_CONTAINER, kinds)))
        numbers = numbers or _numbers_doubtful(children, kinds)
        depth += 1
    return None, numbers


def _numbers_doubtful(values: list[Any], kinds: list[type]) -> bool:
    """Whether these values (of these exact types) may hold a number parse_json refuses: an
    integer beyond 64 bits, an infinity or NaN (a sum of floats that overflows is a false
    alarm). Their ints and floats are picked and summed up in C."""
    ints = list(itertools.compress(values, map(_IS_INT, kinds)))
    if ints and (max(ints) > MAX_JSON_INT or min(ints) < -MAX_JSON_INT):
        return True
    total = sum(itertools.compress(values, map(_IS_FLOAT, kinds)), 0.0)
    return total != total or total in (_INFINITY, -_INFINITY)


_CONTAINERS = (dict, list)
_IS_CONTAINER = frozenset(_CONTAINERS).__contains__
_IS_INT = frozenset([int]).__contains__
_IS_FLOAT = frozenset([float]).__contains__
_INFINITY = float("inf")


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored as text (NUL, lone surrogate), or None."""
    if "\x00" in text:
        return "text must not contain NUL (\\u0000) characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        return f"text must not contain a lone surrogate (\\u{code:04x})"
    return None


def parse_json(text: str) -> Any:
    """Parse JSON text within the shared limits, or raise JsonInputError saying what is wrong.

    Refused: syntax errors, NaN/Infinity, numbers that overflow (1e400), integers beyond
    64 bits, nesting deeper than MAX_JSON_DEPTH, NUL characters and lone surrogates.
    """
    try:
        data = json.loads(
            text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    except json.JSONDecodeError as exc:
        raise JsonInputError(
            f"invalid JSON: {exc.msg}", f"line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise JsonInputError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    problem = json_problem(data)
    if problem:
        raise JsonInputError(problem)
    return data


def _decode(data: bytes | str, *, file: str) -> str:
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, "", f"not UTF-8 text ({exc.reason})") from exc
    return data


def load_json(data: bytes | str, *, file: str) -> Any:
    """Parse a JSON file within the shared limits, turning a problem into an InputError."""
    try:
        return parse_json(_decode(data, file=file))
    except JsonInputError as exc:
        raise InputError(file, exc.location, exc.message) from None


def load_jsonl(data: bytes | str, *, file: str) -> list[Any]:
    """Parse JSON Lines; blank lines are skipped, a bad line is named."""
    rows = []
    for number, line in enumerate(_decode(data, file=file).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(parse_json(line))
        except JsonInputError as exc:
            raise InputError(file, f"line {number}", exc.message) from None
    return rows


# --- reading a large file a piece at a time ------------------------------------------------------

# Bytes read at a time: a value longer than the text read so far is decoded again once more
# is read, so a chunk holds a whole discussion of an export (about 0.5 MB at 50 statements)
# more often than not.
STREAM_CHUNK = 1024 * 1024
# A decode that fails this close to the end of the text read so far may have met a value cut
# short by the chunk boundary ("tru", "1e", "\\u00"): read on and try again.
_CUT_MARGIN = 16
_NUMBER_CHARACTERS = tuple("0123456789+-.eE")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
)
# The decoder without the number hooks is faster (a hook is a Python call per number); a value
# it read with a number a hook would refuse (an integer beyond 64 bits, an infinity, NaN:
# found by _walked with the value's depth) is decoded again with them, which says what is
# wrong, and where.
_PLAIN_DECODER = json.JSONDecoder()
# NUL and lone surrogates reach a decoded string only through these escapes: the decoder
# refuses raw control characters, and UTF-8 text cannot hold a surrogate. Without one, a
# value's texts need no check (json_problem), only its depth.
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


class JsonListReader:
    """A JSON file whose top level is an object with one list member, or a list, read an
    element of that list at a time.

    Iterating yields the elements of the top-level member ``list_key`` (when it is a list) as
    they are read, so memory holds one element and a chunk of text, never the file. Once the
    iteration ends, ``members`` holds the other top-level members (and ``list_key`` itself when
    it is not a list) and ``has_list`` says whether the list was there. A document that is a
    list (``is_list``) yields its own elements the same way; one that is neither is read whole
    into ``top``. ``is_object`` says whether the document is an object.

    The limits and messages are parse_json's: syntax errors name the line and column, the
    number hooks refuse what parse_json refuses, every element and member is checked by
    json_problem at its depth in the document. ``sha256`` is the digest of the bytes read.

    ``verified``: these bytes were read through by a reader that checked them, and the caller
    compares the two digests afterwards; values are decoded without the limits' checks (a
    second pass over a large file takes a third less time).
    """

    def __init__(
        self,
        file: IO[bytes],
        *,
        list_key: str,
        chunk_size: int = STREAM_CHUNK,
        verified: bool = False,
    ):
        self.list_key = list_key
        self.verified = verified
        self.members: dict[str, Any] = {}
        self.has_list = False
        self.is_object = True
        self.is_list = False
        self.top: Any = None
        self._file, self._chunk = file, chunk_size
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._digest = hashlib.sha256()
        self._bytes_read = 0
        self._buf, self._pos, self._eof = "", 0, False
        self._span = (0, 0)  # where in the buffer the value _value read last is
        self._line, self._column = 1, 0  # where self._buf[0] is (column counted from 0)

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    @property
    def bytes_read(self) -> int:
        return self._bytes_read

    @property
    def bytes_done(self) -> int:
        """About how far into the file the reading is: the bytes read less the text read ahead
        (a character counted as a byte)."""
        return max(self._bytes_read - (len(self._buf) - self._pos), 0)

    def __iter__(self) -> Iterator[Any]:
        first = self._skip()
        if first != "{":
            self.is_object = False
            if first == "[":
                self.is_list = True
                yield from self._elements("", depth=2)
            else:
                self.top = self._checked(self._value(""), depth=1, where="")
            self._end()
            return
        self._pos += 1
        char = self._skip()
        while char != "}":
            yield from self._member(char)
            char = self._skip()
            if char not in ("}", ","):
                raise self._syntax_error("Expecting ',' delimiter")
            if char == ",":
                self._pos += 1
                char = self._skip()
                if char == "}":  # json's own message for a trailing comma
                    raise self._syntax_error("Expecting property name enclosed in double quotes")
        self._pos += 1
        self._end()

    def _member(self, char: str) -> Iterator[Any]:
        if char != '"':
            raise self._syntax_error("Expecting property name enclosed in double quotes")
        key = self._checked(self._value(""), depth=1, where="")
        if self._skip() != ":":
            raise self._syntax_error("Expecting ':' delimiter")
        self._pos += 1
        if key == self.list_key and (self.has_list or key in self.members):
            raise JsonInputError(f"{key!r} is given twice", self._where(self._pos))
        if key == self.list_key and self._skip() == "[":
            self.has_list = True
            yield from self._elements(self.list_key, depth=3)
        else:
            self._skip()
            self.members[key] = self._checked(self._value(key), depth=2, where=key)

    def _elements(self, name: str, *, depth: int) -> Iterator[Any]:
        """The elements of the list starting here: ``name`` is the list's in the document
        (empty for the document itself), ``depth`` its elements' level."""
        self._pos += 1  # the "["
        if self._skip() == "]":
            self._pos += 1
            return
        for index in itertools.count():
            self._skip()
            where = f"{name}[{index}]"
            yield self._checked(self._value(where), depth=depth, where=where)
            char = self._skip()
            if char not in ("]", ","):
                raise self._syntax_error("Expecting ',' delimiter")
            self._pos += 1
            if char == "]":
                return

    def _checked(self, value: Any, *, depth: int, where: str) -> Any:
        """``value``, just read by _value (its text is still in the buffer), if within limits:
        parse_json's (its number hooks' first, in the order of the text)."""
        if self.verified:
            return value
        start, end = self._span
        problem, numbers = _walked(value, depth=depth)
        if not problem and _RISKY_ESCAPE.search(self._buf, start, end):
            problem = json_problem(value, depth=depth)
        if numbers or problem:
            try:  # a number out of the limits is refused first, as the hooks refuse it
                _DECODER.raw_decode(self._buf, start)
            except JsonInputError as exc:
                raise JsonInputError(exc.message, where or self._where(start)) from None
            except RecursionError:
                pass  # deeper than the limit: said next
        if problem:
            raise JsonInputError(problem, where)
        return value

    def _value(self, where: str) -> Any:
        """The value that starts at the current position (``where`` names it in the document),
        read on until it is whole."""
        # Text for twice the last value read first: a value the text read so far cuts short
        # is decoded again, and a list's elements are alike (an export's discussions).
        ahead = 2 * (self._span[1] - self._span[0]) + _CUT_MARGIN
        if not self._eof and len(self._buf) - self._pos < ahead:
            self._more(max(self._chunk, ahead))
        while True:
            try:
                value, end = self._decode()
            except json.JSONDecodeError as exc:
                if self._eof or not self._cut(exc):
                    raise self._syntax_error(exc.msg, exc.pos) from None
            except RecursionError:
                raise JsonInputError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
            except JsonInputError as exc:  # a number out of range, maybe only part of it
                if self._eof or not self._buf.endswith(_NUMBER_CHARACTERS):
                    raise JsonInputError(exc.message, where or self._where(self._pos)) from None
            else:
                # A value ending near the end of the text read may be a number cut short
                # ("1" of "1e5"): only accept it with more text after it.
                if end <= len(self._buf) - _CUT_MARGIN or self._eof:
                    self._span = (self._pos, end)
                    self._pos = end
                    return value
            # Read at least as much again as this value has taken, so a large value costs
            # a few decodes, not one per chunk.
            self._more(max(self._chunk, len(self._buf) - self._pos))

    def _cut(self, exc: json.JSONDecodeError) -> bool:
        """Whether the decode may have failed only because the text read ends mid-value."""
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(self._buf) - _CUT_MARGIN

    def _decode(self) -> tuple[Any, int]:
        """The value at the current position and where it ends, as _DECODER reads it."""
        try:
            value, end = _PLAIN_DECODER.raw_decode(self._buf, self._pos)
        except json.JSONDecodeError as exc:
            if not self._eof and self._cut(exc):
                raise  # _value reads on
            return _DECODER.raw_decode(self._buf, self._pos)  # it says what is wrong
        except (ValueError, RecursionError):
            return _DECODER.raw_decode(self._buf, self._pos)
        return value, end  # its numbers are checked with its limits (_checked)

    def _skip(self) -> str:
        """Skip whitespace; the next character, or "" at the end of the file."""
        while True:
            self._pos = _WHITESPACE.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if self._eof:
                return ""
            self._more(self._chunk)

    def _end(self) -> None:
        if self._skip():
            raise self._syntax_error("Extra data")

    def _more(self, size: int) -> None:
        """Read ``size`` more bytes, dropping the text before the current position."""
        data = self._file.read(size)
        self._eof = not data
        self._digest.update(data)
        pending = len(self._utf8.getstate()[0])
        try:
            text = self._utf8.decode(data, final=self._eof)
        except UnicodeDecodeError as exc:
            at = self._bytes_read - pending + exc.start
            raise JsonInputError(f"not UTF-8 text ({exc.reason})", f"byte {at}") from None
        self._bytes_read += len(data)
        done = self._pos
        newlines = self._buf.count("\n", 0, done)
        if newlines:
            self._line += newlines
            self._column = done - self._buf.rfind("\n", 0, done) - 1
        else:
            self._column += done
        self._buf = self._buf[done:] + text
        self._pos = 0

    def _where(self, pos: int) -> str:
        newlines = self._buf.count("\n", 0, pos)
        if newlines:
            return f"line {self._line + newlines} column {pos - self._buf.rfind(chr(10), 0, pos)}"
        return f"line {self._line} column {self._column + pos + 1}"

    def _syntax_error(self, message: str, pos: int | None = None) -> JsonInputError:
        where = self._where(self._pos if pos is None else pos)
        return JsonInputError(f"invalid JSON: {message}", where)
