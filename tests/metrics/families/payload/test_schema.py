import pytest

from metrics.families.payload.schema import PayloadError, pdp_issues, validate_pdp
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
