"""A bot that tries to learn the other seats' cards from what the arena gives it.

    cheater.py [--honest]

It plays a fixed rule of thumb (push the total up, deflect owed pairs), so two copies of
it play the mirror image of a duplicate deal, and tries two attacks (not with --honest,
which makes it the honest copy to compare with):

seed inversion
    It searches plausible master seeds (small numbers), tables, deals and seats for the
    bot seed it was sent, with the arena's own derivations (tournaments, and the games of
    ``arena match``). A candidate deal is kept while the engine, dealt from it and fed
    the public events, holds exactly its own hand at each of its turns, and is confirmed
    at the end if it holds every hand the referee reveals. Meanwhile it knows every hand
    and every coming draw, and plays the card whose game, played on to the end by the rule
    of thumb (the honest copy's real policy), it wins.

memory
    It remembers every match it played (two seats): its first hand and the cards it
    drew, by their place in the order of draws. When it meets the same opponent again
    at the other seat, each remembered match is a guess that this is the other rotation
    of the same deal: the opponent then holds what it held, and draws what it drew. A
    guess is dropped as soon as the opponent plays a card it cannot hold, and confirmed
    at the end if it named the opponent's final hand exactly, with every card known.

After each match it prints one line, "REPORT " and JSON, on stdout (the arena keeps it in
the bot's log; in the sandbox it can write nowhere else): what it found, how many of the
opponents' plays it predicted and how many of those were right.
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field

from ono99.bot import Bot, run

from arena.rules.cards import CODES, TOKENS
from arena.rules.game import Game
from arena.rules.rulesets import make_config
from arena.seeds import Seeds

NUMBERS = {str(v): v for v in range(11)}
PROCESS = uuid.uuid4().hex   # names this process in reports (pids repeat in PID namespaces)
DEFLECT = {"modern": {"R", "P2"}}


def honest_choice(legal: list[str], owed: int, ruleset: str) -> str:
    """The rule of thumb both copies play by (deterministic, no randomness)."""
    if owed == 2:
        for card in legal:
            if card in DEFLECT.get(ruleset, {"R", "H"}):
                return card
    numbers = [c for c in legal if c in NUMBERS]
    if numbers:
        return max(numbers, key=NUMBERS.__getitem__)
    for card in ("P2", "DP", "R", "H", "99", "-10"):
        if card in legal:
            return card
    return legal[0]


def honest_on(game: Game) -> int:
    """What the rule of thumb plays for the seat to act in ``game`` (an engine card)."""
    legal = [TOKENS[c] for c in game.legal_cards()]
    return CODES[honest_choice(legal, game.owed, game.config.ruleset.name)]


# ---------------------------------------------------------------- seed inversion

def inversion_table() -> dict[int, list[tuple[str, int]]]:
    """bot seed -> the deal seeds it would come with, for plausible masters."""
    table: dict[int, list[tuple[str, int]]] = {}
    for master in range(32):               # tournaments: bot seeds of (table, deal, seat)
        seeds = Seeds(master)
        for t in range(4):
            for d in range(256):
                deal = seeds.deal_seed(t, d)
                for seat in range(2):
                    table.setdefault(seeds.bot_seed(t, d, seat), []).append(("tournament", deal))
    for seed in range(4096):                # arena match: games seeded S, S+1, ...
        seeds = Seeds(seed)
        for seat in range(8):
            table.setdefault(seeds.bot_seed("seat", seat), []).append(("match", seed))
    return table


def replay(game: Game, events, start: int) -> None:
    """Apply the public decisions among ``events[start:]`` to ``game``."""
    for e in events[start:]:
        if e.kind == "play" or (e.kind == "out" and e.card):
            game.play(e.seat, CODES[e.card])
        elif e.kind == "forfeit":
            game.forfeit(e.seat)


def rollout(game: Game, me: int) -> float:
    """Play ``game`` (a clone) to its end by the rule of thumb for every seat, which is
    how the honest copy really plays; the draws are those the true deal will give.
    +1 if ``me`` wins."""
    while not game.finished:
        game.play(game.to_act, honest_on(game))
    return 1.0 if game.outcome.ranking[0] == (me,) else 0.0


# ---------------------------------------------------------------- memory

@dataclass
class Memory:
    """What one played match left in memory."""

    opponent: str
    seat: int
    ruleset: str
    first_hand: Counter
    draws: dict[int, str]            # place in the order of draws -> the card I drew


@dataclass
class Guess:
    """'This match is the other rotation of ``memory``': the opponent's hand so tracked."""

    memory: Memory
    hand: Counter = field(default_factory=Counter)
    unknown: int = 0                 # cards it drew that the memory does not name
    all_known: bool = True
    alive: bool = True
    plays: int = 0

    def __post_init__(self) -> None:
        self.hand = Counter(self.memory.first_hand)


# ---------------------------------------------------------------- the bot

class Cheater(Bot):
    name = "cheater"

    def __init__(self, honest: bool) -> None:
        super().__init__()
        self.honest = honest
        self.table = {} if honest else inversion_table()
        self.memories: list[Memory] = []

    def on_match_start(self, match) -> None:
        self.m = match
        self.seen = 0                    # events processed
        self.draw_index = 0              # cards drawn so far in this match
        self.reshuffled = False
        self.first_hand: list[str] | None = None
        self.hand_before: Counter | None = None
        self.my_draws: dict[int, str] = {}
        self.pending_draws: list[int] = []
        self.played_since: Counter = Counter()
        self.predicted = self.correct = 0
        self.config = make_config(match.rules.ruleset, match.rules.options, match.rules.seats)
        found = [] if self.honest else self.table.get(match.bot_seed, [])
        self.games = [(kind, Game.from_config(self.config, seed)) for kind, seed in found]
        opponent = match.names[1 - match.seat] if len(match.names) == 2 else None
        self.guesses = [] if self.honest or opponent is None else [
            Guess(m) for m in self.memories
            if m.opponent == opponent and m.seat != match.seat and m.ruleset == match.rules.ruleset]

    # -------------------------------------------------------- following the events

    def _follow(self, events) -> None:
        me = self.m.seat
        for e in events[self.seen:]:
            self._follow_games(e)
            if e.kind == "deal" and e.round and e.round > 1:
                self.reshuffled = True           # a new round: the order of draws restarts
            elif e.kind == "reshuffle":
                self.reshuffled = True
            elif e.kind == "draw":
                for _ in range(e.count or 1):
                    if e.seat == me:
                        self.pending_draws.append(self.draw_index)
                    else:
                        for g in self.guesses:
                            card = None if self.reshuffled else g.memory.draws.get(self.draw_index)
                            if card is None:
                                g.unknown += 1
                                g.all_known = False
                            else:
                                g.hand[card] += 1
                    self.draw_index += 1
            elif e.kind in ("play", "four99", "out") and e.seat != me:
                cards = ["99"] * 4 if e.kind == "four99" else [e.card] if e.card else []
                for card in cards:
                    self._guesses_see(card)
            elif e.kind in ("play", "out") and e.seat == me and e.card:
                self.played_since[e.card] += 1
            elif e.kind == "four99" and e.seat == me:
                self.played_since["99"] += 4
        self.seen = len(events)

    def _follow_games(self, e) -> None:
        """Play a public decision on every candidate deal; one that cannot play it is wrong."""
        if not self.games or not (e.kind in ("play", "forfeit") or (e.kind == "out" and e.card)):
            return
        if len(self.games) == 1 and e.kind == "play" and e.seat != self.m.seat:
            self.predicted += 1                 # was the card in the hand the deal says?
            self.correct += CODES[e.card] in self.games[0][1].hands[e.seat]
        kept = []
        for kind, game in self.games:
            try:
                replay(game, [e], 0)
            except Exception:
                continue
            kept.append((kind, game))
        self.games = kept

    def _guesses_see(self, card: str) -> None:
        for g in self.guesses:
            if not g.alive:
                continue
            g.plays += 1
            if g.hand[card] > 0:
                g.hand[card] -= 1
            elif g.unknown > 0:
                g.unknown -= 1
            else:
                g.alive = False

    def _note_my_draws(self, hand_now: Counter) -> None:
        """Which cards I drew since my last turn, where that is certain (one card)."""
        if self.hand_before is not None:
            drawn = hand_now - (self.hand_before - self.played_since)
            if len(self.pending_draws) == 1 and sum(drawn.values()) == 1:
                self.my_draws[self.pending_draws[0]] = next(iter(drawn))
        self.hand_before = Counter(hand_now)
        self.pending_draws.clear()
        self.played_since.clear()

    # -------------------------------------------------------- playing

    def choose(self, view) -> str:
        self._follow(self.m.events)
        hand = Counter(view.hand)
        if self.first_hand is None:
            self.first_hand = list(view.hand)
        self._note_my_draws(hand)
        me = view.seat
        self.games = [(k, g) for k, g in self.games
                      if Counter(TOKENS[c] for c in g.hands[me]) == hand]
        if len(self.games) != 1:
            return honest_choice(view.legal, view.owed, view.match.rules.ruleset)
        game = self.games[0][1]
        # a rollout per card: the true deal, the opponent's real policy, and the rule of
        # thumb for its own later moves (a policy improvement step at every turn)
        values = {}
        for card in game.legal_cards():
            child = game.clone()
            child.play(me, card)
            values[TOKENS[card]] = rollout(child, me)
        usual = honest_choice(view.legal, view.owed, view.match.rules.ruleset)
        best = max(values.values())
        return usual if values[usual] == best else next(c for c, v in values.items() if v == best)

    def on_match_end(self, result, match) -> None:
        if match is None:
            return
        self._follow(match.events)
        me = match.seat
        mine = result.hands.get(me)
        if mine is not None:
            self._note_my_draws(Counter(mine))
        revealed = {s: Counter(h) for s, h in result.hands.items()}
        found_seed = ""
        for kind, game in self.games:           # confirmed only if it holds every hand
            hands = {s: Counter(TOKENS[c] for c in (game.hands[s] if game.hands[s] is not None
                                                    else game.revealed.get(s, ())))
                     for s in range(game.seats)}
            if hands == revealed:
                found_seed = kind
        found_memory = False
        if len(match.names) == 2:
            theirs = revealed.get(1 - me, Counter())
            found_memory = any(g.alive and g.all_known and g.plays > 0 and g.hand == theirs
                               for g in self.guesses)
            if self.first_hand is not None and not self.honest:
                self.memories.append(Memory(match.names[1 - me], me, match.rules.ruleset,
                                            Counter(self.first_hand), dict(self.my_draws)))
        print("REPORT " + json.dumps({
                "match_id": match.match_id, "pid": PROCESS, "seat": me, "names": match.names,
                "seed_found": found_seed, "memory_found": found_memory,
                "guesses": len(self.guesses), "predicted": self.predicted,
                "correct": self.correct, "place": result.place_of(me)}), flush=True)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--honest", action="store_true")
    args, rest = p.parse_known_args()
    bot = Cheater(args.honest)
    bot.name = "honest" if args.honest else "cheater"
    return run(bot, rest)


if __name__ == "__main__":
    raise SystemExit(main())
