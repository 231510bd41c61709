"""A discussion-unit extraction (one PDP of the whole discussion) is scored by the same
cumulative comparison as a statement-unit run's accumulated deltas: given the accumulated PDP,
it gets the same cumulative F1, item for item."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.synthetic import extraction_run, generate_discussion
from metrics.families.extraction import calculate_cumulative_f1, cumulative

IDS = st.integers(min_value=-6, max_value=4)  # negatives: new items; positives: committed
NAMES = st.sampled_from(["John", "Jon", "Mary", "Marie", "Ann", "Peter", "Pete"])
KINDS = st.sampled_from(["birth", "married", "shift", "death", "moved"])


def _person() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"id": IDS, "name": NAMES}, optional={"parents": st.one_of(st.none(), IDS)}
    )


def _event() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"id": IDS, "kind": KINDS, "person": IDS},
        optional={
            "description": st.sampled_from(["lost a job", "lost his job", "moved away"]),
            "symptom": st.sampled_from(["up", "down", "same", None]),
            "dateTime": st.sampled_from(["1980-01-01", "1980-02-01", "1990"]),
        },
    )


def _bond() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({"id": IDS, "person_a": IDS, "person_b": IDS})


def _delta() -> st.SearchStrategy[dict]:
    """Deltas that upsert, replace, delete and repeat items, with anonymous items besides and
    bonds to people who may be missing or committed: what accumulating must get right."""
    anonymous_person = st.fixed_dictionaries({"name": NAMES})
    return st.fixed_dictionaries(
        {
            "people": st.lists(st.one_of(_person(), anonymous_person), max_size=4),
            "events": st.lists(_event(), max_size=3),
            "pair_bonds": st.lists(_bond(), max_size=2),
            "delete": st.lists(IDS, max_size=2),
        }
    )


def _same(ai: list[dict | None], gt: list[dict | None]) -> None:
    by_statement = calculate_cumulative_f1(ai, gt).to_dict()
    whole = calculate_cumulative_f1([cumulative(ai)], gt).to_dict()
    assert whole == by_statement


@given(
    ai=st.lists(st.one_of(st.none(), _delta()), min_size=1, max_size=6),
    gt=st.lists(_delta(), min_size=6, max_size=6),
)
def test_the_accumulated_pdp_scores_like_its_deltas_on_random_deltas(ai, gt):
    _same(ai + [None] * (len(gt) - len(ai)), gt)


# Each example generates a whole discussion: at most 40 (the quick profile's fewer).
@settings(max_examples=min(40, settings.default.max_examples))
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    statements=st.integers(min_value=1, max_value=25),
    noise=st.floats(min_value=0.0, max_value=0.8),
    missing=st.sets(st.integers(min_value=0, max_value=24), max_size=5),
)
def test_the_accumulated_pdp_scores_like_its_deltas_on_synthetic_discussions(
    seed, statements, noise, missing
):
    discussion = generate_discussion(seed, statements, noise=noise, expert_turns=False)
    gt = [s.gt_delta for s in discussion.subject_statements()]
    ai: list[dict | None] = list(extraction_run(discussion, noise=noise, ai_run=1))
    for index in missing & set(range(len(ai))):
        ai[index] = None  # a statement the run did not extract counts as an empty delta
    _same(ai, gt)


def test_the_comparison_names_the_same_items_both_ways():
    """The items themselves (matched pairs, missed and spurious ids), not just the counts."""
    discussion = generate_discussion(7, 12, noise=0.5, expert_turns=False)
    gt = [s.gt_delta for s in discussion.subject_statements()]
    ai = extraction_run(discussion, noise=0.5, ai_run=2)
    whole = calculate_cumulative_f1([cumulative(ai)], gt)
    assert whole.people_fn_ids or whole.events_fp_ids  # noisy enough to have errors to name
    by_statement = calculate_cumulative_f1(ai, gt)
    for name in ("people_matches", "events_fn_ids", "events_fp_ids", "pair_bonds_fn_ids"):
        assert getattr(whole, name) == getattr(by_statement, name), name
