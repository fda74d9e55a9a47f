"""``arena replay MATCH``: a finished match again, from an `arena match` event log, a
record saved from the spectator service, or a database.

A database and an event log keep the events and the seed; the frames are rebuilt by
replaying the engine (:mod:`arena.watch.records`). On a terminal, the table of
`arena watch` steps through them, under the keys below; elsewhere, the match's log.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from ono99.v1 import spectator_pb2 as pb
from rich.console import Console
from rich.live import Live

from arena.cli import output
from arena.cli.database import DEFAULT_DB, add_db_option, missing_file, shown
from arena.cli.keys import KeyReader
from arena.cli.match_log import MatchLogPrinter
from arena.cli.table_view import match_view
from arena.rules.errors import ConfigError
from arena.rules.events import FORFEIT
from arena.store import open_store
from arena.store.base import NotFoundError
from arena.watch import wire
from arena.watch.records import RecordError, from_file, from_store
from arena.watch.viewer import MatchUpdate

FRAME_S = 0.5                                    # at 1x, a frame every half second
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
KEYS_HELP = "space play/pause  ←/→ or p/n step  +/- speed  Home/End  q quit"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena replay MATCH`` and its options to ``sub``."""
    p = sub.add_parser(
        "replay", help="replay a finished match in the terminal",
        description="Replay a finished match: on a terminal, the table of arena watch, a "
                    f"frame (a decision) every {FRAME_S:g} s at 1x, under the keys: "
                    f"{KEYS_HELP}. Elsewhere, its log: one line per event, as arena match "
                    "prints them, then the result.")
    p.add_argument("match", metavar="MATCH",
                   help="an arena match event log (runs/.../game-1.jsonl), a record saved from "
                        "the spectator service (JSON), or a match in --db: the id spectators "
                        "see, or the number arena matches shows")
    add_db_option(p, f"the database MATCH is in (default: ./{DEFAULT_DB}, when MATCH is not a "
                     "file)", default=None)
    p.add_argument("--speed", type=float, default=1.0, metavar="X",
                   help=f"{SPEEDS[0]:g} to {SPEEDS[-1]:g} times 1x (default: 1, a frame every "
                        f"{FRAME_S:g} s)")
    p.add_argument("--turn", type=int, default=0, metavar="N",
                   help="start at frame N (0: the deal; N: after the Nth decision)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load the match, then play it on the terminal under the keys, or print its log
    from --turn on elsewhere."""
    if not SPEEDS[0] <= args.speed <= SPEEDS[-1]:
        raise ConfigError(f"--speed must be between {SPEEDS[0]:g} and {SPEEDS[-1]:g}")
    record = load(args.match, args.db)   # its errors end as arena.cli.main.exit_status says
    last = len(record.frames) - 1
    if not 0 <= args.turn <= last:
        raise ConfigError(f"--turn {args.turn} is not a frame of this match: 0 to {last}")
    console = output.console()
    try:
        if not console.is_terminal:
            print_log(console, record, args.turn)
        else:
            Player(console, record, args.turn, args.speed).run()
    except KeyboardInterrupt:     # the way to stop a replay: not an error
        return 0
    except BrokenPipeError:       # the reader of our output left (| head)
        output.stdout_gone()
    return 0


def load(match: str, db: str | None) -> pb.MatchSnapshot:
    """The record ``match`` names: a file (without --db), else a match of the database,
    by the id spectators see or the number `arena matches` shows. :class:`RecordError`
    if there is none such; :class:`StoreError` if the database cannot be read."""
    path = Path(match)
    if db is None and (path.exists() or path.suffix in (".json", ".jsonl") or "/" in match):
        return from_file(path)
    location = db or DEFAULT_DB
    if missing_file(location):
        raise RecordError(f"{match} is not a file, and there is no database at {location} to "
                          "find it in (give --db PATH|URL)")
    store = open_store(location, reading=True)
    try:
        try:
            found = store.find_match(match)
        except NotFoundError:   # a number that is no match here
            found = None
        if found is None:
            raise RecordError(f"no match {match!r} in {shown(location)} (give the number arena matches "
                              "shows, or the match id spectators see)")
        return from_store(store, found)
    finally:
        store.close()


def print_log(console: Console, record: pb.MatchSnapshot, turn: int) -> None:
    """The match's lines from frame ``turn`` on: its start, its events and verdicts (those
    given before ``turn`` left out with the frames), its end."""
    gone = {e[1] for f in record.frames[:turn] for e in wire.frame_events(f) if e[0] == FORFEIT}
    update = MatchUpdate(True, list(record.frames[turn:]),
                         [v for v in record.verdicts if v.seat not in gone],
                         record.over if record.HasField("over") else None)
    MatchLogPrinter(console).print(record, update)


class Player:
    """The record on the whole terminal, a frame at a time, under the keys (when stdin is
    a terminal; else it plays through once and ends)."""

    def __init__(self, console: Console, record: pb.MatchSnapshot, position: int,
                 speed: float) -> None:
        self.console = console
        self.record = record
        self.last = len(record.frames) - 1
        self.position = position
        self.speed = speed
        self.playing = position < self.last
        self.quit = False

    def run(self) -> None:
        """Play the frames on the whole screen until q (with no keys, to the last frame),
        then print the last one shown."""
        keys = KeyReader() if sys.stdin.isatty() else None
        due = time.monotonic() + FRAME_S / self.speed
        with keys or nullcontext(), Live(self.view(), console=self.console, screen=True,
                                         auto_refresh=False) as live:
            while not self.quit:
                wait = max(0.0, due - time.monotonic()) if self.playing else 0.25
                if keys is not None:
                    for key in keys.read(min(wait, 0.25)):
                        due = self.press(key, due)
                else:
                    time.sleep(wait)
                if self.playing and time.monotonic() >= due:
                    self.position += 1
                    due += FRAME_S / self.speed
                    if self.position >= self.last:
                        self.playing = False
                        self.quit = keys is None
                live.update(self.view(), refresh=True)
        self.console.print(self.view(status=False))

    def press(self, key: str, due: float) -> float:
        """Act on one key; when the next frame is due now."""
        now = time.monotonic()
        if key in ("q", "Q", "escape", "eof"):
            self.quit = True
        elif key == "space":
            if self.position >= self.last:      # at the end, play starts over
                self.position = 0
            self.playing = not self.playing
            return now + FRAME_S / self.speed
        elif key in ("right", "n", "l"):
            self.step(1)
        elif key in ("left", "p", "h"):
            self.step(-1)
        elif key in ("home", "g"):
            self.step(-self.last)
        elif key in ("end", "G"):
            self.step(self.last)
        elif key in ("+", "=", "up"):
            self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])
            return now + FRAME_S / self.speed
        elif key in ("-", "_", "down"):
            self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])
            return now + FRAME_S / self.speed
        return due

    def step(self, by: int) -> None:
        """Move by ``by`` frames, paused."""
        self.position = max(0, min(self.last, self.position + by))
        self.playing = False

    def view(self, status: bool = True):
        """The table at the current frame, with the status line unless ``status`` is false."""
        text = ""
        if status:
            state = "playing" if self.playing else "paused"
            text = f"frame {self.position}/{self.last}  {self.speed:g}x  {state}   {KEYS_HELP}"
        names = self.record.match.names
        return match_view(self.record, self.position, status=text,
                          log_lines=max(3, self.console.height - len(names) - 14))

