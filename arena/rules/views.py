"""What a seat, or a spectator, may know: RULES.md "What each seat may know".

:meth:`Game.view <arena.rules.game.Game.view>` is the only function that builds a
seat's view, and the referee sends a seat nothing else. A view is an immutable snapshot:
it holds the seat's own hand, the fast-changing public state (total, direction, who
acts and what is owed, pile sizes), a shared :class:`Table` of slow-changing public
facts, and the public event record up to the moment it was built (shared with the
game, not copied: the view remembers its length).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.rules.events import cards_played

if TYPE_CHECKING:
    from arena.rules.game import Outcome
    from arena.rules.rulesets import GameConfig


@dataclass(frozen=True)
class Table:
    """Public facts that change only at eliminations, tokens, scores and new rounds."""

    config: GameConfig
    hand_sizes: tuple[int | None, ...]   # None for a seat out of the game
    in_game: tuple[bool, ...]
    in_round: tuple[bool, ...]           # points scoring: still in this round
    tokens: tuple[int, ...]
    scores: tuple[int, ...]
    revealed: Mapping[int, tuple[int, ...]]  # hands laid face up by eliminated seats
    round: int
    dealer: int


def new_table(config: GameConfig, hand_sizes: tuple[int | None, ...], in_game: tuple[bool, ...],
              in_round: tuple[bool, ...], tokens: tuple[int, ...], scores: tuple[int, ...],
              revealed: Mapping[int, tuple[int, ...]], round: int, dealer: int) -> Table:
    """The same :class:`Table` as ``Table(...)`` with these fields, made about 10x faster.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the
    engine makes a Table every round and at every token and elimination, where that cost
    showed in the profile (about 3% of a decision in modern play). Filling the instance
    dict directly makes an object equal to, and printed as, the one ``__init__`` makes.
    """
    table = _new(Table)
    fields = table.__dict__
    fields["config"] = config
    fields["hand_sizes"] = hand_sizes
    fields["in_game"] = in_game
    fields["in_round"] = in_round
    fields["tokens"] = tokens
    fields["scores"] = scores
    fields["revealed"] = revealed
    fields["round"] = round
    fields["dealer"] = dealer
    return table


_new = object.__new__


class _PublicView:
    """The public part shared by seat and spectator views."""

    __slots__ = ("total", "direction", "to_act", "owed", "draw_size", "discard_size",
                 "table", "_events", "_n_events", "outcome")

    total: int
    direction: int
    to_act: int | None
    owed: int
    draw_size: int
    discard_size: int
    table: Table
    outcome: Outcome | None

    @property
    def config(self) -> GameConfig:
        """The ruleset, options and seat count of the game."""
        return self.table.config

    @property
    def seats(self) -> int:
        """Number of seats at the table."""
        return self.table.config.seats

    @property
    def limit(self) -> int:
        """The highest total a play may reach."""
        return self.table.config.limit

    @property
    def hand_sizes(self) -> tuple[int | None, ...]:
        """Cards in each seat's hand (None for a seat out of the game)."""
        return self.table.hand_sizes

    @property
    def in_game(self) -> tuple[bool, ...]:
        """Whether each seat is still in the game."""
        return self.table.in_game

    @property
    def in_round(self) -> tuple[bool, ...]:
        """Whether each seat is still in the round (differs from in_game in points scoring)."""
        return self.table.in_round

    @property
    def tokens(self) -> tuple[int, ...]:
        """Tokens each seat holds (token scoring)."""
        return self.table.tokens

    @property
    def scores(self) -> tuple[int, ...]:
        """Each seat's score (points scoring)."""
        return self.table.scores

    @property
    def revealed(self) -> Mapping[int, tuple[int, ...]]:
        """Hands laid face up by eliminated seats."""
        return self.table.revealed

    @property
    def round(self) -> int:
        """The round number, from 1."""
        return self.table.round

    @property
    def finished(self) -> bool:
        """Whether the game is over."""
        return self.outcome is not None

    @property
    def events(self) -> tuple[tuple, ...]:
        """The public event record up to this view (see :mod:`arena.rules.events`)."""
        return tuple(self._events[:self._n_events])

    @property
    def n_events(self) -> int:
        """How many events this view covers."""
        return self._n_events

    @property
    def played(self) -> list[int]:
        """Every card played so far in the game, in order (the public discard history)."""
        return cards_played(self._events[:self._n_events])


class SeatView(_PublicView):
    """What one seat may know now: its hand, its legal cards when it acts, the public state.

    Made by :meth:`Game.view <arena.rules.game.Game.view>`, or from its fields with
    :meth:`of`. It has no ``__init__`` of its own: the engine makes one per decision as
    ``SeatView()`` and fills its slots, and calling the class with nothing to initialize
    costs a quarter less than ``object.__new__(SeatView)`` (1.6% of a decision).
    """

    __slots__ = ("seat", "hand", "legal", "over_limit")

    @classmethod
    def of(cls, seat: int, hand: tuple[int, ...], legal: tuple[int, ...],
           over_limit: bool, total: int, direction: int, to_act: int | None, owed: int,
           draw_size: int, discard_size: int, table: Table, events: list, n_events: int,
           outcome: Outcome | None) -> SeatView:
        """A view with these fields (``events[:n_events]`` is the record it covers)."""
        view = cls()
        view.seat = seat
        view.hand = hand
        view.legal = legal
        view.over_limit = over_limit
        view.total = total
        view.direction = direction
        view.to_act = to_act
        view.owed = owed
        view.draw_size = draw_size
        view.discard_size = discard_size
        view.table = table
        view._events = events
        view._n_events = n_events
        view.outcome = outcome
        return view

    def __repr__(self) -> str:
        from arena.rules.cards import TOKENS
        return (f"SeatView(seat={self.seat}, hand=[{' '.join(TOKENS[c] for c in self.hand)}], "
                f"total={self.total}, to_act={self.to_act}, owed={self.owed})")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of everything in the view, cards as tokens."""
        return _public_dict(self) | {
            "seat": self.seat,
            "hand": _tokens(self.hand),
            "legal": _tokens(self.legal),
            "over_limit": self.over_limit,
        }


class SpectatorView(_PublicView):
    """What a spectator may know: the public state; every hand once the game is over."""

    __slots__ = ("hands",)

    def __init__(self, total: int, direction: int, to_act: int | None, owed: int,
                 draw_size: int, discard_size: int, table: Table, events: list, n_events: int,
                 outcome: Outcome | None, hands: tuple[tuple[int, ...], ...] | None) -> None:
        self.total = total
        self.direction = direction
        self.to_act = to_act
        self.owed = owed
        self.draw_size = draw_size
        self.discard_size = discard_size
        self.table = table
        self._events = events
        self._n_events = n_events
        self.outcome = outcome
        self.hands = hands

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of everything in the view, cards as tokens."""
        return _public_dict(self) | {
            "hands": None if self.hands is None else [_tokens(h) for h in self.hands],
        }


def _tokens(cards: tuple[int, ...]) -> list[str]:
    from arena.rules.cards import TOKENS
    return [TOKENS[c] for c in cards]


def _public_dict(view: _PublicView) -> dict[str, Any]:
    from arena.rules.events import event_to_dict
    t = view.table
    return {
        "ruleset": t.config.ruleset.name,
        "options": dict(t.config.options),
        "seats": t.config.seats,
        "total": view.total,
        "direction": view.direction,
        "to_act": view.to_act,
        "owed": view.owed,
        "draw_size": view.draw_size,
        "discard_size": view.discard_size,
        "hand_sizes": list(t.hand_sizes),
        "in_game": list(t.in_game),
        "in_round": list(t.in_round),
        "tokens": list(t.tokens),
        "scores": list(t.scores),
        "revealed": {str(s): _tokens(h) for s, h in t.revealed.items()},
        "round": t.round,
        "dealer": t.dealer,
        "events": [event_to_dict(e) for e in view.events],
    }
