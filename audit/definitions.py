"""Short definitions of the coding vocabulary: the SARF variables and their values, and the
event kinds. The editor shows them beside its controls and in the shortcut help; the demo
guidelines quote them. Pure Python (no Django), beside ``metrics.families.payload.schema`` which lists the codes.
"""

from __future__ import annotations

from metrics.families.payload.schema import DIRECTIONS, EVENT_KINDS, RELATIONSHIPS, SARF_VARIABLES

SARF_VARIABLE_DEFINITIONS: dict[str, str] = {
    "symptom": "S: a change in physical, emotional or social symptoms (illness, drinking, "
    "depression, trouble at school or work).",
    "anxiety": "A: a change in how anxious, tense or threatened the person is, said or shown.",
    "relationship": "R: the relationship pattern the person uses to manage anxiety with "
    "others (the R targets are the people it is aimed at).",
    "functioning": "F: a change in the person's level of functioning: how well they think for "
    "themselves and run their life under pressure.",
}

DIRECTION_DEFINITIONS: dict[str, str] = {
    "up": "more of it than before (worse symptom, higher anxiety, better functioning)",
    "down": "less of it than before",
    "same": "stated to be unchanged",
}

RELATIONSHIP_DEFINITIONS: dict[str, str] = {
    "fusion": "two people act as one; little room for differences",
    "conflict": "open fighting, blaming, arguing",
    "distance": "avoiding contact or topics to lower tension",
    "overfunctioning": "doing for another what they could do themselves",
    "underfunctioning": "letting another do what one could do oneself",
    "projection": "anxiety focused on a child (or another) as the problem",
    "defined-self": "taking a clear position without attacking or withdrawing",
    "toward": "moving toward a third person in a triangle",
    "away": "moving away from a third person in a triangle",
    "inside": "inside position of a triangle (the comfortable pair)",
    "outside": "outside position of a triangle (the odd one out)",
    "cutoff": "breaking off contact to escape unresolved tension",
}

EVENT_KIND_DEFINITIONS: dict[str, str] = {
    "bonded": "a couple got together (dating, moving in), not yet married",
    "married": "a wedding",
    "birth": "someone was born (the child is the person born)",
    "adopted": "a child joined the family by adoption",
    "moved": "a change of home or town",
    "separated": "a couple split up without divorce",
    "divorced": "a divorce",
    "shift": "a change in S, A, R or F of a person: code the SARF variables",
    "death": "someone died",
}

# Every code the schema knows has its definition (a test checks it).
assert set(SARF_VARIABLE_DEFINITIONS) == set(SARF_VARIABLES)
assert set(DIRECTION_DEFINITIONS) == set(DIRECTIONS)
assert set(RELATIONSHIP_DEFINITIONS) == set(RELATIONSHIPS)
assert set(EVENT_KIND_DEFINITIONS) == set(EVENT_KINDS)


def value_definitions(variable: str) -> dict[str, str]:
    """The definitions of one SARF variable's values."""
    return RELATIONSHIP_DEFINITIONS if variable == "relationship" else DIRECTION_DEFINITIONS


def code_definition(field: str, value: str) -> str:
    """The short definition of one value of a payload field ("" for fields without any)."""
    if field == "kind":
        return EVENT_KIND_DEFINITIONS.get(value, "")
    if field in SARF_VARIABLE_DEFINITIONS:
        return value_definitions(field).get(value, "")
    return ""


def definitions_markdown() -> str:
    """The vocabulary as a Markdown section, for guidelines that start from the definitions."""
    lines = ["## SARF variables", ""]
    for variable in SARF_VARIABLES:
        lines.append(f"- **{variable}**: {SARF_VARIABLE_DEFINITIONS[variable]}")
    lines += ["", "### Directions (symptom, anxiety, functioning)", ""]
    lines += [f"- `{code}`: {text}" for code, text in DIRECTION_DEFINITIONS.items()]
    lines += ["", "### Relationship codes", ""]
    lines += [f"- `{code}`: {text}" for code, text in RELATIONSHIP_DEFINITIONS.items()]
    lines += ["", "## Event kinds", ""]
    lines += [f"- `{kind}`: {text}" for kind, text in EVENT_KIND_DEFINITIONS.items()]
    return "\n".join(lines) + "\n"
