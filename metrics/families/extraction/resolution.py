"""Translating AI-side ids into GT-side ids once people have been matched."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .payload import as_id

Ident = int | str


@dataclass(frozen=True, slots=True)
class Unresolved:
    """An AI person that has no GT counterpart: equal to no GT id."""

    ai_id: Ident


class IdResolver:
    """Maps an AI person id to the GT id it stands for.

    Matched AI people map to their GT person. AI people defined in the payload but
    left unmatched resolve to an Unresolved marker, so links to them never agree.
    Ids the AI payload does not define (committed people, people from earlier
    statements) keep their own id: both sides refer to the same stored entity.
    """

    def __init__(self, id_map: Mapping[Ident, Ident], ai_defined: Iterable[Ident] = ()):
        self.id_map = dict(id_map)
        self.ai_defined = set(ai_defined)
        # One marker per id: building a frozen dataclass costs more than the lookup.
        self._unresolved: dict[Ident, Unresolved] = {}

    def __call__(self, value: Any) -> Ident | Unresolved | None:
        cls = value.__class__
        ident = value if cls is int or cls is str else as_id(value)  # as_id, minus a call
        if ident is None:
            return None
        mapped = self.id_map.get(ident)
        if mapped is not None:
            return mapped
        if ident in self.ai_defined:
            marker = self._unresolved.get(ident)
            if marker is None:
                marker = self._unresolved[ident] = Unresolved(ident)
            return marker
        return ident

    def many(self, values: Iterable[Any]) -> frozenset:
        return frozenset(map(self, values)) - _NONE


_NONE = frozenset([None])
IDENTITY = IdResolver({})
