"""How a window's placeholders are batched (audit/views/rows.py), without a database."""

from __future__ import annotations

import pytest

from audit.models import Speaker, Statement
from audit.views.rows import LazyBatch, StatementRow, lazy_batches

SUBJECT = Speaker(name="Ann", type=Speaker.Type.SUBJECT)
EXPERT = Speaker(name="Coach", type=Speaker.Type.EXPERT)
URL = "/audit/discussions/7/?run=2"


def rows(layout: str) -> list[StatementRow]:
    """One row per letter, in order from 1: F a full card, L a placeholder, e an expert line."""
    made = []
    for order, kind in enumerate(layout, start=1):
        statement = Statement(order=order, speaker=EXPERT if kind == "e" else SUBJECT)
        made.append(StatementRow(statement=statement, lazy=kind == "L"))
    return made


def shape(items: list) -> list[str]:
    return [
        "[" + "".join("L" if r.lazy else "e" for r in i.rows) + "]"
        if isinstance(i, LazyBatch)
        else ("e" if not i.statement.is_subject else "F")
        for i in items
    ]


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("FFF", ["F", "F", "F"]),
        ("FLLLL", ["F", "[LLLL]"]),
        ("FLeLeLeLeLe", ["F", "[LeLeLeLeL]", "e"]),  # 5: one batch, ending with a placeholder
        ("LLLLLLLLL", ["[LLLLL]", "[LLLL]"]),  # 9: two batches, not 4, 4, 1
        ("LLLLLLLLLL", ["[LLLLL]", "[LLLLL]"]),
        ("LLFLL", ["[LL]", "F", "[LL]"]),  # a card in full (a link's focus) ends a batch
        ("eLeeL", ["e", "[LeeL]"]),
    ],
)
def test_placeholders_are_batched_about_four_at_a_time(layout, expected):
    assert shape(lazy_batches(rows(layout), size=4, url=URL)) == expected


def test_a_batch_asks_for_its_statements_on_the_discussion_page():
    items = lazy_batches(rows("FeLeLeLe"), size=4, url=URL)
    batch = items[2]
    assert isinstance(batch, LazyBatch)
    assert batch.url == f"{URL}&from=3&through=7"
    assert batch.first_order == 3
    assert lazy_batches(rows("L"), size=4, url="/d/")[0].url == "/d/?from=1&through=1"


def test_every_row_is_kept_once_in_order():
    layout = "FFFeLeLLeeLLLLeLeLLLLLLLe"
    items = lazy_batches(rows(layout), size=4, url=URL)
    flat = [r for i in items for r in (i.rows if isinstance(i, LazyBatch) else [i])]
    assert [r.statement.order for r in flat] == list(range(1, len(layout) + 1))
