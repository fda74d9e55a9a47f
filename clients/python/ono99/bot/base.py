"""The one class a Python bot subclasses."""

from __future__ import annotations

import random

from ono99.bot.model import Event, Match, MatchResult, View


class Bot:
    """Subclass it and implement :meth:`choose`; override the hooks you need.

    ``self.random`` is re-seeded from the referee's seed at every match start: draw all
    your randomness from it and a match replays identically from its seed.
    """

    #: The name sent in the Hello (the referee may show the registered name instead).
    name: str = "bot"

    def __init__(self) -> None:
        self.random = random.Random(0)

    def choose(self, view: View) -> str:
        """Return the card to play, as a token from ``view.legal`` (e.g. ``"7"``, ``"P2"``)."""
        raise NotImplementedError

    def on_match_start(self, match: Match) -> None:
        """A match begins: ``match`` has the seat, names, rules and clock."""

    def on_event(self, event: Event, match: Match) -> None:
        """A public event of ``match`` (already appended to ``match.events``)."""

    def on_match_end(self, result: MatchResult, match: Match | None) -> None:
        """A match ended: ranking, verdicts, every hand revealed."""

    def on_rejected(self, view: View, reason: str, tried: set[str]) -> str | None:
        """The referee refused the card just sent (``reason`` says why); the turn is still
        open. Return another card, or None to wait. By default: a legal card not tried yet."""
        for card in view.legal:
            if card not in tried:
                return card
        return None
