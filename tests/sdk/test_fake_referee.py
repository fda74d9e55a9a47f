"""The sample bots and the SDK's driver, unit-tested through ``ono99.bot.testing.FakeReferee``:
real protobuf messages through the same Driver as the gRPC client, no server."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import random
import re
import warnings
from pathlib import Path

import pytest
from ono99.bot import Bot, Match, MatchResult
from ono99.bot.model import CARD_VALUES, token_of
from ono99.bot.driver import ChoiceError, Driver
from ono99.bot.testing import FakeReferee
from ono99.v1 import game_pb2, referee_pb2

ROOT = Path(__file__).resolve().parents[2]

MODERN_TOKENS = ["-10", "R", "P2", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "99"]
MODERN_DECK = {"0": 8, **{str(v): 6 for v in range(1, 10)}, "10": 10, "99": 10, "R": 10,
               "-10": 10, "P2": 10}


def load_sample(name: str):
    """The module of bots/<name>/bot.py (the sample bots are scripts, not packages)."""
    path = ROOT / "bots" / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"sample_bot_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def random_bot():
    return load_sample("random").RandomBot


@pytest.fixture(scope="module")
def greedy():
    return load_sample("greedy")


@pytest.fixture(scope="module")
def counter_bot():
    return load_sample("counter").CounterBot


def random_turns(n: int, seed: int = 0) -> list[tuple[list[str], list[str], int]]:
    """``n`` (hand, legal, total) triples: four cards, a non-empty distinct legal subset."""
    rng = random.Random(seed)
    turns = []
    for _ in range(n):
        hand = sorted(rng.choices(MODERN_TOKENS, k=4), key=MODERN_TOKENS.index)
        distinct = sorted(set(hand), key=MODERN_TOKENS.index)
        legal = rng.sample(distinct, rng.randint(1, len(distinct)))
        turns.append((hand, sorted(legal, key=MODERN_TOKENS.index), rng.randint(0, 98)))
    return turns


def send_events(ref: FakeReferee, *events: game_pb2.Event) -> None:
    """Send raw protobuf events in an Events message, through the bot's driver."""
    assert not list(ref.driver.handle(referee_pb2.RefereeMessage(
        events=referee_pb2.Events(match_id=ref.match_id, events=events))))


def play_turns(bot: Bot, turns, bot_seed: int = 1, **ref_kw) -> list[str]:
    ref = FakeReferee(bot, bot_seed=bot_seed, **ref_kw)
    return [ref.turn(hand=h, legal=legal, total=t) for h, legal, t in turns]


# ---------------------------------------------------------------- random


def test_random_plays_only_legal_cards_and_uses_them_all(random_bot):
    turns = random_turns(400)
    choices = play_turns(random_bot(), turns)
    for (_, legal, _), card in zip(turns, choices):
        assert card in legal
    # uniform over the legal cards: with four legal cards, each is chosen sometimes
    four = [card for (_, legal, _), card in zip(turns, choices) if len(legal) == 4]
    wide = [legal for (_, legal, _) in turns if len(legal) == 4]
    assert wide, "the generator should produce some four-card legal sets"
    positions = {legal.index(card) for legal, card in zip(wide, four)}
    assert positions == {0, 1, 2, 3}


def test_random_is_reproducible_from_the_bot_seed(random_bot):
    turns = random_turns(200, seed=3)
    first = play_turns(random_bot(), turns, bot_seed=42)
    random.seed(999)  # the global generator must not matter
    second = play_turns(random_bot(), turns, bot_seed=42)
    assert first == second
    assert play_turns(random_bot(), turns, bot_seed=43) != first


def test_random_is_reseeded_at_every_match_start(random_bot):
    bot = random_bot()
    turns = random_turns(100, seed=5)
    first = play_turns(bot, turns, bot_seed=7)
    # the same instance, a new match with the same seed: its generator starts over
    assert play_turns(bot, turns, bot_seed=7) == first


# ---------------------------------------------------------------- greedy


@pytest.mark.parametrize("ruleset, legal, expected", [
    ("modern", ["-10", "R", "2", "9"], "R"),
    ("modern", ["-10", "P2", "2", "9"], "P2"),
    ("modern", ["R", "P2", "0"], "R"),
    ("classic", ["-10", "R", "2"], "R"),
    ("classic", ["-10", "H", "2"], "H"),
    ("classic-set99", ["H", "2", "99"], "H"),
])
def test_greedy_deflects_when_it_owes_two(greedy, ruleset, legal, expected):
    ref = FakeReferee(greedy.GreedyBot(), ruleset=ruleset)
    assert ref.turn(hand=legal + ["10"] * (4 - len(legal)), legal=legal, total=60, owed=2) == expected


def test_greedy_does_not_take_a_classic_forcing_card_for_a_deflector(greedy):
    # P2 deflects in modern only; in classic it is not even a card, DP never deflects
    ref = FakeReferee(greedy.GreedyBot(), ruleset="classic")
    assert ref.turn(hand=["DP", "3", "7", "10"], legal=["DP", "3", "7"], total=60, owed=2) == "3"


@pytest.mark.parametrize("ruleset, hand, legal, total, expected", [
    ("modern", ["-10", "5", "8", "R"], None, 40, "-10"),          # 30
    ("modern", ["0", "7", "R", "P2"], None, 50, "0"),             # 50
    ("modern", ["-10", "0", "3", "9"], None, 5, "-10"),           # floors at 0 (0 also gives 5)
    ("modern", ["3", "8", "9", "99"], ["3", "8"], 80, "3"),        # 83
    ("classic", ["-10", "2", "H", "10"], None, 5, "-10"),         # -5 in classic
    ("classic-set99", ["99", "5", "10", "H"], None, 80, "5"),     # a 99 would set 99
    ("classic-set99", ["99", "9", "10", "10"], ["99", "9"], 85, "9"),
])
def test_greedy_plays_the_card_giving_the_lowest_total(greedy, ruleset, hand, legal, total, expected):
    ref = FakeReferee(greedy.GreedyBot(), ruleset=ruleset)
    assert ref.turn(hand=hand, legal=legal, total=total, owed=1) == expected


@pytest.mark.parametrize("ruleset, hand, expected", [
    ("modern", ["R", "P2", "9", "10"], "9"),       # R and P2 would keep the total at 50
    ("modern", ["P2", "P2", "R", "10"], "10"),
    ("classic", ["R", "H", "DP", "10"], "10"),     # DP is kept too: it forces a pair
])
def test_greedy_keeps_deflectors_when_it_has_another_card(greedy, ruleset, hand, expected):
    ref = FakeReferee(greedy.GreedyBot(), ruleset=ruleset)
    assert ref.turn(hand=hand, total=50, owed=1) == expected


def test_greedy_with_only_special_cards_plays_one_of_them(greedy):
    ref = FakeReferee(greedy.GreedyBot())
    # R before P2: the forcing card is the more useful one to keep
    assert ref.turn(hand=["P2", "R", "99", "99"], legal=["R", "P2"], total=90) == "R"


def test_greedy_with_epsilon_one_plays_random_legal_cards(greedy):
    hand, legal = ["0", "5", "9", "R"], ["0", "5", "9", "R"]   # plain greedy always plays 0
    turns = [(hand, legal, 50)] * 200
    assert set(play_turns(greedy.GreedyBot(), turns)) == {"0"}
    choices = play_turns(greedy.GreedyBot(epsilon=1.0), turns, bot_seed=11)
    assert set(choices) == set(legal)
    assert play_turns(greedy.GreedyBot(epsilon=1.0), turns, bot_seed=11) == choices
    # only legal cards, even when the hand holds others
    few = play_turns(greedy.GreedyBot(epsilon=1.0), [(hand, ["5", "9"], 50)] * 50)
    assert set(few) == {"5", "9"}


def test_greedy_takes_epsilon_from_the_command_line_or_the_environment(greedy, monkeypatch):
    started = []
    monkeypatch.setattr(greedy, "run", lambda bot, argv: started.append((bot, argv)) or 0)
    assert greedy.main(["--epsilon", "1.0", "--referee", "unix:/x", "--token", "t"]) == 0
    bot, argv = started[-1]
    assert bot.epsilon == 1.0
    assert argv == ["--referee", "unix:/x", "--token", "t"]   # the rest goes to run()
    monkeypatch.setenv("ONO99_EPSILON", "0.25")
    greedy.main([])
    assert started[-1][0].epsilon == 0.25


# ---------------------------------------------------------------- counter


def test_counter_deflects_when_it_owes_two(counter_bot):
    ref = FakeReferee(counter_bot(), seats=3)
    assert ref.turn(hand=["5", "P2", "9", "10"], total=90, owed=2, legal=["5", "P2"]) == "P2"
    ref = FakeReferee(counter_bot(), seats=3, ruleset="classic")
    assert ref.turn(hand=["2", "H", "9", "10"], total=50, owed=2) == "H"


def play_all_but(keep: dict[str, int], ref: FakeReferee, hand: list[str]) -> None:
    """Queue public plays of every modern card except ``keep`` copies and ``hand``: what is
    left unseen is exactly ``keep``. Seat 1 plays them; the totals do not matter."""
    counts = dict(MODERN_DECK)
    for card in hand:
        counts[card] -= 1
    for card, n in counts.items():
        for _ in range(n - keep.get(card, 0)):
            ref.event("play", seat=1, card=card, total=0)


HAND = ["-10", "1", "2", "5"]   # at total 90: 80, 91, 92, 95
HIGH = {"5": 5, "6": 6, "7": 6, "8": 6, "9": 6, "10": 10, "99": 10}   # every 5 and up


def test_counter_plays_to_leave_the_next_seat_stuck(counter_bot, greedy):
    ref = FakeReferee(counter_bot(), seats=2)
    # unseen: only 5s and up. After the 5 (total 95) no unseen card is playable (3 at
    # most), so the next seat is surely stuck; after the 1 or the 2 it holds a playable
    # 5, 6 or 7 more often than not; after the -10, almost surely
    play_all_but(HIGH, ref, HAND)
    assert ref.turn(hand=HAND, total=90) == "5"
    assert FakeReferee(greedy.GreedyBot()).turn(hand=HAND, total=90) == "-10"


def test_counter_keeps_the_total_low_when_nobody_can_be_stuck(counter_bot):
    ref = FakeReferee(counter_bot(), seats=2)
    # unseen: only 0s, Rs and P2s, playable on any total: no card can make the next seat
    # stuck, so it plays the lowest total, saving the -10
    play_all_but({"0": 8, "R": 10, "P2": 10}, ref, HAND)
    assert ref.turn(hand=HAND, total=90) == "1"


def test_counter_forgets_the_discards_at_a_reshuffle(counter_bot):
    ref = FakeReferee(counter_bot(), seats=2)
    play_all_but({"0": 8, "R": 10, "P2": 10}, ref, HAND)
    ref.flush()
    # the discards go back into the draw pile: the whole deck is unseen again, and the
    # highest total is the riskiest for the next seat
    send_events(ref, game_pb2.Event(reshuffled=game_pb2.Reshuffled(draw_size=90)))
    assert ref.turn(hand=HAND, total=90) == "5"


def turn_with_revealed(ref: FakeReferee, hand, total, revealed: dict[int, list[str]]) -> str:
    """A TurnRequest whose view shows hands laid face up (FakeReferee.turn cannot)."""
    ref.turn_id += 1
    seats = [game_pb2.SeatState(hand_size=0 if s in revealed else 4, in_game=s not in revealed,
                                in_round=s not in revealed,
                                revealed=[CARD_VALUES[c] for c in revealed.get(s, ())])
             for s in range(ref.seats)]
    turn = referee_pb2.TurnRequest(
        match_id=ref.match_id, turn_id=ref.turn_id, legal=[CARD_VALUES[c] for c in hand],
        view=game_pb2.SeatView(seat=ref.seat, hand=[CARD_VALUES[c] for c in hand], total=total,
                               direction=1, to_act=ref.seat, owed=1, draw_size=20, seats=seats),
        move_ms=1000, bank_ms=1000)
    (answer,) = ref.driver.handle(referee_pb2.RefereeMessage(turn=turn))
    return token_of(answer.action.card)


@pytest.mark.parametrize("count_revealed, expected", [(True, "2"), (False, "5")])
def test_counter_counts_hands_laid_face_up(counter_bot, count_revealed, expected):
    ref = FakeReferee(counter_bot(), seats=3)
    # unseen by the history: 6s and up, a -10 and a 0. Seat 2's revealed hand holds the
    # -10, the 0 and two 6s; counted, nothing playable on 92 (6 at most) is left unseen,
    # so the 2 is as sure as the 5 and keeps the total lower. With no revealed hand in
    # the view, those four count as unseen: two 6s are safe after the 2, and the 5 is
    # the better bet.
    revealed = ["-10", "0", "6", "6"]
    play_all_but({"-10": 1, "0": 1, "6": 2, "7": 6, "8": 6, "9": 6, "10": 10, "99": 10}, ref, HAND)
    ref.flush()
    assert turn_with_revealed(ref, HAND, 90, {2: revealed} if count_revealed else {}) == expected


# ---------------------------------------------------------------- driver and FakeReferee


class Recorder(Bot):
    """Chooses a fixed card (or the first legal one) and records every hook call."""

    name = "recorder"

    def __init__(self, card: str | None = None) -> None:
        super().__init__()
        self.card = card
        self.calls: list[tuple] = []
        self.views = []

    def choose(self, view):
        self.views.append(view)
        return self.card or view.legal[0]

    def on_match_start(self, match):
        self.calls.append(("start", match))

    def on_event(self, event, match):
        self.calls.append(("event", event, list(match.events)))

    def on_match_end(self, result, match):
        self.calls.append(("end", result, match))


def test_on_rejected_by_default_retries_legal_cards_not_yet_tried():
    ref = FakeReferee(Recorder("9"))
    assert ref.turn(hand=["R", "5", "9", "10"], legal=["R", "5", "9"], total=80) == "9"
    assert ref.reject("no") == "R"
    assert ref.reject("no") == "5"
    assert ref.reject("no") is None          # every legal card tried: it waits
    assert [m.action.turn_id for m in ref.sent] == [ref.turn_id] * 3
    # the next turn starts with a fresh list of tried cards
    assert ref.turn(hand=["R", "5", "9", "10"], legal=["R", "9"]) == "9"
    assert ref.reject("no") == "R"


class Async(Bot):
    async def choose(self, view):
        return view.legal[0]


@pytest.mark.parametrize("bot, message", [
    (Recorder(7), "choose() must return one of view.legal (a string such as '3'), "
                  "it returned 7 (int)"),
    (Recorder("eleven"), "choose() must return one of view.legal (a string such as '3'), "
                         "it returned 'eleven', which is not a card token"),
    (Recorder(b"3"), "choose() must return one of view.legal (a string such as '3'), "
                     "it returned b'3' (bytes)"),
    (Async(), "choose() must not be async: it returned a coroutine; define it with def, "
              "not async def, and return a card token"),
])
def test_a_choice_that_is_not_a_card_token_fails_the_bot_and_sends_nothing(bot, message):
    """As an exception raised in choose would: no malformed action for the referee to
    refuse (and count against the bot), while the bot's log says nothing useful."""
    ref = FakeReferee(bot)
    with warnings.catch_warnings():
        warnings.simplefilter("error")         # no "coroutine never awaited" either
        with pytest.raises(ChoiceError) as failure:
            ref.turn(hand=["3", "4", "5", "6"])
    assert str(failure.value) == message
    assert ref.sent == []


def test_none_from_choose_is_an_error_too():
    class Nothing(Bot):
        def choose(self, view):
            return None

    with pytest.raises(ChoiceError, match=r"it returned None \(NoneType\)"):
        FakeReferee(Nothing()).turn(hand=["3", "4"])


def test_on_rejected_is_held_to_the_same_rule():
    class Counting(Recorder):
        def on_rejected(self, view, reason, tried):
            return len(tried)

    ref = FakeReferee(Counting("5"))
    assert ref.turn(hand=["3", "4", "5", "6"]) == "5"
    with pytest.raises(ChoiceError, match=r"^on_rejected\(\) must return .* it returned 1 \(int\)"):
        ref.reject("no")
    assert len(ref.sent) == 1


@pytest.mark.parametrize("code, retried", [
    (referee_pb2.ERROR_CODE_NOT_IN_HAND, True),
    (referee_pb2.ERROR_CODE_ILLEGAL_PLAY, True),
    (referee_pb2.ERROR_CODE_MALFORMED, True),
    (referee_pb2.ERROR_CODE_STALE_TURN, False),
    (referee_pb2.ERROR_CODE_NOT_YOUR_TURN, False),
    (referee_pb2.ERROR_CODE_UNSPECIFIED, False),
    (42, False),   # a code newer than this SDK
])
def test_only_a_refusal_of_the_card_is_answered_with_another_card(code, retried):
    """Every refusal counts against the bot: after one of the turn (over, or not its own)
    any card is refused alike, and sending another wasted one more (they were resent)."""
    ref = FakeReferee(Recorder("5"))
    ref.turn(hand=["3", "4", "5", "6"])
    sent = len(ref.sent)
    assert (ref.reject("refused", code) is not None) is retried
    assert len(ref.sent) == sent + retried


def test_a_rejection_of_another_turn_is_ignored():
    """Of a code that, for the open turn, is answered with another card (above): only the
    turn id tells the two apart."""
    ref = FakeReferee(Recorder("5"))
    ref.turn(hand=["3", "4", "5", "6"])
    answers = list(ref.driver.handle(referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
        turn_id=ref.turn_id + 100, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="old"))))
    assert answers == []
    assert ref.reject("refused", referee_pb2.ERROR_CODE_ILLEGAL_PLAY) is not None   # this turn's


def test_a_bot_may_override_on_rejected():
    class Stubborn(Recorder):
        def on_rejected(self, view, reason, tried):
            self.calls.append(("rejected", reason, set(tried), view.turn_id))
            return None

    bot = Stubborn("9")
    ref = FakeReferee(bot)
    ref.turn(hand=["5", "9", "10", "10"], legal=["5", "9"])
    assert ref.reject("too high") is None
    assert bot.calls[-1] == ("rejected", "too high", {"9"}, ref.turn_id)


@pytest.mark.parametrize("ruleset, options, limit", [
    ("modern", {}, 98), ("classic", {}, 99), ("modern", {"max_total": "99"}, 99),
    ("classic-set99", {"max_total": "98"}, 98),
])
def test_the_limit_is_the_rules_own_a_house_rule_s_too(ruleset, options, limit):
    """The fake referee announced 98 for modern and 99 for the others whatever the
    options: a table with ``max_total`` was told the wrong limit (the thirty-first
    review); the limit is now the engine's."""
    bot = Recorder()
    FakeReferee(bot, ruleset=ruleset, options=options)
    assert bot.calls[0][1].rules.limit == limit


def test_hooks_get_the_match_its_events_and_the_result():
    bot = Recorder()
    ref = FakeReferee(bot, seats=3, seat=1, ruleset="classic", options={"scoring": "tokens"},
                      bot_seed=77, match_id="m-9", move_ms=250, bank_ms=3000)
    kind, match = bot.calls[0]
    assert kind == "start" and isinstance(match, Match)
    assert (match.match_id, match.seat, match.names) == ("m-9", 1, ["seat0", "seat1", "seat2"])
    assert (match.rules.ruleset, match.rules.seats, match.rules.limit) == ("classic", 3, 99)
    assert match.rules.options == {"scoring": "tokens"}
    assert (match.move_ms, match.bank_ms, match.bot_seed) == (250, 3000, 77)
    assert match.events == []

    ref.event("deal", round=1, dealer=0, first=1)
    ref.event("play", seat=0, card="7", total=7)
    ref.flush()                                 # an Events message
    ref.event("draw", seat=0)
    ref.turn(hand=["2", "H", "9", "10"], total=7)  # events inside the TurnRequest
    events = [c for c in bot.calls if c[0] == "event"]
    assert [e[1].kind for e in events] == ["deal", "play", "draw"]
    # each hook call finds its event already appended to match.events, in its place
    assert all(seen[i] == event for i, (_, event, seen) in enumerate(events))
    assert match.events == [e[1] for e in events]
    play = events[1][1]
    assert (play.seat, play.card, play.total) == (0, "7", 7)
    assert bot.views[-1].match is match

    ref.event("lose", seat=2)
    ref.end(ranking=[[1], [0, 2]], termination="last_standing")
    assert bot.calls[-2][1].kind == "lose"        # the match end's events come first
    kind, result, ended = bot.calls[-1]
    assert kind == "end" and isinstance(result, MatchResult)
    assert ended is match and len(ended.events) == 4
    assert (result.match_id, result.ranking, result.termination) == (
        "m-9", ((1,), (0, 2)), "last_standing")
    assert ref.driver.matches == {}


def test_the_view_exposes_the_turn():
    bot = Recorder()
    ref = FakeReferee(bot, seats=4, seat=2, move_ms=300, bank_ms=2000)
    ref.turn(hand=["-10", "R", "7", "99"], legal=["-10", "R", "7"], total=88, direction=-1,
             owed=2, hand_sizes=[4, 0, 4, 3], in_game=[True, False, True, True], draw_size=12)
    view = bot.views[-1]
    assert (view.seat, view.turn_id, view.total, view.direction, view.owed) == (2, 1, 88, -1, 2)
    assert view.hand == ["-10", "R", "7", "99"] and view.legal == ["-10", "R", "7"]
    assert (view.move_ms, view.bank_ms, view.draw_size, view.limit) == (300, 2000, 12, 98)
    assert [s.hand_size for s in view.seats] == [4, 0, 4, 3]
    assert [s.in_game for s in view.seats] == [True, False, True, True]
    # counter-clockwise from 2: seat 1 is out, so seat 0; from 0, seat 3
    assert view.next_seat() == 0 and view.next_seat(0) == 3


def test_played_lists_the_public_discards_including_four_99s():
    bot = Recorder()
    ref = FakeReferee(bot, seats=2)
    ref.event("deal", round=1, dealer=1, first=0)
    ref.event("play", seat=0, card="7", total=7)
    ref.event("draw", seat=0)
    ref.flush()
    send_events(ref,  # events FakeReferee.event has no builder for
                game_pb2.Event(four_ninety_nines=game_pb2.FourNinetyNines(seat=1, total=7)),
                game_pb2.Event(cards_drawn=game_pb2.CardsDrawn(seat=1, count=4)),
                game_pb2.Event(card_played=game_pb2.CardPlayed(
                    seat=0, card=game_pb2.CARD_PLAY_TWO, total=7)))
    match = ref.driver.matches[ref.match_id]
    assert match.played() == ["7", "99", "99", "99", "99", "P2"]
    # a new round: played(this_round=True) starts again at the deal
    ref.event("deal", round=2, dealer=0, first=1)
    ref.event("play", seat=1, card="10", total=10)
    ref.flush()
    assert match.played(this_round=True) == ["10"]
    assert match.played() == ["7", "99", "99", "99", "99", "P2", "10"]


@pytest.mark.parametrize("ranking, places", [
    ([[2], [0, 1], [3]], {2: 1, 0: 2, 1: 2, 3: 4}),
    ([[0], [1]], {0: 1, 1: 2}),
    ([[0, 1, 2]], {0: 1, 1: 1, 2: 1}),
])
def test_match_result_place_of(ranking, places):
    bot = Recorder()
    ref = FakeReferee(bot, seats=len(places))
    ref.end(ranking=ranking)
    result = bot.calls[-1][1]
    assert {seat: result.place_of(seat) for seat in places} == places


# ---------------------------------------------------------------- reconnection


class Watcher(Bot):
    """Records its hooks and the match's events as it sees them at each turn."""

    def __init__(self) -> None:
        super().__init__()
        self.starts, self.seen, self.at_turn = 0, [], []

    def on_match_start(self, match):
        self.starts += 1

    def on_event(self, event, match):
        self.seen.append(event)

    def choose(self, view):
        self.at_turn.append(list(view.match.events))
        return view.legal[0]


@pytest.mark.parametrize("replayed_in", ["turn", "events"])
def test_after_a_reconnection_the_match_goes_on_with_each_event_once(replayed_in):
    """The referee sends the match start and every event again; the bot keeps its match."""
    bot = Watcher()
    ref = FakeReferee(bot)
    ref.event("deal")
    ref.event("play", seat=1, card="5", total=5)
    assert ref.turn(hand=["7", "8"]) == "7"
    ref.event("play", seat=0, card="7", total=12)
    ref.event("play", seat=1, card="2", total=14)
    ref.reconnect()
    if replayed_in == "events":
        ref.flush()
    ref.event("draw", seat=1)
    assert ref.turn(hand=["8", "9"]) == "8"
    assert bot.starts == 1
    assert len(bot.seen) == 5 == len(bot.at_turn[-1])
    assert bot.at_turn[-1][:2] == bot.at_turn[0]
    assert [e.kind for e in bot.seen] == ["deal", "play", "play", "play", "draw"]


def test_a_new_process_after_a_reconnection_learns_the_whole_match():
    """A bot that restarted knows nothing: the replayed match start is new to it."""
    ref = FakeReferee(Watcher())
    ref.event("deal")
    ref.event("play", seat=1, card="5", total=5)
    ref.turn(hand=["7"])
    fresh = Watcher()
    ref.driver = Driver(fresh)
    ref.reconnect()
    ref.turn(hand=["8"])
    assert fresh.starts == 1 and len(fresh.seen) == 2


def test_counter_does_not_count_a_modern_hand_of_four_99s_as_stuck(counter_bot):
    """Modern: four 99s are played together (and four cards drawn): not stuck (it was
    counted stuck: no 99 is playable alone). In classic a hand of 99s is stuck."""
    ref = FakeReferee(counter_bot(), seats=2)
    play_all_but({"99": 10}, ref, HAND)
    assert ref.turn(hand=HAND, total=90) == "1"
    assert counter_bot.stuck_chance({"99": 10}, 10, 0, 4, modern=True) == 0.0
    assert counter_bot.stuck_chance({"99": 10}, 10, 0, 4, modern=False) == 1.0
    assert counter_bot.stuck_chance({"99": 3, "5": 7}, 10, 0, 4, modern=True) == 1.0


def test_the_fake_referee_sets_revealed_hands_tokens_and_scores():
    seen = {}

    class Looker(Bot):
        def choose(self, view):
            seen.update(revealed=[s.revealed for s in view.seats],
                        tokens=[s.tokens for s in view.seats],
                        scores=[s.score for s in view.seats],
                        in_round=[s.in_round for s in view.seats])
            return view.legal[0]

    ref = FakeReferee(Looker(), seats=3, ruleset="classic")
    ref.turn(hand=["2", "3"], in_game=[True, True, False], in_round=[True, False, False],
             revealed={2: ["99", "H"]}, tokens=[3, 1, 0], scores=[10, 25, 0])
    assert [list(r) for r in seen["revealed"]] == [[], [], ["99", "H"]]
    assert seen["tokens"] == [3, 1, 0] and seen["scores"] == [10, 25, 0]
    assert seen["in_round"] == [True, False, False]


def test_the_piles_default_to_what_the_events_imply_or_take_what_they_are_given():
    bot = Recorder()
    ref = FakeReferee(bot, seats=2)
    ref.turn(hand=["1", "2", "3"])                    # nothing played: 112 - 3 - 4 to draw
    assert (bot.views[-1].discard_size, bot.views[-1].draw_size) == (0, 105)
    assert [s.hand_size for s in bot.views[-1].seats] == [3, 4]
    ref.event("play", seat=1, card="7", total=7)
    ref.flush()
    ref.event("play", seat=1, card="8", total=15)
    ref.turn(hand=["1", "2", "3", "4"])               # both plays, sent apart, count
    assert (bot.views[-1].discard_size, bot.views[-1].draw_size) == (2, 102)
    ref.turn(hand=["1", "2", "3", "4"], discard_size=30, draw_size=9)
    assert (bot.views[-1].discard_size, bot.views[-1].draw_size) == (30, 9)


@pytest.mark.parametrize("name, method", [
    ("FakeReferee", FakeReferee.__init__), ("turn", FakeReferee.turn),
    ("reject", FakeReferee.reject), ("end", FakeReferee.end)])
def test_the_docs_give_each_fake_referee_signature_whole(name, method):
    """docs/bots.md's "Testing with FakeReferee" lists every parameter, with its default."""
    text = (ROOT / "docs" / "bots.md").read_text()
    section = text[text.index("## Testing with `FakeReferee`"):]
    shown = re.search(rf"`{name}\(([^`]*)\)`", section).group(1)
    args = ast.parse(f"def f({' '.join(shown.split())}): pass").body[0].args
    documented = dict.fromkeys(a.arg for a in args.args)
    for arg, default in zip(args.args[::-1], args.defaults[::-1]):
        documented[arg.arg] = eval(ast.unparse(default), vars(referee_pb2))
    actual = {p.name: None if p.default is p.empty else p.default
              for p in list(inspect.signature(method).parameters.values())[1:]}
    assert documented == actual
