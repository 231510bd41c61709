"""The extraction payload as the API shows it (a field and its OpenAPI components, referred
to wherever a payload is read or written), and the size limits the serializers share.
"""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evalsite.api import (
    to_openapi30,
)
from metrics.families.payload.schema import (
    PDP_SCHEMA,
    RUN_REFERENCE_SCHEMA,
)

MAX_ITEMS = 10_000
MAX_EXPORT_IDS = 1000
MAX_TEXT = 100_000

USERNAME_PATTERN = r"^[\w.@+-]*$"

# The extraction payload is one component, its items three more, referred to ($ref) wherever a
# payload is read or written: an AI extraction read is a draft that can be sent back as it is.
PAYLOAD_COMPONENT = "PdpDeltas"
ITEM_COMPONENTS = {"people": "PdpPerson", "events": "PdpEvent", "pair_bonds": "PdpPairBond"}
RUN_REFERENCE = "RunReference"  # how a file names an extraction run


def component_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable_ref(name: str, **meta: Any) -> dict[str, Any]:
    return {"allOf": [component_ref(name)], "nullable": True, **meta}


def payload_components() -> dict[str, dict[str, Any]]:
    """``PDP_SCHEMA`` as OpenAPI components: the payload, and each item kind by reference."""
    payload = to_openapi30(copy.deepcopy(PDP_SCHEMA))
    payload.pop("title", None)
    payload["description"] = (
        "An extraction (PDP deltas): people, events and pair bonds the statement adds or "
        "changes, and ids it deletes. The AI's extraction and a coding share this shape."
    )
    components = {PAYLOAD_COMPONENT: payload}
    for kind, name in ITEM_COMPONENTS.items():
        components[name] = payload["properties"][kind]["items"]
        payload["properties"][kind]["items"] = component_ref(name)
    components[RUN_REFERENCE] = to_openapi30(copy.deepcopy(RUN_REFERENCE_SCHEMA))
    return components


def add_payload_components(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: register the payload components the fields refer to."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(payload_components())
    return result


@extend_schema_field(component_ref(PAYLOAD_COMPONENT))
class PdpField(serializers.JSONField):
    """A PDP-deltas payload (validated by ``metrics.families.payload.schema.validate_pdp`` in the services)."""
