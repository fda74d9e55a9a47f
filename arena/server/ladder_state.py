"""What a ladder makes of its stored matches, and the snapshot a server starts from.

The ladder's pairings read each bot's online Elo, its number of matches and how often
each two bots met; the keys it deals run L1, L2, ... without a gap (a number dealt and
never stored, its match cut short, is dealt again). The spectators' standings of the
ladder read each finished match's outcome (:class:`Results`, a count for each) and an
online Elo of their own. All of it follows the stored matches, in the order they were
stored.

A server that starts takes all of that up again. It read every stored match for it: a
ladder that plays flat out stores millions a day (19,000 in 8 minutes for 4 bots), and a
restart read about 25,000 a second (11.8 s for 300,000 matches of a 300-bot ladder), into
a list of them all. Now the ladder saves a snapshot (:meth:`Store.save_state`) every
:data:`SNAPSHOT_EVERY` matches it stores, as it starts and as it stops (none while it
keeps matches its database could not take: see
:meth:`arena.server.ladder.Ladder._snapshot`); a server reads the last one and the
matches stored since. A snapshot it cannot read (damaged, or another version's) is said in
the log and the matches are read from the first, as before.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournament.ratings import OnlineElo, Placing, count_of, rating_of
from arena.tournament.standings import Results

#: Matches stored between two snapshots: a server that starts reads at most about as
#: many (a fifth of a second). A 300-bot ladder's snapshot, where each bot met about 60
#: others (19,000 outcomes counted), is copied in the event loop in 2 ms, then encoded in
#: the results' writer thread in 110 ms (0.27 MB stored), and taken up again in 0.13 s;
#: where every two bots met (134,000 outcomes), 25 ms, 0.4 s (the event loop then waits
#: up to about 100 ms for the interpreter's lock), 1.44 MB and 0.66 s.
SNAPSHOT_EVERY = 5000

#: The snapshot's format; another is read as no snapshot. 2: its spectators' standings
#: are :class:`Results` of version 2 (each bot's line keeps when its last match ended,
#: for the ladder's absent mark): a server that finds a format-1 snapshot reads the
#: matches from the first, once.
FORMAT = 2


class LadderState:
    """What the pairings and the keys read of the ladder's stored matches (each counted
    by :meth:`add`, in the order stored), as of the match with id :attr:`through`."""

    def __init__(self) -> None:
        self.through = 0                        # the id of the last match counted
        self.stored = 0                         # matches counted (finished or not)
        self.high = 0                           # the highest n of a key counted (L<n>)
        self.missing: set[int] = set()          # the numbers below it not stored
        self.elo = OnlineElo([])
        self.games: Counter[str] = Counter()
        self.meetings: Counter[frozenset[str]] = Counter()

    def add(self, match_id: int, key: str, bots: Sequence[str],
            places: Sequence[int] | None) -> None:
        """Count a stored match: its id, its key ``L<n>``, its bots, their places if it
        finished with a ranking (else it is not rated)."""
        self.through = max(self.through, match_id)
        self.stored += 1
        n = int(key[1:])
        if n > self.high:
            self.missing.update(range(self.high + 1, n))
            self.high = n
        else:
            self.missing.discard(n)
        if places is None:
            return
        for b in bots:
            self.elo.ratings.setdefault(b, 1500.0)
            self.games[b] += 1
        for a, b in itertools.combinations(bots, 2):
            self.meetings[frozenset((a, b))] += 1
        self.elo.update(Placing(bots, places, key))

    def copy(self) -> LadderState:
        """A copy that later matches leave alone (to be saved in another thread)."""
        other = LadderState()
        other.through, other.stored, other.high = self.through, self.stored, self.high
        other.missing = set(self.missing)
        other.elo.ratings = dict(self.elo.ratings)
        other.games = Counter(self.games)
        other.meetings = Counter(self.meetings)
        return other


@dataclass
class Snapshot:
    """A ladder's state and its spectators' standings (their results and online Elo;
    None where the ladder has no spectators), as one saved state."""

    state: LadderState
    results: Results | None = None
    ratings: dict[str, float] | None = None

    def to_data(self) -> dict[str, Any]:
        """As :meth:`arena.store.base.Store.save_state` keeps it (JSON's types). Standings
        read ``stored`` and ``results`` of it
        (:meth:`arena.tournament.standings.Stored.saved`)."""
        s = self.state
        data: dict[str, Any] = {
            "format": FORMAT, "stored": s.stored, "high": s.high, "missing": sorted(s.missing),
            "elo": s.elo.ratings, "games": dict(s.games),
            "meetings": [[*sorted(pair), n] for pair, n in s.meetings.items()]}
        if self.results is not None:
            data["results"] = self.results.to_state()
            data["ratings"] = self.ratings
        return data

    @classmethod
    def from_data(cls, through: int, data: dict[str, Any]) -> Snapshot:
        """The snapshot :meth:`to_data` gave ``data`` of, as of match ``through``;
        ValueError for data it did not give (another format, a damaged or foreign row)."""
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT}")
        if "void" in data:
            raise ValueError(str(data["void"]))
        try:
            snapshot = cls._of(int(through), data)
        except (KeyError, TypeError, AttributeError, IndexError, OverflowError) as exc:
            # JSON of another shape: a list where an object was, a name that is a number
            raise ValueError(f"not a snapshot's data: {type(exc).__name__}: {exc}") from None
        return snapshot

    @classmethod
    def _of(cls, through: int, data: dict[str, Any]) -> Snapshot:
        s = LadderState()
        s.through, s.stored, s.high = through, count_of(data["stored"]), count_of(data["high"])
        s.missing = {int(n) for n in data["missing"]}
        if not all(1 <= n < s.high for n in s.missing):   # dealt again as they are
            raise ValueError(f"keys missing outside L1..L{s.high}")
        s.elo.ratings = {str(b): rating_of(r) for b, r in data["elo"].items()}
        s.games = Counter({str(b): count_of(n) for b, n in data["games"].items()})
        s.meetings = Counter({frozenset(map(str, pair)): count_of(n)
                              for *pair, n in data["meetings"]})
        if "results" not in data:
            return cls(s)
        ratings = {str(b): rating_of(r) for b, r in data["ratings"].items()}
        return cls(s, Results.from_state(data["results"]), ratings)


def void(why: str) -> dict[str, Any]:
    """A saved state in place of a snapshot that must not be used (``why``): the next
    start reads every stored match, and says why."""
    return {"format": FORMAT, "void": why}


__all__ = ["LadderState", "SNAPSHOT_EVERY", "Snapshot", "void"]
