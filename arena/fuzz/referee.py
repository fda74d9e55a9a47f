"""Fuzzing the Referee service: a state machine that plays both seats of a match itself,
over raw ``Referee.Play`` streams, and sends everything a bot should not.

The machine holds two bots' streams (``fuzz-a`` and ``fuzz-b``, or another pair) and
starts their matches through the Organizer (a one-match tournament each time). Both
seats being its own, it knows everything the referee knows of the match, and keeps a
model of each session: the open turn, the turn ids it was issued, its hand and legal
cards, its refusals so far.
Every message it sends is predicted before it is sent (accepted, or refused with which
code for which turn id, and whether that refusal ends the match with an ILLEGAL verdict)
and the referee's answers are checked against the prediction. Hostile hellos come on
new streams from another host, and each gets the refusal its case is documented to get.

After every accepted card the machine waits until the match has moved on (the next turn
request, or the match end) and after every refusal until the refusal has arrived, so
that the model and the referee never race. What it checks, besides each answer:
- every card a seat is told was played (events, turn requests, the match end) is a card
  the machine played and the referee accepted, in order: a refused message never
  changes the match; at the end of a match the two lists are equal, in every seat's
  messages, in the tournament's result and in the spectators' record of the match;
- a turn request's legal cards are in the seat's hand; turn ids never repeat;
- the verdicts of the match are exactly the predicted ones;
- no reply is undecodable; every stream that ends, ends with the documented status.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule
from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as opb, referee_pb2 as rpb, spectator_pb2 as spb

from arena.fuzz import values
from arena.fuzz.client import Inbox, RawStream
from arena.fuzz.machine import Broken, FuzzMachine, step
from arena.fuzz.target import FUZZ_BOTS, FUZZ_MOVE_MS, HEALTHY, ServedArena
from arena.referee import lobby, servicer
from arena.referee.session import MAX_REFUSED_OUTSIDE, RECENT_MATCHES

WAIT = 15.0          # seconds an expected answer may take (a loaded machine)
MAX_REJECTIONS = 5   # a tournament's default (arena.tournament.tournament.Settings)
PROTOCOL = 1

_STATUS = {
    rpb.REFUSAL_CODE_BAD_HELLO: grpc.StatusCode.INVALID_ARGUMENT,
    rpb.REFUSAL_CODE_BAD_TOKEN: grpc.StatusCode.UNAUTHENTICATED,
    rpb.REFUSAL_CODE_TOKEN_IN_USE: grpc.StatusCode.ALREADY_EXISTS,
    rpb.REFUSAL_CODE_UNSUPPORTED_PROTOCOL: grpc.StatusCode.FAILED_PRECONDITION,
    rpb.REFUSAL_CODE_NO_HELLO: grpc.StatusCode.INVALID_ARGUMENT,
    rpb.REFUSAL_CODE_SHUTTING_DOWN: grpc.StatusCode.UNAVAILABLE,
    rpb.REFUSAL_CODE_TOO_MANY: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
#: refusals that count against the host (referee.proto: guessing tokens, or not speaking
#: the protocol)
_COUNTED = {rpb.REFUSAL_CODE_BAD_TOKEN, rpb.REFUSAL_CODE_NO_HELLO, rpb.REFUSAL_CODE_BAD_HELLO}
#: refusals that do not count against the host
_UNCOUNTED = {rpb.REFUSAL_CODE_UNSUPPORTED_PROTOCOL, rpb.REFUSAL_CODE_TOKEN_IN_USE}
#: a stream ended by gRPC for a message over the port's limit: no refusal, only a status
_TOO_BIG = -1


@dataclass
class Bot:
    """One of the machine's two bots, and the model of its session."""

    name: str
    token: str
    stream: RawStream | None = None
    pos: int = 0                               # messages of the stream the model has read
    resume_key: str = ""
    issued: set[int] = field(default_factory=set)
    #: in the matches before, this session (the referee remembers RECENT_MATCHES of them)
    issued_before: deque = field(default_factory=lambda: deque(maxlen=RECENT_MATCHES))
    open_turn: int | None = None
    rejections: int = 0
    hand: list[int] = field(default_factory=list)
    legal: list[int] = field(default_factory=list)
    seat: int | None = None
    match_id: str = ""
    expected: deque = field(default_factory=deque)   # (turn id, code), in order
    #: the plays of each seat this session was told of, by seat (reset by a match start)
    seen: dict[int, list[int]] = field(default_factory=dict)
    turns_seen: set[int] = field(default_factory=set)   # every turn id of this match
    resent: bool = False                       # the match start came again (a reconnection)
    ended: bool = False                        # got the match end of the current match
    #: the refusals of the session the match was last played on, which the referee carries
    #: to the new one when it takes it up (the match start again): those of a session
    #: it never took up do not count
    carried: int = 0
    taken_up: bool = True                      # the match is played on this session
    #: the session's refusals while no turn of its was open, since its match began (the
    #: referee cuts a session off past MAX_REFUSED_OUTSIDE)
    outside: int = 0


class RefereeMachine(FuzzMachine):
    """Two bots of the machine's own playing, with garbage in between."""

    def __init__(self, target: ServedArena) -> None:
        super().__init__(target)
        self.inbox = Inbox()
        first = 2 * (target.examples % (len(FUZZ_BOTS) // 2))
        target.examples += 1
        self.bots = [Bot(n, target.tokens[n]) for n in FUZZ_BOTS[first:first + 2]]
        self.hostile: list[RawStream] = []
        self.accepted: dict[int, list[int]] = {}   # seat -> cards accepted this match
        self.verdicts: dict[int, int] = {}        # seat -> predicted VerdictKind
        self.match_id = ""
        self.running = False                      # a match is being played
        self.progress: list[opb.TournamentProgress] = []
        self._follow = None
        self._n = 0

    # ---------------------------------------------------------------- plumbing

    def _channel(self, address: str):
        return lambda: self.t.channels.get(address)

    def _stream(self, address: str, label: str) -> RawStream:
        return RawStream(self.t.loop, self._channel(address), self.inbox, label)

    def _send(self, bot: Bot, data) -> None:
        self.t.messages += 1
        if not bot.stream.send(data):
            raise Broken(f"{bot.name}: the referee ended a live stream "
                         f"({bot.stream.code}: {bot.stream.details})")

    def _wait(self, ready, what: str, timeout: float = WAIT) -> None:
        def check() -> bool:
            self._absorb()
            return ready()

        if not self.inbox.wait(check, timeout):
            got = "; ".join(f"{b.name} got {[m.WhichOneof('kind') for m in b.stream.received[-6:]]} "
                            f"(stream {b.stream.code})" for b in self.bots if b.stream)
            raise Broken(f"waited {timeout:g} s for {what}; {got}")

    # ---------------------------------------------------------------- the model

    def _absorb(self) -> None:
        """Read what arrived on the bots' streams into the model, checking each message."""
        for bot in self.bots:
            stream = bot.stream
            if stream is None:
                continue
            if stream.undecodable:
                raise Broken(f"{bot.name}: a reply is not a RefereeMessage: {stream.undecodable[0]!r}")
            while bot.pos < len(stream.received):
                msg = stream.received[bot.pos]
                bot.pos += 1
                self._take(bot, msg)

    def _take(self, bot: Bot, msg: rpb.RefereeMessage) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "match_start":
            start = msg.match_start
            if start.match_id != self.match_id:
                self._new_match(start.match_id)
            bot.resent = start.match_id == bot.match_id
            if not bot.resent:
                bot.turns_seen = set()
            bot.match_id, bot.seat = start.match_id, start.seat
            bot.issued_before.append(bot.issued)
            bot.issued, bot.open_turn = set(), None
            # a match's refusals count across the bot's reconnections; those outside its
            # turns, on this session since the match began
            bot.rejections = bot.carried if bot.resent else 0
            bot.outside = 0
            bot.taken_up = True
            bot.seen, bot.ended = {}, False
            if len(start.seat_names) != 2 or start.seat_names[start.seat] != bot.name:
                raise Broken(f"{bot.name}: match start names {list(start.seat_names)}, seat {start.seat}")
            if start.time_control.move_ms != FUZZ_MOVE_MS:
                raise Broken(f"{bot.name}: match start clock {start.time_control}")
        elif kind == "turn":
            turn = msg.turn
            self._same_match(bot, turn.match_id, "turn request")
            if turn.turn_id in bot.turns_seen and not bot.resent:
                raise Broken(f"{bot.name}: turn id {turn.turn_id} issued twice")
            bot.resent = False
            bot.turns_seen.add(turn.turn_id)
            bot.issued.add(turn.turn_id)
            bot.open_turn = turn.turn_id
            bot.hand, bot.legal = list(turn.view.hand), list(turn.legal)
            if not bot.legal or not set(bot.legal) <= set(bot.hand):
                raise Broken(f"{bot.name}: legal cards {bot.legal} not in hand {bot.hand}")
            if turn.view.seat != bot.seat or turn.view.to_act != bot.seat:
                raise Broken(f"{bot.name}: a turn request for seat {turn.view.seat}, "
                             f"to act {turn.view.to_act}, sent to seat {bot.seat}")
            self._events(bot, turn.events)
        elif kind == "events":
            self._same_match(bot, msg.events.match_id, "events")
            self._events(bot, msg.events.events)
        elif kind == "rejected":
            r = msg.rejected
            if not bot.expected:
                raise Broken(f"{bot.name}: unexpected rejection {r.code} of turn {r.turn_id}: {r.reason}")
            turn_id, code = bot.expected.popleft()
            if (r.turn_id, r.code) != (turn_id, code):
                got = rpb.ErrorCode.Name(r.code) if r.code in rpb.ErrorCode.values() else r.code
                raise Broken(f"{bot.name}: expected rejection {rpb.ErrorCode.Name(code)} of turn "
                             f"{turn_id}, got {got} of turn {r.turn_id}: {r.reason!r}")
            if not r.reason:
                raise Broken(f"{bot.name}: a rejection without a reason")
        elif kind == "match_end":
            end = msg.match_end
            self._same_match(bot, end.match_id, "match end")
            self._events(bot, end.events)
            bot.open_turn, bot.ended = None, True
            got = {(v.seat, v.kind) for v in end.verdicts}
            want = set(self.verdicts.items())
            if got != want:
                raise Broken(f"{bot.name}: match end verdicts {sorted(got)}, predicted {sorted(want)}: "
                             + "; ".join(v.detail for v in end.verdicts))
            for seat, cards in bot.seen.items():
                if cards != self.accepted.get(seat, []):
                    raise Broken(f"{bot.name}: at the match end, seat {seat} played {cards}; "
                                 f"the referee accepted {self.accepted.get(seat, [])}")
            if len(end.hands) != 2:
                raise Broken(f"{bot.name}: match end with {len(end.hands)} hands")
        elif kind == "goodbye":
            pass
        else:
            raise Broken(f"{bot.name}: a {kind} in the middle of a session")

    def _same_match(self, bot: Bot, match_id: str, what: str) -> None:
        if match_id != bot.match_id:
            raise Broken(f"{bot.name}: {what} of match {match_id!r}, playing {bot.match_id!r}")

    def _events(self, bot: Bot, events) -> None:
        for e in events:
            if e.WhichOneof("kind") == "card_played":
                seen = bot.seen.setdefault(e.card_played.seat, [])
                seen.append(e.card_played.card)
                accepted = self.accepted.get(e.card_played.seat, [])
                if seen != accepted[:len(seen)]:
                    raise Broken(f"{bot.name} was told seat {e.card_played.seat} played {seen}; "
                                 f"the referee accepted {accepted} (a refused card was played?)")

    def _new_match(self, match_id: str) -> None:
        self.match_id = match_id
        self.accepted, self.verdicts = {}, {}

    def _predict_card(self, bot: Bot, card: int) -> int | None:
        """The code of the refusal of ``card`` for the open turn, or None: accepted."""
        if not 1 <= card < values.N_CARDS:
            return rpb.ERROR_CODE_MALFORMED
        if card not in bot.hand:
            return rpb.ERROR_CODE_NOT_IN_HAND
        if card not in bot.legal:
            return rpb.ERROR_CODE_ILLEGAL_PLAY
        return None

    def _refused(self, bot: Bot, turn_id: int, code: int) -> None:
        """A refusal is coming; the match ends if it is one too many in the open turn (the
        referee counts every refusal of the session in the match, and judges when one
        comes while the seat is to act)."""
        bot.rejections += 1
        bot.expected.append((turn_id, code))
        if bot.open_turn is not None and bot.rejections > MAX_REJECTIONS:
            self.verdicts[bot.seat] = rpb.VERDICT_KIND_ILLEGAL
            bot.open_turn = None
            self.running = False
            self._wait(lambda: bot.expected == deque() and self._all_ended(), "the ILLEGAL verdict")
            self._finish_tournament()
        else:
            outside = bot.open_turn is None
            if outside and bot.outside >= MAX_REFUSED_OUTSIDE:
                # one refusal too many while no turn of its was open (between matches
                # too): the session is cut off, its goodbye said (the rejection may not
                # come before it), and the bot comes back
                return self._come_back(bot, grpc.StatusCode.OK, "cut off")
            self._wait(lambda: not bot.expected, f"{bot.name}'s rejection")
            bot.outside += outside

    def _all_ended(self) -> bool:
        return all(b.ended for b in self.bots)

    def _accepted(self, bot: Bot, card: int) -> None:
        """``card`` was accepted: wait until the match moves on (a turn or the end)."""
        self.accepted.setdefault(bot.seat, []).append(card)
        bot.open_turn = None
        self._wait(lambda: any(b.open_turn is not None for b in self.bots) or self._all_ended(),
                   "the match to go on after an accepted card")
        if self._all_ended():
            self.running = False
            self._finish_tournament()

    # ---------------------------------------------------------------- sessions

    def _connect(self, bot: Bot) -> None:
        """A new session for ``bot`` (replacing its old one, if the referee still has it)."""
        self._wait_room(bot, 1)
        self.t.admitted[bot.name].append(time.monotonic())
        stream = self._stream(self.t.player, bot.name)
        key = self.t.resume_keys.get(bot.name, "")
        self.t.messages += 1
        stream.send(rpb.BotMessage(hello=rpb.Hello(name=bot.name, token=bot.token,
                                                   protocol_version=PROTOCOL, resume_key=key)))
        if not self.inbox.wait(lambda: stream.received or stream.ended, WAIT):
            raise Broken(f"{bot.name}: no answer to a valid hello")
        first = stream.received[0] if stream.received else None
        if first is None or not first.HasField("welcome"):
            raise Broken(f"{bot.name}: a valid hello got {first} ({stream.code}: {stream.details})")
        if first.welcome.protocol_version != PROTOCOL or first.welcome.bot_name != bot.name:
            raise Broken(f"{bot.name}: welcome {first.welcome}")
        bot.stream, bot.pos = stream, 1
        bot.resume_key = first.welcome.resume_key
        self.t.resume_keys[bot.name] = bot.resume_key
        if bot.taken_up:
            bot.carried = bot.rejections
        bot.taken_up = False
        bot.issued, bot.open_turn, bot.rejections, bot.expected = set(), None, 0, deque()
        bot.outside = 0
        bot.issued_before.clear()   # a new session knows no turn of its own

    def _wait_room(self, bot: Bot | None = None, spare: int = 2) -> None:
        """Wait until ``bot`` (None: each bot) may say hello ``spare`` times more without
        reaching lobby.MAX_HELLOS within the window (2 s of margin for the referee's
        clock). A rule that may end a bot's stream waits first: its reconnection must
        come within the grace. (Each example connects its pair of bots, and the pairs
        take turns: waits are rare. Time is no precondition: hypothesis must see the same
        rules enabled when it replays an example.)"""
        for one in self.bots if bot is None else [bot]:
            while True:
                since = time.monotonic() - lobby.HELLO_WINDOW_S - 2
                times = self.t.admitted[one.name] = [
                    t for t in self.t.admitted.get(one.name, []) if t > since]
                if len(times) + spare < lobby.MAX_HELLOS:
                    break
                time.sleep(0.5)

    def _start_match(self, seed: int) -> None:
        """A one-match tournament of the two bots, its deal from ``seed`` (drawn: the match
        replays exactly when Hypothesis replays the example)."""
        self._n += 1
        name = f"fuzz-{secrets.token_hex(4)}-{self._n}"
        request = opb.TournamentRequest(name=name, bots=[b.name for b in self.bots], games=1,
                                         seed=seed, no_duplicate=True, move_ms=FUZZ_MOVE_MS, bank_ms=0)
        self.progress = []

        async def follow() -> None:
            channel = self.t.channels.get(self.t.hostile)
            call = channel.unary_stream("/ono99.v1.Organizer/RunTournament",
                                        request_serializer=lambda b: b,
                                        response_deserializer=opb.TournamentProgress.FromString)
            async for p in call(request.SerializeToString(), metadata=self.t.auth):
                self.progress.append(p)
                self.inbox.notify()

        self._follow = self.t.loop.spawn(follow())
        for bot in self.bots:
            bot.ended = False
        self._wait(lambda: all(b.match_id and b.match_id == self.match_id for b in self.bots)
                   and any(b.open_turn is not None for b in self.bots), "a match to start")
        self.running = True

    def _finish_tournament(self) -> None:
        """The one-match tournament is over: its result must be the match's."""
        self.inbox.wait(lambda: any(p.HasField("finished") for p in self.progress), WAIT)
        matches = [p.match for p in self.progress if p.HasField("match")]
        if not any(p.HasField("finished") for p in self.progress) or len(matches) != 1:
            raise Broken(f"the fuzz tournament did not report one match and its end: {self.progress}")
        got = {(v.seat, v.kind) for v in matches[0].verdicts}
        want = {(s, rpb.VerdictKind.Name(k).removeprefix("VERDICT_KIND_").lower())
                for s, k in self.verdicts.items()}
        if got != want:
            raise Broken(f"the tournament's verdicts {sorted(got)}, predicted {sorted(want)}")
        self._check_record()

    def _check_record(self) -> None:
        """The spectators' record of the finished match shows exactly the accepted cards."""
        outcome = self.unary(self.t.spectator, "/ono99.v1.Spectator/GetRecord",
                             spb.GetRecordRequest(match_id=self.match_id).SerializeToString())
        if not outcome.ok:
            raise Broken(f"GetRecord of a finished match: {outcome.code} {outcome.details}")
        record = spb.MatchSnapshot.FromString(outcome.reply)
        plays: dict[int, list[int]] = {}
        for frame in record.frames:
            for e in frame.events:
                if e.WhichOneof("kind") == "card_played":
                    plays.setdefault(e.card_played.seat, []).append(e.card_played.card)
        if plays != {s: c for s, c in self.accepted.items() if c}:
            raise Broken(f"the match record's plays {plays}; the referee accepted {self.accepted}")

    # ---------------------------------------------------------------- rules: setup

    @initialize(seed=st.integers(1, 2**64 - 1))
    @step
    def begin(self, seed: int) -> None:
        for bot in self.bots:
            self._connect(bot)
        self._start_match(seed)

    @precondition(lambda self: not self.running)
    @rule(seed=st.integers(1, 2**64 - 1))
    @step
    def another_match(self, seed: int) -> None:
        self._start_match(seed)

    # ---------------------------------------------------------------- rules: playing

    def _to_act(self) -> Bot | None:
        return next((b for b in self.bots if b.open_turn is not None), None)

    @precondition(lambda self: self.running)
    @rule(choice=st.integers(0, 100))
    @step
    def play_legal(self, choice: int) -> None:
        """The seat to act plays one of its legal cards: the match goes on."""
        bot = self._to_act()
        card = bot.legal[choice % len(bot.legal)]
        self._send(bot, rpb.BotMessage(action=rpb.Action(turn_id=bot.open_turn, card=card)))
        self._accepted(bot, card)

    @precondition(lambda self: self.running)
    @rule(card=values.cards())
    @step
    def play_any_card(self, card: int) -> None:
        """The seat to act plays any card number at all: accepted if legal."""
        bot = self._to_act()
        turn_id = bot.open_turn
        self._send(bot, rpb.BotMessage(action=rpb.Action(turn_id=turn_id, card=card)))
        code = self._predict_card(bot, card)
        if code is None:
            self._accepted(bot, card)
        else:
            self._refused(bot, turn_id, code)

    @precondition(lambda self: self.running)
    @rule(which=st.integers(0, 1), how=st.sampled_from(["stale", "last_match", "other", "next",
                                                        "zero", "random"]),
          random_id=values.uint64s(), card=values.cards())
    @step
    def play_wrong_turn(self, which: int, how: str, random_id: int, card: int) -> None:
        """A seat answers a turn that is not its open one: an old one, one of the match
        before, the other seat's, the next one (not issued yet), zero, or any number."""
        bot, other = self.bots[which], self.bots[1 - which]
        turn_id = {"stale": max(bot.issued - {bot.open_turn}, default=random_id),
                   "last_match": max(bot.issued_before[-1] if bot.issued_before else (),
                                     default=random_id),
                   "other": other.open_turn or max(other.issued, default=random_id),
                   "next": max(bot.issued | other.issued, default=random_id) + 1,
                   "zero": 0, "random": random_id}[how]
        turn_id %= 2**64
        self._send(bot, rpb.BotMessage(action=rpb.Action(turn_id=turn_id, card=card)))
        if turn_id and turn_id == bot.open_turn:
            code = self._predict_card(bot, card)
            if code is None:
                return self._accepted(bot, card)
            return self._refused(bot, turn_id, code)
        self._refused(bot, turn_id, _wrong_turn(bot, turn_id))

    @rule(which=st.integers(0, 1), payload=st.one_of(values.raw_bytes(), values.other_messages()))
    @step
    def send_bytes(self, which: int, payload: bytes) -> None:
        """Bytes that are not a BotMessage, or another message's, on a live session."""
        self._wait_room()   # it may reconnect
        bot = self.bots[which]
        self._send(bot, payload)
        try:
            msg = rpb.BotMessage.FromString(payload)
        except DecodeError:   # the session ends, with a goodbye that says why
            return self._come_back(bot, grpc.StatusCode.INVALID_ARGUMENT, "not a BotMessage")
        self._predict_message(bot, msg)

    def _deliver(self, bot: Bot, msg: rpb.BotMessage) -> None:
        """Send a whole message on a live session and check the referee's answer."""
        data = msg.SerializeToString()
        self._send(bot, data)
        if len(data) > values.MAX_RECEIVE:   # gRPC ends the stream; the bot comes back
            return self._come_back(bot, grpc.StatusCode.RESOURCE_EXHAUSTED, None)
        self._predict_message(bot, msg)

    def _predict_message(self, bot: Bot, msg: rpb.BotMessage) -> None:
        kind = msg.WhichOneof("kind")
        if msg.ByteSize() > values.MAX_BOT_MESSAGE:   # refused whatever it is
            return self._refused(bot, msg.action.turn_id, rpb.ERROR_CODE_MALFORMED)
        if kind == "action":
            turn_id, card = msg.action.turn_id, msg.action.card
            if turn_id and turn_id == bot.open_turn:
                code = self._predict_card(bot, card)
                return self._accepted(bot, card) if code is None else self._refused(bot, turn_id, code)
            return self._refused(bot, turn_id, _wrong_turn(bot, turn_id))
        self._refused(bot, 0, rpb.ERROR_CODE_MALFORMED)

    @rule(which=st.integers(0, 1), hello=values.hellos(st.sampled_from(["", "x"])))
    @step
    def hello_again(self, which: int, hello: rpb.Hello) -> None:
        """A second hello on a live session."""
        self._deliver(self.bots[which], rpb.BotMessage(hello=hello))

    @rule(which=st.integers(0, 1))
    @step
    def empty_message(self, which: int) -> None:
        bot = self.bots[which]
        self._send(bot, rpb.BotMessage())
        self._refused(bot, 0, rpb.ERROR_CODE_MALFORMED)

    @rule(which=st.integers(0, 1), turn=st.sampled_from(["open", "zero"]),
          size=st.one_of(st.integers(values.MAX_BOT_MESSAGE - 16, values.MAX_BOT_MESSAGE + 16),
                         st.integers(values.MAX_BOT_MESSAGE, values.MAX_RECEIVE + 64),
                         st.integers(values.MAX_RECEIVE - 64, values.MAX_RECEIVE + 64)))
    @step
    def padded(self, which: int, turn: str, size: int) -> None:
        """An action padded with a field the protocol does not have, to about ``size``
        bytes: over 4096 it is refused (even for the open turn), over 64 KiB gRPC ends
        the stream."""
        self._wait_room()   # it may reconnect
        bot = self.bots[which]
        card = bot.legal[0] if bot.open_turn is not None else 7
        turn_id = bot.open_turn if turn == "open" and bot.open_turn is not None else 0
        data = _padded(rpb.Action(turn_id=turn_id, card=card).SerializeToString(), size)
        self._send(bot, data)
        if len(data) > values.MAX_RECEIVE:   # gRPC ends the stream; the bot comes back
            return self._come_back(bot, grpc.StatusCode.RESOURCE_EXHAUSTED, None)
        self._predict_message(bot, rpb.BotMessage.FromString(data))

    # ---------------------------------------------------------------- rules: connections

    @rule(which=st.integers(0, 1))
    @step
    def reconnect(self, which: int) -> None:
        """A bot connects again with its resume key: its old stream ends with a goodbye.
        In a match, the new one gets the match start and the same open turn again at once
        if it is to act; else the match start comes with its next turn or the match end."""
        self._wait_room()   # it may reconnect
        bot = self.bots[which]
        old, turn_id = bot.stream, bot.open_turn
        self._connect(bot)
        self._ended(bot, old, grpc.StatusCode.OK, "replaced by a reconnection")
        if turn_id is not None:
            self._wait(lambda: bot.open_turn == turn_id, "the open turn again after a reconnection")

    def _come_back(self, bot: Bot, status, words: str) -> None:
        """The referee ends ``bot``'s stream with ``status`` and a goodbye that says
        ``words``; the bot connects again, as the SDKs do, and plays on."""
        old, turn_id = bot.stream, bot.open_turn
        self._ended(bot, old, status, words)
        self._connect(bot)
        if turn_id is not None:
            self._wait(lambda: bot.open_turn == turn_id, "the open turn again after a reconnection")

    def _ended(self, bot: Bot, stream: RawStream, status, words: str | None) -> None:
        """``stream`` ends with ``status`` and a goodbye that says ``words`` (None: no
        goodbye, the stream was ended by gRPC, not by the referee)."""
        if not self.inbox.wait(lambda: stream.ended, WAIT):
            raise Broken(f"{bot.name}: the stream did not end ({words or status.name})")
        goodbyes = [m for m in stream.received[bot.pos if stream is bot.stream else 0:]
                    if m.HasField("goodbye")]
        if words is None:
            if stream.code != status or goodbyes:
                raise Broken(f"{bot.name}: a stream to end with {status.name} ended with "
                             f"{stream.code}: {stream.details!r}, goodbyes {goodbyes}")
            return
        if stream.code != status or len(goodbyes) != 1 or words not in goodbyes[0].goodbye.reason:
            raise Broken(f"{bot.name}: a stream to end with {status.name} and a goodbye saying "
                         f"{words!r} ended with {stream.code}: {stream.details!r}, goodbyes {goodbyes}")

    @rule(which=st.integers(0, 1), key=st.sampled_from(["", "wrong"]))
    @step
    def token_in_use(self, which: int, key: str) -> None:
        """A hello with a live session's token, without its resume key: refused, and the
        live session plays on."""
        bot = self.bots[which]
        self._hello(self.t.player, self.t.player_host,
                    rpb.BotMessage(hello=rpb.Hello(name=bot.name, token=bot.token,
                                                   protocol_version=PROTOCOL, resume_key=key)
                                   ).SerializeToString(), rpb.REFUSAL_CODE_TOKEN_IN_USE)

    # ---------------------------------------------------------------- rules: strangers

    @rule(first=st.one_of(
        values.hellos(st.sampled_from(["", "guess", "x" * 43, "ono99_" + "y" * 43])).map(
            lambda h: rpb.BotMessage(hello=h).SerializeToString()),
        values.raw_bytes(), values.other_messages(),
        values.actions(values.uint64s()).map(lambda a: rpb.BotMessage(action=a).SerializeToString()),
        st.sampled_from([b"", None])),
        token=st.sampled_from(["withdrawn", "healthy", "fuzz", "keep"]),
        version=st.sampled_from([PROTOCOL, PROTOCOL, 0, 2, -1, 2**31 - 1]),
        more=st.lists(values.raw_bytes(), max_size=3), end=st.booleans())
    @step
    def stranger(self, first: bytes | None, token: str, version: int, more: list[bytes],
                 end: bool) -> None:
        """A new stream from the hostile host: its first message is anything (None: the
        stream ends without a word); a hello's token is a withdrawn one, a healthy bot's
        (in use) or a fuzz bot's (in use)."""
        if first is None:
            return self._hello(self.t.hostile, self.t.hostile_host, None, rpb.REFUSAL_CODE_NO_HELLO)
        try:
            msg = rpb.BotMessage.FromString(first)
        except DecodeError:
            msg = None
        if msg is not None and msg.HasField("hello") and token != "keep":
            hello = msg.hello
            hello.token = {"withdrawn": self.t.withdrawn_token,
                           "healthy": self.t.tokens.get(HEALTHY[0], "none"),
                           "fuzz": self.bots[0].token}[token]
            hello.resume_key = ""
            hello.protocol_version = version
            first = msg.SerializeToString()
        code = self._refusal_for(msg, first)
        # a refusal that does not count against the host may come from the players' host,
        # never refused unread: the hostile one is, once it has been refused ten times
        here = (self.t.player, self.t.player_host) if code in _UNCOUNTED and end else \
            (self.t.hostile, self.t.hostile_host)
        self._hello(*here, first, code, more=more, end=end,
                    registered=msg is not None and msg.HasField("hello")
                    and msg.hello.token in self._live_tokens())

    def _refusal_for(self, msg: rpb.BotMessage | None, first: bytes) -> int:
        if len(first) > values.MAX_RECEIVE:
            return _TOO_BIG
        if msg is None or not msg.HasField("hello"):
            return rpb.REFUSAL_CODE_NO_HELLO
        hello = msg.hello
        if hello.ByteSize() > values.MAX_BOT_MESSAGE or any(
                len(getattr(hello, f)) > limit or not getattr(hello, f).isprintable()
                for f, limit in values.HELLO_LIMITS.items()):
            return rpb.REFUSAL_CODE_BAD_HELLO
        if hello.protocol_version != PROTOCOL:
            return rpb.REFUSAL_CODE_UNSUPPORTED_PROTOCOL
        return rpb.REFUSAL_CODE_TOKEN_IN_USE if hello.token in self._live_tokens() \
            else rpb.REFUSAL_CODE_BAD_TOKEN

    def _live_tokens(self) -> set[str]:
        """The registered tokens a stranger may send (each in use)."""
        live = {b.token for b in self.bots}
        if self.t.with_healthy:
            live.update(self.t.tokens[h] for h in HEALTHY)
        return live

    def _hello(self, address: str, host: str, first: bytes | None, code: int,
               more: list[bytes] = (), end: bool = True, registered: bool = False) -> None:
        """A new stream whose first message is ``first`` (None: no message at all) must be
        refused with ``code`` (or TOO_MANY, when its host has been refused too often and
        the hello's token is not ``registered``)."""
        blocked = self.t.blocked(host, servicer.MAX_FAILED_HELLOS, servicer.FAILED_WINDOW_S)
        if blocked and host == self.t.player_host and self.t.player_host != self.t.hostile_host:
            raise Broken("the players' host is blocked")
        if code == _TOO_BIG and blocked is None:
            # the referee counts it unless the host is blocked, and the client cannot tell
            # which (gRPC ends the stream before any refusal): only when the model knows
            return
        if registered and code in _COUNTED and blocked is None:
            return    # likewise: refused with its reason either way, counted or not
        stream = self._stream(address, "stranger")
        self.hostile.append(stream)
        self.t.messages += 1
        if first is None:
            stream.close_writes()
        else:
            stream.send(first)
            for extra in more:
                stream.send(extra)
            if end:
                stream.close_writes()
        if not self.inbox.wait(lambda: stream.ended, WAIT + servicer.REFUSE_READ_S):
            stream.cancel()
            raise Broken(f"a hello to be refused with {rpb.RefusalCode.Name(code)} got no end: "
                         f"{stream.received}")
        if code == _TOO_BIG:   # gRPC refused it: no refusal (but TOO_MANY unread), the status
            too_many = [m.refusal.code for m in stream.received] == [rpb.REFUSAL_CODE_TOO_MANY]
            if (stream.received and not (blocked is not False and too_many)) \
                    or stream.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise Broken(f"a first message of {len(first)} bytes got {list(stream.received)!r:.300} "
                             f"and {stream.code}: {stream.details!r}")
            if blocked is False:   # the referee read the end of a stream without a hello
                self.t.note_refused(host)
            self.hostile.remove(stream)
            return
        got = [m.refusal.code for m in stream.received if m.HasField("refusal")]
        # a blocked host's hellos that would count are refused as TOO_MANY; the others
        # and a registered token's are answered as from any host
        allowed = {code} if blocked is False or code not in _COUNTED or registered else \
            {rpb.REFUSAL_CODE_TOO_MANY} if blocked else {code, rpb.REFUSAL_CODE_TOO_MANY}
        if len(stream.received) != 1 or len(got) != 1 or got[0] not in allowed:
            raise Broken(f"first message {first!r:.200}: expected refusal "
                         f"{[rpb.RefusalCode.Name(c) for c in allowed]}, got {list(stream.received)!r:.300} "
                         f"and {stream.code}: {stream.details!r}")
        if stream.code != _STATUS[got[0]] and not (
                stream.write_failed and stream.code == grpc.StatusCode.INTERNAL):
            raise Broken(f"refusal {rpb.RefusalCode.Name(got[0])} of first message {first!r:.200} "
                         f"(then {more!r:.200}, end {end}) ended the stream with {stream.code}: "
                         f"{stream.details!r}, not {_STATUS[got[0]]}")
        if got[0] in _COUNTED and not (registered and blocked):
            self.t.note_refused(host)
        self.hostile.remove(stream)

    # ---------------------------------------------------------------- invariants

    @invariant()
    @step
    def nothing_unexpected(self) -> None:
        self._absorb()

    # ---------------------------------------------------------------- the end

    def teardown(self) -> None:
        """Play the match out (so its tournament finishes and every check runs), then
        drop the streams."""
        try:
            deadline = time.monotonic() + 60
            while self.running and not self.failed and time.monotonic() < deadline:
                self._absorb()
                bot = self._to_act()
                if bot is None:
                    self._wait(lambda: self._to_act() is not None or self._all_ended(), "a turn")
                    continue
                self.play_legal(0)
        finally:
            for stream in [b.stream for b in self.bots if b.stream] + self.hostile:
                try:
                    stream.cancel()
                except Exception:
                    pass
            if self._follow is not None:
                # a match left running (this example failed) would take the next example's
                # sessions for its own when they connect: wait until it is over (its seats
                # disconnected after the reconnection grace)
                self.inbox.wait(lambda: any(p.HasField("finished") for p in self.progress), WAIT)
                self._follow.cancel()


def _wrong_turn(bot: Bot, turn_id: int) -> int:
    """The refusal of an action for a turn that is not the bot's open one."""
    return rpb.ERROR_CODE_STALE_TURN \
        if turn_id in bot.issued or any(turn_id in ids for ids in bot.issued_before) \
        else rpb.ERROR_CODE_NOT_YOUR_TURN


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _padded(action: bytes, size: int) -> bytes:
    """A BotMessage of about ``size`` bytes: ``action`` with an unknown field 15 (bytes)."""
    pad = max(0, size - len(action) - 16)
    inner = action + b"\x7a" + _varint(pad) + b"p" * pad
    return b"\x12" + _varint(len(inner)) + inner
