"""The spread of a figure over replicates: mean, sample SD, min-max, missing figures left out."""

from __future__ import annotations

import math

import pytest

from metrics.families.replicates import spread, spreads


def test_three_replicates():
    result = spread([0.80, 0.84, 0.85])
    assert result.n == 3
    assert result.mean == pytest.approx(0.83)
    assert result.sd == pytest.approx(math.sqrt(((0.03**2) + (0.01**2) + (0.02**2)) / 2))
    assert (result.min, result.max) == (0.80, 0.85)


def test_a_missing_figure_is_left_out_not_counted_as_zero():
    result = spread([0.8, None, 0.6])
    assert (result.n, result.mean) == (2, pytest.approx(0.7))


def test_one_replicate_has_no_sd_and_none_has_no_mean():
    assert spread([0.5]).sd is None and spread([0.5]).mean == 0.5
    empty = spread([None])
    assert empty.to_dict() == {"n": 0, "mean": None, "sd": None, "min": None, "max": None}


def test_spreads_by_figure():
    rows = [{"f1": 0.5, "people": 1.0}, {"f1": 0.7}]
    result = spreads(rows, ["f1", "people"])
    assert result["f1"].mean == pytest.approx(0.6)
    assert result["people"].n == 1
