"""check-bot: does a bot, in any language, keep the protocol and the rules? A compliance run.

Like fastchess's ``--compliance``, it examines one bot folder on its own referee: it runs
the bot's setup, launches the bot, and seats it at matches against house seats (played
in-process by the referee, :mod:`arena.referee.house`), all over one connection: every
ruleset, 2 and 8 seats, and scripted situations that must happen (an owed pair of
cards after P2 and after DP, four 99s in a modern hand, an over-limit turn in points
scoring). What the bot does is watched on its side of the referee: the turns it gets,
how long it takes, what the referee refuses, the verdicts, whether it reconnects, how it
leaves after goodbye. The result is one :class:`Check` per requirement, each PASS or
FAIL with what was seen (and, on a failure, how to fix it), and the bot's start-up time
and peak memory.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ono99.v1 import referee_pb2

from arena.bots.launcher import BotStartError, LocalBot
from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig
from arena.bots.setup import SetupError, ensure_setup
from arena.referee.house import FirstLegal, Forcer, HouseSession
from arena.referee.results import MatchResult, MatchSpec, TimeControl, VerdictKind
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer
from arena.rules.cards import parse_cards
from arena.rules.events import FOUR_99
from arena.rules.game import Deal
from arena.rules.rulesets import make_config
from arena.seeds import Seeds

GOODBYE_S = 3.0        # a bot must exit this soon after the referee's goodbye
CHECKS = ("setup", "hello", "rulesets", "seats", "owed pairs", "over-limit turns", "four 99s",
          "one connection", "own turns", "legal cards", "move time", "no faults", "goodbye")


@dataclass(frozen=True)
class Check:
    """One requirement: passed or not, and what was seen (how to fix it, on a failure)."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


@dataclass
class Report:
    """A whole check-bot run."""

    bot: str
    folder: str
    checks: list[Check] = field(default_factory=list)
    startup_s: float | None = None
    peak_memory_mb: float | None = None
    matches: int = 0
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def failed(self) -> int:
        return sum(not c.passed for c in self.checks)

    def summary(self) -> str:
        return f"check-bot: {self.bot}: {self.passed} passed, {self.failed} failed"

    def to_dict(self) -> dict[str, Any]:
        return {"bot": self.bot, "folder": self.folder, "passed": self.passed,
                "failed": self.failed, "startup_s": self.startup_s,
                "peak_memory_mb": self.peak_memory_mb, "matches": self.matches,
                "seconds": round(self.seconds, 3),
                "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail}
                           for c in self.checks]}


# ---------------------------------------------------------------- the matches


@dataclass(frozen=True)
class Scenario:
    """One match: the bot at ``seat``, house bots (made by ``house``) at the others."""

    label: str
    spec: MatchSpec
    seat: int
    house: dict[int, Callable[[], Any]] = field(default_factory=dict)   # seat -> bot factory
    expects: str = ""            # the situation it must meet: "owed", "over_limit", "four99"


def _scripted(config, seed: int, hands: dict[int, list[str]], total: int = 0) -> Deal:
    """A first deal with the given hands (tokens) and total; the other hands and the draw
    pile from the rest of the deck, shuffled."""
    deck = list(config.ruleset.deck)
    chosen = {s: parse_cards(t, deck) for s, t in hands.items()}
    rest = Counter(deck)
    rest.subtract(Counter(c for cards in chosen.values() for c in cards))
    pile = list(rest.elements())
    random.Random(seed).shuffle(pile)
    dealt = [chosen[s] if s in chosen else [pile.pop() for _ in range(4)]
             for s in range(config.seats)]
    return Deal(dealt, pile, total)


def scenarios(name: str, seed: int, tc: TimeControl) -> list[Scenario]:
    """The matches of a check, each seeded from ``seed``."""
    seeds = Seeds(seed)
    out: list[Scenario] = []

    def add(label, ruleset, options, seats, seat, expects="", scripted=None, house=None):
        i = len(out)
        config = make_config(ruleset, options, seats)
        deal_seed = seeds.deal_seed("check", i)
        names = tuple(name if s == seat else f"house-{s}" for s in range(seats))
        scenario = () if scripted is None else (_scripted(config, deal_seed, **scripted),)
        spec = MatchSpec(seeds.match_id("check", i), config, deal_seed, names, tc,
                         tuple(seeds.bot_seed("check", i, s) for s in range(seats)),
                         scenario=scenario)
        factories = {s: (house or {}).get(s, FirstLegal) for s in range(seats) if s != seat}
        out.append(Scenario(label, spec, seat, factories, expects))

    for ruleset in ("modern", "classic", "classic-set99"):
        for seat in (0, 1):
            add(f"{ruleset}, 2 seats", ruleset, None, 2, seat)
    add("classic points, 3 seats", "classic", {"scoring": "points", "points_target": 60}, 3, 1)
    add("modern, 8 seats", "modern", None, 8, 3)
    add("classic-set99, 8 seats", "classic-set99", None, 8, 6)
    add("an owed pair after P2", "modern", None, 2, 1, "owed",
        {"hands": {0: ["P2", "5", "6", "7"]}}, {0: Forcer})
    add("an owed pair after DP", "classic", None, 3, 1, "owed",
        {"hands": {0: ["DP", "5", "6", "7"]}}, {0: Forcer})
    add("four 99s in a modern hand", "modern", None, 3, 0, "four99",
        {"hands": {0: ["99", "99", "99", "99"]}})
    add("an over-limit turn (points)", "classic", {"scoring": "points", "points_target": 60}, 2, 0,
        "over_limit", {"hands": {0: ["10", "10", "9", "8"]}, "total": 95})
    return out


class _Watched:
    """The bot's session as the runner uses it, recording what the bot is sent and how
    long it takes to answer each turn."""

    def __init__(self, session) -> None:
        self._session = session
        self.turns: list[tuple[int, bool]] = []   # (owed, over_limit) of each turn
        self.latencies_us: list[int] = []
        self._sent_at: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def send(self, msg: referee_pb2.RefereeMessage) -> None:
        if msg.WhichOneof("kind") == "turn":
            self.turns.append((msg.turn.view.owed, msg.turn.over_limit))
            self._sent_at = time.perf_counter_ns()
        await self._session.send(msg)

    async def next_action(self, timeout: float):
        action = await self._session.next_action(timeout)
        if action is not None and self._sent_at is not None:
            self.latencies_us.append((time.perf_counter_ns() - self._sent_at) // 1000)
            self._sent_at = None
        return action


@dataclass
class _Played:
    scenario: Scenario
    result: MatchResult | None        # None: the bot could not be (re)started for it
    turns: list[tuple[int, bool]]
    session_id: str
    problem: str = ""
    #: the last lines of its stderr when it crashed in this match (``"; stderr: ..."``):
    #: a verdict does not quote them (it is public), and the bot's author wants them
    output: str = ""

    def verdicts(self) -> list[str]:
        if self.result is None:
            return [self.problem]
        return [f"{v.kind} ({v.detail})" + (self.output if v.kind == VerdictKind.CRASHED else "")
                for v in self.result.verdicts if v.seat == self.scenario.seat]


# ---------------------------------------------------------------- the run


async def check_bot(manifest: BotManifest, *, setup: bool = True, setup_timeout: float = 600.0,
                    move_ms: int = 1000, bank_ms: int = 10_000, connect_timeout: float = 10.0,
                    seed: int = 1, listen: str = "unix", log_dir: Path | None = None,
                    sandbox: SandboxConfig = SandboxConfig(), on_setup=None,
                    on_match: Callable[[int, int, float], None] | None = None) -> Report:
    """Examine the bot of ``manifest``; never raises for the bot's faults (they are FAILs).
    ``on_setup(manifest, log_path)`` is called before its setup runs (a build may take a
    minute: the user is told why they wait), ``on_match(played, of, seconds)`` after each
    match (a bot that spends seconds a move takes minutes over them)."""
    started = time.monotonic()
    report = Report(manifest.name, str(manifest.folder))
    checks = report.checks
    if setup:
        stop = threading.Event()
        try:
            result = await asyncio.to_thread(ensure_setup, manifest, setup_timeout, on_setup,
                                             sandbox.factory(), stop)
        except asyncio.CancelledError:
            # the thread runs on: an upload cut short (its client gone, the server
            # stopping) left its setup running to its end, up to setup_timeout, and a
            # stopping server waited for it
            stop.set()
            raise
        except SetupError as exc:
            checks.append(Check("setup", False, str(exc)))
            return _not_run(report, "its setup failed", started)
        checks.append(Check("setup", True, f"ran in {result.seconds:.1f} s" if result.ran
                            else "none needed" if manifest.setup is None else "up to date"))
    else:
        checks.append(Check("setup", True, "skipped (--no-setup)"))

    own_logs = log_dir is None
    logs = Path(tempfile.mkdtemp(prefix="ono99-check-")) if own_logs else log_dir
    server = await RefereeServer.start(listen)
    bot = LocalBot(manifest, server.lobby, server.address, manifest.name, logs, connect_timeout,
                   factory=sandbox.factory(), open_socket=server.bot_socket)
    try:
        t0 = time.monotonic()
        try:
            session = await bot.start()
        except BotStartError as exc:
            refused = f"; the referee refused it: {server.lobby.refusals[-1]}" if server.lobby.refusals else ""
            checks.append(Check("hello", False, f"{exc}{refused}. A bot must connect to "
                                "$ONO99_REFEREE and send a hello with the token from $ONO99_TOKEN "
                                "and protocol_version 1 within the connect timeout"))
            return _not_run(report, "the bot never connected", started)
        report.startup_s = round(time.monotonic() - t0, 3)
        checks.append(Check("hello", True, f"connected with protocol 1 in {report.startup_s:.2f} s"
                            + (f" ({session.sdk})" if session.sdk else "")))

        tc = TimeControl(move_ms, bank_ms)
        played: list[_Played] = []
        watched_all: list[_Watched] = []
        planned = scenarios(manifest.name, seed, tc)
        for sc in planned:
            try:
                session = await bot.ensure()
            except BotStartError as exc:
                played.append(_Played(sc, None, [], "", f"it could not be restarted: {exc}"))
                continue
            watched = _Watched(session)
            watched_all.append(watched)
            sessions = [watched if s == sc.seat else HouseSession(sc.house[s]())
                        for s in range(sc.spec.config.seats)]
            runner = MatchRunner(sc.spec, sessions)
            result = await runner.run()
            crashed = any(v.seat == sc.seat and v.kind == VerdictKind.CRASHED
                          for v in result.verdicts)
            output = bot.process.stderr_note() if crashed and bot.process is not None else ""
            played.append(_Played(sc, result, watched.turns, session.session_id, output=output))
            if on_match is not None:
                on_match(len(played), len(planned), time.monotonic() - t0)
        report.matches = sum(p.result is not None for p in played)
        report.peak_memory_mb = _peak_memory_mb(bot)
        latencies = [us for w in watched_all for us in w.latencies_us]
        refused = Counter()   # over every connection the bot made
        for s in {id(w._session): w._session for w in watched_all}.values():
            refused.update(s.refused)
        checks.extend(_judge(played, latencies, refused, move_ms, bot))
        checks.append(await _goodbye(bot))
    finally:
        await server.stop("check-bot is done")
        await bot.stop()
        if own_logs:
            shutil.rmtree(logs, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report


def _not_run(report: Report, why: str, started: float) -> Report:
    done = {c.name for c in report.checks}
    report.checks.extend(Check(name, False, f"not run: {why}") for name in CHECKS if name not in done)
    report.seconds = time.monotonic() - started
    return report


def _judge(played: list[_Played], latencies: list[int], refused: Counter, move_ms: int,
           bot: LocalBot) -> list[Check]:
    tail = bot.process.stderr_note() if bot.process is not None else ""

    def clean(p: _Played) -> bool:
        return p.result is not None and not p.verdicts()

    def failures(ps) -> str:
        # matches that failed alike are named together, their reason once (a crashing
        # bot's 13 matches repeated the same excerpt of its stderr 13 times)
        # (a slow bot's 13 time-outs differed only in the bank left: alike, times aside;
        # the first one's words are shown. Other numbers, an exit code or a line of the
        # bot's source, tell failures apart)
        alike: dict[str, tuple[str, list[str]]] = {}
        for p in ps:
            if not clean(p):
                why = ", ".join(p.verdicts())
                alike.setdefault(re.sub(r"\d+ ms\b", "# ms", why), (why, []))[1].append(p.scenario.label)
        return "; ".join(f"{labels[0]}: {why}" if len(labels) == 1 else
                         f"{len(labels)} matches ({', '.join(labels[:3])}"
                         f"{', ...' if len(labels) > 3 else ''}): {why}"
                         for why, labels in alike.values())

    def with_tail(text: str) -> str:
        # a crash's line quotes the bot's stderr already (_Played.verdicts): not twice
        return text if "stderr: " in text else text + tail

    out = []
    rulesets = {}
    for p in played:
        rulesets.setdefault(p.scenario.spec.config.ruleset.name, []).append(p)
    bad = [r for r, ps in rulesets.items() if not all(clean(p) for p in ps)]
    out.append(Check("rulesets", not bad, f"{', '.join(rulesets)} played to the end" if not bad else
                     with_tail(f"{', '.join(bad)} failed: {failures(p for r in bad for p in rulesets[r])}")))

    by_seats = {}
    for p in played:
        by_seats.setdefault(p.scenario.spec.config.seats, []).append(p)
    bad_seats = [n for n in (2, 8) if not all(clean(p) for p in by_seats.get(n, []))]
    out.append(Check("seats", not bad_seats, "2 and 8 seats played to the end" if not bad_seats else
                     f"{' and '.join(map(str, bad_seats))} seats failed: "
                     f"{failures(p for n in bad_seats for p in by_seats[n])}"))

    owed = [p for p in played if p.scenario.expects == "owed"]
    owed_turns = sum(1 for p in played for o, _ in p.turns if o == 2)
    ok = all(clean(p) and any(o == 2 for o, _ in p.turns) for p in owed)
    out.append(Check("owed pairs", ok,
                     f"answered {owed_turns} turns owing two cards (after P2 and after DP)" if ok else
                     f"{failures(owed) or 'no turn owing two cards reached it'}. When view.owed is 2, "
                     "play the first card of the pair; the referee then sends a second turn"))

    over = [p for p in played if p.scenario.expects == "over_limit"]
    ok = all(clean(p) and any(ol for _, ol in p.turns) for p in over)
    out.append(Check("over-limit turns", ok,
                     "played a card past the limit when nothing fitted (points scoring)" if ok else
                     f"{failures(over) or 'no over-limit turn reached it'}. In points scoring a turn "
                     "with over_limit set still has legal cards: play one, it goes past the limit"))

    fours = [p for p in played if p.scenario.expects == "four99"]
    ok = all(clean(p) and any(e[0] == FOUR_99 and e[1] == p.scenario.seat
                               for e in p.result.events) for p in fours)
    out.append(Check("four 99s", ok,
                     "went on after the referee played its four 99s" if ok else
                     f"{failures(fours) or 'the four 99s were not played'}. A modern hand of four "
                     "99s is played for the bot (a four99 event), which then draws four cards"))

    sessions = {p.session_id for p in played if p.result is not None}
    ok = len(sessions) == 1 and all(p.result is not None for p in played)
    unplayed = [p for p in played if p.result is None]
    crashes = sum(1 for p in played if p.result is not None for v in p.result.verdicts
                  if v.seat == p.scenario.seat and v.kind == VerdictKind.CRASHED)
    out.append(Check("one connection", ok, f"{len(played)} matches on one connection" if ok else
                     f"{len(played)} matches took {len(sessions)} connections"
                     f"{'; ' + failures(unplayed) if unplayed else ''}. " +
                     # a bot started again after each crash connects again: a crash in a
                     # turn is not a stream left after match_end (it was told only that)
                     (f"It was started again after each of its {crashes} crashes (the process "
                      "ended); a bot that does not crash keeps reading after match_end, where "
                      "the next match_start follows, and exits after the goodbye" if crashes else
                      "Keep reading the stream after match_end: the next match_start follows")))

    # a bot that answered no turn passed these two unseen: they need answers to judge
    wrong_turn = {k: refused[k] for k in ("stale_turn", "not_your_turn") if refused[k]}
    # answers that came after their turn was over are refused as stale: a turn that timed
    # out, or whose seat was disqualified for its refused cards (the SDKs answer a refusal
    # with another card, which then comes late), explains one late answer at most. Those
    # are the faults (move time, legal cards, no faults), not the turn ids (it was told
    # "not_your_turn" here, and looked for a bug in its ids).
    ended = Counter(v.kind for p in played if p.result is not None for v in p.result.verdicts
                    if v.seat == p.scenario.seat)
    excused = ended[VerdictKind.TIMEOUT] + ended[VerdictKind.ILLEGAL]
    late = set(wrong_turn) == {"stale_turn"} and 0 < wrong_turn["stale_turn"] <= excused
    out.append(Check("own turns", bool(latencies) and (not wrong_turn or late),
                     "it answered no turn" if not latencies and not wrong_turn else
                     "answered only its own turns, each with its turn id" if not wrong_turn else
                     f"answered only its own turns; {wrong_turn['stale_turn']} answers came after "
                     f"their turn was over ({ended[VerdictKind.TIMEOUT]} time-outs, "
                     f"{ended[VerdictKind.ILLEGAL]} seats disqualified for refused cards) and "
                     "were refused as stale_turn" if late else
                     f"refused: {', '.join(f'{n} {k}' for k, n in wrong_turn.items())}. Answer each "
                     "TurnRequest once, echoing its turn_id (all 64 bits), and send nothing else"))

    # malformed: no card, a number the Card enum does not have, or a message that is not
    # an action (an SDK bot whose choose() returned no card token is refused so)
    illegal = {k: refused[k] for k in ("not_in_hand", "illegal_play", "malformed") if refused[k]}
    out.append(Check("legal cards", bool(latencies) and not illegal,
                     "it answered no turn" if not latencies and not illegal else
                     "played only cards from the turn's legal list" if not illegal else
                     f"refused: {', '.join(f'{n} {k}' for k, n in illegal.items())}. Play one of "
                     "TurnRequest.legal" + (" (malformed: no card, or one the protocol does not "
                                            "know, or a message that is not an action)"
                                            if "malformed" in illegal else "")))

    if latencies:
        q = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else [latencies[0]] * 99
        p50, p99 = statistics.median(latencies), q[98]
        ok = p99 <= move_ms * 1000
        out.append(Check("move time", ok,
                         f"p50 {p50 / 1000:.2f} ms, p99 {p99 / 1000:.2f} ms, max "
                         f"{max(latencies) / 1000:.1f} ms over {len(latencies)} moves, allowance "
                         f"{move_ms} ms" + ("" if ok else "; it relies on its bank: answer within "
                                            "the move allowance (TurnRequest.move_ms)")))
    else:
        out.append(Check("move time", False, "it answered no turn"))

    faults = [p for p in played if not clean(p)]
    out.append(Check("no faults", not faults, "no crash, disconnection, time-out or illegal verdict"
                     if not faults else with_tail(failures(faults))))
    return out


async def _goodbye(bot: LocalBot) -> Check:
    process = bot.process
    session = bot.session
    if process is None or process.returncode is not None or session is None or session.closed:
        return Check("goodbye", False, "the bot was no longer running to be told goodbye")
    t0 = time.monotonic()
    await session.say_goodbye("check-bot is done")
    code = await process.wait_exit(GOODBYE_S)
    took = time.monotonic() - t0
    if code is None:
        return Check("goodbye", False, f"still running {GOODBYE_S:g} s after the goodbye; exit "
                                       "when the referee says goodbye or ends the stream (a "
                                       "thread or child process the bot started can keep it "
                                       "running: a daemon thread, or stop it at the goodbye)")
    return Check("goodbye", True, f"exited {took:.2f} s after the goodbye (exit code {code})")


def _peak_memory_mb(bot: LocalBot) -> float | None:
    """The bot's peak resident memory: its cgroup's high-water mark where it has one, else
    its process's and its children's."""
    if bot.process is None or bot.process.proc is None:
        return None
    peak = bot.process.peak_memory_mb()
    if peak is not None:
        return round(peak, 1)
    root = bot.process.proc.pid
    total = 0
    for pid in _tree(root):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024, 1) if total else None


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out
