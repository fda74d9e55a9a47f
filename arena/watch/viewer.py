"""What a viewer holds of what the spectator service sends it: a match, or a tournament,
grown message by message, and what each message brought that is new.

The service starts every stream with a snapshot, sends a fresh one when a viewer falls
behind or TV switches matches, and may send a frame a snapshot already had; a stream
opened again after the server went away starts over with a snapshot too. Sorting this
out once, here, lets a log print each event once and a table show the latest state,
whatever the stream did.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.watch import wire

RECENT_RESULTS = 10     # finished matches a tournament's viewer keeps


@dataclass
class MatchUpdate:
    """What one message brought: a match seen for the first time (its summary is then the
    record's), frames and verdicts not seen before, in order, and the end if it came."""

    started: bool = False
    frames: list[pb.MatchFrame] = field(default_factory=list)
    verdicts: list[referee_pb2.Verdict] = field(default_factory=list)
    over: pb.MatchOver | None = None


class WatchedMatch:
    """The match a viewer follows, as a record that grows (a ``MatchSnapshot``: its
    summary, frames, verdicts and end), and when its latest frame arrived, for the clock
    of the seat thinking now. TV's next match replaces it."""

    def __init__(self) -> None:
        self.record: pb.MatchSnapshot | None = None
        self._open_ms = 0          # the seat to act had thought this long ...
        self._since = 0.0          # ... at this moment (time.monotonic())

    def apply(self, message: pb.MatchFeed, now: float) -> MatchUpdate:
        """Take one message of a match stream (``now``: its arrival, time.monotonic())."""
        kind = message.WhichOneof("kind")
        if kind == "snapshot":
            return self._snapshot(message.snapshot, now)
        record = self.record
        if record is None:             # a stream always starts with a snapshot
            return MatchUpdate()
        if kind in ("frame", "frames"):   # frames: those that piled up for a viewer that lagged
            last = record.frames[-1].seq if record.frames else -1
            frames = [message.frame] if kind == "frame" else message.frames.frames
            new = [f for f in frames if f.seq > last]
            if not new:
                return MatchUpdate()
            record.frames.extend(new)
            self._open_ms, self._since = 0, now
            return MatchUpdate(frames=new)
        if kind == "verdict":
            return MatchUpdate(verdicts=self._add_verdicts([message.verdict]))
        if kind == "over":
            self._end(message.over)
            return MatchUpdate(over=message.over)
        return MatchUpdate()

    def thinking_ms(self, now: float) -> int | None:
        """How long the seat to act has been thinking, counted here from the last frame's
        arrival (None once the match is over, or before it is known)."""
        record = self.record
        if record is None or record.HasField("over") or not record.frames:
            return None
        return self._open_ms + int((now - self._since) * 1000)

    def _snapshot(self, snapshot: pb.MatchSnapshot, now: float) -> MatchUpdate:
        self._open_ms, self._since = snapshot.open_turn_ms, now
        record = self.record
        if record is None or record.match.match_id != snapshot.match.match_id:
            self.record = record = wire.copy_of(snapshot)
            return MatchUpdate(True, list(record.frames), list(record.verdicts),
                               record.over if record.HasField("over") else None)
        last = record.frames[-1].seq if record.frames else -1
        frames = [f for f in snapshot.frames if f.seq > last]
        record.frames.extend(frames)
        record.match.CopyFrom(snapshot.match)
        record.delayed = snapshot.delayed
        update = MatchUpdate(frames=frames, verdicts=self._add_verdicts(snapshot.verdicts))
        if snapshot.HasField("over") and not record.HasField("over"):
            self._end(snapshot.over)
            update.over = snapshot.over
        return update

    def _add_verdicts(self, verdicts) -> list[referee_pb2.Verdict]:
        """The verdicts not had yet (a seat gets one verdict a match)."""
        had = {v.seat for v in self.record.verdicts}
        new = [v for v in verdicts if v.seat not in had]
        self.record.verdicts.extend(new)
        return new

    def _end(self, over: pb.MatchOver) -> None:
        record = self.record
        record.over.CopyFrom(over)
        record.delayed = 0
        wire.end_summary(record.match, over)


@dataclass
class TournamentUpdate:
    """What one message of a tournament stream brought: the tournament seen for the first
    time, matches finished, and whether it is over."""

    joined: bool = False
    finished: list[pb.MatchSummary] = field(default_factory=list)
    over: bool = False


class WatchedTournament:
    """A tournament (or the ladder) as a viewer follows it: its latest snapshot, kept up
    to date (progress, standings), its live matches and its latest results."""

    def __init__(self) -> None:
        self.snapshot: pb.TournamentSnapshot | None = None
        self.live: dict[str, pb.MatchSummary] = {}
        self.recent: deque[pb.MatchSummary] = deque(maxlen=RECENT_RESULTS)   # newest first

    def apply(self, message: pb.TournamentFeed) -> TournamentUpdate:
        kind = message.WhichOneof("kind")
        if kind in ("snapshot", "over"):
            snapshot = getattr(message, kind)
            joined = self.snapshot is None
            self.snapshot = wire.copy_of(snapshot)
            self.live = {m.match_id: m for m in snapshot.matches
                         if m.status == pb.MATCH_STATUS_LIVE}
            self.recent.clear()
            self.recent.extend(m for m in snapshot.matches if m.status != pb.MATCH_STATUS_LIVE)
            return TournamentUpdate(joined=joined, over=kind == "over" or snapshot.finished)
        if self.snapshot is None:      # a stream always starts with a snapshot
            return TournamentUpdate()
        if kind == "started":
            self.live[message.started.match_id] = message.started
        elif kind == "finished":
            summary = message.finished
            self.live.pop(summary.match_id, None)
            self.recent.appendleft(summary)
            self.snapshot.done += 1
            return TournamentUpdate(finished=[summary])
        elif kind == "standings":
            self.snapshot.standings.CopyFrom(message.standings)
            self.snapshot.done = max(self.snapshot.done, message.standings.matches)
        return TournamentUpdate()
