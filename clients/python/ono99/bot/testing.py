"""A scripted fake referee, to unit-test a bot without a server.

    from ono99.bot.testing import FakeReferee

    ref = FakeReferee(MyBot(), seats=3)
    ref.event("play", seat=2, card="7", total=40)
    card = ref.turn(hand=["5", "P2", "9", "R"], legal=["5", "P2", "R"], total=40)
    assert card == "P2"
    ref.end(ranking=[[0], [2], [1]])

It drives the bot through the same :class:`~ono99.bot.driver.Driver` as the real
client, with real protobuf messages; only the network is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ono99.bot.base import Bot
from ono99.bot.driver import Driver
from ono99.bot.model import CARD_VALUES, Match
from ono99.v1 import game_pb2, referee_pb2

_EVENT_BUILDERS = {
    "play": lambda f: game_pb2.Event(card_played=game_pb2.CardPlayed(
        seat=f["seat"], card=CARD_VALUES[f["card"]], total=f.get("total", 0))),
    "draw": lambda f: game_pb2.Event(cards_drawn=game_pb2.CardsDrawn(
        seat=f["seat"], count=f.get("count", 1))),
    "deal": lambda f: game_pb2.Event(round_started=game_pb2.RoundStarted(
        round=f.get("round", 1), dealer=f.get("dealer", 0), first=f.get("first", 1),
        total=f.get("total", 0))),
    "eliminate": lambda f: game_pb2.Event(seat_eliminated=game_pb2.SeatEliminated(
        seat=f["seat"], hand=[CARD_VALUES[c] for c in f.get("hand", ())])),
    "lose": lambda f: game_pb2.Event(seat_lost=game_pb2.SeatLost(seat=f["seat"])),
}


class FakeReferee:
    """Plays the referee's part of one match with a bot, message by message."""

    def __init__(self, bot: Bot, seats: int = 2, seat: int = 0, ruleset: str = "modern",
                 options: dict[str, str] | None = None, limit: int | None = None,
                 bot_seed: int = 1, match_id: str = "fake-1", move_ms: int = 1000,
                 bank_ms: int = 10000) -> None:
        self.bot = bot
        self.driver = Driver(bot)
        self.seats = seats
        self.seat = seat
        self.match_id = match_id
        self.move_ms = move_ms
        self.bank_ms = bank_ms
        self.turn_id = 0
        self.sent: list[referee_pb2.BotMessage] = []
        self._pending: list[game_pb2.Event] = []
        self._history: list[game_pb2.Event] = []   # every event sent so far
        self._replay = False                        # send them all again (a reconnection)
        rules = game_pb2.Rules(ruleset=ruleset, options=options or {}, seats=seats)
        config = _config(rules)
        if limit is None:   # the engine's, with a max_total option too
            limit = config.limit if config is not None else int(
                rules.options.get("max_total", 98 if ruleset == "modern" else 99))
        rules.limit = limit
        self._deck_size = None if config is None else len(config.ruleset.deck)
        self._start = referee_pb2.RefereeMessage(match_start=referee_pb2.MatchStart(
            match_id=match_id, seat=seat, seat_names=[f"seat{i}" for i in range(seats)],
            rules=rules, time_control=referee_pb2.TimeControl(move_ms=move_ms, bank_ms=bank_ms),
            bot_seed=bot_seed))
        self._send(self._start)

    def _send(self, msg: referee_pb2.RefereeMessage) -> list[referee_pb2.BotMessage]:
        answers = list(self.driver.handle(msg))
        self.sent.extend(answers)
        return answers

    def event(self, kind: str, **fields) -> None:
        """Queue a public event (``play``, ``draw``, ``deal``, ``eliminate``, ``lose``); it
        reaches the bot with the next turn, or at once with :meth:`flush`."""
        self._pending.append(_EVENT_BUILDERS[kind](fields))

    def reconnect(self) -> None:
        """As after the bot's connection dropped and it came back: the match start again;
        the next message carries every event of the match from its start."""
        self._send(self._start)
        self._replay = True

    def _take_events(self) -> list[game_pb2.Event]:
        new, self._pending = self._pending, []
        events = self._history + new if self._replay else new
        self._history.extend(new)
        self._replay = False
        return events

    def flush(self) -> None:
        """Send the queued events in an Events message."""
        events = self._take_events()
        self._send(referee_pb2.RefereeMessage(events=referee_pb2.Events(
            match_id=self.match_id, events=events)))

    def turn(self, hand: Sequence[str], legal: Sequence[str] | None = None, total: int = 0,
             direction: int = 1, owed: int = 1, hand_sizes: Sequence[int] | None = None,
             in_game: Sequence[bool] | None = None, draw_size: int | None = None,
             over_limit: bool = False, in_round: Sequence[bool] | None = None,
             revealed: dict[int, Sequence[str]] | None = None,
             tokens: Sequence[int] | None = None,
             scores: Sequence[int] | None = None,
             discard_size: int | None = None) -> str | None:
        """Ask the bot for a card; returns the token it answered (None if it sent nothing).
        Per seat (lists in seat order): ``hand_sizes`` (default: 4, and this seat's
        ``len(hand)``), ``in_game``, ``in_round`` (default: as ``in_game``), ``tokens`` and
        ``scores``; ``revealed``: the hands laid face up, by seat.

        The piles default to what the rest of the view implies, so that a bot's
        determinizer finds the view consistent with the events: ``discard_size``, the
        cards played since the last deal (or reshuffle) in the events sent so far;
        ``draw_size``, the rest of the ruleset's deck once the hands, the discard pile and
        the revealed hands are counted (50 when the arena, which knows the decks, is not
        installed)."""
        self.turn_id += 1
        n = self.seats
        sizes = list(hand_sizes) if hand_sizes else [4] * n
        if not hand_sizes:
            sizes[self.seat] = len(hand)
        alive = in_game or [True] * n
        playing = in_round or alive
        shown = revealed or {}
        events = self._take_events()   # the view's piles count these too
        if discard_size is None:
            discard_size = self._discard_size()
        if draw_size is None:
            held = len(hand) + sum(sizes[i] for i in range(n) if alive[i] and i != self.seat)
            # never below 0 (which no view can say): too many events for the deck leave
            # an empty draw pile, and a determinizer says what does not add up
            draw_size = (50 if self._deck_size is None else max(
                0, self._deck_size - held - discard_size - sum(map(len, shown.values()))))
        view = game_pb2.SeatView(
            seat=self.seat, hand=[CARD_VALUES[c] for c in hand], total=total,
            direction=direction, to_act=self.seat, owed=owed, draw_size=draw_size,
            discard_size=discard_size,
            seats=[game_pb2.SeatState(hand_size=sizes[i], in_game=alive[i], in_round=playing[i],
                                      tokens=tokens[i] if tokens else 0,
                                      score=scores[i] if scores else 0,
                                      revealed=[CARD_VALUES[c] for c in shown.get(i, ())])
                   for i in range(n)],
            round=1, dealer=(self.seat - 1) % n)
        answers = self._send(referee_pb2.RefereeMessage(turn=referee_pb2.TurnRequest(
            match_id=self.match_id, turn_id=self.turn_id, view=view,
            legal=[CARD_VALUES[c] for c in (legal if legal is not None else hand)],
            over_limit=over_limit, events=events, move_ms=self.move_ms, bank_ms=self.bank_ms)))
        return self._card(answers)

    def _discard_size(self) -> int:
        """The discard pile's size as the events sent so far imply it, read the way the
        bot's own :meth:`Match.discard_pile` reads them."""
        record = Match(self.match_id, self.seat, [], None, 0, 0, 0)
        record._raw.extend(self._history)
        return len(record.discard_pile())

    def reject(self, reason: str = "illegal", code: int = referee_pb2.ERROR_CODE_ILLEGAL_PLAY) -> str | None:
        """Refuse the last answer; returns the bot's next try (None if it sent nothing)."""
        return self._card(self._send(referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
            turn_id=self.turn_id, code=code, reason=reason))))

    def end(self, ranking: Sequence[Sequence[int]], termination: str = "last_standing") -> None:
        """End the match."""
        events = self._take_events()
        self._send(referee_pb2.RefereeMessage(match_end=referee_pb2.MatchEnd(
            match_id=self.match_id, termination=termination, events=events,
            ranking=[game_pb2.Place(seats=list(g)) for g in ranking])))

    @staticmethod
    def _card(answers: list[referee_pb2.BotMessage]) -> str | None:
        from ono99.bot.model import token_of
        for msg in answers:
            if msg.WhichOneof("kind") == "action":
                return token_of(msg.action.card)
        return None


def _config(rules: game_pb2.Rules):
    """The arena's rules engine's config of ``rules`` (its deck, its limit); None when the
    arena is not installed (the SDK does not need it; the determinizer does)."""
    try:
        from arena.referee import wire
    except ImportError:
        return None
    return wire.rules_from_wire(rules)
