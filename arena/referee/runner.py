"""The match runner: one match between bot sessions, on the rules engine, under the clock.

It asks the engine who acts and builds that seat's view (the only thing the seat is
told), sends the turn, waits for an action under the seat's clock, lets the engine judge
it, and fans the public events out. A bot that times out, disconnects, crashes or keeps
sending refused actions gets a :class:`~arena.referee.results.Verdict`; by default the
seat forfeits (the engine removes it as if it had lost) and the match goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from arena.referee.listeners import Broadcast, Frame, MatchInfo, MatchListener, MatchOver
from arena.referee.results import (
    FaultPolicy, MatchResult, MatchSpec, SeatStats, Status, Verdict, VerdictKind,
)
from arena.referee.liveclock import LiveClock, live_clock
from arena.referee.session import BotSession, SessionClosed
from arena.referee import wire
from arena.referee.wire import (
    EventEncoder, SeatStatesCache, card_from_wire, match_end, match_start, rules_to_wire,
    turn_request,
)
from arena.rules.errors import PlayError
from arena.rules.events import DRAW, FOUR_99, OUT, PLAY
from arena.rules.game import Termination
from arena.seeds import Seeds

_ECHOES = frozenset({PLAY, DRAW, OUT, FOUR_99})  # events of a seat's own action
#: A match during which this process was stopped this long in all (its live clock's
#: pauses) does not charge a bot lost meanwhile (MatchRunner.lost_to_pause): no load
#: holds an event loop that long, and bots give up on a referee silent for about 20 s
ARENA_PAUSE_S = 5.0


#: Waits up to a number of seconds for a seat's bot to connect again; its new session.
Reconnect = Callable[[float], Awaitable[BotSession]]


class MatchRunner:
    """Plays one :class:`MatchSpec` between sessions (``None`` for a seat with no bot)."""

    def __init__(self, spec: MatchSpec, sessions: Sequence[BotSession | None],
                 listeners: Sequence[MatchListener] = (),
                 absent: dict[int, tuple[str, str]] | None = None,
                 reconnect: dict[int, Reconnect] | None = None, grace: float = 10.0) -> None:
        """``absent`` gives, for a seat without a session, the verdict kind and detail to
        record (default: disconnected, no bot connected). ``reconnect`` gives, for a seat
        whose bot may come back after its connection drops (a remote bot), how to wait
        for its next session: it has ``grace`` seconds, on its own clock, to return; it is
        then sent the match start again and its open turn with every event so far."""
        n = spec.config.seats
        if len(sessions) != n or len(spec.names) != n:
            raise ValueError(f"{n} seats need {n} sessions and names")
        self.spec = spec
        self.sessions = list(sessions)
        self.listeners = Broadcast(listeners)
        self.game = spec.new_game()
        self.verdicts: list[Verdict] = []
        self.stats = [SeatStats() for _ in range(n)]
        self.result: MatchResult | None = None
        #: for each seat the referee plays for (FaultPolicy.AUTOPLAY), its generator
        self._autoplay: list[random.Random | None] = [None] * n
        self._faulted = [False] * n
        self._starting: list[int] | None = None   # seats failed during _start, while it runs
        self._sent = [0] * n                   # events each seat has been sent
        self._encoder = EventEncoder()         # game.events encoded once, shared by all seats
        self._bank_ns = [spec.time_control.bank_ms * 1_000_000] * n
        self._move_ns = spec.time_control.move_ms * 1_000_000
        self._last_latency = [0] * n
        self._states = SeatStatesCache()
        self._turns = 0
        self._turn_ids = itertools.count(spec.first_turn_id() + 1)
        self._reported = 0                     # events already given to listeners
        self._frames = 0
        self._t0 = 0.0
        self._absent = absent or {}
        self._reconnect = reconnect or {}
        self._grace = grace
        self._waited: dict[int, float] = {}    # a seat's last wait for its bot to come back
        self._now_ns = time.perf_counter_ns     # the bots' clock: the loop's live clock, in run
        self._clock: LiveClock | None = None
        self._paused_before = 0                # the clock's pauses before the match
        #: (seat, seconds): a seat's bot was lost (crashed, disconnected) in a match during
        #: which this process was stopped for ARENA_PAUSE_S or more in all (see _fault)
        self.lost_to_pause: tuple[int, float] | None = None

    # ---------------------------------------------------------------- the match

    async def run(self) -> MatchResult:
        """Play the match to its end and return the result (also kept in ``self.result``).
        Cancelled (shutdown), it records ``aborted`` verdicts, tells the bots, and re-raises."""
        started_at = time.time()
        t0 = self._t0 = time.perf_counter()
        # bots are timed on live time: a pause of this process is not charged to them
        self._clock = clock = live_clock()
        self._now_ns = clock.now_ns
        self._paused_before = clock.paused_ns
        try:
            await self._start(started_at)
            game = self.game
            while not game.finished:
                seat = game.to_act
                rng = self._autoplay[seat]
                if rng is not None:
                    game.play(seat, rng.choice(game.legal_cards()))
                    self._report(seat, None)
                    continue
                await self._turn(seat)
        except asyncio.CancelledError:
            self._abort(started_at, time.perf_counter() - t0)
            self._ended()
            await self._tell_end(timeout=1.0)
            raise
        outcome = self.game.outcome
        self.result = MatchResult(
            self.spec, Status.FINISHED, outcome.ranking, outcome.termination, self.verdicts,
            self.stats, started_at, time.perf_counter() - t0, self._turns, self.game.events)
        await self._tell_end()
        self._ended()
        return self.result

    async def _start(self, started_at: float) -> None:
        spec = self.spec
        if self.listeners:
            self.listeners.match_started(MatchInfo(spec.match_id, spec.names, spec.config,
                                                   spec.time_control, started_at))
        rules = rules_to_wire(spec.config)
        # seats that fail before the first turn fail at the same moment: they leave the
        # game together, sharing one place, not ranked by their seat numbers
        self._starting = []
        for seat, session in enumerate(self.sessions):
            if session is None or session.closed:
                kind, detail = self._absent.get(seat, (VerdictKind.DISCONNECTED, "no bot connected for this seat"))
                if session is not None:
                    detail = f"disconnected before the match: {session.close_reason}"
                self._fault(seat, kind, detail)
                continue
            session.begin_match()
            try:
                await session.send(match_start(spec, seat, rules))
            except SessionClosed:
                await self._lost(seat, session, 0)
        gone, self._starting = self._starting, None
        if gone:
            self.game.forfeit(*gone)
        self._report(None, None)

    async def _turn(self, seat: int, resume: tuple[int, int, int] | None = None) -> None:
        """Ask ``seat`` for a card until one is accepted or the seat gets a verdict.
        ``resume`` (turn id, start, deadline): the same turn again, to a bot that came back."""
        game = self.game
        session = self.sessions[seat]
        spec = self.spec
        turn_id = next(self._turn_ids) if resume is None else resume[0]
        view = game.view(seat)
        encoded = self._encoder.update(game.events)
        msg = turn_request(spec.match_id, turn_id, view, self._states, encoded[self._sent[seat]:],
                           spec.time_control.move_ms, self._bank_ns[seat] // 1_000_000,
                           self._last_latency[seat])
        self._sent[seat] = len(encoded)
        session.open_turn(turn_id)
        now = self._now_ns
        if resume is None:
            start = now()
            deadline = start + self._move_ns + self._bank_ns[seat]
        else:
            _, start, deadline = resume
        try:
            await session.send(msg)
            self._flush_events(skip=seat)
            while True:
                remaining = (deadline - now()) / 1e9
                if remaining <= 0:
                    raise TimeoutError
                action = await session.next_action(remaining)
                if action is not None:
                    card = card_from_wire(action.card)
                    if card is None:
                        await session.reject(turn_id, "malformed",
                                             f"{action.card} is not a card of the Card enum")
                    else:
                        try:
                            game.play(seat, card)
                        except PlayError as exc:
                            await session.reject(turn_id, exc.code, str(exc))
                        else:
                            break
                if session.rejections > spec.max_rejections:
                    session.close_turn()
                    # the last refusal's code says what was wrong (the bot's log may not);
                    # not its reason: a verdict is public, and "seat 0 does not hold 99"
                    # tells the other seats of a hand
                    self._fault(seat, VerdictKind.ILLEGAL, f"{session.rejections} refused actions in this match "
                                f"(the limit is {spec.max_rejections}); the last: "
                                f"{session.last_refusal}", (now() - start) // 1000)
                    return
        except TimeoutError:
            session.close_turn()
            elapsed = (now() - start) // 1000
            self._fault(seat, VerdictKind.TIMEOUT, f"no valid answer within {spec.time_control.move_ms} ms "
                        f"+ {self._bank_ns[seat] // 1_000_000} ms of bank", elapsed)
            self._bank_ns[seat] = 0
            return
        except SessionClosed:
            session.close_turn()
            if await self._came_back(seat, deadline):
                return await self._turn(seat, (turn_id, start, deadline))
            await self._lost(seat, session, (now() - start) // 1000)
            return
        latency_ns = now() - start
        session.close_turn()
        over = latency_ns - self._move_ns
        if over > 0:
            # never below 0: an answer read just past the deadline (the timer not yet
            # run) leaves an empty bank, not a debt the next turn's deadline would carry
            self._bank_ns[seat] = max(0, self._bank_ns[seat] - over)
        latency_us = latency_ns // 1000
        self._last_latency[seat] = latency_us
        stats = self.stats[seat]
        stats.moves += 1
        stats.latency_us_total += latency_us
        stats.latencies_us.append(latency_us)
        if latency_us > stats.latency_us_max:
            stats.latency_us_max = latency_us
        stats.rejections = session.rejections
        self._turns += 1
        self._report(seat, latency_us)

    # ---------------------------------------------------------------- faults

    async def _came_back(self, seat: int, deadline: int) -> bool:
        """A bot that may reconnect (a remote one) has ``grace`` seconds, and no more than
        its clock, to come back; it then hears the whole match again."""
        wait = self._reconnect.get(seat)
        if wait is None:
            return False
        timeout = min(self._grace, (deadline - self._now_ns()) / 1e9)
        self._waited[seat] = max(0.0, timeout)
        if timeout <= 0:
            return False
        try:
            session = await wait(timeout)
        except TimeoutError:
            return False
        self._take_over(seat, session)
        try:
            await session.send(match_start(self.spec, seat, rules_to_wire(self.spec.config)))
        except SessionClosed:
            return await self._came_back(seat, deadline)
        return True

    async def _returned(self, seat: int) -> BotSession | None:
        """The new session of a seat's bot that reconnected while another seat was acting,
        if it is there now: it is sent the match start (it has heard nothing of the match
        on this session), and every event with the match end."""
        wait = self._reconnect.get(seat)
        if wait is None:
            return None
        try:
            session = await wait(0)
        except TimeoutError:
            return None
        self._take_over(seat, session)
        try:
            session.post(match_start(self.spec, seat, rules_to_wire(self.spec.config)))
        except SessionClosed:
            return None
        session.end_match()
        return session

    def _take_over(self, seat: int, session: BotSession) -> None:
        """A seat's bot came back on ``session``: it plays the match on from it. Its refused
        actions so far still count (reconnecting reset them: a bot could be refused
        without end, its limit a number per connection)."""
        old = self.sessions[seat]
        self.sessions[seat] = session
        self._sent[seat] = 0
        session.begin_match()
        if old is not None:
            session.rejections, session.last_refusal = old.rejections, old.last_refusal

    async def _lost(self, seat: int, session: BotSession, latency_us: int) -> None:
        """The seat's stream ended: a crash if its process exited, else a disconnection."""
        process = session.process
        if process is not None and not session.closed_by_referee:
            code = await process.wait_exit(0.5)
            if code is not None:
                self._fault(seat, VerdictKind.CRASHED, process.describe_exit(), latency_us)
                return
        detail = session.close_reason or "the stream ended"
        if seat in self._reconnect:
            # the wait it had: the grace, or what was left of its clock (it said the
            # grace, 10 s, after a wait of 1.5 s in a match of 4 s)
            waited = self._waited.pop(seat, self._grace)
            detail += (f"; it did not reconnect within {waited:.3g} s" if waited > 0 else
                       "; its clock had run out, with no time left to reconnect")
        self._fault(seat, VerdictKind.DISCONNECTED, detail, latency_us)

    def _fault(self, seat: int, kind: str, detail: str, latency_us: int = 0) -> None:
        """Record a verdict; the seat forfeits, or the referee plays for it from now on."""
        if self._faulted[seat]:
            return
        self._faulted[seat] = True
        if kind in (VerdictKind.CRASHED, VerdictKind.DISCONNECTED) and self._clock is not None:
            # a bot that gave up on its referee while this process was stopped (Ctrl-Z,
            # SIGSTOP, a paused machine) has not failed: the SDKs leave a referee that
            # answers no ping for 20 s. Its verdict stands here; whoever runs the match
            # decides (a tournament stops, to play it again on resume). Counted from the
            # match's start, or from the bot's last sign of life before it, whichever came
            # first: a pause between its last match and this one (its seat taken, this
            # match not begun) had its bot found gone here, charged
            since = min(self._paused_before,
                        getattr(self.sessions[seat], "paused_seen", self._paused_before))
            paused = (self._clock.paused_ns - since) / 1e9
            if paused >= ARENA_PAUSE_S and self.lost_to_pause is None:
                self.lost_to_pause = (seat, paused)
        verdict = Verdict(seat, kind, detail, latency_us)
        self.verdicts.append(verdict)
        session = self.sessions[seat]
        if session is not None:
            self.stats[seat].rejections = session.rejections
        if self.listeners:
            self.listeners.verdict(self.spec.match_id, verdict)
        game = self.game
        if self.spec.on_fault == FaultPolicy.AUTOPLAY:
            # a legal card at random, from a stream keyed by the deal's secret seed and the
            # seat (as a duplicate deal's seeds are: whoever holds its cards gets it). The
            # first legal card in Card enum order, as this once was, is a rule the table
            # knows: each card then also told it that the seat held no legal card before
            # it, a -10, R or P2 behind a 7, so most of a hidden hand, turn after turn
            self._autoplay[seat] = random.Random(Seeds(self.spec.seed).bot_seed("autoplay", seat))
        elif self._starting is not None:
            self._starting.append(seat)        # _start forfeits them together
        elif not game.finished and game.in_game[seat]:
            game.forfeit(seat)
            self._report(None, None)

    def _abort(self, started_at: float, duration: float) -> None:
        game = self.game
        for seat in range(game.seats):
            if not self._faulted[seat] and (game.finished or game.in_game[seat]):
                self._faulted[seat] = True
                self.verdicts.append(Verdict(seat, VerdictKind.ABORTED, "the referee stopped the match"))
        self.result = MatchResult(self.spec, Status.ABORTED, (), Termination.ABORTED, self.verdicts,
                                  self.stats, started_at, duration, self._turns, game.events)

    # ---------------------------------------------------------------- messages

    def _report(self, seat: int | None, latency_us: int | None) -> None:
        """Tell the listeners of the events since the last report: one frame."""
        events = self.game.events
        if self.listeners and self._reported < len(events):
            game = self.game
            frame = Frame(self.spec.match_id, self._frames, tuple(events[self._reported:]),
                          game.spectator_view(), seat, latency_us,
                          tuple([b // 1_000_000 for b in self._bank_ns]),
                          time.perf_counter() - self._t0, time=time.time())
            private = None
            if self.listeners.hands:
                private = replace(frame, hands=tuple(game.hand(s) for s in range(game.seats)))
            self._frames += 1
            self.listeners.frame(frame, private)
        self._reported = len(events)

    def _ended(self) -> None:
        if not self.listeners:
            return
        result = self.result
        self.listeners.match_ended(MatchOver(
            result.match_id, result.status, result.ranking, result.termination,
            tuple(result.verdicts), self._final_hands(), result.turns, result.duration_s))

    def _final_hands(self) -> tuple[tuple[int, ...], ...]:
        """Every seat's hand at the end: held, or laid face up when it was eliminated. A
        match that did not finish (aborted) shows only the hands laid face up: it is
        played again, and a bot (or spectator) that saw its hands would know the deal."""
        game = self.game
        shown = game.finished
        return tuple(tuple(game.hands[s]) if shown and game.hands[s] is not None
                     else tuple(game.revealed.get(s, ())) for s in range(game.seats))

    def _flush_events(self, skip: int) -> None:
        """Send each live seat (but ``skip``, about to act) the events it has not seen yet.

        A seat is not sent the bare echo of its own accepted action (its play and draw):
        it knows them already, and gets them with its next message. This spares a write
        per turn, and in a two-seat match every Events message."""
        encoded = self._encoder.wire
        events = self.game.events
        n = len(encoded)
        for seat, session in enumerate(self.sessions):
            sent = self._sent[seat]
            if seat == skip or session is None or session.closed or sent >= n:
                continue
            for i in range(sent, n):
                e = events[i]
                if e[1] != seat or e[0] not in _ECHOES:
                    break
            else:
                continue  # only its own play and draw: no message needed now
            pending = encoded[sent:]
            self._sent[seat] = n
            try:
                session.post_events(self.spec.match_id, pending)
            except SessionClosed:
                pass  # noticed at its next turn

    async def _tell_end(self, timeout: float | None = None) -> None:
        """Send every live seat the match end: ranking, verdicts, every hand revealed (once
        the game is over: see _final_hands)."""
        game = self.game
        encoded = self._encoder.update(game.events)
        result = self.result
        hands = wire.hands_to_wire(self._final_hands())
        verdicts = wire.verdicts_to_wire(self.verdicts)
        for seat, session in enumerate(self.sessions):
            if session is None:
                continue
            session.end_match()
            if session.closed:
                session = await self._returned(seat)
                if session is None:
                    continue
            msg = match_end(self.spec.match_id, result.ranking, result.termination,
                            encoded[self._sent[seat]:], verdicts, hands)
            self._sent[seat] = len(encoded)
            if timeout is None:
                try:
                    await session.send(msg)
                except SessionClosed:
                    pass
                continue
            try:  # aborting: the task was cancelled once already; do not hang on a bot
                async with asyncio.timeout(timeout):
                    await asyncio.shield(session.send(msg))
            except (SessionClosed, TimeoutError, asyncio.CancelledError):
                pass
