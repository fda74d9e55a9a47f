"""The three rulesets as data, their options, and the registry that finds them by name.

A :class:`Ruleset` is data plus a few named behaviours (what ``99`` does, whether
``-10`` floors at zero, how a game ends); the game reads them once when it is set up,
never through ``if ruleset == ...`` chains. :func:`make_config` checks a ruleset name,
options and a seat count and returns a :class:`GameConfig`, or raises one
:class:`ConfigError` naming the bad value and what is allowed.
"""

from __future__ import annotations

import functools

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from arena.rules.cards import (
    CLASSIC_DECK, DOUBLE_PLAY, HOLD, MODERN_DECK, PLAY_TWO, REVERSE,
)
from arena.rules.errors import ConfigError

MIN_SEATS = 2
MAX_SEATS = 8

# What a 99 card does (Ruleset.ninety_nine).
FOUR_AT_ONCE = "four_at_once"  # modern: never alone; a hand of four is played together
UNPLAYABLE = "unplayable"      # classic: never (option: on a total ending in zero)
SETS_TOTAL = "sets_total"      # classic-set99: sets the total to 99

# How a game ends (Ruleset.ending).
LAST_STANDING = "last_standing"  # one round; a seat that loses is eliminated
ROUNDS = "rounds"                # several rounds, tokens or points


@dataclass(frozen=True)
class Option:
    """One ruleset option: its type, default, allowed values and meaning."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()      # allowed values for a choice option
    minimum: int | None = None         # bounds for an int option
    maximum: int | None = None
    requires: tuple[str, Any] | None = None  # (option, value) this one only makes sense with

    def allowed(self) -> str:
        """What values this option takes, in words."""
        if isinstance(self.default, bool):
            return "true or false"
        if self.choices:
            return " or ".join(str(c) for c in self.choices)
        return f"an integer from {self.minimum} to {self.maximum}"

    def parse(self, value: Any) -> Any:
        """``value`` checked and converted (strings from a command line are accepted)."""
        bad = ConfigError(f"option {self.name}={value!r} is not allowed; it takes {self.allowed()}")
        if isinstance(self.default, bool):
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "yes", "on", "1"):
                return True
            if isinstance(value, str) and value.lower() in ("false", "no", "off", "0"):
                return False
            raise bad
        if isinstance(self.default, int):
            if isinstance(value, bool):
                raise bad
            if isinstance(value, str):
                try:
                    value = int(value.strip())
                except ValueError:
                    raise bad from None
            if not isinstance(value, int):
                raise bad
        if self.choices and value not in self.choices:
            raise bad
        if self.minimum is not None and not (self.minimum <= value <= self.maximum):
            raise bad
        return value


MAX_TOTAL_OPTION = Option(
    "max_total", 98, "the highest total a play may reach (house rule: 98 or 99)", choices=(98, 99))
MAX_PLAYS_OPTION = Option(
    "max_plays", 1000, "plays in one round after which the game ends as a draw",
    minimum=1, maximum=1_000_000)
SCORING_OPTION = Option("scoring", "tokens", "how a game of several rounds is decided",
                        choices=("tokens", "points"))
TOKENS_OPTION = Option(
    "tokens", 3, "tokens each seat starts with; a loss with none left eliminates",
    minimum=0, maximum=100, requires=("scoring", "tokens"))
POINTS_TARGET_OPTION = Option(
    "points_target", 200, "the score that ends a seat's game (points scoring)",
    minimum=1, maximum=1_000_000, requires=("scoring", "points"))
POINTS_MODE_OPTION = Option(
    "points_mode", "elimination",
    "elimination: seats at the target leave; lowest: the game ends at the target",
    choices=("elimination", "lowest"), requires=("scoring", "points"))
NINETY_NINE_ON_ZERO_OPTION = Option(
    "ninety_nine_on_zero", False, "a 99 is playable (+0) on a total ending in zero, once per turn")


@dataclass(frozen=True)
class Ruleset:
    """One ruleset: its deck, its limit, its forcing and deflecting cards, its behaviours."""

    name: str
    summary: str
    deck: tuple[int, ...]
    forcing_card: int                 # the next seat owes two cards
    deflectors: frozenset[int]        # as the first card of an owed pair, pass it on
    ninety_nine: str                  # FOUR_AT_ONCE, UNPLAYABLE or SETS_TOTAL
    minus_ten_floors_at_zero: bool
    ending: str                       # LAST_STANDING or ROUNDS
    options: tuple[Option, ...]

    def option(self, name: str) -> Option:
        """The option called ``name``; ``ConfigError`` listing this ruleset's options if none."""
        for opt in self.options:
            if opt.name == name:
                return opt
        names = ", ".join(o.name for o in self.options)
        raise ConfigError(f"ruleset {self.name!r} has no option {name!r}; its options: {names}")

    @functools.cached_property
    def sorted_deck(self) -> list[int]:
        """The deck's cards in order (to check that a state holds each exactly once).
        Callers compare against it and never change it."""
        return sorted(self.deck)

    @property
    def defaults(self) -> dict[str, Any]:
        """Every option at its default value."""
        return {o.name: o.default for o in self.options}


MODERN = Ruleset(
    name="modern",
    summary="2022 Mattel edition: 112 cards, total stays below 99, last player standing",
    deck=MODERN_DECK,
    forcing_card=PLAY_TWO,
    deflectors=frozenset({REVERSE, PLAY_TWO}),
    ninety_nine=FOUR_AT_ONCE,
    minus_ten_floors_at_zero=True,
    ending=LAST_STANDING,
    options=(MAX_TOTAL_OPTION, MAX_PLAYS_OPTION),
)

_CLASSIC_OPTIONS = (
    SCORING_OPTION, TOKENS_OPTION, POINTS_TARGET_OPTION, POINTS_MODE_OPTION,
    Option(MAX_TOTAL_OPTION.name, 99, MAX_TOTAL_OPTION.help, choices=MAX_TOTAL_OPTION.choices),
    MAX_PLAYS_OPTION,
)

CLASSIC = Ruleset(
    name="classic",
    summary="1980 edition: 54 cards, exactly 99 allowed, 99 unplayable, tokens or points",
    deck=CLASSIC_DECK,
    forcing_card=DOUBLE_PLAY,
    deflectors=frozenset({REVERSE, HOLD}),
    ninety_nine=UNPLAYABLE,
    minus_ten_floors_at_zero=False,
    ending=ROUNDS,
    options=_CLASSIC_OPTIONS + (NINETY_NINE_ON_ZERO_OPTION,),
)

CLASSIC_SET99 = Ruleset(
    name="classic-set99",
    summary="54-card edition: a 99 sets the total to 99, tokens or points",
    deck=CLASSIC_DECK,
    forcing_card=DOUBLE_PLAY,
    deflectors=frozenset({REVERSE, HOLD}),
    ninety_nine=SETS_TOTAL,
    minus_ten_floors_at_zero=False,
    ending=ROUNDS,
    options=_CLASSIC_OPTIONS,
)

#: Every ruleset by name; ``modern`` is the default.
RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {r.name: r for r in (MODERN, CLASSIC, CLASSIC_SET99)})
DEFAULT_RULESET = "modern"


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``; ``ConfigError`` listing the known ones if none."""
    try:
        return RULESETS[name]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown ruleset {name!r}; known rulesets: {', '.join(RULESETS)}") from None


@dataclass(frozen=True)
class GameConfig:
    """A checked setup: ruleset, every option with its value, and the number of seats."""

    ruleset: Ruleset
    seats: int
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def limit(self) -> int:
        """The highest total a play may reach."""
        return self.options["max_total"]

    @property
    def scoring(self) -> str | None:
        """``tokens`` or ``points`` for games of rounds; ``None`` for ``modern``."""
        return self.options.get("scoring")

    def changed_options(self) -> dict[str, Any]:
        """The options that differ from the ruleset's defaults."""
        return {k: v for k, v in self.options.items() if v != self.ruleset.option(k).default}

    def __reduce__(self):
        # options are a read-only mapping, which pickle refuses: rebuild from plain values
        return (make_config, (self.ruleset.name, self.changed_options(), self.seats))

    def describe(self) -> str:
        """One line, e.g. ``classic, 4 seats, scoring=points points_target=100``."""
        changed = " ".join(f"{k}={v}" for k, v in self.changed_options().items())
        text = f"{self.ruleset.name}, {self.seats} seats"
        return text + (", " + changed if changed else "")


def make_config(ruleset: str = DEFAULT_RULESET, options: Mapping[str, Any] | None = None,
                seats: int = 4) -> GameConfig:
    """Check a ruleset name, options and seat count; the :class:`GameConfig` they make.

    Raises :class:`ConfigError` for an unknown ruleset or option, an option that does
    not belong to the ruleset (or to its scoring), a value out of range, or a seat count
    outside 2-8.
    """
    rules = get_ruleset(ruleset)
    if isinstance(seats, bool) or not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise ConfigError(f"seats={seats!r} is not allowed; a table has {MIN_SEATS} to {MAX_SEATS} seats")
    values = rules.defaults
    given = dict(options or {})
    for name, value in given.items():
        values[name] = rules.option(name).parse(value)
    for name in given:
        needs = rules.option(name).requires
        if needs is not None and values[needs[0]] != needs[1]:
            raise ConfigError(
                f"option {name!r} applies only with {needs[0]}={needs[1]}, "
                f"not {needs[0]}={values[needs[0]]}")
    return GameConfig(ruleset=rules, seats=seats, options=MappingProxyType(values))


def parse_option_args(pairs: list[str]) -> dict[str, str]:
    """``["key=value", ...]`` from a command line as a dict; ``ConfigError`` on a bad pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"option {pair!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def played_config(ruleset: str, options: Mapping[str, Any] | None, seats: int) -> GameConfig:
    """The config a match was played under, from every option with its value (as the
    referee tells bots, and a database or an event log keeps them): those of the other
    scoring too, which :func:`make_config` refuses (``points_target`` under tokens); the
    options that differ from the defaults say the same."""
    rules = get_ruleset(ruleset)
    changed = {k: v for k, v in (options or {}).items() if v != rules.option(k).default}
    return make_config(ruleset, changed, seats)
