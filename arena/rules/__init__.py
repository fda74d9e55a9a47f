"""The ONO 99 rules engine: pure, deterministic, fast, importable on its own.

>>> from arena.rules import Game, parse_card, token
>>> game = Game.new("modern", seats=3, seed=7)
>>> seat = game.to_act
>>> card = game.legal_cards()[0]
>>> game.play(seat, card)

Cards are small ints (:mod:`arena.rules.cards` maps them to tokens such as ``"P2"``).
:meth:`Game.view` builds what one seat may know; :meth:`Game.spectator_view` what a
spectator may know. :attr:`Game.events` is the public record (:mod:`arena.rules.events`).
"""

from arena.rules.cards import CODES, TOKENS, parse_card, parse_cards, token, tokens_of
from arena.rules.errors import (
    ConfigError, IllegalPlay, NotInGame, NotInHand, NotYourTurn, PlayError, ScenarioError,
)
from arena.rules.game import Deal, Game, Outcome, replay
from arena.rules.rulesets import (
    DEFAULT_RULESET, RULESETS, GameConfig, Ruleset, get_ruleset, make_config, parse_option_args,
)
from arena.rules.views import SeatView, SpectatorView, Table

__all__ = [
    "CODES", "TOKENS", "ConfigError", "Deal", "DEFAULT_RULESET", "Game", "GameConfig",
    "IllegalPlay", "NotInGame", "NotInHand", "NotYourTurn", "Outcome", "PlayError", "RULESETS", "Ruleset",
    "ScenarioError", "SeatView", "SpectatorView", "Table", "get_ruleset", "make_config",
    "parse_card", "parse_cards", "parse_option_args", "replay", "token", "tokens_of",
]
