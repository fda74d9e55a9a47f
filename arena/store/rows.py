"""The one mapping between the store's records and database rows, for every backend.

A backend speaks its own SQL dialect (placeholders, returning ids, locks), but what a
column holds is decided here once: JSON as text (kept exactly as written), the event
record as zlib-compressed JSON tagged with its encoding, the column order of a match.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from arena.referee.results import MatchResult
from arena.rules.events import event_to_dict
from arena.store.base import (MatchRecord, RegisteredBot, SavedState, StoreError,
                              UnreadableStateError)

#: How ``match_events.data`` is encoded: zlib of a JSON list of event tuples.
EVENTS_ENCODING = "json-zlib"

#: The columns of a new match, in the order of :func:`match_values`.
MATCH_INSERT = ("tournament_id", "key", "sample", "match_uid", "bots", "seed", "ruleset",
                "options", "status", "ranking", "termination", "verdicts", "stats",
                "started_at", "duration_s", "turns")

#: The columns a :class:`MatchRecord` is read from (``m``: matches, ``t``: tournaments),
#: in the order of :func:`match_record`.
MATCH_SELECT = ("m.id, t.name, m.key, m.match_uid, m.sample, m.bots, m.seed, m.ruleset, "
                "m.options, m.status, m.ranking, m.termination, m.verdicts, m.stats, "
                "m.started_at, m.duration_s, m.turns")
MATCH_FROM = "FROM matches m JOIN tournaments t ON t.id = m.tournament_id"

#: The columns a :class:`RegisteredBot` is read from, in the order of :func:`registered_bot`.
REGISTERED_SELECT = "id, name, version, kind, token_hash, folder, status, report, created_at"


def match_values(tournament_id: int, key: str, sample: str, bots: Sequence[str],
                 result: MatchResult) -> tuple:
    """A finished match's values for :data:`MATCH_INSERT`."""
    spec = result.spec
    row = result.to_dict()
    return (tournament_id, key, sample, spec.match_id, json.dumps(list(bots)), spec.seed,
            spec.config.ruleset.name, json.dumps(row["options"]), result.status,
            json.dumps(row["ranking"]), result.termination, json.dumps(row["verdicts"]),
            json.dumps(row["stats"]), result.started_at, result.duration_s, result.turns)


def encode_events(result: MatchResult) -> bytes:
    """A match's event record as stored (:data:`EVENTS_ENCODING`)."""
    return zlib.compress(json.dumps(result.events, separators=(",", ":")).encode(), 1)


def decode_events(match_id: int, encoding: str, data: bytes) -> list[dict[str, Any]]:
    """A stored event record as :func:`arena.rules.events.event_to_dict` gives it."""
    if encoding != EVENTS_ENCODING:
        raise StoreError(f"match {match_id}: unknown event encoding {encoding!r}")
    return [event_to_dict(tuple(e)) for e in json.loads(zlib.decompress(data))]


#: How ``tournament_states.data`` is encoded: zlib of a JSON object.
STATE_ENCODING = "json-zlib"

#: The most a saved state is decoded to (bytes of JSON). A 300-bot ladder's is 1.4 MB
#: where every two bots met; at 256 MiB some 3,600 bots would have met every other, after
#: 6.7 million matches. A row that inflates past it (a foreign one could to gigabytes,
#: in a server's memory) cannot be read: a ladder then reads every stored match.
STATE_LIMIT = 256 * 2**20


def encode_state(data: dict[str, Any]) -> bytes:
    """A tournament's state as stored (:data:`STATE_ENCODING`)."""
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 1)


def decode_state(tournament: str, row: Sequence) -> SavedState:
    """A row of ``through, encoding, data, saved_at``; :class:`UnreadableStateError` for
    one this arena cannot read."""
    through, encoding, data, saved_at = row
    try:
        if encoding != STATE_ENCODING:
            raise ValueError(f"unknown encoding {encoding!r}")
        through = int(through)                 # a damaged row's may be text, or infinite
        inflate = zlib.decompressobj()
        text = inflate.decompress(data, STATE_LIMIT)
        if inflate.unconsumed_tail:
            raise ValueError(f"it decodes to more than {STATE_LIMIT} bytes")
        if not inflate.eof:   # zlib.decompress's error, which a stream object leaves to us
            raise ValueError("its data is cut short")
        decoded = json.loads(text)
        if not isinstance(decoded, dict):
            raise ValueError(f"a {type(decoded).__name__}, not an object")
    # JSONDecodeError and UnicodeError are ValueErrors; text where bytes were, a TypeError;
    # arrays nested thousands deep, a RecursionError
    except (ValueError, TypeError, OverflowError, zlib.error, RecursionError) as exc:
        raise UnreadableStateError(f"the saved state of tournament {tournament!r} cannot be "
                                   f"read: {exc}") from None
    return SavedState(through, decoded, saved_at)


def match_record(row: Sequence) -> MatchRecord:
    """A row of :data:`MATCH_SELECT` (a seed may come back as a decimal: made an int)."""
    (mid, tname, key, uid, sample, bots, seed, ruleset, options, status, ranking, termination,
     verdicts, stats, started_at, duration_s, turns) = row
    return MatchRecord(mid, tname, key, uid, sample, json.loads(bots), int(seed), ruleset,
                       json.loads(options), status, json.loads(ranking), termination,
                       json.loads(verdicts), json.loads(stats), started_at, duration_s, turns)


def registered_bot(row: Sequence) -> RegisteredBot:
    """A row of :data:`REGISTERED_SELECT`."""
    bid, name, version, kind, token_hash, folder, status, report, created = row
    return RegisteredBot(bid, name, version, kind, token_hash, folder, status,
                         None if report is None else json.loads(report), created)
