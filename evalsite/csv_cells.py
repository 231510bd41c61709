"""CSV downloads that a spreadsheet cannot run: a text cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is written with a leading ``'`` (OWASP, "CSV Injection"),
so Excel, LibreOffice and Google Sheets show it as text instead of evaluating a formula.

Numbers (int, float, Decimal) stay numbers: a negative figure is data, not a formula. Every
CSV the site writes goes through ``csv_writer`` or ``csv_dict_writer``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """The value as a cell no spreadsheet evaluates."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _SafeWriter:
    def __init__(self, out: Any):
        self._writer = csv.writer(out)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([csv_cell(value) for value in row])


class _SafeDictWriter:
    def __init__(self, out: Any, fieldnames: list[str]):
        self._writer = csv.DictWriter(out, fieldnames=fieldnames)

    def writeheader(self) -> Any:
        header = {name: csv_cell(name) for name in self._writer.fieldnames}
        return self._writer.writerow(header)

    def writerow(self, row: Mapping[str, Any]) -> Any:
        return self._writer.writerow({key: csv_cell(value) for key, value in row.items()})


def csv_writer(out: Any) -> _SafeWriter:
    """``csv.writer`` whose cells are neutralised (``csv_cell``)."""
    return _SafeWriter(out)


def csv_dict_writer(out: Any, *, fieldnames: list[str]) -> _SafeDictWriter:
    """``csv.DictWriter`` whose header and cells are neutralised (``csv_cell``)."""
    return _SafeDictWriter(out, fieldnames)
