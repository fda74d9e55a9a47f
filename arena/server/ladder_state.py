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

Which bots sit out for their faults (:data:`BENCHED_FOR`) follows the stored matches too,
their verdicts and when each ended: a restarted server kept it in memory only, so a bot
two faults from sitting out, or sitting out, began afresh and played at once.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.referee.results import VerdictKind
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
#: matches from the first, once. 3: it keeps each bot's last faults and when it sits out
#: until (:meth:`LadderState.count_faults`).
FORMAT = 3

#: A bot given one of these verdicts in BENCH_AFTER of its last BENCH_OF ladder matches
#: sits out of the ladder for BENCH_S seconds: a remote bot that stays connected and never
#: answers would otherwise cost every opponent a whole clock, match after match; and one
#: that leaves every third match (its opponent waits out the reconnect grace each time)
#: was never benched while the rule was 3 in a row (the thirtieth review: 75 waits of 10 s
#: in 318 matches). A bot forfeiting by ``illegal`` (more refused actions in a match than
#: the limit: one that answers every refusal with another bad card) keeps nobody waiting,
#: but it is broken: it forfeited every match in a few round trips, 42 in 35 s beside two
#: sample bots, each stored and rated, until a rule it broke between matches cut it off.
BENCHED_FOR = frozenset({VerdictKind.TIMEOUT, VerdictKind.DISCONNECTED, VerdictKind.ABSENT,
                         VerdictKind.ILLEGAL})
BENCH_AFTER = 3
BENCH_OF = 10
BENCH_S = 300.0


def faults_of(bots: Sequence[str], verdicts: Iterable[tuple[int, str]]) -> dict[str, str]:
    """Bot -> the kind of its fault (:data:`BENCHED_FOR`) in a match of ``bots`` (one per
    seat) with ``verdicts`` ((seat, kind) each)."""
    return {bots[seat]: str(kind) for seat, kind in verdicts if kind in BENCHED_FOR}


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
        #: bot -> whether each of its last BENCH_OF matches ended in a fault of its own
        self.faults: dict[str, deque[bool]] = {}
        #: bot -> until when (Unix time) it sits out for its faults (gone once it plays)
        self.benched: dict[str, float] = {}

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

    def count_faults(self, bots: Sequence[str], faulted: Mapping[str, str],
                     at: float) -> list[tuple[str, int]]:
        """Note, for each of a stored match's ``bots``, whether it ended with a fault of
        its own (``faulted``: :func:`faults_of`) at ``at`` (Unix time); at
        :data:`BENCH_AFTER` of its last :data:`BENCH_OF`, it sits out until ``at`` plus
        :data:`BENCH_S`, and its count starts again. A bot's later match ends its bench
        (a restart would otherwise bench it again while the clock read before the bench
        ended: a clock gone back, a time far ahead). The bots that sit out from this
        match, each with the number of matches its count was of."""
        out = []
        for name in bots:
            faults = self.faults.get(name)
            if faults is None:
                faults = self.faults[name] = deque(maxlen=BENCH_OF)
            faults.append(name in faulted)
            if name in faulted and sum(faults) >= BENCH_AFTER:
                out.append((name, len(faults)))
                faults.clear()
                self.benched[name] = at + BENCH_S
            else:
                self.benched.pop(name, None)
        return out

    def copy(self) -> LadderState:
        """A copy that later matches leave alone (to be saved in another thread)."""
        other = LadderState()
        other.through, other.stored, other.high = self.through, self.stored, self.high
        other.missing = set(self.missing)
        other.elo.ratings = dict(self.elo.ratings)
        other.games = Counter(self.games)
        other.meetings = Counter(self.meetings)
        other.faults = {b: deque(f, maxlen=BENCH_OF) for b, f in self.faults.items()}
        other.benched = dict(self.benched)
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
            "meetings": [[*sorted(pair), n] for pair, n in s.meetings.items()],
            "faults": {b: "".join("01"[x] for x in f) for b, f in s.faults.items()},
            "benched": s.benched}
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
        s.faults = {str(b): _window_of(f) for b, f in data["faults"].items()}
        s.benched = {str(b): _time_of(t) for b, t in data["benched"].items()}
        if "results" not in data:
            return cls(s)
        ratings = {str(b): rating_of(r) for b, r in data["ratings"].items()}
        return cls(s, Results.from_state(data["results"]), ratings)


def _window_of(text: Any) -> deque[bool]:
    """A bot's last faults read back (``"0010"``: one digit a match, the last one last);
    ValueError for another text."""
    if not isinstance(text, str) or len(text) > BENCH_OF or text.strip("01"):
        raise ValueError(f"faults {text!r}")
    return deque((x == "1" for x in text), maxlen=BENCH_OF)


def _time_of(value: Any) -> float:
    """A Unix time read back (when a bench ends); ValueError for anything but a number
    (a text, True), NaN, infinity, or a time before 1970."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a time of {value!r}")
    t = float(value)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"a time of {t}")
    return t


def void(why: str) -> dict[str, Any]:
    """A saved state in place of a snapshot that must not be used (``why``): the next
    start reads every stored match, and says why."""
    return {"format": FORMAT, "void": why}


__all__ = ["BENCH_AFTER", "BENCH_OF", "BENCH_S", "BENCHED_FOR", "LadderState", "SNAPSHOT_EVERY",
           "Snapshot", "faults_of", "void"]
