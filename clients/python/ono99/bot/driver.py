"""The bot's side of the protocol, independent of the transport.

:class:`Driver` takes each message the referee sends and returns the messages to send
back. The gRPC client (:mod:`ono99.bot.client`) and the scripted fake referee
(:mod:`ono99.bot.testing`) both drive a bot through it, so what a unit test exercises
is what runs against a real referee.
"""

from __future__ import annotations

import inspect
import logging
import random
from collections.abc import Iterator

from ono99.bot.base import Bot
from ono99.bot.model import CARD_VALUES, Match, MatchResult, View
from ono99.v1 import referee_pb2

log = logging.getLogger("ono99.bot")

PROTOCOL_VERSION = 1

# Refusals of the card sent, which another card may cure (MALFORMED: no card or an unknown
# one; the turn id was the open turn's). NOT_YOUR_TURN and STALE_TURN refuse any card
# alike, and each refusal counts against the bot (too many in a match: an ILLEGAL
# verdict), so no card is sent again after them, nor after a code this SDK does not know.
RETRIED_CODES = frozenset({referee_pb2.ERROR_CODE_NOT_IN_HAND, referee_pb2.ERROR_CODE_ILLEGAL_PLAY,
                           referee_pb2.ERROR_CODE_MALFORMED})

# What a remote bot keeps of what a stranger's referee sends (the same in the Node.js and
# C++ SDKs): a referee that streamed events, or started matches it never ended, grew a bot
# by GBs in 30 s. A real match has a few thousand events at most, and a real referee never
# has this many matches open with one bot process.
MAX_MATCH_EVENTS = 100_000
MAX_OPEN_MATCHES = 64
#: how much of a string from the referee is printed (see :func:`said`)
SAID_CHARS = 300


class Driver:
    """Feeds one bot the referee's messages; produces its answers."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        # events are converted for the bot only if it listens to them (or reads them)
        self._hooks_events = type(bot).on_event is not Bot.on_event
        #: open matches, the one heard of least recently first
        self.matches: dict[str, Match] = {}
        self.finished = False
        self.welcome: referee_pb2.Welcome | None = None
        self.goodbye: str | None = None          # the referee's reason, once it said goodbye
        self._open_turn: tuple[referee_pb2.TurnRequest, set[str]] | None = None
        # after a reconnection the referee sends a match's events again from its start:
        # match id -> how many of the coming events the bot has seen already
        self._replayed: dict[str, int] = {}

    def hello(self, token: str, name: str | None = None, sdk: str = "",
              resume_key: str = "") -> referee_pb2.BotMessage:
        """The first message of a session (``resume_key``: of the session it replaces,
        when reconnecting)."""
        return referee_pb2.BotMessage(hello=referee_pb2.Hello(
            name=name or self.bot.name, token=token, protocol_version=PROTOCOL_VERSION, sdk=sdk,
            resume_key=resume_key))

    def handle(self, msg: referee_pb2.RefereeMessage) -> Iterator[referee_pb2.BotMessage]:
        """Messages to send in answer to ``msg`` (an action for a turn, nothing otherwise)."""
        kind = msg.WhichOneof("kind")
        if kind == "turn":
            action = self._turn(msg.turn)
            if action is not None:
                yield action
        elif kind == "events":
            self._events(msg.events.match_id, msg.events.events)
        elif kind == "rejected":
            retry = self._rejected(msg.rejected)
            if retry is not None:
                yield retry
        elif kind == "match_start":
            start = msg.match_start
            if (known := self.matches.pop(start.match_id, None)) is not None:
                # we reconnected mid-match: the same match, heard of last
                self._keep(known)
                self._replayed[start.match_id] = len(known._raw)
                return
            match = Match.from_proto(start)
            self._keep(match)
            self.bot.random = random.Random(start.bot_seed)
            self.bot.on_match_start(match)
        elif kind == "match_end":
            end = msg.match_end
            self._events(end.match_id, end.events)
            match = self.matches.pop(end.match_id, None)
            self._replayed.pop(end.match_id, None)
            self._open_turn = None
            self.bot.on_match_end(MatchResult.from_proto(end), match)
        elif kind == "welcome":
            self.welcome = msg.welcome
        elif kind == "refusal":
            self.finished = True
            raise RefusedError(msg.refusal)
        elif kind == "goodbye":
            self.finished = True
            self.goodbye = msg.goodbye.reason

    def _keep(self, match: Match) -> None:
        """Hold ``match`` open; beyond ``MAX_OPEN_MATCHES``, forget the one heard of least
        recently (a later message for it is one for a match never started)."""
        self.matches[match.match_id] = match
        while len(self.matches) > MAX_OPEN_MATCHES:
            oldest = next(iter(self.matches))
            del self.matches[oldest]
            self._replayed.pop(oldest, None)
            if self._open_turn is not None and self._open_turn[0].match_id == oldest:
                self._open_turn = None

    def _events(self, match_id: str, events) -> Match | None:
        match = self.matches.pop(match_id, None)
        if match is None:
            return None
        self.matches[match_id] = match          # heard of last
        seen = self._replayed.pop(match_id, 0)
        if seen:
            if len(events) < seen:
                self._replayed[match_id] = seen - len(events)
            events = events[seen:]
        if not events:
            return match
        start = len(match._raw)
        if start + len(events) > MAX_MATCH_EVENTS:
            raise ProtocolError(f"the referee sent more than {MAX_MATCH_EVENTS} events for "
                                f"match {said(match_id)}")
        match._raw.extend(events)
        if self._hooks_events:
            for event in match.events[start:]:
                self.bot.on_event(event, match)
        return match

    def _turn(self, turn: referee_pb2.TurnRequest) -> referee_pb2.BotMessage | None:
        match = self._events(turn.match_id, turn.events)
        if match is None:  # a turn of a match we were never told of: answer anyway
            match = Match(turn.match_id, turn.view.seat, [], None, turn.move_ms, turn.bank_ms, 0)
            self._keep(match)
        self._open_turn = None       # the turn before is over, answered or not
        # a view that breaks what docs/bots.md promises a bot's choose is not shown to it
        if not turn.legal:
            problem = "offers no legal card"
        elif not 0 <= turn.view.seat < len(turn.view.seats):
            problem = f"puts the bot at seat {turn.view.seat} of {len(turn.view.seats)}"
        else:
            problem = None
        if problem is not None:
            log.warning("the referee's turn %d of match %s %s; not answered", turn.turn_id,
                        said(turn.match_id), problem)
            return None
        view = View(turn, match)
        card = self.bot.choose(view)
        _check_card(card, view, "choose()")
        self._open_turn = (turn, {card})
        return self._action(turn.turn_id, card)

    def _rejected(self, rejected: referee_pb2.ActionRejected) -> referee_pb2.BotMessage | None:
        """The referee refused our action: if for its card, let the bot try again with a
        card not yet tried."""
        if self._open_turn is None or self._open_turn[0].turn_id != rejected.turn_id:
            # of no turn of ours: a referee that sent these in a loop filled the disk
            log.debug("action rejected for turn %d, which is not open: ignored",
                      rejected.turn_id)
            return None
        log.warning("action rejected (%s): %s", _name(referee_pb2.ErrorCode, rejected.code),
                    said(rejected.reason))
        if rejected.code not in RETRIED_CODES:
            return None
        turn, tried = self._open_turn
        match = self.matches.get(turn.match_id)
        view = View(turn, match)
        card = self.bot.on_rejected(view, rejected.reason, tried)
        if card is None:
            return None
        _check_card(card, view, "on_rejected()")
        tried.add(card)
        return self._action(turn.turn_id, card)

    @staticmethod
    def _action(turn_id: int, card: str) -> referee_pb2.BotMessage:
        return referee_pb2.BotMessage(action=referee_pb2.Action(turn_id=turn_id,
                                                                card=CARD_VALUES[card]))


class ProtocolError(RuntimeError):
    """The referee sent what no referee may (more than a match can hold): the session is
    given up as a broken connection is."""


def said(text: str) -> str:
    """A string from the referee as printed: what is not printable (escape sequences, line
    breaks, Unicode's format characters) escaped, and cut after ``SAID_CHARS``. A stranger's
    server must not write to the bot author's terminal, nor fill a log."""
    cut = len(text) - SAID_CHARS
    shown = "".join(c if c.isprintable() else _escaped(ord(c)) for c in text[:SAID_CHARS])
    return f"{shown}... ({cut} more characters)" if cut > 0 else shown


def _escaped(code: int) -> str:
    """As the Node.js and C++ SDKs write a character: \\xNN, \\uNNNN, \\UNNNNNNNN."""
    return (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
            else f"\\U{code:08x}")


def _name(enum, value: int) -> str:
    """An enum value's name; the number for one this SDK does not know."""
    return enum.Name(value) if value in enum.values() else str(value)


class ChoiceError(TypeError):
    """The bot's ``choose`` (or ``on_rejected``) returned something that is not a card
    token: a bug in the bot, which ends it as an exception raised there would."""


def _check_card(card: object, view: View, hook: str) -> None:
    """Raise :class:`ChoiceError` unless ``card`` is a card token. Anything else (an int,
    None, a coroutine) could only go out as a malformed action: the referee would refuse
    it, a retry would hide the bug, and the log would not say where it came from. A token
    that is not in ``view.legal`` is sent: the referee says why it refuses it, and
    ``on_rejected`` may try another card."""
    if isinstance(card, str) and card in CARD_VALUES:
        return
    if inspect.iscoroutine(card):
        card.close()   # it will never run: no "never awaited" warning on top of the error
        raise ChoiceError(f"{hook} must not be async: it returned a coroutine; define it "
                          f"with def, not async def, and return a card token")
    example = view.legal[0] if view.legal else "7"
    what = (f"{card!r}, which is not a card token" if isinstance(card, str)
            else f"{card!r} ({type(card).__name__})")
    raise ChoiceError(f"{hook} must return one of view.legal (a string such as {example!r}), "
                      f"it returned {what}")


class RefusedError(RuntimeError):
    """The referee refused this bot's Hello."""

    def __init__(self, refusal: referee_pb2.Refusal) -> None:
        self.code = _name(referee_pb2.RefusalCode, refusal.code)
        self.reason = refusal.reason
        super().__init__(f"referee refused the connection ({self.code}): {said(self.reason)}")
