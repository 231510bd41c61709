from io import StringIO

from django.core.management import call_command


def test_benchmark_bootstrap_prints_figures_and_identical_numbers():
    out = StringIO()
    call_command(
        "benchmark_bootstrap",
        "--participants",
        "6",
        "--resamples",
        "200",
        "--repeats",
        "1",
        stdout=out,
    )
    text = out.getvalue()
    assert "6 participants x 8 items, 200 resamples" in text
    assert "identical replicates: True" in text
    assert "identical results: True" in text
