"""How tests/conftest.py arranges the suite: longest modules first, and which tests coverage
leaves untraced (benchmarks and property tests, which repeat code other tests cover)."""

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import LONGEST_FIRST, _longest_first, _untraced


@given(st.integers())
def _a_property(n: int) -> None:
    assert n == n


def _an_example() -> None:
    pass


def _item(nodeid: str, function=_an_example) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, obj=function)


def test_property_and_benchmark_tests_are_untraced_and_example_tests_traced():
    assert _untraced(_item("tests/metrics/test_x.py::test_p", _a_property))
    assert _untraced(_item("tests/bench/test_benchmark_f1.py::test_b"))
    assert not _untraced(_item("tests/metrics/test_x.py::test_e"))


def test_the_longest_modules_sort_first_in_their_listed_order():
    paths = ["tests/test_a.py::t", f"{LONGEST_FIRST[1]}::t", f"{LONGEST_FIRST[0]}::t"]
    ordered = sorted((_item(p) for p in paths), key=_longest_first)
    assert [i.nodeid for i in ordered] == [paths[2], paths[1], paths[0]]
