"""Per-statement pieces of the own-data families (``StatementPiece``): what one statement
contributes, stored with the hash of its inputs, so a run's figures follow an approval by
computing one statement's piece and deriving the figures from the stored ones.

The extraction family keeps additive totals (``contribution``) because its figures are sums.
Review savings, calibration and inter-auditor agreement are not (curves, fitted calibrators,
bootstrap intervals, kappa), so their pieces are the compact per-statement *inputs* of those
figures — a statement's F1 and confidences, its items' (confidence, matched) pairs, its
auditor pairs' F1 — a few numbers each. Review triage reads the review-savings pieces for
its approved statements' F1 and keeps its own piece of every statement the run extracted:
its score's signals (item confidences, agreement with the partner run). The figures are
computed from the pieces, in statement order, by the same code whether the pieces were just
computed or read back: a full recompute (``force``) and an incremental update give the same
figures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from metrics.match_settings import match_settings
from metrics.models import StatementPiece
from metrics.own_data.common import CODE_VERSIONS
from metrics.registry import CALIBRATION, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE
from metrics.results import input_hash, json_ready

# The shape of each family's piece: bumping it makes every stored piece of the family
# outdated (computed again), without touching the family's code version and its rows.
PIECE_FORMATS = {REVIEW_SAVINGS: 1, CALIBRATION: 2, INTERAUDITOR: 1, TRIAGE: 1}

# Statements computed and stored per round: a full recompute holds one chunk's payloads.
CHUNK = 500

Piece = dict[str, Any]
# Computes the pieces of some statements (ids in order) from their inputs; a statement whose
# inputs went away meanwhile is left out.
PieceCompute = Callable[[list[int]], Mapping[int, Piece]]


def piece_hasher(family: str) -> Callable[[Any], str]:
    """Hash of one statement's inputs with the family's code version, its piece format and
    the match settings (those hashed once, not per statement)."""
    salt = input_hash(
        None,
        code_version=CODE_VERSIONS[family],
        settings=match_settings().to_dict(),
        piece_format=PIECE_FORMATS.get(family, 1),
    )

    def hash_of(stamp: Any) -> str:
        encoded = json.dumps(stamp, default=str, separators=(",", ":")).encode()
        return hashlib.sha256(salt.encode() + encoded).hexdigest()

    return hash_of


def _chunks(ids: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def pieces_refresh(
    *,
    family: str,
    run_id: int | None,
    stamps: Mapping[int, Any],
    compute: PieceCompute,
    force: bool = False,
) -> dict[int, Piece]:
    """The pieces of every statement in ``stamps`` (statement id -> what its piece is computed
    from), by statement id in ascending order.

    Stored pieces whose hash matches are read back; the others (all with ``force``) are
    computed, a chunk at a time, and stored; pieces of statements no longer in ``stamps``
    are deleted.
    """
    hash_of = piece_hasher(family)
    wanted = {statement_id: hash_of(stamp) for statement_id, stamp in stamps.items()}
    rows = StatementPiece.objects.filter(family=family, run_id=run_id)
    pieces: dict[int, Piece] = {}
    gone = []
    if force:  # only which statements have one, to delete those that went away
        stored: Any = (
            (statement_id, None, None)
            for statement_id in rows.values_list("statement_id", flat=True).iterator(
                chunk_size=5000
            )
        )
    else:
        stored = rows.values_list("statement_id", "input_hash", "piece").iterator(chunk_size=2000)
    for statement_id, stored_hash, piece in stored:
        if statement_id not in wanted:
            gone.append(statement_id)
        elif not force and stored_hash == wanted[statement_id]:
            pieces[statement_id] = piece
    for chunk in _chunks(gone, 5000):
        rows.filter(statement_id__in=chunk).delete()
    for chunk in _chunks(sorted(set(wanted) - set(pieces)), CHUNK):
        fresh = {statement_id: json_ready(piece) for statement_id, piece in compute(chunk).items()}
        _store(family, run_id, fresh, wanted)
        pieces.update(fresh)
    return dict(sorted(pieces.items()))


def _store(family: str, run_id: int | None, fresh: Mapping[int, Piece], hashes: dict) -> None:
    StatementPiece.objects.bulk_create(
        [
            StatementPiece(
                key=StatementPiece.make_key(family, run_id=run_id, statement_id=statement_id),
                family=family,
                run_id=run_id,
                statement_id=statement_id,
                input_hash=hashes[statement_id],
                piece=piece,
            )
            for statement_id, piece in fresh.items()
        ],
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["input_hash", "piece"],
    )
