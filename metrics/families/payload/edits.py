"""The one rule for "edited -> confidence 1.0": an item is edited only when its content
differs from its source after the same normalisation on both sides.
"""

from __future__ import annotations

import copy
from typing import Any

from metrics.families.payload.items import ENTITY_KINDS, item_id

EDITED_CONFIDENCE = 1.0


def normalize_value(value: Any) -> Any:
    """Text without surrounding or repeated spaces; "" and [] read as "not given" (None)."""
    if isinstance(value, str):
        value = " ".join(value.split())
        return value or None
    if isinstance(value, list):
        return [normalize_value(v) for v in value] or None
    return value


def item_content(item: dict) -> dict:
    """What an item asserts: every field but its confidence, normalised, unset fields left out."""
    normalized = {key: normalize_value(value) for key, value in item.items() if key != "confidence"}
    return {key: value for key, value in normalized.items() if value is not None}


def is_edited(source: dict | None, item: dict) -> bool:
    """An item is edited when it is new or its content differs from its source's."""
    return source is None or item_content(source) != item_content(item)


def mark_edited(before: dict, after: dict) -> dict:
    """Apply the edited rule to ``after``, a new version of the payload ``before``.

    - Untouched items are kept exactly as they were (``"May "`` stays ``"May "``); only a
      confidence the caller changed on purpose is taken over.
    - Edited and new items get confidence 1.0, unless the caller set a confidence of their
      own (the JSON editor and the API may).
    """
    sources = _by_kind_and_id(before)
    marked: dict[str, Any] = dict(after)
    for kind in ENTITY_KINDS:
        marked[kind] = [
            _marked_item(sources.get((kind, item_id(item))), item)
            if isinstance(item, dict)
            else item
            for item in after.get(kind) or []
        ]
    return marked


def _marked_item(source: dict | None, item: dict) -> dict:
    if is_edited(source, item):
        item = dict(item)
        if item.get("confidence") == (source or {}).get("confidence"):
            item["confidence"] = EDITED_CONFIDENCE
        return item
    assert source is not None  # is_edited: an item without a source is always edited
    kept = copy.deepcopy(source)
    if "confidence" in item and item["confidence"] != source.get("confidence"):
        kept["confidence"] = item["confidence"]
    return kept


def _by_kind_and_id(payload: dict) -> dict[tuple[str, Any], dict]:
    return {
        (kind, item_id(item)): item
        for kind in ENTITY_KINDS
        for item in payload.get(kind) or []
        if isinstance(item, dict)
    }


def is_blank(value: Any) -> bool:
    return normalize_value(value) is None
