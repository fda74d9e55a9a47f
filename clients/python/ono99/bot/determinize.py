"""Determinization: complete games consistent with what one seat knows, to search over.

A bot sees its own hand and the public record; the other hands and the draw pile's order
are hidden. :class:`Determinizer` deals the hidden cards one way they could be: every
other hand gets its public size, the rest is the draw pile, drawn from at random (each
draw picks a random card of it, from the sample's own seed: the same law as a shuffled
pile, without shuffling a hundred cards for every sample), and the result is an engine :class:`~arena.rules.Game` (``Game.from_state``) the bot may play
forward with ``legal_cards``/``play``/``clone``::

    from ono99.bot.determinize import Determinizer

    def choose(self, view):
        det = Determinizer(view)
        for game in det.samples(100, self.random):
            ...   # game.to_act == view.seat; play each legal card forward, score it

The unseen cards are the ruleset's deck minus the seat's hand, minus the discard pile
(cards played since the last deal or reshuffle), minus the hands laid face up. By default
every consistent deal of them is equally likely. ``weight`` (a callable given a
:class:`Candidate`, returning a number in [0, 1]) skews that, e.g. by the opponents'
observed plays: candidates are drawn uniformly and kept with that probability (rejection
sampling), so the samples follow the uniform law times ``weight``.

Known simplification: after a reshuffle the new draw pile is exactly the reshuffled
discards, which a seat could track; the sampler treats every unseen card alike (random
play reshuffles in no 2- or 4-seat modern game in 200 and no 2-seat classic one).

The engine lives in the arena package (``arena.rules``); cards and events are mapped from
the SDK's protobuf messages by the arena's own wire mapping (``arena.referee.wire``).
Both are imported when first needed: the SDK itself does not depend on the arena.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ono99.v1 import game_pb2

if TYPE_CHECKING:
    from arena.rules import Game, GameConfig, SeatView

    from ono99.bot.model import Rules, View

_INSTALL = ("determinization plays the arena's rules engine (arena.rules): install the arena "
            "package too, e.g. `pip install -e .` in the ONO 99 Arena repository")


def _arena() -> Any:
    """The arena modules the determinizer uses, or an ImportError saying how to get them."""
    try:
        from arena import rules
        from arena.referee import wire
        from arena.rules import events, game, views
    except ImportError as exc:  # pragma: no cover - the test environment has the arena
        raise ImportError(_INSTALL) from exc
    return rules, wire, events, game, views


def engine_config(rules: Rules) -> GameConfig:
    """The engine's GameConfig of a match's :class:`~ono99.bot.model.Rules`."""
    wire = _arena()[1]
    return wire.rules_from_wire(game_pb2.Rules(ruleset=rules.ruleset, options=rules.options,
                                               seats=rules.seats, limit=rules.limit))


def engine_view(view: View) -> SeatView:
    """The SDK's :class:`~ono99.bot.model.View` as the engine's ``SeatView`` (cards as
    engine codes, events as engine tuples), through the arena's wire mapping: the one place
    where protobuf messages and engine values meet."""
    wire = _arena()[1]
    events = [wire.event_from_wire(e) for e in view.match._raw]
    return wire.view_from_wire(view._view, view._turn.legal, view._turn.over_limit,
                               engine_config(view.match.rules), events)


@dataclass(frozen=True)
class Candidate:
    """One way the hidden cards could lie, offered to a ``weight`` hook.

    ``hands[s]``: seat s's hand (the observer's own, the sampled ones of the others; None
    for a seat out of the game); ``draw``: the draw pile's cards, in no order (the game
    draws them at random); ``view``: the observer's engine view (its ``events`` are the
    public record to judge by); ``out_of_play``: unseen cards in neither (face-down cards
    of a seat that left during a round; usually none).
    Cards are engine codes (``arena.rules.cards``: ``TOKENS[code]`` is the token).
    """

    hands: tuple[tuple[int, ...] | None, ...]
    draw: tuple[int, ...]
    view: SeatView
    out_of_play: tuple[int, ...] = ()


Weight = Callable[[Candidate], float]


class Determinizer:
    """Samples complete games consistent with one seat's view (see the module's text).

    ``view``: the SDK's View, or an engine ``SeatView``. ``weight``: optional hook (a
    :class:`Candidate` -> probability of keeping it, from 0 to 1: anything else raises
    ValueError); ``max_tries`` candidates are drawn
    per sample at most, after which the best one seen is taken. ``history``: give the
    sampled games the public event record (their views then show it; a search that
    does not read it saves a copy per sample).
    """

    def __init__(self, view: View | SeatView, weight: Weight | None = None,
                 max_tries: int = 100, history: bool = False) -> None:
        rules, _, ev, game_mod, views = _arena()
        if not isinstance(view, views.SeatView):
            view = engine_view(view)
        self.view = view
        self.weight = weight
        self.max_tries = max_tries
        self._Game = game_mod.Game
        config = view.config
        self.config = config
        events = view.events
        me = view.seat
        self.discard = _discard_pile(events, ev)
        if len(self.discard) != view.discard_size:
            raise ValueError(f"the public record puts {len(self.discard)} cards on the discard "
                             f"pile, but the view says {view.discard_size}")
        unseen = Counter(config.ruleset.deck)
        unseen.subtract(view.hand)
        unseen.subtract(self.discard)
        for hand in view.revealed.values():
            unseen.subtract(hand)
        if any(n < 0 for n in unseen.values()):
            raise ValueError("the view shows more copies of a card than the deck holds: "
                             f"{dict((c, -n) for c, n in unseen.items() if n < 0)}")
        #: The cards this seat has not seen, as engine codes (sorted).
        self.unseen: tuple[int, ...] = tuple(sorted(unseen.elements()))
        #: The seats whose hands are hidden, and their sizes.
        self.hidden: dict[int, int] = {s: size for s, size in enumerate(view.hand_sizes)
                                       if s != me and size is not None}
        self.out_of_play = len(self.unseen) - sum(self.hidden.values()) - view.draw_size
        if self.out_of_play < 0:
            raise ValueError(f"{len(self.unseen)} unseen cards cannot fill hidden hands of "
                             f"{sum(self.hidden.values())} and a draw pile of {view.draw_size}")
        if view.to_act is None:
            raise ValueError("the game is over: there is nothing to determinize")
        self._fixed = dict(
            to_act=view.to_act, discard=self.discard, total=view.total,
            direction=view.direction, owed=view.owed,
            played_99=(config.ruleset.ninety_nine != game_mod.SETS_TOTAL
                       and _played_99(events, view.to_act, view.owed, ev)),
            in_round=view.in_round, revealed=view.revealed,
            tokens=view.tokens, scores=view.scores, round=view.round,
            dealer=view.table.dealer, plays=_plays(events, ev),
            left=_left(events, ev), events=events if history else ())

    def candidate(self, rng: random.Random) -> Candidate:
        """A uniformly random deal of the unseen cards (the weight not applied)."""
        # each hidden card drawn from those left (a partial Fisher-Yates: one C call per
        # card dealt); what is left is the draw pile, which the game draws from at random
        cards = list(self.unseen)
        left = len(cards)
        uniform = rng.random

        def deal(size: int) -> tuple[int, ...]:
            nonlocal left
            dealt = []
            for _ in range(size):
                i = int(uniform() * left)
                left -= 1
                dealt.append(cards[i])
                cards[i] = cards[left]
            return tuple(dealt)

        me = self.view.seat
        hands = tuple(None if size is None else tuple(self.view.hand) if s == me else deal(size)
                      for s, size in enumerate(self.view.hand_sizes))
        rest = deal(self.out_of_play) if self.out_of_play else ()
        return Candidate(hands, tuple(cards[:left]), self.view, rest)

    def game(self, candidate: Candidate, seed: int = 0) -> Game:
        """The engine game of a candidate deal: its draws, reshuffles and later rounds are
        drawn at random from ``seed``."""
        return self._Game.from_state(self.config, hands=candidate.hands, draw=candidate.draw,
                                     out_of_play=candidate.out_of_play, seed=seed,
                                     random_draws=True, **self._fixed)

    def consistent(self, game: Game) -> bool:
        """Whether a game built from a candidate still waits for the seat the view says
        acts: a hidden seat to act dealt no playable card (or four 99s, in modern) would
        have lost (or played them) at once, which the public record says it did not."""
        return (game.to_act == self.view.to_act and not game.finished
                and game.plays == self._fixed["plays"])

    def sample(self, rng: random.Random) -> Game:
        """One game consistent with the view, drawn with ``rng``; its seat to act is the
        view's. Candidates the rules rule out (see :meth:`consistent`) are drawn again, and
        with a ``weight``, kept with its probability (up to ``max_tries``, then the
        best seen)."""
        seed = rng.getrandbits(32)
        best, best_w = None, -1.0
        for _ in range(self.max_tries):
            cand = self.candidate(rng)
            w = 1.0 if self.weight is None else self._weigh(cand)
            accept = w >= 1.0 or rng.random() < w
            if not accept and w <= best_w:
                continue                      # rejected, and no better than the best seen
            game = self.game(cand, seed)
            if not self.consistent(game):
                continue
            if accept:
                return game
            best, best_w = game, w
        if best is None:
            raise ValueError(f"no consistent deal found in {self.max_tries} candidates")
        return best

    def _weigh(self, candidate: Candidate) -> float:
        """The weight hook's probability of keeping ``candidate``; ValueError if it is not
        one. Else a negative weight would read as "no consistent deal found" (blaming the
        deal), and NaN, which no comparison accepts, would quietly reject every candidate
        until ``max_tries``."""
        w = self.weight(candidate)
        try:
            ok = 0 <= w <= 1          # False for NaN
        except TypeError:             # not a number at all
            ok = False
        if not ok:
            name = getattr(self.weight, "__qualname__", repr(self.weight))
            raise ValueError(f"the determinizer's weight hook {name} returned {w!r}: it must "
                             f"return the probability of keeping the deal, from 0 to 1")
        return w

    def samples(self, n: int, rng: random.Random) -> Iterator[Game]:
        """``n`` independent samples."""
        for _ in range(n):
            yield self.sample(rng)


# ---------------------------------------------------------------- the public record read

def _discard_pile(events: Sequence[tuple], ev: Any) -> list[int]:
    """The cards on the discard pile: played since the last deal or reshuffle."""
    pile: list[int] = []
    for e in events:
        kind = e[0]
        if kind == ev.DEAL or kind == ev.RESHUFFLE:
            pile = []
        elif kind == ev.PLAY or (kind == ev.OUT and e[2] is not None):
            pile.append(e[2])
        elif kind == ev.FOUR_99:
            pile.extend([_ninety_nine()] * 4)
    return pile


def _ninety_nine() -> int:
    return _arena()[0].CODES["99"]


def _plays(events: Sequence[tuple], ev: Any) -> int:
    """Cards played this round, as ``max_plays`` counts them (four 99s count one)."""
    plays = 0
    for e in events:
        kind = e[0]
        if kind == ev.DEAL:
            plays = 0
        elif kind == ev.PLAY or kind == ev.FOUR_99 or (kind == ev.OUT and e[2] is not None):
            plays += 1
    return plays


def _played_99(events: Sequence[tuple], to_act: int, owed: int, ev: Any) -> bool:
    """Whether the seat to act played a 99 earlier in this turn (the first card of an owed
    pair): the last thing that happened was its play of a 99, then its draw. (The engine
    keeps the flag only where a 99 does not set the total: the caller says so.)"""
    if owed != 1:
        return False
    for e in reversed(events):
        if e[0] == ev.DRAW:
            continue
        return e[0] == ev.PLAY and e[1] == to_act and e[2] == _ninety_nine()
    return False


def _left(events: Sequence[tuple], ev: Any) -> list[tuple[int, ...]]:
    """The seats that left the game, ranked as the outcome will rank them (best first):
    the latest to leave first; seats eliminated together after a scored round (points
    scoring) by score, lower first, equal scores tied; seats that forfeited together
    (``forfeit`` events with ``together``) tied whatever their scores."""
    blocks: list[tuple[list[int], tuple[int, ...]]] = []   # seats, the scores they left with
    scores: tuple[int, ...] = ()
    last: tuple = ()
    together = False
    for e in events:
        kind = e[0]
        if kind == ev.SCORES:
            scores = e[1]
        elif kind == ev.ELIMINATE:
            seat = e[1]
            before = last[0] if last else None
            if before == ev.FORFEIT:
                if len(last) < 3 or not blocks:   # a forfeit alone, or the first of a group
                    blocks.append(([], ()))       # no scores: the group is one tie
                together = False
            elif before == ev.SCORES:
                blocks.append(([], scores))
                together = True
            elif before != ev.ELIMINATE or not together:
                blocks.append(([], scores))
                together = False
            blocks[-1][0].append(seat)
        last = e
    ranking: list[tuple[int, ...]] = []
    for seats, at in reversed(blocks):
        by_score: dict[int, list[int]] = {}
        for seat in sorted(seats, key=lambda s: (at[s] if at else 0, s)):   # as the engine's
            by_score.setdefault(at[seat] if at else 0, []).append(seat)
        ranking.extend(tuple(g) for g in by_score.values())
    return ranking
