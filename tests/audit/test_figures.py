"""audit.figures: the extension point through which pages show the stored statement F1."""

import pytest

from audit import figures
from audit.figures import StoredResult


@pytest.fixture
def no_readers(monkeypatch):
    monkeypatch.setattr(figures, "_readers", figures._Readers())


def test_without_a_registered_reader_pages_show_no_figures(no_readers):
    assert figures.statement_f1_results(run_id=1, statement_ids=[2]) == {}


def test_registered_readers_answer_with_plain_ids(no_readers):
    asked = []

    def f1(*, run_id, statement_ids):
        asked.append((run_id, statement_ids))
        return {7: StoredResult(status="fresh", values={"aggregate_micro_f1": 0.5})}

    figures.readers_register(statement_f1=f1)
    assert figures.statement_f1_results(run_id=1, statement_ids=[7])[7].values == {
        "aggregate_micro_f1": 0.5
    }
    assert asked == [(1, [7])]
