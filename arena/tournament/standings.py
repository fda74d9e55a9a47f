"""Standings from stored matches: the batch rating fit plus each bot's record."""

from __future__ import annotations

import hashlib
import itertools
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.referee.results import MatchResult, Status
from arena.store.base import (MatchRecord, NotFoundError, Store, TournamentRecord,
                              UnreadableStateError)
from arena.tournament.ratings import Fit, Placing, Tally, count_of, fit


@dataclass
class BotLine:
    """One bot's row of the standings."""

    bot: str
    elo: float = 1500.0
    interval: float = 0.0           # half-width of the narrowest elo +- h holding [low, high]
    matches: int = 0
    wins: int = 0                   # sole first place
    place_total: int = 0
    faults: Counter = field(default_factory=Counter)   # verdict kind -> count
    low: float = 0.0                # the 95% interval of the Elo (not symmetric around it
    high: float = 0.0               # where the data are not); 0, 0 when unknown
    #: on a ladder (:func:`ladder_order`): "provisional", "absent" or "removed", else ""
    mark: str = ""
    #: when its last finished match counted ended (Unix time; 0: not known)
    last: float = 0.0

    @property
    def average_place(self) -> float:
        return self.place_total / self.matches if self.matches else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"bot": self.bot, "elo": round(self.elo, 1), "ci95": round(self.interval, 1),
                "elo_low": round(self.low, 1), "elo_high": round(self.high, 1),
                "matches": self.matches, "wins": self.wins,
                "average_place": round(self.average_place, 3), "faults": dict(self.faults)}


@dataclass
class Standings:
    """Every bot's line, best first, and the fit behind them (None before any match)."""

    lines: list[BotLine]
    fit: Fit | None
    los: dict[str, dict[str, float]] | None = None   # as a server sent it (no fit here)
    #: when the last match counted ended (Unix time; 0: not known), which a ladder's
    #: absent bots are measured against (:func:`ladder_order`)
    latest: float = 0.0

    @property
    def rated(self) -> bool:
        """Whether there are ratings yet (a fit here, or a server's)."""
        return self.fit is not None or self.los is not None

    def los_matrix(self) -> list[list[float]]:
        """LOS[i][j]: probability that line i's bot is stronger than line j's."""
        bots = [line.bot for line in self.lines]
        if self.fit is not None:
            return [[self.fit.los(a, b) for b in bots] for a in bots]
        if self.los is not None:
            return [[self.los.get(a, {}).get(b, 0.5) for b in bots] for a in bots]
        return [[0.5] * len(bots) for _ in bots]

    def ranks(self) -> list[int]:
        """Each line's rank, from 1; 0 for a bot removed from a ladder (listed last, not
        ranked: its matches stay in the fit, for its opponents' sake)."""
        ranked = [int(line.mark != REMOVED) for line in self.lines]
        return [n * r for n, r in zip(itertools.accumulate(ranked), ranked)]

    def to_dict(self, los: bool = True) -> dict[str, Any]:
        """Every line, then (unless not ``los``) the likelihood of superiority of every two
        bots, by name: n^2 values; then the marks of a ladder's lines, by name (each line
        keeps the keys it had before there were marks: scripts read them)."""
        return {"standings": [dict(rank=rank, **line.to_dict())
                              for rank, line in zip(self.ranks(), self.lines)],
                "los": {a.bot: {b.bot: round(v, 4) for b, v in zip(self.lines, row)}
                        for a, row in zip(self.lines, self.los_matrix())} if los else {},
                "marks": {line.bot: line.mark for line in self.lines if line.mark}}


def count_match(lines: dict[str, BotLine], bots: Sequence[str], places: Sequence[int],
                verdicts: Iterable[tuple[int, str]], at: float = 0.0) -> None:
    """Add one finished match (ended at Unix time ``at``, 0 if not known) to the bots'
    lines: a match each, their places, a win for a sole first place, a fault per verdict
    (``(seat, kind)``), and (if known) when it ended as each bot's last. The final
    standings and the live view count with this."""
    for seat, bot in enumerate(bots):
        line = lines.setdefault(bot, BotLine(bot))
        line.matches += 1
        line.place_total += places[seat]
        if at:
            line.last = at
    firsts = [seat for seat, place in enumerate(places) if place == 1]
    if len(firsts) == 1:
        lines[bots[firsts[0]]].wins += 1
    for seat, kind in verdicts:
        lines[bots[seat]].faults[kind] += 1


@dataclass(frozen=True, slots=True)
class Played:
    """A finished match as standings read it.

    A server keeps one for every match of its ladder for as long as it runs, so those made
    by :meth:`of` and :meth:`of_result` share what repeats: the bots' names (interned), the
    places (one tuple for each order), and a sample that is the match's own key (the
    same string): 194 bytes a match read back from the store, where its own copies took
    447 (a 40-bot ladder)."""

    key: str                            # orders the fit's sums
    bots: tuple[str, ...]               # bot per seat
    places: tuple[int, ...]             # place per seat, from 1
    sample: str                         # matches of one duplicate set share it
    verdicts: tuple[tuple[int, str], ...] = ()   # (seat, kind)
    at: float = 0.0                     # when it ended (Unix time; 0: not known)

    @classmethod
    def of(cls, m: MatchRecord) -> Played | None:
        """A stored match (None unless it finished with a ranking)."""
        if m.status != Status.FINISHED or not m.ranking:
            return None
        return cls._shared(m.key, m.bots, m.places(), m.sample,
                           tuple((v["seat"], v["kind"]) for v in m.verdicts),
                           m.started_at + m.duration_s)

    @classmethod
    def of_result(cls, key: str, sample: str, result: MatchResult) -> Played | None:
        """A match just played (None unless it finished with a ranking)."""
        if result.status != Status.FINISHED or not result.ranking:
            return None
        return cls._shared(key, result.spec.names, result.places(), sample,
                           tuple((v.seat, v.kind) for v in result.verdicts),
                           result.started_at + result.duration_s)

    @classmethod
    def _shared(cls, key: str, bots: Iterable[str], places: Iterable[int], sample: str,
                verdicts: tuple[tuple[int, str], ...], at: float) -> Played:
        places = tuple(places)
        return cls(key, tuple(map(sys.intern, bots)), _PLACES.setdefault(places, places),
                   key if sample == key else sample, verdicts, at)


#: the places tuples of Played, one for each order (a handful in any field)
_PLACES: dict[tuple[int, ...], tuple[int, ...]] = {}

#: A match's outcome as the fit and the crosstable read it: each seat's bot and place, by
#: bot (the seats' order tells them nothing), in one flat tuple (bot, place, bot, place...):
#: a tuple of pairs took twice the memory at 4 seats.
Outcome = tuple[str | int, ...]


class Results:
    """Every finished match of a tournament or ladder, as its standings read them, in
    memory bounded by the field rather than by the matches.

    A server keeps one for its ladder (and one for its live view) for as long as it runs,
    at up to 60 matches a second. What the fit's estimate and the crosstable read is a
    :class:`Tally` (for each two bots, how often each finished ahead, and level), which
    grows with the pairs of bots that met. What the intervals read is the spread of the
    samples (the sandwich's meat: see :mod:`arena.tournament.ratings`), sample by sample:

    * A match that is a sample of its own (every ladder match, and every match of a
      tournament without duplicate deals) counts only for its outcome: the same bots in
      the same places give the same meat, so such matches are kept as one count per
      outcome. A 2-seat ladder of n bots holds at most 3 n (n - 1) / 2 of them.
    * At more seats outcomes rarely repeat (about 140 bytes each). Past ``keep`` outcomes
      (100,000 by default), only a share of them is kept: those whose hash falls below a
      threshold, halved each time the outcomes kept would pass ``keep``, each standing for
      2^halvings samples. That share is a random sample of the outcomes (the hash knows
      nothing of the results), so the meat it gives is unbiased; its noise moved interval
      widths by at most 8% where each bot was in 400 kept outcomes (a 500-bot field's bot
      is in about 800 of 100,000). Which outcomes are kept depends only on which have
      come, not on their order: the threshold is the highest at which all that came fit,
      and an outcome below it was kept from its first match.
    * The matches of a duplicate set are kept one by one (the set is the sample), which a
      tournament's schedule bounds.

    The fit reads the outcomes in one order (by outcome, then by sample), so the same
    matches give the same standings to the last bit, in whatever order they came."""

    #: outcomes of single-match samples kept before only a share of them is
    KEEP = 100_000
    #: the version of :meth:`to_state`'s data; :meth:`from_state` reads no other. 2: each
    #: bot's line keeps when its last match ended, and the state when the last one did
    #: (read as if unknown, a state from before left the ladder's absent bots unmarked)
    VERSION = 2

    def __init__(self, played: Iterable[Played] = (), keep: int | None = None) -> None:
        self.matches = 0
        self.keep = keep or self.KEEP
        self.lines: dict[str, BotLine] = {}          # counts only: no rating
        self.tally = Tally()                          # every match's pairs
        self.folded: Counter[Outcome] = Counter()     # matches that are samples of their own
        self.halvings = 0                             # ... kept: hash below 2^-halvings
        self.sets: dict[str, list[Outcome]] = {}      # the matches of each duplicate set
        #: when the last match added ended (0: not known). Each bot's line keeps its own
        #: last match's, as added: the order they are stored in, not the largest time, so
        #: that one match stamped by a clock running ahead does not set the mark for good
        self.latest = 0.0
        for p in played:
            self.add(p)

    def add(self, played: Played) -> None:
        self.matches += 1
        if played.at:
            self.latest = played.at
        count_match(self.lines, played.bots, played.places, played.verdicts, played.at)
        lines = self.lines
        # each name once in memory (the lines' own), though every stored match read
        # brings its own copies
        outcome = tuple(x for bot, place in sorted(zip(played.bots, played.places))
                        for x in (lines[bot].bot, place))
        bots, places = outcome[::2], outcome[1::2]
        self.tally.add(bots, places)
        if len(set(bots)) < 2:
            return                      # no pair of two bots: nothing for the meat
        if played.sample == played.key:
            self.tally.samples += 1
            folded = self.folded
            if outcome in folded:
                folded[outcome] += 1
            elif not self.halvings or _share(outcome) >> (64 - self.halvings) == 0:
                # below the threshold (every outcome is, until the first halving: no hash)
                folded[outcome] = 1
                while len(folded) > self.keep:
                    self.halvings += 1
                    for kept in [o for o in folded if _share(o) >> (64 - self.halvings)]:
                        del folded[kept]
        else:
            outcomes = self.sets.get(played.sample)
            if outcomes is None:
                outcomes = self.sets[played.sample] = []
                self.tally.samples += 1
            outcomes.append(outcome)

    def copy(self) -> Results:
        """A copy that later matches leave alone (to fit in another thread)."""
        other = Results(keep=self.keep)
        other.matches = self.matches
        other.lines = {b: replace(line, faults=Counter(line.faults))
                       for b, line in self.lines.items()}
        other.tally = self.tally.copy()
        other.folded = Counter(self.folded)
        other.halvings = self.halvings
        other.latest = self.latest
        other.sets = {sample: list(outcomes) for sample, outcomes in self.sets.items()}
        return other

    def to_state(self) -> dict[str, Any]:
        """What it holds as plain data (JSON's types), that :meth:`from_state` reads back:
        a ladder's snapshot (:mod:`arena.server.ladder_state`) keeps it, so that a server
        need not read every stored match again as it starts."""
        return {"version": self.VERSION, "latest": self.latest,
                "matches": self.matches, "keep": self.keep, "halvings": self.halvings,
                "lines": [[b, line.matches, line.wins, line.place_total, dict(line.faults),
                           line.last] for b, line in self.lines.items()],
                "tally": self.tally.to_state(),
                "folded": [[list(outcome), count] for outcome, count in self.folded.items()],
                "sets": {sample: [list(o) for o in outcomes]
                         for sample, outcomes in self.sets.items()}}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Results:
        """The results :meth:`to_state` gave ``state`` of: their standings are the same to
        the last bit, and so are those of the same matches added to both."""
        if state.get("version") != cls.VERSION:
            raise ValueError(f"results of version {state.get('version')!r}, not {cls.VERSION}")
        other = cls(keep=int(state["keep"]))
        other.latest = _time(state["latest"])
        other.matches = count_of(state["matches"])
        other.halvings = int(state["halvings"])
        # as add can leave them: a keep below 1 had the next add halve for ever (in the
        # event loop: a server that answered no one), past 63 halvings it failed
        if other.keep < 1 or not 0 <= other.halvings < 64:
            raise ValueError(f"keep {other.keep} and {other.halvings} halvings")
        for b, matches, wins, place_total, faults, last in state["lines"]:
            b = sys.intern(b)
            other.lines[b] = BotLine(b, matches=count_of(matches), wins=count_of(wins),
                                     place_total=count_of(place_total),
                                     faults=Counter({k: count_of(n) for k, n in faults.items()}),
                                     last=_time(last))
        names = {b: b for b in other.lines}    # each name once in memory, as add keeps it

        def outcome(flat: list) -> Outcome:
            return tuple(names[x] if i % 2 == 0 else int(x) for i, x in enumerate(flat))
        other.tally = Tally.from_state(state["tally"], names)
        other.folded = Counter({outcome(o): count_of(count) for o, count in state["folded"]})
        other.sets = {sample: [outcome(o) for o in outcomes]
                      for sample, outcomes in state["sets"].items()}
        return other

    @property
    def bots(self) -> set[str]:
        """Every bot of every match."""
        return set(self.lines)

    def placings(self) -> list[Placing]:
        """The samples the fit's meat reads, each with the number of samples it stands
        for, in one order whatever the order the matches came in (the fit's sums are the
        :attr:`tally`)."""
        share = 1 << self.halvings
        out = [Placing(outcome[::2], outcome[1::2], sample=outcome, count=count * share)
               for outcome, count in sorted(self.folded.items())]
        for sample in sorted(self.sets):
            out += [Placing(outcome[::2], outcome[1::2], sample=sample)
                    for outcome in sorted(self.sets[sample])]
        return out


def _time(value: Any) -> float:
    """A Unix time read back from a state (0: not known); ValueError for what is none."""
    at = float(value)
    if not 0 <= at < float("inf"):
        raise ValueError(f"{value!r} is no time")
    return at


def _share(outcome: Outcome) -> int:
    """The outcome's place among all outcomes, for keeping a share of them: 64 bits of a
    hash of it that every process computes alike (Python's own hash of a str is not)."""
    return int.from_bytes(hashlib.blake2b(repr(outcome).encode(), digest_size=8).digest())


@dataclass
class CrossCell:
    """Head to head, from one bot's side: matches it finished ahead of, behind, or level
    with one opponent."""

    ahead: int = 0
    behind: int = 0
    level: int = 0


def stored_played(store: Store, record: TournamentRecord, after: int = 0) -> Iterator[Played]:
    """A tournament's finished matches (with a ranking) as standings read them, read from
    ``store`` a page at a time (after the match with id ``after``): whole, as records,
    they took 4 KB each (a ladder of a million matches, 4 GB)."""
    for m in store.iter_matches(record, after=after):
        if (played := Played.of(m)) is not None:
            yield played


def saved_misfit(store: Store, record: TournamentRecord, through: int,
                 stored: int) -> str | None:
    """Why a saved state of ``record`` said to count ``stored`` matches, through the
    match with id ``through``, cannot be one (None: it can). Ids are distinct and from 1,
    so no more than ``through`` matches have one up to it: a state said to count more (a
    through of 0, or below) would have the matches it counts read, and counted, again. And
    ``through`` is 0 (none counted) or one of its matches: a foreign row's past the last
    id would have the matches stored later under lower ids skipped."""
    if not 0 <= stored <= through < 2 ** 63:
        return f"{stored} matches through match id {through}"
    try:
        if through == 0 or store.match(through).tournament == record.name:
            return None
    except NotFoundError:
        pass
    return f"match {through} is none of tournament {record.name!r}'s"


@dataclass
class Stored:
    """What standings keep of a tournament's stored matches, read up to the match with
    id ``last_id``: how many (finished or not) and the finished ones' :class:`Results`."""

    last_id: int = 0
    matches: int = 0
    results: Results = field(default_factory=Results)

    @classmethod
    def saved(cls, store: Store, record: TournamentRecord) -> Stored:
        """Where reading the tournament starts: its saved state, if that holds its
        standings (a ladder's snapshot, :mod:`arena.server.ladder_state`: the matches it
        counts as ``stored`` and their results as ``results``, of
        :meth:`Results.to_state`), else nothing read. One that cannot be used is as
        none (the ladder says so in the server's log)."""
        try:
            state = store.state(record)
            if state is None or "results" not in state.data:   # none, or a void one
                return cls()
            stored = int(state.data["stored"])
            if saved_misfit(store, record, state.through, stored) is not None:
                return cls()
            return cls(state.through, stored, Results.from_state(state.data["results"]))
        # JSON of another shape (a list where an object was, a name that is a number)
        except (UnreadableStateError, ValueError, KeyError, TypeError, AttributeError,
                IndexError, OverflowError):
            return cls()

    def read(self, store: Store, record: TournamentRecord) -> bool:
        """Add the matches stored since, a page at a time; whether there were any."""
        last = self.last_id
        for m in store.iter_matches(record, after=last):
            self.last_id = m.id
            self.matches += 1
            if (played := Played.of(m)) is not None:
                self.results.add(played)
        return self.last_id != last


def standings(matches: Sequence[MatchRecord], bots: Sequence[str]) -> Standings:
    """Standings of ``bots`` from their stored matches (in any order: the same matches give
    the same standings, to the last bit, however a resumed run stored them)."""
    return standings_of([p for m in matches if (p := Played.of(m)) is not None], bots)


def standings_of(played: Results | Iterable[Played], bots: Sequence[str],
                 rate: bool = True) -> Standings:
    """Standings of ``bots`` (and of any other bot of the matches) from finished matches
    (stored, or live ones as they end); ``rate=False``: their counts only, unrated (as
    before any match), without the fit."""
    results = played if isinstance(played, Results) else Results(played)
    lines = {b: BotLine(b) for b in bots}
    for b in sorted(results.lines):
        lines[b] = replace(results.lines[b], faults=Counter(results.lines[b].faults))
    outs = results.placings()
    result_fit = fit(outs, list(lines), tally=results.tally) if outs and rate else None
    if result_fit is not None:
        for line in lines.values():
            line.elo = result_fit.elo(line.bot)
            line.interval = result_fit.interval(line.bot)
            line.low, line.high = result_fit.bounds(line.bot)
    # a bot with no match yet (one entered on a ladder, or not yet connected) has only
    # the prior's 1500: it goes below every bot that has played, not among them
    ordered = sorted(lines.values(), key=lambda l: (not l.matches, -l.elo, l.average_place, l.bot))
    return Standings(ordered, result_fit, latest=results.latest)


#: A ladder bot with fewer matches than this is provisional: listed below every
#: established bot, whatever its rating (lichess keeps provisional players off its
#: leaderboards the same way). Ten 2-seat matches leave an interval about +-240 wide.
ESTABLISHED = 10

#: A ladder bot whose last match ended this long before the ladder's last match (in
#: seconds: a week) is absent: listed below the bots that play, its rating frozen since
#: (lichess's leaderboards leave out players with no rated game in a week). Counted from
#: the ladder's last match, not from now: a server stopped for a month marks nobody.
ABSENT_S = 7 * 86400

#: The marks of :func:`ladder_order`.
PROVISIONAL = "provisional"
ABSENT = "absent"
REMOVED = "removed"


def ladder_order(board: Standings, removed: Collection[str] = ()) -> Standings:
    """``board`` (of :func:`standings_of`) in the ladder's order: the established bots by
    the low end of their 95% interval, then the provisional ones (:data:`ESTABLISHED`)
    alike, then the absent ones (:data:`ABSENT_S`) alike, then the bots removed from the
    server (``removed``), marked and not ranked.

    A tournament's field plays an even schedule, and its standings rank by the Elo. A
    ladder's bots come and go with any number of matches: ranked by the Elo alone, a bot
    that quit after one win over a weak bot ranked second above bots of 300 matches
    (1690, -657 +1548), a version that won once and was removed stayed first for good,
    and a bot could be entered, win once and be removed to hold a place. The low end
    of the interval (as TrueSkill ranks by mu - 3 sigma) is what a bot has shown; the
    Elo and the interval are printed beside it. A remote bot that stopped connecting kept
    its place for good, its rating frozen: it is marked absent until it plays again. The
    lines are marked in place."""
    removed = set(removed)
    order = {REMOVED: 3, ABSENT: 2, PROVISIONAL: 1, "": 0}

    def key(line: BotLine) -> tuple:
        value = line.low if board.rated else line.elo
        return (order[line.mark], not line.matches, line.matches < ESTABLISHED, -value,
                -line.elo, line.bot)

    for line in board.lines:
        line.mark = (REMOVED if line.bot in removed else
                     ABSENT if line.last and board.latest - line.last > ABSENT_S else
                     PROVISIONAL if line.matches < ESTABLISHED else "")
    return Standings(sorted(board.lines, key=key), board.fit, board.los, board.latest)


def ranked(board: Standings, removed: Collection[str] | None) -> Standings:
    """A tournament's ``board`` as it is (``removed`` None), a ladder's in the ladder's
    order (:func:`ladder_order`, ``removed``: its bots removed from the server): where
    standings are shown (the organiser's, the spectators'), they are in one order."""
    return board if removed is None else ladder_order(board, removed)


def crosstable(played: Results | Iterable[Played],
               bots: Sequence[str]) -> dict[str, dict[str, CrossCell]]:
    """For each bot, against each other bot: how often it finished ahead, behind, level."""
    results = played if isinstance(played, Results) else Results(played)
    table = {a: {b: CrossCell() for b in bots if b != a} for a in bots}
    # one pass over the tally's pairs that met, each giving both bots' cells
    for ahead in results.tally.ahead.values():
        for a, row in ahead.items():
            cells = table.get(a)
            if cells is None:
                continue
            for b, count in row.items():
                if b in cells:
                    cells[b].ahead += count
                    table[b][a].behind += count
    for level in results.tally.level.values():
        for (a, b), count in level.items():
            if a in table and b in table[a]:
                table[a][b].level += count
                table[b][a].level += count
    return table


def interval_text(elo: float, low: float, high: float, ci95: float) -> str:
    """The 95% interval as distances from the Elo, ``-120 +310`` (``+-ci95`` from a source
    that sends no bounds)."""
    if low == high == 0.0:
        return f"±{ci95:.0f}"
    return f"-{max(elo - low, 0.0):.0f} +{max(high - elo, 0.0):.0f}"


def faults_text(faults: Counter) -> str:
    """``2 timeout, 1 crashed`` (or ``0``)."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(faults.items())) or "0"
