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
from dataclasses import dataclass
from typing import Any

from evalsite.match_settings import match_settings
from evalsite.perf.planner import planner_statistics_after_commit
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


def piece_hasher(family: str, *, code_version: str | None = None) -> Callable[[Any], str]:
    """Hash of one statement's inputs with the family's code version (``code_version`` for a
    family outside the own-data ones), its piece format and the match settings (those hashed
    once, not per statement)."""
    salt = input_hash(
        None,
        code_version=code_version or CODE_VERSIONS[family],
        settings=match_settings().to_dict(),
        piece_format=PIECE_FORMATS.get(family, 1),
    )

    # The same text json.dumps(stamp, default=str, separators=(",", ":")) gives, so stored
    # hashes still match; one encoder and one salted digest instead of one per statement
    # (a run's every stamp is hashed on each update).
    encode = json.JSONEncoder(default=str, separators=(",", ":"), check_circular=False).encode
    salted = hashlib.sha256(salt.encode())

    def hash_of(stamp: Any) -> str:
        digest = salted.copy()
        digest.update(encode(stamp).encode())
        return digest.hexdigest()

    return hash_of


def _chunks(ids: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


@dataclass
class PiecesDiff:
    """Which stored pieces of a run still stand against the statements' current inputs."""

    hashes: dict[int, str]  # every wanted statement -> the hash of its current inputs
    kept: dict[int, Piece]  # stored pieces whose hash matches
    gone: list[int]  # stored pieces of statements no longer wanted
    stored: int = 0  # how many pieces were stored

    @property
    def outdated(self) -> list[int]:
        """Statements to compute, in ascending order: no piece, or one of other inputs."""
        return sorted(set(self.hashes) - set(self.kept))


def pieces_diff(
    *,
    family: str,
    run_id: int | None,
    stamps: Mapping[int, Any],
    force: bool = False,
    code_version: str | None = None,
    read_pieces: bool = True,
    among: Sequence[int] | None = None,
    only: str | None = None,
) -> PiecesDiff:
    """Compare ``stamps`` (statement id -> what its piece is computed from) with the stored
    pieces; with ``force`` none is kept (only which statements have one is read). Without
    ``read_pieces`` only the hashes are read (the kept pieces are then empty). ``among``: only
    these statements' stored pieces are read (the others are neither kept nor gone). ``only``:
    of each kept piece, only this key is read (``{only: value}``)."""
    hash_of = piece_hasher(family, code_version=code_version)
    wanted = {statement_id: hash_of(stamp) for statement_id, stamp in stamps.items()}
    rows = StatementPiece.objects.filter(family=family, run_id=run_id)
    kept: dict[int, Piece] = {}
    gone, count = [], 0
    for statement_id, stored_hash, piece in _stored(rows, force, read_pieces, among, only):
        count += 1
        if statement_id not in wanted:
            gone.append(statement_id)
        elif not force and stored_hash == wanted[statement_id]:
            kept[statement_id] = piece if read_pieces else {}
    return PiecesDiff(wanted, kept, gone, count)


def _stored(
    rows: Any,
    force: bool,
    read_pieces: bool,
    among: Sequence[int] | None,
    only: str | None = None,
) -> Iterator[tuple[int, str | None, Any]]:
    """(statement, hash, piece) of each stored piece, of ``among`` only (a chunk at a time)
    when given; with ``force`` only the statement (no hash or piece is compared), without
    ``read_pieces`` no piece (None); with ``only``, ``{only: value}`` (PostgreSQL and SQLite
    take the key out of the JSON, so the rest is never decoded)."""
    reads_piece = read_pieces and not force
    fields = ["statement_id", *([] if force else ["input_hash"])]
    fields += [f"piece__{only}" if only else "piece"] if reads_piece else []
    chunks = (
        [rows] if among is None else [rows.filter(statement_id__in=c) for c in _chunks(among, 5000)]
    )
    for chunk in chunks:
        for values in chunk.values_list(*fields).iterator(chunk_size=2000):
            statement_id, stored_hash, piece = (*values, None, None)[:3]
            yield statement_id, stored_hash, {only: piece} if only and reads_piece else piece


def pieces_refresh(
    *,
    family: str,
    run_id: int | None,
    stamps: Mapping[int, Any],
    compute: PieceCompute,
    force: bool = False,
    only: str | None = None,
) -> dict[int, Piece]:
    """The pieces of every statement in ``stamps`` (statement id -> what its piece is computed
    from), by statement id in ascending order.

    Stored pieces whose hash matches are read back; the others (all with ``force``) are
    computed, a chunk at a time, and stored; pieces of statements no longer in ``stamps``
    are deleted. ``only``: the caller needs this key of each piece, and gets ``{only: value}``.
    """
    diff = pieces_diff(family=family, run_id=run_id, stamps=stamps, force=force, only=only)
    pieces_remove(family=family, run_id=run_id, statement_ids=diff.gone)
    pieces, outdated = diff.kept, diff.outdated
    for chunk in _chunks(outdated, CHUNK):
        fresh = {statement_id: json_ready(piece) for statement_id, piece in compute(chunk).items()}
        pieces_store(family=family, run_id=run_id, pieces=fresh, hashes=diff.hashes)
        pieces.update(
            (statement_id, {only: piece[only]} if only else piece)  # as ``_stored`` reads it
            for statement_id, piece in fresh.items()
        )
    written = len(outdated) + len(diff.gone)
    planner_statistics_after_commit(models=[StatementPiece], written=written)
    return dict(sorted(pieces.items()))


def pieces_remove(*, family: str, run_id: int | None, statement_ids: Sequence[int]) -> None:
    rows = StatementPiece.objects.filter(family=family, run_id=run_id)
    for chunk in _chunks(statement_ids, 5000):
        rows.filter(statement_id__in=chunk).delete()


def pieces_store(
    *, family: str, run_id: int | None, pieces: Mapping[int, Piece], hashes: Mapping[int, str]
) -> None:
    """Store (or replace) these statements' pieces (plain JSON) with their inputs' hashes."""
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
            for statement_id, piece in pieces.items()
        ],
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["input_hash", "piece"],
    )
