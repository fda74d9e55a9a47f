"""Typed errors of the rules engine.

Two families: :class:`ConfigError` for a game that cannot be set up as asked (bad
ruleset, option, seat count, card token, scenario), and :class:`PlayError` for a play
the rules reject. A rejected play leaves the game unchanged; its ``code`` is the
string the conformance vectors and the wire protocol use.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A game cannot be set up as asked; the message names the bad value and what is allowed."""


class ScenarioError(ConfigError):
    """An explicit deal or reshuffle order is missing or inconsistent (a malformed vector)."""


class PlayError(ValueError):
    """A play the rules reject. The game is unchanged."""

    code = "rejected"

    def __init__(self, message: str, seat: int, card: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat
        self.card = card


class NotYourTurn(PlayError):
    """The seat is not the one to act, or the game is over."""

    code = "not_your_turn"


class NotInHand(PlayError):
    """The seat holds no such card."""

    code = "not_in_hand"


class IllegalPlay(PlayError):
    """The card may not be played now."""

    code = "illegal_play"


class NotInGame(PlayError):
    """The seat cannot forfeit: it is out of the game, is no seat, or the game is over."""

    code = "not_in_game"
