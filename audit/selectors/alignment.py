"""Which AI item corresponds to which coded item: the extraction matcher of the library, with
the deployment's match settings, run on request for the one statement open in the editor
(never stored: a draft changes with every save)."""

from __future__ import annotations

from typing import Any

from evalsite.match_settings import match_settings
from metrics.families.extraction import compare_payloads
from metrics.families.payload.items import ENTITY_KINDS


def item_alignment(*, ai: dict, coded: dict) -> dict[str, list[tuple[Any, Any]]]:
    """The (AI id, coded id) pairs the extraction matcher makes, per kind."""
    fields = compare_payloads(ai, coded, settings=match_settings())
    return {
        kind: [(pair["ai_id"], pair["gt_id"]) for pair in fields[f"{kind}_matches"]]
        for kind in ENTITY_KINDS
    }
