"""Fuzzing the Spectator service: every call, with match ids and tournament names that
exist and that do not, delays of every size, the organiser view with and without its
token, raw bytes; while the healthy bots' matches are live.

What it checks, besides each call's code: a stream starts with a snapshot of the match
asked for (reason "join", "tv"), frames are numbered on from the snapshot's, no hand is
shown outside the organiser view while a match runs, a finished match's record is over,
a list filtered by tournament holds only that tournament's matches and no more finished
ones than asked for.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError
from hypothesis import strategies as st
from hypothesis.stateful import rule
from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as spb

from arena.fuzz import values
from arena.fuzz.machine import Broken, FuzzMachine, expect, step
from arena.fuzz.target import ServedArena

SPEC = "/ono99.v1.Spectator/"
REQUESTS = {"ListMatches": spb.ListMatchesRequest, "WatchMatch": spb.WatchMatchRequest,
            "WatchTV": spb.WatchTVRequest, "WatchTournament": spb.WatchTournamentRequest,
            "GetRecord": spb.GetRecordRequest}
OK = grpc.StatusCode.OK
#: the largest request the service reads (spectator.proto); gRPC refuses bigger ones
MAX_REQUEST = 64 * 1024
#: a stream the fuzzer leaves after a few messages ends CANCELLED: ours, not the server's
LEFT = (OK, grpc.StatusCode.CANCELLED)


def _pick(data, known: list[str]) -> tuple[str, bool]:
    """One of ``known`` (True), or a name none of them is (False); drawn the same way
    whatever ``known`` holds."""
    choose, index, unknown = data.draw(st.tuples(st.booleans(), st.integers(0, 2**16), unknown_names()))
    return (known[index % len(known)], True) if choose and known else (unknown, False)


def unknown_names() -> st.SearchStrategy[str]:
    return values.texts().filter(lambda n: not n.startswith(("healthy-", "fuzz-", "org-", "t-"))
                                 and n not in ("", "ladder"))


class SpectatorMachine(FuzzMachine):
    """Anyone at all, watching."""

    def __init__(self, target: ServedArena) -> None:
        super().__init__(target)
        self.live: set[str] = set()       # match ids seen live
        self.finished: set[str] = set()   # match ids seen finished
        self.tournaments: set[str] = set()   # tournaments of the matches listed

    def _auth(self, token: str):
        return {"good": self.t.auth, "none": None,
                "wrong": (("authorization", "Bearer wrong"),)}[token]

    def _match_id(self, data) -> tuple[str, bool]:
        """A match id seen listed (True), or one that never existed (False). What is
        drawn does not depend on what the server answered (Hypothesis can replay it)."""
        return _pick(data, sorted(self.live | self.finished))

    def _check_snapshot(self, snap: spb.MatchSnapshot, what: str, hands: bool) -> None:
        seqs = [f.seq for f in snap.frames]
        if seqs != list(range(len(seqs))):
            raise Broken(f"{what}: snapshot frames numbered {seqs[:20]}")
        if not hands and not snap.HasField("over") and any(f.hands for f in snap.frames):
            raise Broken(f"{what}: a live match's hands shown outside the organiser view")
        if snap.delayed < 0:
            raise Broken(f"{what}: delayed {snap.delayed}")

    # ---------------------------------------------------------------- rules

    @rule(tournament=st.one_of(st.just(""), st.just("healthy-1"), unknown_names()),
          recent=st.one_of(st.integers(0, 120), st.sampled_from(values.INT32)))
    @step
    def list_matches(self, tournament: str, recent: int) -> None:
        request = spb.ListMatchesRequest(tournament=tournament, recent=recent).SerializeToString()
        outcome = self.unary(self.t.spectator, SPEC + "ListMatches", request)
        what = f"ListMatches({tournament!r:.60}, {recent})"
        if len(request) > MAX_REQUEST:
            return expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, what)
        if recent < 0:
            return expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, what, "recent")
        expect(outcome, OK, what)
        matches = spb.ListMatchesResponse.FromString(outcome.reply).matches
        done = [m for m in matches if m.status != spb.MATCH_STATUS_LIVE]
        if tournament and any(m.tournament != tournament for m in matches):
            raise Broken(f"{what}: lists matches of other tournaments")
        if len(done) > (recent or 50):
            raise Broken(f"{what}: {len(done)} finished matches")
        if any(m.status == spb.MATCH_STATUS_LIVE for m in matches[len(matches) - len(done):]):
            raise Broken(f"{what}: a live match after finished ones")
        for m in matches:
            (self.live if m.status == spb.MATCH_STATUS_LIVE else self.finished).add(m.match_id)
            if m.tournament:
                self.tournaments.add(m.tournament)

    @rule(data=st.data(), delay=st.one_of(st.integers(0, 5), st.sampled_from(values.INT32)),
          organizer=st.booleans(), token=st.sampled_from(["good", "none", "wrong"]))
    @step
    def watch_match(self, data, delay: int, organizer: bool, token: str) -> None:
        match_id, known = self._match_id(data)
        request = spb.WatchMatchRequest(match_id=match_id, delay_turns=delay, organizer_view=organizer)
        outcome = self.server_stream(self.t.spectator, SPEC + "WatchMatch", request.SerializeToString(),
                                     self._auth(token), limit=4)
        what = f"WatchMatch({match_id!r:.60}, delay {delay}, organiser {organizer}, token {token})"
        if request.ByteSize() > MAX_REQUEST:
            return expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, what)
        if organizer and token != "good":
            return expect(outcome, grpc.StatusCode.UNAUTHENTICATED, what)
        if delay < 0:
            return expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, what, "delay_turns")
        if not known:
            return expect(outcome, grpc.StatusCode.NOT_FOUND, what)
        if outcome.code not in LEFT or not outcome.replies:
            raise Broken(f"{what}: {outcome.code.name} {outcome.details[:200]!r}, "
                         f"{len(outcome.replies)} replies")
        first = spb.MatchFeed.FromString(outcome.replies[0])
        if not first.HasField("snapshot") or first.snapshot.match.match_id != match_id:
            raise Broken(f"{what}: the first message is not the match's snapshot: {str(first)[:300]}")
        snap = first.snapshot
        if snap.reason not in ("join", "record"):
            raise Broken(f"{what}: snapshot reason {snap.reason!r}")
        self._check_snapshot(snap, what, organizer)
        last = snap.frames[-1].seq if snap.frames else -1
        for raw in outcome.replies[1:]:
            feed = spb.MatchFeed.FromString(raw)
            frames = [feed.frame] if feed.HasField("frame") else list(feed.frames.frames)
            for f in frames:
                if f.seq <= last:
                    raise Broken(f"{what}: frame {f.seq} after frame {last}")
                last = f.seq
                if f.hands and not organizer:
                    raise Broken(f"{what}: hands in a frame outside the organiser view")

    @rule(tournament=st.one_of(st.just(""), st.just("healthy-1"), unknown_names()),
          delay=st.one_of(st.integers(0, 3), st.sampled_from(values.INT32)))
    @step
    def watch_tv(self, tournament: str, delay: int) -> None:
        request = spb.WatchTVRequest(tournament=tournament, delay_turns=delay).SerializeToString()
        refused = len(request) > MAX_REQUEST or delay < 0   # answered at once: wait for it
        # else a snapshot comes when a match of the tournament is live: maybe soon for the
        # tournament running now, never for one there is not
        wait = 10 if refused else 0.1 if tournament in ("", "healthy-1") else 0.02
        outcome = self.server_stream(self.t.spectator, SPEC + "WatchTV", request, limit=2, wait=wait)
        what = f"WatchTV({tournament!r:.60}, {delay})"
        if len(request) > MAX_REQUEST:
            return expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, what)
        if delay < 0:
            return expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, what, "delay_turns")
        if outcome.code not in LEFT:
            raise Broken(f"{what}: {outcome.code.name} {outcome.details[:200]!r}")
        if outcome.replies:
            first = spb.MatchFeed.FromString(outcome.replies[0])
            if not first.HasField("snapshot") or first.snapshot.reason != "tv":
                raise Broken(f"{what}: the first message is not a TV snapshot: {str(first)[:300]}")
            if tournament and first.snapshot.match.tournament != tournament:
                raise Broken(f"{what}: shows a match of {first.snapshot.match.tournament!r}")
            self._check_snapshot(first.snapshot, what, False)

    @rule(data=st.data())
    @step
    def watch_tournament(self, data) -> None:
        """The one running now (""), one of the tournaments listed, or none there is."""
        known = sorted(self.tournaments) + ([""] if self.t.with_healthy else [])
        name, _ = _pick(data, known)
        request = spb.WatchTournamentRequest(name=name).SerializeToString()
        outcome = self.server_stream(self.t.spectator, SPEC + "WatchTournament", request, limit=2)
        what = f"WatchTournament({name!r:.60})"
        if len(request) > MAX_REQUEST:
            return expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, what)
        if name not in known:
            return expect(outcome, grpc.StatusCode.NOT_FOUND, what)
        if outcome.code not in LEFT or not outcome.replies:
            raise Broken(f"{what}: {outcome.code.name} {outcome.details[:200]!r}")
        first = spb.TournamentFeed.FromString(outcome.replies[0])
        if not first.HasField("snapshot") or (name and first.snapshot.name != name):
            raise Broken(f"{what}: the first message is not its snapshot: {str(first)[:300]}")

    @rule(data=st.data())
    @step
    def get_record(self, data) -> None:
        match_id, known = self._match_id(data)
        request = spb.GetRecordRequest(match_id=match_id).SerializeToString()
        outcome = self.unary(self.t.spectator, SPEC + "GetRecord", request)
        what = f"GetRecord({match_id!r:.60})"
        if len(request) > MAX_REQUEST:
            return expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, what)
        if not known:
            return expect(outcome, grpc.StatusCode.NOT_FOUND, what)
        if outcome.code == grpc.StatusCode.FAILED_PRECONDITION and match_id in self.live:
            return   # still being played
        expect(outcome, OK, what)
        record = spb.MatchSnapshot.FromString(outcome.reply)
        if not record.HasField("over") or record.reason != "record" or record.match.match_id != match_id:
            raise Broken(f"{what}: a record that is not over or not the match's: {str(record)[:300]}")
        self._check_snapshot(record, what, False)
        self.finished.add(match_id)

    @rule(method=st.sampled_from(sorted(REQUESTS)),
          payload=st.one_of(values.raw_bytes(), values.other_messages()))
    @step
    def raw_bytes(self, method: str, payload: bytes) -> None:
        try:
            REQUESTS[method].FromString(payload)
        except DecodeError:
            pass
        else:
            return   # a request after all: the rules above send those
        if method in ("ListMatches", "GetRecord"):
            outcome = self.unary(self.t.spectator, SPEC + method, payload)
        else:
            outcome = self.server_stream(self.t.spectator, SPEC + method, payload)
        expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, f"{method} of {payload!r:.100}")
