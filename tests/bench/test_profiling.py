"""The benchmarks' --profile: pyinstrument's report of the block, or the block alone."""

import time

from tests.bench.profiling import profiled


def _busy_for_a_while() -> None:
    ends = time.process_time() + 0.05
    while time.process_time() < ends:
        pass


def test_a_profile_names_what_the_block_ran_and_no_path_writes_nothing(tmp_path):
    text, html = tmp_path / "p.txt", tmp_path / "p.html"
    with profiled(str(text)):
        _busy_for_a_while()
    with profiled(str(html)):
        _busy_for_a_while()
    with profiled(None):
        _busy_for_a_while()
    assert "_busy_for_a_while" in text.read_text()
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html", "p.txt"]
