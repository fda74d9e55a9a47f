"""The public event record of a game.

Every event is a plain tuple whose first item is its kind (one of the constants
below); tuples keep the engine's hot path cheap and compare and serialise simply.
Everything in an event is public: draws are counts, and a hand appears only when the
rules lay it face up. With the seed, the decisions in the record (``play``, ``out``
with a card, and ``forfeit``) replay the game exactly.

=============  ==============================================  ==========================
kind           fields after the kind                           when
=============  ==============================================  ==========================
``deal``       round, dealer, first seat to act, total         a round starts
``play``       seat, card, total after                         a seat plays a card
``four99``     seat, total                                     modern: four 99s together
``draw``       seat, number of cards                           a seat draws
``reshuffle``  new draw pile size                              discards become the pile
``lose``       seat                                            a seat has no playable card
``token``      seat, tokens left                               a loss costs a token
``out``        seat, card or None                              points: out of the round
``scores``     tuple of every seat's score                     points: a round is scored
``eliminate``  seat, hand laid face up (tuple) or None         a seat leaves the game
``forfeit``    seat[, together]                                the referee removes a seat
``end``        ranking (tuple of tuples of seats), reason      the game is over
=============  ==============================================  ==========================

A ``forfeit`` with ``together`` (``True``; absent otherwise) left at the same moment as
the ``forfeit`` before it, in one :meth:`~arena.rules.game.Game.forfeit` call: the seats
share one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.rules.cards import CODES, TOKENS

_NINETY_NINE = CODES["99"]

DEAL = "deal"
PLAY = "play"
FOUR_99 = "four99"
DRAW = "draw"
RESHUFFLE = "reshuffle"
LOSE = "lose"
TOKEN = "token"
OUT = "out"
SCORES = "scores"
ELIMINATE = "eliminate"
FORFEIT = "forfeit"
END = "end"

Event = tuple  # (kind, *fields) as in the table above

_FIELDS: dict[str, tuple[str, ...]] = {
    DEAL: ("round", "dealer", "first", "total"),
    PLAY: ("seat", "card", "total"),
    FOUR_99: ("seat", "total"),
    DRAW: ("seat", "count"),
    RESHUFFLE: ("draw_size",),
    LOSE: ("seat",),
    TOKEN: ("seat", "tokens"),
    OUT: ("seat", "card"),
    SCORES: ("scores",),
    ELIMINATE: ("seat", "hand"),
    FORFEIT: ("seat", "together"),      # together: only when set (True)
    END: ("ranking", "reason"),
}


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of an event, cards as tokens: ``{"kind": "play", "seat": 0, ...}``."""
    kind = event[0]
    out: dict[str, Any] = {"kind": kind}
    for name, value in zip(_FIELDS[kind], event[1:]):
        if name == "card":
            value = None if value is None else TOKENS[value]
        elif name == "hand":
            value = None if value is None else [TOKENS[c] for c in value]
        elif name in ("ranking", "scores"):
            value = [list(g) for g in value] if name == "ranking" else list(value)
        out[name] = value
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event tuple back from :func:`event_to_dict` (cards from tokens)."""
    from arena.rules.cards import CODES

    kind = data["kind"]
    values = []
    for name in _FIELDS[kind]:
        if name == "together":
            if data.get(name):
                values.append(True)
            continue
        value = data[name]
        if name == "card":
            value = None if value is None else CODES[value]
        elif name == "hand":
            value = None if value is None else tuple(CODES[c] for c in value)
        elif name == "ranking":
            value = tuple(tuple(g) for g in value)
        elif name == "scores":
            value = tuple(value)
        values.append(value)
    return (kind, *values)


def cards_played(events: Sequence[Event]) -> list[int]:
    """Every card played in ``events``, in order: the public discard history (four 99s
    played together are four 99s; a card played past the limit counts)."""
    out: list[int] = []
    for e in events:
        kind = e[0]
        if kind == PLAY or (kind == OUT and e[2] is not None):
            out.append(e[2])
        elif kind == FOUR_99:
            out.extend((_NINETY_NINE,) * 4)
    return out


def decisions(events: Sequence[Event]) -> list[tuple]:
    """The decisions in ``events``, in order: ``("play", seat, card)`` (a card played past
    the limit included) and ``("forfeit", seat, ...)`` (the seats that left together, in
    one decision). Replayed on a game with the same cards they reproduce the events
    (:func:`arena.rules.game.replay`)."""
    out: list[tuple] = []
    for e in events:
        kind = e[0]
        if kind == PLAY or (kind == OUT and e[2] is not None):
            out.append((PLAY, e[1], e[2]))
        elif kind == FORFEIT:
            if len(e) > 2 and out and out[-1][0] == FORFEIT:   # together with the one before
                out[-1] = (*out[-1], e[1])
            else:
                out.append((FORFEIT, e[1]))
    return out


def describe_ranking(ranking, names: Sequence[str] | None = None) -> str:
    """``2 > 0=1``: best first, tied seats joined by ``=`` (named when ``names`` is given)."""
    who = (lambda s: names[s]) if names is not None else str
    return " > ".join("=".join(who(s) for s in group) for group in ranking)


def describe_event(event: Event, names: Sequence[str] | None = None) -> str:
    """One human-readable line for a log, e.g. ``seat 2 plays 7 (total 45)``; seats are
    called by ``names`` when given."""
    def who(seat: int) -> str:
        return names[seat] if names is not None else f"seat {seat}"

    kind = event[0]
    if kind == PLAY:
        return f"{who(event[1])} plays {TOKENS[event[2]]} (total {event[3]})"
    if kind == DRAW:
        return f"{who(event[1])} draws {event[2]}"
    if kind == DEAL:
        return (f"round {event[1]}: {who(event[2])} deals, {who(event[3])} acts first "
                f"(total {event[4]})")
    if kind == FOUR_99:
        return f"{who(event[1])} plays four 99s together (total {event[2]})"
    if kind == RESHUFFLE:
        return f"discards reshuffled into a draw pile of {event[1]}"
    if kind == LOSE:
        return f"{who(event[1])} has no playable card and loses"
    if kind == TOKEN:
        return f"{who(event[1])} gives up a token ({event[2]} left)"
    if kind == OUT:
        card = "without playing" if event[2] is None else f"after playing {TOKENS[event[2]]} past the limit"
        return f"{who(event[1])} is out of the round {card}"
    if kind == SCORES:
        return "scores: " + " ".join(str(s) for s in event[1])
    if kind == ELIMINATE:
        shown = "" if event[2] is None else " showing " + " ".join(TOKENS[c] for c in event[2])
        return f"{who(event[1])} is eliminated{shown}"
    if kind == FORFEIT:
        return f"{who(event[1])} forfeits" + (" at the same moment" if len(event) > 2 else "")
    if kind == END:
        return f"game over ({event[2]}): {describe_ranking(event[1], names)}"
    return repr(event)
