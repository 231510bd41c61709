"""Verdict policies: verdict names and scoring rules, loaded from JSON data files.

A policy file lives in ``metrics/families/verdicts/policies/<name>.json`` and holds:

- ``verdicts``: the verdict names from lowest to highest risk (the ordinal scale, 0, 1, 2);
- ``verdict_aliases``: other spellings that mean a verdict ("critical" -> "Critical Risk");
- ``severity_field`` and ``severity_points``: base points per incident severity;
- ``modifiers``: bonus points, the evidence fields that report them and the judgements that
  count as "detected";
- ``verdict_thresholds`` and ``default_verdict``: score -> verdict.

``load_policy("G1_allergy_V2")`` looks for ``g1_allergy_v2.json`` first, then for the version
suffix (``v2.json``), so a group-specific file can override the generic rules later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

POLICY_DIR = Path(__file__).resolve().parent / "policies"
DEFAULT_POLICY_ID = "V2"

_QUOTES_AND_END_PUNCTUATION = "'\"`\u201c\u201d\u2018\u2019.,;:!"


class UnknownPolicyError(ValueError):
    """No rules file exists for the requested policy."""


@dataclass(frozen=True)
class ModifierRule:
    name: str
    points: float
    fields: tuple[str, ...]
    detected_values: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    policy_id: str
    verdicts: tuple[str, ...]
    verdict_aliases: Mapping[str, str]
    severity_field: str
    severity_points: Mapping[str, float]
    modifiers: tuple[ModifierRule, ...]
    verdict_thresholds: tuple[tuple[str, float], ...]
    default_verdict: str


def normalize_label(text: Any) -> str:
    """Lowercase, strip quotes and end punctuation, underscores/hyphens to spaces, collapse."""
    if text is None:
        return ""
    cleaned = str(text).strip().strip(_QUOTES_AND_END_PUNCTUATION).strip()
    cleaned = re.sub(r"[_\-]+", " ", cleaned.lower())
    return " ".join(cleaned.split())


def contains_phrase(text: str, phrase: str) -> bool:
    """Whole-word phrase test, so "mild" is not found inside "mildly" or "male" in "female"."""
    if not phrase:
        return False
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def fields_equivalent(method_field: Any, gt_field: Any) -> bool:
    """INCIDENT_SEVERITY ~ incident severity ~ severity (equal or contained, ignoring _ and case)."""
    left = re.sub(r"[\s_\-]", "", str(method_field or "").lower())
    right = re.sub(r"[\s_\-]", "", str(gt_field or "").lower())
    if not left or not right:
        return False
    return left == right or left in right or right in left


def canonical_judgement(judgement: Any, known_values: Iterable[str]) -> str:
    """Reduce a free-text judgement to a known value when exactly one is named in it.

    "moderate incident" -> "moderate"; "mild to moderate" stays as it is (ambiguous).
    """
    text = normalize_label(judgement)
    known = {normalize_label(value) for value in known_values if normalize_label(value)}
    if text in known:
        return text
    named = [value for value in known if contains_phrase(text, value)]
    return named[0] if len(named) == 1 else text


def is_modifier_detected(judgement: Any, rule: ModifierRule) -> bool:
    text = normalize_label(judgement)
    return any(contains_phrase(text, normalize_label(value)) for value in rule.detected_values)


def _policy_file_candidates(policy_id: str) -> list[Path]:
    name = policy_id.strip().replace("/", "_").lower()
    version = name.rsplit("_", 1)[-1]
    candidates = [POLICY_DIR / f"{name}.json"]
    if version != name:
        candidates.append(POLICY_DIR / f"{version}.json")
    return candidates


def available_policies() -> list[str]:
    return sorted(path.stem for path in POLICY_DIR.glob("*.json"))


@lru_cache(maxsize=32)
def load_policy(policy_id: str | None = None) -> Policy:
    """The policy for an id such as "V2" or "G1_allergy_V2"; None means the default (V2)."""
    requested = policy_id or DEFAULT_POLICY_ID
    for path in _policy_file_candidates(requested):
        if path.is_file():
            return _policy_from_data(json.loads(path.read_text(encoding="utf-8")))
    raise UnknownPolicyError(
        f"no scoring rules for policy {requested!r}; available: {', '.join(available_policies())}"
    )


def _policy_from_data(data: Mapping[str, Any]) -> Policy:
    verdicts = tuple(data["verdicts"])
    if len(verdicts) != 3:
        # The ordinal AUPRC (>=High, >=Critical) is defined on a three-level scale.
        raise ValueError(f"policy {data.get('policy_id')!r} must list exactly three verdicts")
    modifiers = tuple(
        ModifierRule(
            name=rule["name"],
            points=float(rule["points"]),
            fields=tuple(rule["fields"]),
            detected_values=tuple(rule["detected_values"]),
        )
        for rule in data.get("modifiers", [])
    )
    thresholds = tuple(
        (rule["verdict"], float(rule["min_score"]))
        for rule in sorted(data["verdict_thresholds"], key=lambda rule: -rule["min_score"])
    )
    return Policy(
        policy_id=data["policy_id"],
        verdicts=verdicts,
        verdict_aliases=dict(data.get("verdict_aliases", {})),
        severity_field=data["severity_field"],
        severity_points={normalize_label(k): float(v) for k, v in data["severity_points"].items()},
        modifiers=modifiers,
        verdict_thresholds=thresholds,
        default_verdict=data["default_verdict"],
    )


def normalize_verdict(verdict: Any, policy: Policy) -> str | None:
    """The policy's canonical verdict name, or the normalised text when it names none."""
    text = normalize_label(verdict)
    if not text:
        return None
    for name in policy.verdicts:
        if normalize_label(name) == text:
            return name
    for alias, name in policy.verdict_aliases.items():
        if normalize_label(alias) == text:
            return name
    return text


def verdict_ordinal(verdict: Any, policy: Policy) -> int | None:
    """0, 1, 2 along the policy's verdict scale; None for a missing or unknown verdict."""
    canonical = normalize_verdict(verdict, policy)
    return policy.verdicts.index(canonical) if canonical in policy.verdicts else None


def verdict_for_score(score: float, policy: Policy) -> str:
    for verdict, min_score in policy.verdict_thresholds:
        if score >= min_score:
            return verdict
    return policy.default_verdict


def _modifier_for_field(field: Any, policy: Policy) -> ModifierRule | None:
    for rule in policy.modifiers:
        if any(fields_equivalent(field, name) for name in rule.fields):
            return rule
    return None


def score_evidences(evidences: Iterable[Mapping[str, Any]], policy: Policy) -> float:
    """Points a method's own evidences earn under the policy (severity + detected modifiers)."""
    score = 0.0
    for evidence in evidences:
        field = evidence.get("field")
        judgement = evidence.get("judgement")
        if fields_equivalent(field, policy.severity_field):
            severity = canonical_judgement(judgement, policy.severity_points)
            score += policy.severity_points.get(severity, 0.0)
            continue
        rule = _modifier_for_field(field, policy)
        if rule is not None and is_modifier_detected(judgement, rule):
            score += rule.points
    return score


def score_incidents(incidents: Iterable[Mapping[str, Any]], policy: Policy) -> float:
    """Points of ground-truth incidents: severity base points plus each listed modifier."""
    bonus_by_name = {normalize_label(rule.name): rule.points for rule in policy.modifiers}
    score = 0.0
    for incident in incidents:
        field = incident.get("severity_field") or policy.severity_field
        if fields_equivalent(field, policy.severity_field):
            severity = normalize_label(incident.get("severity_value"))
            score += policy.severity_points.get(severity, 0.0)
        for modifier in incident.get("modifiers") or []:
            score += bonus_by_name.get(normalize_label(modifier), 0.0)
    return score
