"""House seats: seats the referee plays itself, with an SDK bot object, in its own process.

A :class:`HouseSession` stands where a :class:`~arena.referee.session.BotSession` would:
the match runner sends it the very messages a bot would get and takes its action, but
the bot is a Python object driven by the SDK's own driver (no process, no network, no
wait). check-bot seats them around the bot it examines; the policies here are the
arena's own, kept simple and deterministic so a scripted situation plays out as planned.
"""

from __future__ import annotations

from ono99.bot.base import Bot
from ono99.bot.driver import Driver
from ono99.v1 import referee_pb2

from arena.referee import wire


class FirstLegal(Bot):
    """Plays the first legal card (Card enum order)."""

    name = "house"

    def choose(self, view) -> str:
        return view.legal[0]


class Forcer(Bot):
    """Plays the forcing card (P2, or DP) when it may, else the first legal card: the seat
    before a bot under test makes it owe two cards."""

    name = "house-forcer"

    def choose(self, view) -> str:
        for card in ("P2", "DP"):
            if card in view.legal:
                return card
        return view.legal[0]


class HouseSession:
    """A seat played in-process by ``bot``; answers each turn at once."""

    process = None
    closed = False
    close_reason = ""
    closed_by_referee = False

    def __init__(self, bot: Bot) -> None:
        self.name = bot.name
        self.driver = Driver(bot)
        self.rejections = 0
        self.last_refusal = ""
        self._action: referee_pb2.Action | None = None

    async def send(self, msg: referee_pb2.RefereeMessage) -> None:
        for answer in self.driver.handle(msg):
            if answer.HasField("action"):
                self._action = answer.action

    def post_events(self, match_id: str, events) -> None:
        for _ in self.driver.handle(wire.events(match_id, events)):
            pass   # events need no answer

    def begin_match(self) -> None:
        self.rejections = 0

    def end_match(self) -> None:
        self._action = None

    def open_turn(self, turn_id: int) -> None:
        self._action = None

    def close_turn(self) -> None:
        self._action = None

    async def next_action(self, timeout: float) -> referee_pb2.Action:
        action, self._action = self._action, None
        if action is None:   # the house bot had nothing to say: as a bot that never answers
            raise TimeoutError
        return action

    async def reject(self, turn_id: int, code: str, reason: str) -> None:
        self.rejections += 1
        self.last_refusal = code
        await self.send(wire.rejected(turn_id, code, reason))
