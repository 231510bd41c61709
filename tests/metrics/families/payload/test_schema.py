import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.families.payload.schema import (
    _PDP_VALIDATOR,
    DATE_CERTAINTIES,
    DIRECTIONS,
    EVENT_KINDS,
    EVENT_SCHEMA,
    GENDERS,
    PAIR_BOND_SCHEMA,
    PERSON_SCHEMA,
    RELATIONSHIPS,
    PayloadError,
    _schema_valid,
    pdp_issues,
    validate_pdp,
)
from tests.factories import SIMPLE_PDP


def messages(payload) -> list[str]:
    return [str(issue) for issue in pdp_issues(payload)]


def test_valid_payload_has_no_issues_and_is_normalised():
    assert pdp_issues(SIMPLE_PDP) == []
    assert validate_pdp({"people": []}) == {
        "people": [],
        "events": [],
        "pair_bonds": [],
        "delete": [],
    }


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ([], "expected a JSON object, got array"),
        ({"people": {}}, "people: expected array, got object {}"),
        ({"people": [{"name": "A"}]}, "people[0]: missing required field 'id'"),
        ({"people": [{"id": "x"}]}, "people[0].id: expected integer, got string 'x'"),
        ({"people": [{"id": True}]}, "people[0].id: expected integer, got boolean True"),
        (
            {"people": [{"id": 1, "gender": "other"}]},
            "people[0].gender: 'other' is not one of: male, female, abortion, miscarriage, unknown, null",
        ),
        ({"events": [{"id": 1, "kind": "party"}]}, "events[0].kind: 'party' is not one of: bonded"),
        (
            {"events": [{"id": 1, "kind": "birth", "symptom": "high"}]},
            "events[0].symptom: 'high' is not one of: up, down, same, null",
        ),
        (
            {"events": [{"id": 1, "kind": "birth", "relationship": "love"}]},
            "events[0].relationship: 'love' is not one of: fusion",
        ),
        (
            {"events": [{"id": 1, "kind": "birth", "dateCertainty": "maybe"}]},
            "events[0].dateCertainty: 'maybe' is not one of: unknown, approximate, certain",
        ),
        (
            {"events": [{"id": 1, "kind": "birth", "relationshipTargets": ["a"]}]},
            "events[0].relationshipTargets[0]: expected integer",
        ),
        (
            {"events": [{"id": 1, "kind": "birth", "confidence": 1.5}]},
            "events[0].confidence: 1.5 is out of range",
        ),
        (
            {"pair_bonds": [{"id": 1, "person_a": 2}]},
            "pair_bonds[0]: missing required field 'person_b'",
        ),
        ({"delete": [1, "2"]}, "delete[1]: expected integer, got string '2'"),
        ({"persons": []}, "unknown key(s)"),
        (
            {"people": [{"id": 1}, {"id": 1}]},
            "people[1].id: duplicate id 1 (already used by people[0])",
        ),
    ],
)
def test_each_kind_of_bad_payload_gets_its_specific_error(payload, expected):
    found = messages(payload)
    assert any(expected in m for m in found), found


def test_validate_pdp_raises_with_every_issue_and_location():
    with pytest.raises(PayloadError) as info:
        validate_pdp(
            {"people": [{"id": "a"}], "events": [{"id": 2, "kind": "x"}]}, where="statement 3"
        )
    assert len(info.value.issues) == 2
    assert info.value.messages()[0].startswith("statement 3.")


# --- the compiled validator answers as the schema does -----------------------------------------

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([*GENDERS, *EVENT_KINDS, *DIRECTIONS, *RELATIONSHIPS, *DATE_CERTAINTIES]),
    st.text(max_size=3),
    st.lists(st.integers(-3, 3), max_size=2),
)
_KEYS = sorted(
    {*PERSON_SCHEMA["properties"], *EVENT_SCHEMA["properties"], *PAIR_BOND_SCHEMA["properties"]}
)


@st.composite
def near_valid_payloads(draw):
    """Payloads of the schema's keys and values, each item often valid and often not."""
    payload: dict = {}
    for key in draw(st.sets(st.sampled_from(["people", "events", "pair_bonds", "delete", "x"]))):
        if key == "delete":
            payload[key] = draw(st.lists(_VALUES, max_size=2))
            continue
        items = draw(st.lists(st.dictionaries(st.sampled_from(_KEYS), _VALUES), max_size=3))
        payload[key] = items if draw(st.booleans()) else draw(_VALUES)
    return payload


@settings(max_examples=100)
@given(near_valid_payloads())
def test_compiled_validator_agrees_with_the_schema(payload):
    assert _schema_valid(payload) == (not list(_PDP_VALIDATOR.iter_errors(payload)))


def test_compiled_validator_leaves_what_it_cannot_take_to_the_python_one():
    assert not _schema_valid({1: []})
    assert messages({"people": [{"id": 2**70}]}) == [
        f"people[0].id: {2**70} is out of range (expected between {-(2**63 - 1)} and {2**63 - 1})"
    ]
