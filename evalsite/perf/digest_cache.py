"""Figures derived from stored contents, kept in the cache under a digest of those contents.

A page that derives a figure from rows it would otherwise read whole (and run the matcher on)
reads their digests instead, taken by the database, and derives only what the cache does not
hold. The key is the digests themselves, so a changed row is derived afresh and nothing needs
invalidating; with the cache down every figure is derived, as without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from django.core.cache import cache

K = TypeVar("K")
V = TypeVar("V")


def digest_key(namespace: str, basis: str, digests: Sequence[str]) -> str:
    joined = "|".join([basis, *digests]).encode()
    return f"{namespace}:{hashlib.blake2b(joined, digest_size=16).hexdigest()}"


def digest_cached(
    *,
    namespace: str,
    basis: str,
    digests: Mapping[K, Sequence[str]],
    derive: Callable[[list[K]], dict[K, tuple[Sequence[str], V]]],
    seconds: int,
) -> dict[K, V]:
    """Per key, its figure: from the cache under (``namespace``, ``basis``, its digests), else
    from ``derive`` of the missing keys, which returns each one's figure with the digests of
    the contents it read (they may have changed since ``digests`` were read), kept under them."""
    keys = {key: digest_key(namespace, basis, found) for key, found in digests.items()}
    cached = cache.get_many(list(keys.values()))
    figures = {key: cached[name] for key, name in keys.items() if name in cached}
    missing = [key for key in keys if key not in figures]
    if not missing:
        return figures
    derived = derive(missing)
    cache.set_many(
        {digest_key(namespace, basis, read): figure for read, figure in derived.values()},
        seconds,
    )
    return figures | {key: figure for key, (_, figure) in derived.items()}
