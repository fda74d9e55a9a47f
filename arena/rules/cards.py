"""Cards as small ints, their tokens, and the decks of each ruleset.

A card is an ``int`` code. Codes are ordered by what the card does to the total,
so a hand kept sorted has its always-playable cards (``-10``, ``R``, ``P2``, ``DP``,
``H``) first, then the number cards by value, then ``99``: which number cards are
playable is one ``bisect`` on the sorted hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from arena.rules.errors import ConfigError

MINUS_TEN = 0
REVERSE = 1
PLAY_TWO = 2
DOUBLE_PLAY = 3
HOLD = 4
NUMBER_BASE = 5  # the code of the number card "0"; "n" is NUMBER_BASE + n
TEN = NUMBER_BASE + 10
NINETY_NINE = 16

#: Token of each card code, indexed by code.
TOKENS: tuple[str, ...] = (
    "-10", "R", "P2", "DP", "H",
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
    "99",
)
CODES: dict[str, int] = {token: code for code, token in enumerate(TOKENS)}
ALL_CODES = range(len(TOKENS))


def number(value: int) -> int:
    """The code of the number card ``value`` (0-10)."""
    return NUMBER_BASE + value


def is_number(card: int) -> bool:
    """Whether ``card`` is a number card (``0`` to ``10``)."""
    return NUMBER_BASE <= card <= TEN


def card_value(card: int) -> int:
    """The face value of a number card."""
    return card - NUMBER_BASE


def token(card: int) -> str:
    """The token of a card code, e.g. ``token(PLAY_TWO) == "P2"``."""
    return TOKENS[card]


def parse_card(text: str | int, allowed: Iterable[int] | None = None) -> int:
    """The code of a card token; ``ConfigError`` naming the token when it is unknown.

    ``allowed`` restricts the answer to the cards of one deck.
    """
    code = CODES.get(text) if isinstance(text, str) else None
    if code is None:
        known = sorted(set(allowed)) if allowed is not None else list(ALL_CODES)
        raise ConfigError(
            f"unknown card token {text!r}; known tokens: {', '.join(TOKENS[c] for c in known)}"
        )
    if allowed is not None and code not in allowed:
        known = sorted(set(allowed))
        raise ConfigError(
            f"card {text!r} is not in this deck; its tokens: {', '.join(TOKENS[c] for c in known)}"
        )
    return code


def parse_cards(tokens: Iterable[str], allowed: Iterable[int] | None = None) -> list[int]:
    """Codes of a list of tokens, in order."""
    allowed_set = frozenset(allowed) if allowed is not None else None
    return [parse_card(t, allowed_set) for t in tokens]


def tokens_of(cards: Iterable[int]) -> list[str]:
    """Tokens of a list of codes, in order."""
    return [TOKENS[c] for c in cards]


def build_deck(counts: Mapping[int, int]) -> tuple[int, ...]:
    """A deck in canonical (sorted) order from ``{code: copies}``."""
    deck: list[int] = []
    for code in sorted(counts):
        deck.extend([code] * counts[code])
    return tuple(deck)


def deck_counts(deck: Iterable[int]) -> dict[str, int]:
    """``{token: copies}`` of a deck, as the conformance vectors write it."""
    return {TOKENS[c]: n for c, n in sorted(Counter(deck).items())}


MODERN_DECK = build_deck(
    {number(0): 8, **{number(v): 6 for v in range(1, 10)}, TEN: 10,
     NINETY_NINE: 10, REVERSE: 10, MINUS_TEN: 10, PLAY_TWO: 10}
)
CLASSIC_DECK = build_deck(
    {**{number(v): 3 for v in range(2, 10)}, TEN: 10,
     HOLD: 4, REVERSE: 6, MINUS_TEN: 4, DOUBLE_PLAY: 2, NINETY_NINE: 4}
)

#: Points a card left in hand costs at the end of a round in ``points`` scoring.
POINTS: tuple[int, ...] = tuple(
    card_value(c) if is_number(c) else 20 if c == NINETY_NINE else 15 for c in ALL_CODES
)
