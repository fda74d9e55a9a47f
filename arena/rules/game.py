"""The game state of ONO 99 and the one way to change it: :meth:`Game.play`.

A :class:`Game` is pure and deterministic: no I/O, no clock, no global random state.
It is fully determined by its :class:`~arena.rules.rulesets.GameConfig`, its card
source (a seed, or explicit deals and reshuffle orders) and the decisions played.

Everything the rules do on their own happens inside :meth:`Game.play` (and at set-up):
draws and reshuffles, four 99s played together, seats with no playable card losing,
tokens, scores, new rounds, the end. So between calls the game always waits for a
decision of :attr:`Game.to_act`, or is finished.

Hot-path notes: cards are ints, a hand is one int key (each card's count a digit, so a
play and a draw are one addition; the sorted cards are shared tuples, found by the key),
the legal cards of the seat to act are computed once per decision and reused to check
the play, the draw pile of a seeded game is unordered and a draw picks a random card
from it (so a reshuffle is O(1)), and slow-changing public facts live in one shared
:class:`Table` snapshot that views reference instead of copying. Legal cards are looked
up in a table shared by every game with the same rules (:func:`_legal_table`), keyed by
the hand's key and the few facts legality depends on, and the table's row also holds the
hand's cards, which the acting seat's view carries. The turn passes by reading the next
seat from a table (:meth:`Game._order_seats`). ``arena bench engine --rlcard`` measures
it all against RLCard's UNO engine (docs/rules.md "Engine speed").
"""

from __future__ import annotations

import _random
import random
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from arena.rules.cards import (
    MINUS_TEN, NINETY_NINE, NUMBER_BASE, POINTS, REVERSE, TEN, TOKENS,
)
from arena.rules.errors import (
    ConfigError, IllegalPlay, NotInGame, NotInHand, NotYourTurn, ScenarioError,
)
from arena.rules.events import (
    DEAL, DRAW, ELIMINATE, END, FORFEIT, FOUR_99, LOSE, OUT, PLAY, RESHUFFLE, SCORES, TOKEN,
    decisions,
)
from arena.rules.rulesets import (
    FOUR_AT_ONCE, LAST_STANDING, MAX_SEATS, RULESETS, SETS_TOTAL, UNPLAYABLE, GameConfig,
    make_config,
)
from arena.rules.views import SeatView, SpectatorView, Table, new_table

class Termination(StrEnum):
    """Why a game ended (``Outcome.termination``); what logs, the database and the
    protocol carry."""

    LAST_STANDING = "last_standing"   # one seat left in the game
    TARGET_REACHED = "target_reached"  # points scoring decided it
    MAX_PLAYS = "max_plays"           # the play limit made it a draw
    ABORTED = "aborted"               # the referee stopped the match (never the engine)


@dataclass(frozen=True)
class Deal:
    """The cards of one round, for a game with explicit cards (tests, vectors).

    ``hands[s]`` is seat s's hand (``None`` for a seat no longer in the game); ``draw``
    is the draw pile, top card first; ``total`` starts the round at another total.
    """

    hands: Sequence[Sequence[int] | None]
    draw: Sequence[int]
    total: int = 0


def places_of(ranking: Sequence[Sequence[int]], seats: int) -> list[int]:
    """Each seat's place from a ranking (groups of tied seats, best first): 1 = best, tied
    seats share the best place of their group, a seat missing from the ranking gets 0."""
    places = [0] * seats
    place = 1
    for group in ranking:
        for seat in group:
            places[seat] = place
        place += len(group)
    return places


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: the ranking (groups of tied seats, best first) and why."""

    ranking: tuple[tuple[int, ...], ...]
    termination: str
    rounds: int

    def places(self) -> list[int]:
        """Each seat's place, 1 = best; tied seats share the best place of their group."""
        return places_of(self.ranking, sum(len(g) for g in self.ranking))


# A card source (_SeededCards, _ScriptedCards) deals a round as (keys, hand sizes, draw
# pile, total): each seat's hand as its key (_WEIGHT) and its size (both None for a seat
# out of the game) and the pile, fresh lists the game takes over as they are (no Deal, no
# copies: a game's set-up is about a tenth of its cost in random play), the pile kept top
# card last for pop().
_Dealt = tuple[list[int | None], list[int | None], list[int], int]

_new_random = random.Random.__new__            # an unseeded generator
_seed_random = _random.Random.seed             # the C seed under random.Random.seed


class _SeededCards:
    """Cards from a seeded generator: random deals; draws pick a random card of the pile."""

    ordered = False

    def __init__(self, seed: int) -> None:
        if type(seed) is int:
            # what random.Random(seed) does for an int, without its two Python layers
            # (__init__ and seed: a twentieth of a game's set-up)
            rng = self.rng = _new_random(random.Random)
            _seed_random(rng, seed)
            rng.gauss_next = None
        else:
            self.rng = random.Random(seed)

    def deal(self, game: Game) -> _Dealt:
        pile = list(game.config.ruleset.deck)
        n = len(pile)
        getrandbits = self.rng.getrandbits
        keys: list[int | None] = []
        sizes: list[int | None] = []
        for in_game in game.in_game:
            if not in_game:
                keys.append(None)
                sizes.append(None)
                continue
            key = 0
            for _ in range(4):
                # _pick, inlined: a game's set-up is about a tenth of its cost in
                # random play, and these 16-32 calls were a third of the set-up. The
                # pile's size is kept in n: the card picked is replaced by the last of
                # the first n, and the n cards left are cut off once, after the deal.
                # The hand is summed into its key as it is dealt (no list, no _key).
                i = getrandbits(_BITS[n])
                while i >= n:
                    i = getrandbits(_BITS[n])
                n -= 1
                key += _WEIGHT[pile[i]]
                pile[i] = pile[n]
            keys.append(key)
            sizes.append(4)
        del pile[n:]
        return keys, sizes, pile, 0

    def reshuffle(self, discard: list[int]) -> list[int]:
        return discard  # unordered: draws pick at random

    def copy(self) -> _SeededCards:
        """An independent source that goes on drawing what this one would."""
        twin = object.__new__(_SeededCards)
        twin.rng = random.Random.__new__(random.Random)   # unseeded: setstate fills it all
        twin.rng.setstate(self.rng.getstate())
        return twin


class _ScriptedCards:
    """Cards from explicit deals and reshuffle orders (top card first); with ``rng``, once
    those are used up, shuffled ones (a scripted start to an otherwise random game)."""

    ordered = True

    def __init__(self, deals: Sequence[Deal], reshuffles: Sequence[Sequence[int]],
                 rng: random.Random | None = None) -> None:
        self.deals = list(deals)
        self.reshuffles = [list(r) for r in reshuffles]
        self.used_deals = 0
        self.used_reshuffles = 0
        self.rng = rng

    def deal(self, game: Game) -> _Dealt:
        if self.used_deals >= len(self.deals) and self.rng is not None:
            pile = list(game.config.ruleset.deck)
            self.rng.shuffle(pile)
            keys = [None if not game.in_game[s] else _key([pile.pop() for _ in range(4)])
                    for s in range(game.seats)]
            sizes = [None if k is None else 4 for k in keys]
            return keys, sizes, pile, 0    # the pile is kept top card last: pop() draws
        if self.used_deals >= len(self.deals):
            raise ScenarioError(f"round {game.round} needs a deal, but only "
                                f"{len(self.deals)} deal(s) are given")
        deal = self.deals[self.used_deals]
        self.used_deals += 1
        if len(deal.hands) != game.seats:
            raise ScenarioError(f"the deal of round {game.round} has {len(deal.hands)} hands "
                                f"for {game.seats} seats")
        for seat, hand in enumerate(deal.hands):
            if (hand is None) == game.in_game[seat]:
                state = "in the game" if game.in_game[seat] else "out of the game"
                raise ScenarioError(f"the deal of round {game.round} gives seat {seat} "
                                    f"{'no hand' if hand is None else 'a hand'}, but it is {state}")
        if deal.total > game.limit:
            raise ScenarioError(f"the deal of round {game.round} starts at total {deal.total}, "
                                f"above the limit {game.limit}")
        # a hand's key needs at most _MAX_COPIES of a card in a hand (_WEIGHT). A hand
        # keeps its size through a round (a card drawn for each played), and the round's
        # cards are those dealt: so either bound is enough
        longest = max((len(h) for h in deal.hands if h is not None), default=0)
        if longest > _MAX_COPIES:
            copies = Counter(deal.draw)
            for hand in deal.hands:
                copies.update(hand or ())
            card, n = copies.most_common(1)[0]
            if n > _MAX_COPIES:
                raise ScenarioError(
                    f"the deal of round {game.round} has a hand of {longest} cards and "
                    f"{n} copies of {TOKENS[card]}: with hands of more than {_MAX_COPIES} "
                    f"cards, a deal may hold at most {_MAX_COPIES} copies of a card")
        # draw piles are kept top card last, so a draw is a pop()
        return ([None if h is None else _key(h) for h in deal.hands],
                [None if h is None else len(h) for h in deal.hands],
                list(reversed(deal.draw)), deal.total)

    def copy(self) -> _ScriptedCards:
        """An independent source at the same point (the scripts themselves are never changed)."""
        twin = object.__new__(_ScriptedCards)
        twin.deals, twin.reshuffles = self.deals, self.reshuffles
        twin.used_deals, twin.used_reshuffles = self.used_deals, self.used_reshuffles
        twin.rng = None
        if self.rng is not None:
            twin.rng = random.Random.__new__(random.Random)
            twin.rng.setstate(self.rng.getstate())
        return twin

    def reshuffle(self, discard: list[int]) -> list[int]:
        if self.used_reshuffles >= len(self.reshuffles) and self.rng is not None:
            self.rng.shuffle(discard)
            return discard
        if self.used_reshuffles >= len(self.reshuffles):
            raise ScenarioError(f"the draw pile is empty and a reshuffle of "
                                f"{len(discard)} discards needs an order, but only "
                                f"{len(self.reshuffles)} reshuffle order(s) are given")
        order = self.reshuffles[self.used_reshuffles]
        self.used_reshuffles += 1
        if Counter(order) != Counter(discard):
            raise ScenarioError(
                f"reshuffle {self.used_reshuffles} is {' '.join(TOKENS[c] for c in order)}, "
                f"not an order of the discard pile {' '.join(TOKENS[c] for c in discard)}")
        return list(reversed(order))


def _pick(pile: list[int], getrandbits: Any) -> int:
    """Remove and return a uniformly random card of an unordered pile."""
    n = len(pile)
    k = n.bit_length()
    i = getrandbits(k)
    while i >= n:
        i = getrandbits(k)
    card = pile[i]
    pile[i] = pile[-1]
    pile.pop()
    return card


class Game:
    """One game of ONO 99: the full state, the legal cards, :meth:`play`, views, events.

    Make one with :meth:`new` (seeded) or :meth:`from_deals` (explicit cards).
    Attributes are read-only by convention; change the game only with :meth:`play`
    and :meth:`forfeit`.
    """

    __slots__ = (
        "config", "seats", "limit", "max_plays", "_keys", "draw", "discard", "out_of_play",
        "revealed", "total", "direction", "to_act", "owed", "played_99", "in_game",
        "in_round", "tokens", "scores", "round", "dealer", "plays", "finished", "outcome",
        "events", "_cards", "_legal", "_over_limit", "_active", "_out_blocks", "_table",
        "_floor", "_forcing", "_no_opening", "_deflectors", "_ninety_nine", "_on_zero", "_points",
        "_rounds", "_getrandbits", "_legal_table", "_four_99", "_acting_hand",
        "_orders", "_next_seat", "_full", "_hand_sizes",
    )

    def __init__(self, config: GameConfig, cards: _SeededCards | _ScriptedCards,
                 dealer: int | None = None) -> None:
        # (the options read directly, not through GameConfig's properties: this runs once
        # a game, and each property call cost as much as a few of these lines)
        rules = config.ruleset
        options = config.options
        n = config.seats
        self.config = config
        self.seats = n
        self.limit: int = options["max_total"]
        self.max_plays: int = options["max_plays"]
        self._full = self.limit - 10           # up to this total every number card fits
        self._floor = rules.minus_ten_floors_at_zero
        self._forcing = rules.forcing_card
        self._deflectors = rules.deflectors
        # the forcing card may not open an owed pair unless it also deflects (classic DP)
        self._no_opening = -1 if rules.forcing_card in rules.deflectors else rules.forcing_card
        self._ninety_nine = rules.ninety_nine
        self._on_zero = bool(options.get("ninety_nine_on_zero", False))
        self._points = options.get("scoring") == "points"
        self._rounds = rules.ending != LAST_STANDING
        self._use_cards(cards)
        self._legal_table = _legal_table(self.limit, self._ninety_nine, self._on_zero,
                                         self._no_opening)
        # the one hand _settle plays on its own (modern), as a key; None: never
        self._four_99 = 4 * _WEIGHT[NINETY_NINE] if self._ninety_nine == FOUR_AT_ONCE else None

        self._keys: list[int | None] = [None] * n   # each seat's hand as a key (_WEIGHT)
        # each seat's hand size (None: out of the game), for the Table: a hand keeps its
        # size through a round (a card drawn for each played), so this changes only at a
        # deal and an elimination
        self._hand_sizes: list[int | None] = [None] * n
        self.draw: list[int] = []
        self.discard: list[int] = []
        self.out_of_play: list[int] = []       # cards out of play (hands laid face up, or held by seats out of the game)
        self.revealed: dict[int, tuple[int, ...]] = {}
        self.total = 0
        self.direction = 1
        self.to_act: int | None = None
        self.owed = 1
        self.played_99 = False                 # classic ninety_nine_on_zero: one 99 per turn
        self.in_game = [True] * n
        self.in_round = [True] * n
        self.tokens = [options["tokens"] if self._rounds and not self._points else 0] * n
        self.scores = [0] * n
        self.round = 0
        if dealer is None:
            dealer = n - 1
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ConfigError(f"dealer={dealer!r} is not a seat; seats are 0 to {n - 1}")
        self.dealer = dealer
        self.plays = 0                         # cards played this round (four 99s count one)
        self.finished = False
        self.outcome: Outcome | None = None
        self.events: list[tuple] = []
        self._legal: tuple[int, ...] = ()
        self._acting_hand: tuple[int, ...] = ()  # the hand of to_act, found by _settle
        self._over_limit = False
        self._active = n                       # seats in the round (points) or in the game
        self._out_blocks: list[list[tuple[int, ...]]] = []  # seats that left, in order, as ranked groups
        self._table: Table | None = None
        self._orders: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # see _order_seats
        self._next_seat: tuple[int, ...] = ()
        self._start_round(first=True)
        self._settle()

    # ----------------------------------------------------------------- construction

    @classmethod
    def new(cls, ruleset: str = "modern", options: Mapping[str, Any] | None = None,
            seats: int = 4, seed: int = 0) -> Game:
        """A seeded game: the same ruleset, options, seats and seed give the same game."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(f"seed={seed!r} is not allowed; a seed is an integer")
        return cls(make_config(ruleset, options, seats), _SeededCards(seed))

    @classmethod
    def from_config(cls, config: GameConfig, seed: int) -> Game:
        """A seeded game from a checked :class:`GameConfig`."""
        return cls(config, _SeededCards(seed))

    @classmethod
    def from_deals(cls, config: GameConfig, deals: Sequence[Deal],
                   reshuffles: Sequence[Sequence[int]] = (), dealer: int | None = None,
                   then_seed: int | None = None) -> Game:
        """A game with explicit cards: ``deals[k]`` is round k+1's deal; each reshuffle of
        the discards into a new draw pile takes the next order of ``reshuffles`` (top
        first). A missing or inconsistent deal or order raises :class:`ScenarioError`,
        unless ``then_seed`` is given: the game then goes on with rounds and reshuffles
        shuffled from that seed (a scripted situation, then a random game)."""
        rng = None if then_seed is None else random.Random(then_seed)
        return cls(config, _ScriptedCards(deals, reshuffles, rng), dealer)

    @classmethod
    def from_state(cls, config: GameConfig, *, hands: Sequence[Sequence[int] | None],
                   draw: Sequence[int], to_act: int, discard: Sequence[int] = (),
                   total: int = 0, direction: int = 1, owed: int = 1, played_99: bool = False,
                   in_round: Sequence[bool] | None = None,
                   revealed: Mapping[int, Sequence[int]] | None = None,
                   out_of_play: Sequence[int] = (), tokens: Sequence[int] | None = None,
                   scores: Sequence[int] | None = None, round: int = 1,
                   dealer: int | None = None, plays: int = 0,
                   left: Sequence[Sequence[int]] = (), events: Sequence[tuple] = (),
                   seed: int = 0, random_draws: bool = False) -> Game:
        """A game in the middle of play, e.g. one a bot sampled for its search (the hidden
        cards dealt its way): the state of a game waiting for ``to_act``'s decision.

        ``hands[s]`` is seat s's hand, ``None`` for a seat out of the game; ``draw`` is
        the draw pile, top card first; ``discard`` the discard pile (played since the last
        deal or reshuffle); ``revealed`` the hands laid face up by eliminated seats and
        ``out_of_play`` any other cards out of play (a hand that left the game face down
        during a round); ``in_round`` whether each seat is still in the round (points
        scoring; default: the seats in the game); ``owed`` the cards ``to_act`` still owes
        this turn and ``played_99`` whether it already played a 99 this turn (classic
        ``ninety_nine_on_zero``); ``plays`` the cards played this round (``max_plays``);
        ``left`` the seats that left the game as the outcome will rank them below every
        seat still in (groups of tied seats, best first); ``events`` the public record so far (views show it).
        Reshuffles and later rounds are shuffled from ``seed``. With ``random_draws`` the
        draw pile's order is not given but drawn: each draw picks a random card of the
        pile from ``seed``, as a seeded game's do (for a search: the same as a uniformly
        shuffled pile, without shuffling it for every sample). Every card of the deck
        must be in exactly one place: otherwise, or for an inconsistent state,
        :class:`ScenarioError` says what is wrong. The rules then do what they do on their
        own (:meth:`play`'s ``_settle``): a seat with no playable card loses at once.
        """
        n = config.seats
        # a fresh game sets every field the rules derive from the config; the state
        # fields are then replaced, so the constructor stays the one place for the former
        # (a one-card hand each, a -10: playable at any total, so the set-up settles at once)
        game = cls(config, _ScriptedCards([Deal([(MINUS_TEN,)] * n, ())], []), dealer)
        if len(hands) != n:
            raise ScenarioError(f"{len(hands)} hands are given for {n} seats")
        in_game = [h is not None for h in hands]
        in_round = list(in_game) if in_round is None else [bool(x) for x in in_round]
        if len(in_round) != n or any(r and not g for r, g in zip(in_round, in_game)):
            raise ScenarioError(f"in_round={in_round!r} does not fit the seats in the game "
                                f"{in_game!r} (a seat in the round is in the game)")
        if not isinstance(to_act, int) or not 0 <= to_act < n or not in_round[to_act]:
            raise ScenarioError(f"to_act={to_act!r} is not a seat in the round")
        if direction not in (1, -1) or owed not in (1, 2):
            raise ScenarioError(f"direction={direction!r} must be 1 or -1 and owed={owed!r} 1 or 2")
        if total > game.limit:
            raise ScenarioError(f"total {total} is above the limit {game.limit}")
        revealed = {s: tuple(h) for s, h in (revealed or {}).items()}
        if any(in_game[s] for s in revealed):
            raise ScenarioError(f"seats {sorted(revealed)} laid their hands face up but "
                                "are still in the game")
        # every card once: one sort of them all against the sorted deck (a search builds
        # thousands of games; counting them with Counters cost 5x more)
        placed = [*draw, *discard, *out_of_play]
        for hand in hands:
            placed += hand or ()
        for hand in revealed.values():
            placed += hand
        placed.sort()
        if placed != config.ruleset.sorted_deck:
            placed, deck = Counter(placed), Counter(config.ruleset.deck)
            extra, missing = placed - deck, deck - placed
            raise ScenarioError(
                f"the cards do not add up to the {config.ruleset.name} deck: "
                f"{' '.join(TOKENS[c] for c in sorted(extra.elements())) or 'nothing'} too many, "
                f"{' '.join(TOKENS[c] for c in sorted(missing.elements())) or 'nothing'} missing")
        game._keys = [None if h is None else _key(h) for h in hands]
        game._hand_sizes = [None if h is None else len(h) for h in hands]
        game.draw = list(reversed(draw))            # kept top card last: a draw is a pop()
        game.discard = list(discard)
        game.revealed = revealed
        game.out_of_play = list(out_of_play) + [c for h in revealed.values() for c in h]
        game.total = total
        game.direction = direction
        game.to_act = to_act
        game.owed = owed
        game.played_99 = bool(played_99)
        game.in_game = in_game
        game.in_round = in_round
        game._active = sum(in_round)
        game._order_seats()
        if tokens is not None:
            game.tokens = list(tokens)
        if scores is not None:
            game.scores = list(scores)
        game.round = round
        game.dealer = n - 1 if dealer is None else dealer
        game.plays = plays
        game._out_blocks = [[tuple(group) for group in left]] if left else []
        game.events = list(events)
        game._table = None
        game._use_cards(_SeededCards(seed) if random_draws
                        else _ScriptedCards([], [], random.Random(seed)))
        game._settle()
        return game

    def clone(self) -> Game:
        """An independent copy, for search with the engine as a forward model. It draws
        the same cards as the original would, given the same plays (the generator's
        state is copied too): a bot searching over hidden cards should deal them itself
        (:meth:`from_deals`)."""
        # Field by field, not deepcopy (measured 457 us a clone, 20x this): immutable
        # values (config, tuples, the frozen Table and Outcome) are shared, and every
        # container the game changes in place is copied one level deep.
        clone = object.__new__(Game)
        for name in _SHARED:
            object.__setattr__(clone, name, getattr(self, name))
        clone._keys = self._keys[:]
        clone._hand_sizes = self._hand_sizes[:]
        clone.draw = self.draw[:]
        clone.discard = self.discard[:]
        clone.out_of_play = self.out_of_play[:]
        clone.revealed = dict(self.revealed)
        clone.in_game = self.in_game[:]
        clone.in_round = self.in_round[:]
        clone.tokens = self.tokens[:]
        clone.scores = self.scores[:]
        clone.events = self.events[:]
        clone._out_blocks = [block[:] for block in self._out_blocks]
        # with the copy's own generator bound (the original's would draw for it)
        clone._use_cards(self._cards.copy())
        return clone

    def _use_cards(self, cards: _SeededCards | _ScriptedCards) -> None:
        """Take ``cards`` as the game's card source; a seeded one's generator is bound for
        play's inlined draw."""
        self._cards = cards
        self._getrandbits = None if cards.ordered else cards.rng.getrandbits

    def __deepcopy__(self, memo: dict) -> Game:
        clone = self.clone()
        memo[id(self)] = clone
        return clone

    # ----------------------------------------------------------------- queries

    def legal_cards(self) -> tuple[int, ...]:
        """The distinct cards the seat to act may play now (empty once the game is over)."""
        return self._legal

    @property
    def over_limit(self) -> bool:
        """Points scoring: the seat to act has no playable card, so the card it plays goes
        past the limit and takes it out of the round."""
        return self._over_limit

    @property
    def hands(self) -> list[list[int] | None]:
        """Each seat's hand (sorted), ``None`` for a seat out of the game: new lists, so
        changing them changes nothing (change the game only with :meth:`play` and
        :meth:`forfeit`). :meth:`hand` gives one seat's as a shared tuple."""
        return [None if k is None else list(_hand_of(k)) for k in self._keys]

    def hand(self, seat: int) -> tuple[int, ...]:
        """Seat's hand (sorted); empty for a seat out of the game."""
        key = self._keys[seat]
        return () if key is None else _hand_of(key)

    def decisions(self) -> list[tuple]:
        """The decisions so far, in order: ``("play", seat, card)`` and ``("forfeit", seat)``;
        replayed on a game with the same config and seed they reproduce this game."""
        return decisions(self.events)

    def table(self) -> Table:
        """The slow-changing public facts, shared by every view until they change."""
        table = self._table
        if table is None:
            # positional: it is made at every deal and elimination, and nine keyword
            # arguments cost as much again as the rest (measured: 1.1 us against 0.55)
            table = self._table = new_table(
                self.config,
                tuple(self._hand_sizes),
                tuple(self.in_game),
                tuple(self.in_round),
                tuple(self.tokens),
                tuple(self.scores),
                dict(self.revealed),
                self.round,
                self.dealer,
            )
        return table

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now (RULES.md "What each seat may know"), nothing more:
        its own hand, the public state and history, and its legal cards if it acts."""
        # Hot path (the referee builds one per decision). The acting seat's hand tuple was
        # found by _settle with its legal cards, and another seat's is its key's (shared);
        # and the view's slots are filled here, as SeatView.of would, which saves
        # a call with 14 arguments (a quarter of the view's cost). SeatView() has no
        # __init__ to run: cheaper than object.__new__(SeatView).
        view = SeatView()
        view.seat = seat
        if seat == self.to_act:
            view.hand = self._acting_hand
            view.legal = self._legal
            view.over_limit = self._over_limit
        else:
            key = self._keys[seat]
            view.hand = () if key is None else _hand_of(key)
            view.legal = ()
            view.over_limit = False
        view.total = self.total
        view.direction = self.direction
        view.to_act = self.to_act
        view.owed = self.owed
        view.draw_size = len(self.draw)
        view.discard_size = len(self.discard)
        view.table = self._table or self.table()
        view._events = events = self.events
        view._n_events = len(events)
        view.outcome = self.outcome
        return view

    def spectator_view(self) -> SpectatorView:
        """What a spectator may know now: the public state; every hand once the game is over."""
        hands = tuple(self.hand(s) for s in range(self.seats)) if self.finished else None
        return SpectatorView(
            self.total, self.direction, self.to_act, self.owed,
            len(self.draw), len(self.discard),
            self._table or self.table(),
            self.events, len(self.events),
            self.outcome, hands,
        )

    # ----------------------------------------------------------------- the one mutation

    def play(self, seat: int, card: int) -> None:
        """Have ``seat`` play ``card`` (an int code), then everything the rules do on their own.

        Raises :class:`NotYourTurn`, :class:`NotInHand` or :class:`IllegalPlay` (checked
        in that order), leaving the game unchanged.
        """
        # Hot path: one call per decision. Locals instead of repeated attribute loads, the
        # card's effect on the total from a table, the common draw inlined, the event
        # tuples that never vary shared (_DRAW_ONE), and the hand changed as its key (one
        # addition for the card played and the card drawn, read from _SWAP; see _WEIGHT).
        if seat != self.to_act or card not in self._legal or self._over_limit:
            if seat != self.to_act or card not in self._legal:
                self._reject(seat, card)
            self._go_out(seat, card)           # points: a play past the limit
            self._settle()
            return
        self.discard.append(card)
        owed = self.owed
        if card == NINETY_NINE:
            total = self.total
            if self._ninety_nine == SETS_TOTAL:
                total = 99
            else:
                self.played_99 = True
        else:
            total = self.total + _ADDS[card]
            if total < 0 and self._floor:
                total = 0
        self.total = total
        plays = self.plays = self.plays + 1
        # two appends (specialized by the interpreter), not += of a pair: 1.6% fewer
        # instructions a decision
        events = self.events
        events.append((PLAY, seat, card, total))

        # draw one card: a seeded game's common case inlined (a random card of the
        # unordered pile, as _pick); an empty pile (a reshuffle event goes before the
        # draw's) or explicit cards go to _draw_one
        draw = self.draw
        getrandbits = self._getrandbits
        if draw and getrandbits is not None:
            n = len(draw)
            i = getrandbits(_BITS[n])
            while i >= n:
                i = getrandbits(_BITS[n])
            drawn = draw[i]
            draw[i] = draw[n - 1]              # not draw[-1]: a negative index is not specialized
            draw.pop()
        else:
            drawn = self._draw_one()
        events.append(_DRAW_ONE[seat])
        keys = self._keys
        keys[seat] += _SWAP[card][drawn]

        if plays >= self.max_plays:
            self._finish_draw()
            return
        # whose turn, owing what
        if owed == 2 and card not in self._deflectors:
            self.owed = owed = 1               # the second card of the pair
        else:
            # the turn passes, to the next seat read from a table (_order_seats); owed
            # stays as it is (1, or 2 where a deflector passes the pair on) unless the
            # forcing card starts a pair
            if card == REVERSE and self._active > 2:
                self.direction = direction = -self.direction
                self._next_seat = self._orders[direction < 0]
            if card == self._forcing:
                self.owed = owed = 2
            self.played_99 = False
            self.to_act = seat = self._next_seat[seat]

        # _settle's common case, inlined (the same lookup and state packing: keep the two
        # in step): the seat to act has legal cards found in the table. Anything else (a
        # miss, no legal card, four 99s) is left to _settle.
        # (Four 99s need no test here: a 99 alone is never legal in modern, so their row
        # holds no legal card and _settle sees them.)
        # (A plain dict's subscript, which the interpreter specializes, and a miss caught:
        # 1% fewer instructions a decision than a bound get.)
        try:
            row = self._legal_table.rows[keys[seat]]
        except KeyError:
            self._settle()
            return
        full = self._full
        state = 0 if total <= full else (total - full) << 2
        if owed == 2:
            state += 2
        if self._on_zero and not total % 10 and not self.played_99:
            state += 1
        legal = row[state]
        if legal:
            self._acting_hand = row[_HAND]
            self._legal = legal                # _over_limit is False: checked on entry
            return
        self._settle()

    def forfeit(self, seat: int, *more: int) -> None:
        """Remove ``seat`` from the game as if it had lost (in token games outright), e.g.
        when its bot fails. It is ranked by the order it left; play goes on.

        Seats given together (``forfeit(0, 2)``: bots that failed at the same moment, such
        as every bot absent at the start) leave together and share one place, below every
        seat still in; if none is left, they share the first. Each is recorded as a
        ``forfeit`` event, those after the first with ``together`` set."""
        seats = (seat, *more)
        for s in seats:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < self.seats:
                raise NotInGame(f"seat {s!r} cannot forfeit: seats are 0 to {self.seats - 1}", s)
            if self.finished or not self.in_game[s]:
                raise NotInGame(f"seat {s} cannot forfeit: "
                                f"{'the game is over' if self.finished else 'it is out of the game'}", s)
        if len(set(seats)) < len(seats):
            raise NotInGame(f"seats {list(seats)} cannot forfeit: a seat is given twice", seat)
        was_to_act = self.to_act in seats
        was_in_round = any(self.in_round[s] for s in seats)
        for s in seats:
            self.events.append((FORFEIT, s) if s == seat else (FORFEIT, s, True))
            self._eliminate(s, reveal=not self._rounds, block=False)
        self._out_blocks.append([tuple(sorted(seats))])
        if not self._end_if_one_left():
            if self._rounds and not self._points:
                self._start_round()
            elif self._points and was_in_round and self._active <= 1:
                self._end_points_round()
            elif was_to_act:
                self._pass_turn(self.to_act)
        self._settle()

    # ----------------------------------------------------------------- rules at work

    def _settle(self) -> None:
        """Do what the rules do on their own until the seat to act has a choice, or the end."""
        # Hot path: play inlines this loop's common case (keep the two in step). The legal
        # cards are looked up by the hand's key and a small int that holds everything else
        # they depend on (see _legal_table); only a miss computes them (_compute_legal).
        # The row's hand tuple is kept for the seat's view.
        while not self.finished:
            seat = self.to_act
            key = self._keys[seat]
            if key == self._four_99:
                self._play_four(seat)
                continue
            total = self.total
            # the room under the limit, as 0 where every number card fits (a total up to
            # _full, 10 below the limit), up to 40 for no room; a total over the limit
            # (which the rules never allow) gives an index past the row's end: an
            # IndexError, never a wrong answer
            full = self._full
            state = 0 if total <= full else (total - full) << 2
            if self.owed == 2:
                state += 2                     # the forcing card may not open the pair
            if self._on_zero and not total % 10 and not self.played_99:
                state += 1                     # a 99 may be played on this total
            row = self._legal_table.rows.get(key)
            if row is None:
                row = _new_row(self._legal_table, key)
            hand = self._acting_hand = row[_HAND]
            legal = row[state]
            if legal is None:
                legal = self._compute_legal(hand)
                # one tuple for all entries with the same cards: the table's entries grow
                # with the (hand, state) pairs play visits, its distinct answers do not
                legal = row[state] = self._legal_table.answers.setdefault(legal, legal)
            if legal:
                self._legal = legal
                self._over_limit = False
                return
            self._legal = ()
            if self._points:
                allowed = tuple(dict.fromkeys(c for c in hand if self._after(c) is not None))
                if allowed:
                    self._legal = allowed
                    self._over_limit = True
                    return
                self._go_out(seat, None)
            else:
                self._lose(seat)

    def _compute_legal(self, hand: Sequence[int]) -> tuple[int, ...]:
        """The distinct legal cards of ``hand`` (sorted) now, in hand order (a 99 last),
        limit and owed pair included; what _settle's table holds."""
        # the number cards that keep the total within the limit are a prefix of the
        # sorted hand, after the cards that add nothing or subtract
        total = self.total
        bound = NUMBER_BASE + self.limit - total
        legal = list(hand[:bisect_right(hand, bound if bound < TEN else TEN)])
        if hand and hand[-1] == NINETY_NINE:
            after = self._ninety_nine_total(total)
            if after is not None and after <= self.limit:
                legal.append(NINETY_NINE)
        if self.owed == 2 and self._no_opening in legal:
            legal = [c for c in legal if c != self._no_opening]
        return tuple(dict.fromkeys(legal))

    def _ninety_nine_total(self, total: int) -> int | None:
        """The total after a 99 now, or None if a 99 may not be played (limit aside)."""
        rule = self._ninety_nine
        if rule == SETS_TOTAL:
            return 99
        if rule == UNPLAYABLE and self._on_zero and total % 10 == 0 and not self.played_99:
            return total
        return None

    def _after(self, card: int) -> int | None:
        """The total after ``card``, or None if the rules forbid it now, limit aside."""
        total = self.total
        if card == NINETY_NINE:
            return self._ninety_nine_total(total)
        if card >= NUMBER_BASE:
            return total + card - NUMBER_BASE
        if card == MINUS_TEN:
            return max(0, total - 10) if self._floor else total - 10
        if card == self._no_opening and self.owed == 2:
            return None
        return total

    def _order_seats(self) -> None:
        """After a change of the seats in the round: the next seat still playing after
        each seat (in the round or not), clockwise and counter-clockwise, for play's
        turn passing (one tuple read instead of arithmetic and a loop). The pair for each
        set of seats in the round is made once in a process (_ORDERS)."""
        key = tuple(self.in_round)
        orders = _ORDERS.get(key)
        if orders is None:
            n = len(key)
            orders = []
            for step in (1, -1):
                after = []
                for seat in range(n):
                    nxt = (seat + step) % n
                    for _ in range(n):
                        if key[nxt]:
                            break
                        nxt = (nxt + step) % n
                    after.append(nxt)
                orders.append(tuple(after))
            orders = _ORDERS[key] = (orders[0], orders[1])
        self._orders = orders
        self._next_seat = orders[self.direction < 0]

    def _pass_turn(self, seat: int) -> None:
        """The turn passes to the next seat owing nothing (after a loss or a forfeit)."""
        self.to_act = self._next_seat[seat]
        self.owed = 1
        self.played_99 = False

    def _reshuffle(self) -> list[int]:
        discard = self.discard
        if not discard:
            raise ScenarioError("a card must be drawn but the draw and discard piles are empty")
        self.draw = draw = self._cards.reshuffle(discard)
        self.discard = []
        self.events.append((RESHUFFLE, len(draw)))
        return draw

    def _draw_one(self) -> int:
        """Take one card from the draw pile (reshuffled first if empty)."""
        draw = self.draw or self._reshuffle()
        if self._getrandbits is None:
            return draw.pop()
        return _pick(draw, self._getrandbits)

    def _draw(self, seat: int, count: int) -> None:
        for _ in range(count):
            if not self.draw:
                self._reshuffle()
            if self._getrandbits is None:
                self._keys[seat] += _WEIGHT[self.draw.pop()]
            else:
                self._keys[seat] += _WEIGHT[_pick(self.draw, self._getrandbits)]
        self.events.append((DRAW, seat, count))

    def _play_four(self, seat: int) -> None:
        """modern: a hand of four 99s is played together (+0), then four cards are drawn."""
        self.discard.extend(_hand_of(self._keys[seat]))
        self._keys[seat] = 0
        self.plays += 1
        self.events.append((FOUR_99, seat, self.total))
        self._draw(seat, 4)
        if self.plays >= self.max_plays:
            self._finish_draw()
        elif self.owed == 2:
            self.owed = 1                      # it does not deflect: one card still owed
        else:
            self._pass_turn(seat)

    def _lose(self, seat: int) -> None:
        """The seat to act has no playable card (not in points scoring)."""
        self.events.append((LOSE, seat))
        if not self._rounds:
            self._eliminate(seat, reveal=True)
            if not self._end_if_one_left():
                self._pass_turn(seat)
            return
        if self.tokens[seat] > 0:
            self.tokens[seat] -= 1
            self._table = None
            self.events.append((TOKEN, seat, self.tokens[seat]))
        else:
            self._eliminate(seat, reveal=False)
        if not self._end_if_one_left():
            self._start_round()

    def _go_out(self, seat: int, card: int | None) -> None:
        """Points scoring: the seat leaves the round, after playing ``card`` past the limit
        (the total keeps its value) and drawing back, or without playing."""
        if card is not None:
            self._keys[seat] -= _WEIGHT[card]
            self.discard.append(card)
            self.plays += 1
        self.events.append((OUT, seat, card))
        if card is not None:
            self._draw(seat, 1)
            if self.plays >= self.max_plays:
                self._finish_draw()
                return
        self.in_round[seat] = False
        self._active -= 1
        self._order_seats()
        self._table = None
        if self._active == 1:
            self._end_points_round()
        else:
            self._pass_turn(seat)

    def _end_points_round(self) -> None:
        """Points scoring: score every seat in the game; then eliminations, the end, or a new round."""
        opts = self.config.options
        target = opts["points_target"]
        for s in range(self.seats):
            if self.in_game[s]:
                self.scores[s] += (sum(POINTS[c] for c in _hand_of(self._keys[s]))
                                   + (0 if self.in_round[s] else 25))
        self._table = None
        self.events.append((SCORES, tuple(self.scores)))
        alive = [s for s in range(self.seats) if self.in_game[s]]
        reached = [s for s in alive if self.scores[s] >= target]
        if opts["points_mode"] == "lowest":
            if reached:
                ranking = self._by_score(alive) + self._left_ranking()
                self._finish(tuple(ranking), Termination.TARGET_REACHED)
                return
        elif reached:
            for s in reached:
                self._eliminate(s, reveal=False, block=False)
            self._out_blocks.append(self._by_score(reached))
            if len(reached) == len(alive):
                self._finish(tuple(self._left_ranking()), Termination.TARGET_REACHED)
                return
            if self._end_if_one_left():
                return
        self._start_round()

    def _by_score(self, seats: Iterable[int]) -> list[tuple[int, ...]]:
        """Seats grouped by score, lowest first; equal scores share a group."""
        groups: dict[int, list[int]] = {}
        for s in sorted(seats, key=lambda s: self.scores[s]):
            groups.setdefault(self.scores[s], []).append(s)
        return [tuple(g) for g in groups.values()]

    def _eliminate(self, seat: int, reveal: bool, block: bool = True) -> None:
        """Take ``seat`` out of the game; its hand is laid face up when ``reveal``."""
        hand = _hand_of(self._keys[seat])
        self._keys[seat] = None
        self._hand_sizes[seat] = None
        self.out_of_play.extend(hand)
        if reveal:
            self.revealed[seat] = tuple(hand)
        self.in_game[seat] = False
        if self.in_round[seat]:
            self.in_round[seat] = False
            self._active -= 1
            self._order_seats()
        if block:
            self._out_blocks.append([(seat,)])
        self._table = None
        self.events.append((ELIMINATE, seat, tuple(hand) if reveal else None))

    def _left_ranking(self) -> list[tuple[int, ...]]:
        """The seats that left the game, latest first."""
        return [group for blk in reversed(self._out_blocks) for group in blk]

    def _end_if_one_left(self) -> bool:
        if self.in_game.count(True) > 1:       # the common answer, without building a list
            return False
        alive = [s for s in range(self.seats) if self.in_game[s]]
        self._finish(tuple([tuple(alive)] + self._left_ranking()) if alive
                     else tuple(self._left_ranking()), Termination.LAST_STANDING)
        return True

    def _finish_draw(self) -> None:
        """The play limit is reached: the seats still in the game share the best place."""
        alive = tuple(s for s in range(self.seats) if self.in_game[s])
        self._finish(tuple([alive] + self._left_ranking()), Termination.MAX_PLAYS)

    def _finish(self, ranking: tuple[tuple[int, ...], ...], termination: str) -> None:
        self.finished = True
        self.to_act = None
        # nobody owes anything once the game is over: a pair owed by a seat that lost dies
        # with it (RULES.md), and a pair a forcing card made owed goes with the turn (owed
        # 2 was left when the seat that lost owed a pair, at 2 seats or the last two)
        self.owed = 1
        self.played_99 = False
        self._legal = ()
        self._over_limit = False
        self.outcome = Outcome(ranking, termination, self.round)
        self._table = None
        self.events.append((END, ranking, termination))

    def _start_round(self, first: bool = False) -> None:
        """Gather, deal to every seat still in the game, and pick the first seat to act."""
        self.round += 1
        if not first:
            d = (self.dealer + 1) % self.seats
            while not self.in_game[d]:
                d = (d + 1) % self.seats
            self.dealer = d
        # what a deal that fails (ScenarioError) leaves
        self._keys = [None] * self.seats
        self._hand_sizes = [None] * self.seats
        self.draw = []
        self.discard = []
        if self._rounds:
            self.out_of_play = []
        self._keys, self._hand_sizes, self.draw, self.total = self._cards.deal(self)
        self.direction = 1
        self.owed = 1
        self.played_99 = False
        self.plays = 0
        self.in_round = list(self.in_game)
        self._active = sum(self.in_game)
        self._order_seats()
        self._table = None
        # the dealer's left among the seats in (clockwise: the direction was just reset)
        first_seat = self.to_act = self._next_seat[self.dealer]
        self.events.append((DEAL, self.round, self.dealer, first_seat, self.total))

    # ----------------------------------------------------------------- errors

    def _reject(self, seat: int, card: int) -> None:
        """Raise the error that explains why ``seat`` may not play ``card`` now."""
        name = TOKENS[card] if isinstance(card, int) and 0 <= card < len(TOKENS) else repr(card)
        if self.finished:
            raise NotYourTurn(f"seat {seat} cannot play {name}: the game is over", seat, card)
        if seat != self.to_act:
            raise NotYourTurn(f"seat {seat} cannot play {name}: it is seat {self.to_act}'s turn",
                              seat, card)
        hand = _hand_of(self._keys[seat])
        if card not in hand:
            raise NotInHand(f"seat {seat} does not hold {name}; its hand is "
                            f"{' '.join(TOKENS[c] for c in hand)}", seat, card)
        raise IllegalPlay(f"seat {seat} cannot play {name}: {self._why_illegal(card)}", seat, card)

    def _why_illegal(self, card: int) -> str:
        rules = self.config.ruleset.name
        total, limit = self.total, self.limit
        if card == NINETY_NINE:
            if self._ninety_nine == FOUR_AT_ONCE:
                return (f"in {rules} a 99 is never played alone; four 99s are played together, "
                        "and the referee does that on its own")
            if self._ninety_nine == UNPLAYABLE:
                if not self._on_zero:
                    return f"in {rules} a 99 is unplayable (option ninety_nine_on_zero is off)"
                if self.played_99:
                    return "only one 99 may be played per turn"
                if total % 10:
                    return f"a 99 is playable only on a total ending in 0, and the total is {total}"
            if self._ninety_nine == SETS_TOTAL and 99 > limit:
                return f"a 99 sets the total to 99, over the limit of {limit} ({rules})"
        if card == self._no_opening and self.owed == 2:
            return f"a {TOKENS[card]} may not be the first card of an owed pair"
        after = self._after(card)
        if after is not None and after > limit:
            return (f"the total is {total} and {TOKENS[card]} would make it {after}, "
                    f"over the limit of {limit} ({rules})")
        return "the rules do not allow it now"  # pragma: no cover - every case is named above


#: The bits to draw for a random index below n, by n up to the largest deck:
#: n.bit_length() as a lookup (a method call costs more)
_BITS = tuple(n.bit_length() for n in range(max(len(r.deck) for r in RULESETS.values()) + 1))

#: What each card adds to the total (the 99 aside: it is handled on its own).
_ADDS = tuple(-10 if c == MINUS_TEN else c - NUMBER_BASE if NUMBER_BASE <= c <= TEN else 0
              for c in range(NINETY_NINE + 1))

#: A hand is kept as one int, its key: the sum of _WEIGHT[c] over its cards, so that each
#: card code's count is one digit of the key in base _BASE. Playing a card and drawing one
#: is then one addition, where a sorted list took a remove and an insort, and the key is
#: what the legal-cards table is read by, where a tuple of the hand was made and hashed at
#: every decision. A key is exact while no hand holds more than _BASE - 1 copies of a card:
#: a deck holds at most 10 (from_state checks the deck), and a scripted deal is checked
#: (_ScriptedCards.deal).
_BASE = 11
_WEIGHT = tuple(_BASE ** c for c in range(NINETY_NINE + 1))
_MAX_COPIES = _BASE - 1

#: _SWAP[card][drawn]: the change of a hand's key when it plays card and draws drawn
#: (_WEIGHT[drawn] - _WEIGHT[card]), made once: the weights are two-digit ints, so a
#: subtraction at every play cost a slow-path long operation and an allocation.
_SWAP = tuple(tuple(w - _WEIGHT[card] for w in _WEIGHT) for card in range(NINETY_NINE + 1))
assert all(n <= _MAX_COPIES for r in RULESETS.values() for n in Counter(r.deck).values())

#: key -> the hand's cards, sorted; bounded as the legal-cards tables are.
_HANDS: dict[int, tuple[int, ...]] = {}


def _key(cards: Iterable[int]) -> int:
    """The key of a hand (see _WEIGHT)."""
    # a loop: for a 4-card hand, half the time of sum() over a generator or a map
    key = 0
    for card in cards:
        key += _WEIGHT[card]
    return key


def _hand_of(key: int) -> tuple[int, ...]:
    """The cards of a hand's key, sorted (one tuple per key, shared)."""
    hand = _HANDS.get(key)
    if hand is None:
        cards: list[int] = []
        rest = key
        for code in range(NINETY_NINE + 1):
            rest, count = divmod(rest, _BASE)
            cards += (code,) * count
        if len(_HANDS) >= _LEGAL_TABLE_HANDS:
            _HANDS.clear()
        hand = _HANDS[key] = tuple(cards)
    return hand


#: The ("draw", seat, 1) event of each seat, made once: events are immutable, so shared.
_DRAW_ONE = tuple((DRAW, s, 1) for s in range(MAX_SEATS))

#: in_round (as a tuple) -> the next seat in the round after each seat, clockwise and
#: counter-clockwise (see Game._order_seats): at most 2**n patterns at n seats.
_ORDERS: dict[tuple[bool, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}


class _LegalTable:
    """``rows``, a hand's key -> [legal cards by state] + [the hand]: a memo shared by
    games and their clones, not part of any game's state. So it is never copied, compares
    by identity, and pickles as a reference to the receiving process's own table for the
    same rules: what it holds changes no result, only how soon one is found. (``rows`` is
    a plain dict, not this class's base: the interpreter specializes a plain dict's
    subscript.)"""

    __slots__ = ("facts", "rows", "answers")

    def __init__(self, facts: tuple) -> None:
        self.facts = facts                     # _legal_table's arguments
        self.rows: dict[int, list[tuple[int, ...] | None]] = {}
        #: each distinct legal-cards tuple once, shared by every entry that holds it
        self.answers: dict[tuple[int, ...], tuple[int, ...]] = {}

    def __copy__(self) -> _LegalTable:
        return self

    def __deepcopy__(self, memo: dict) -> _LegalTable:
        return self

    def __reduce__(self) -> tuple:
        return _legal_table, self.facts


#: Legal-cards tables, one per set of rules facts legality depends on (see _legal_table).
#: Games in several threads may share one: an entry is a pure function of its key, so a
#: race can only compute the same entry twice.
_LEGAL_TABLES: dict[tuple, _LegalTable] = {}

#: Hands a table holds before it is emptied: 4-card hands are 4,845 multisets, and
#: random play visits about 3,000, with (hand, state) pairs still filling in slowly (50,000
#: after 100,000 2-seat games) but only about 1,500 distinct answers, which the entries
#: share (``answers``); the bound only keeps scripted games with odd hand sizes from
#: growing it without end.
_LEGAL_TABLE_HANDS = 16_384


def _legal_table(limit: int, ninety_nine: str, on_zero: bool, no_opening: int) -> _LegalTable:
    """The legal-cards table shared by every game whose legality follows the same facts:
    a hand's key -> a row of legal cards by state (None: not computed yet), then the
    hand. Given the rules, the legal cards depend only on the hand, on the room left
    under the limit (capped at 10, the highest number card), on whether an owed pair is
    being opened, and (99 on a total ending in 0) on whether a 99 may be played on this
    total; ``state`` packs those three into one int, 0 to 43 (see _settle). Legality is
    computed once per (hand, state) in a process instead of once per decision."""
    key = (limit, ninety_nine, on_zero, no_opening)
    table = _LEGAL_TABLES.get(key)
    if table is None:
        table = _LEGAL_TABLES[key] = _LegalTable(key)
    return table


#: A row's index of its hand (the sorted cards), after the 44 states' legal cards.
_HAND = 44


def _new_row(table: _LegalTable, key: int) -> list[tuple[int, ...] | None]:
    """A new row of ``table`` for the hand ``key``: no legal cards computed yet, and the
    hand's cards (the table emptied first if full)."""
    rows = table.rows
    if len(rows) >= _LEGAL_TABLE_HANDS:
        rows.clear()
        table.answers.clear()
    row = rows[key] = [None] * _HAND
    row.append(_hand_of(key))
    return row


def replay(config: GameConfig, seed: int, decisions: Iterable[tuple]) -> Game:
    """Replay ``decisions`` (as :meth:`Game.decisions` gives them) on a seeded game."""
    game = Game.from_config(config, seed)
    for decision in decisions:
        if decision[0] == PLAY:
            game.play(decision[1], decision[2])
        elif decision[0] == FORFEIT:
            game.forfeit(*decision[1:])
        else:
            raise ValueError(f"not a decision: {decision!r} (a decision is ({PLAY!r}, seat, card) "
                             f"or ({FORFEIT!r}, seat, ...), as Game.decisions gives them)")
    return game


#: Game fields a clone shares with its original: values never changed in place.
_SHARED = tuple(n for n in Game.__slots__ if n not in {
    "_keys", "draw", "discard", "out_of_play", "revealed", "in_game", "in_round", "tokens",
    "scores", "events", "_out_blocks", "_cards", "_getrandbits", "_hand_sizes"})
