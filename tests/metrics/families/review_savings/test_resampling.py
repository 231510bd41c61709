"""The vectorised review-savings bootstrap computes each resample alone: how many resamples
share a block (a memory and speed choice) does not change a single replicate.

(A block of one column is summed by numpy as a contiguous vector, pairwise, which can move
the last bit; blocks of two or more columns sum each column row by row.)"""

from __future__ import annotations

import numpy as np
import pytest

from metrics.families.review_savings import ReviewItem, resampling


def _items(n: int, seed: int) -> list[ReviewItem]:
    rng = np.random.default_rng(seed)
    return [
        ReviewItem(
            cluster_id=i // 7,
            item_id=i,
            confidence=float(np.round(rng.random(), 2)),  # ties: plateaus
            loss=float(rng.random() < 0.3) if i % 3 else float(rng.random()),
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("block", [2, 3, 8, 1000])
def test_replicates_do_not_depend_on_the_block_size(monkeypatch, block) -> None:
    sides = [_items(300, seed=1), _items(300, seed=2)]

    def replicates() -> list[dict[str, np.ndarray]]:
        return resampling.review_replicates(sides, risk_levels=(0.05, 0.1), n_resamples=50, seed=4)

    monkeypatch.setattr(resampling, "COLUMNS_PER_BLOCK", 50)
    whole = replicates()
    monkeypatch.setattr(resampling, "COLUMNS_PER_BLOCK", block)
    for side, expected in zip(replicates(), whole, strict=True):
        assert side.keys() == expected.keys()
        for name in side:
            assert len(side[name]) == 50
            np.testing.assert_array_equal(side[name], expected[name])
