"""``arena bots add|list|remove|logs``: the bots entered on a server, managed from here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from arena.cli import output
from arena.cli.organizer import add_server_options, client
from arena.server.client import ENV_TLS_CA
from arena.text import printable


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena bots add|list|remove|logs`` to ``sub``."""
    b = sub.add_parser("bots", help="the bots entered on a server (add, list, remove, logs)",
                       description="Enter and manage bots on an arena server.")
    what = b.add_subparsers(dest="what", metavar="WHAT", required=True)
    add = what.add_parser(
        "add", help="enter a bot: remote (prints its token) or hosted (--dir: uploaded, checked)",
        description="Without --dir: register a remote bot, which connects from anywhere; its "
                    "token is printed once ('bot token: T'). With --dir: upload the bot's "
                    "folder; the server keeps it, runs its setup and check-bot, and launches it "
                    "in its sandbox when it plays; the check's report is printed, and a bot "
                    "that fails does not enter (exit code 1). A name entered again becomes its "
                    "next version ('NAME v2'), rated on its own.")
    add.add_argument("name", help="the bot's name: up to 64 letters, digits, '_', '.' and '-' (a name "
                                   "entered before gets its next version)")
    add.add_argument("--dir", type=Path, default=None, help="a hosted bot's folder")
    add_server_options(add)
    add.set_defaults(run=run_bots_add)
    ls = what.add_parser("list", help="the bots entered, with their ratings and faults",
                         description="The bot versions entered on the server: name, kind "
                                     "(remote or hosted), version, whether it is connected, "
                                     "its ladder Elo, matches and faults.")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    add_server_options(ls)
    ls.set_defaults(run=run_bots_list)
    rm = what.add_parser("remove", help="withdraw a bot version (its token stops working)",
                         description="Withdraw a bot version, by the name it plays under "
                                     "('alpha' is its first version while that is entered, "
                                     "'alpha v2' the second): it plays no more (a remote one "
                                     "is cut off, its token stops working; the tournaments "
                                     "playing it retire it); its results stay.")
    rm.add_argument("name", help="the name it plays under ('alpha', 'alpha v2')")
    add_server_options(rm)
    rm.set_defaults(run=run_bots_remove)
    lg = what.add_parser("logs", help="a hosted bot's recent output",
                         description="Print the end of a hosted bot's recent output (its "
                                     "stderr, at most 64 KiB). A remote bot's output is on its "
                                     "author's machine.")
    lg.add_argument("name", help="the name it plays under ('alpha', 'alpha v2')")
    add_server_options(lg)
    lg.set_defaults(run=run_bots_logs)


def run_bots_add(args: argparse.Namespace) -> int:
    """Enter a remote bot (print its token once) or upload a folder (print its checks)."""
    with client(args) as c:
        if args.dir is None:
            answer = c.add_remote(args.name)
            print(f"bot token: {answer.token}")
            # over TLS the bot must speak it too: without it, it waits its connect timeout
            # (30 s) and exits 4, where the line said all it needed
            tls = (" ONO99_TLS_CA=<the server's certificate>"
                   if args.tls_ca or os.environ.get(ENV_TLS_CA) else
                   " ONO99_TLS=1" if args.tls else "")
            print(f"bot {answer.name} (version {answer.version}) entered; run it anywhere with "
                  f"ONO99_REFEREE={args.server} ONO99_TOKEN=<the token>{tls}")
            return 0
        answer = c.upload(args.name, args.dir)
    for check in answer.checks:
        print(f"{'PASS' if check.passed else 'FAIL'} {check.name}: {check.detail}")
    print(answer.summary)
    print(f"bot {answer.name} (version {answer.version}) "
          + ("entered" if answer.passed else "did not pass its check: it does not enter"))
    return 0 if answer.passed else 1


def run_bots_list(args: argparse.Namespace) -> int:
    """The server's bots with their ratings and faults, as a table or JSON."""
    with client(args) as c:
        bots = c.list().bots
    rows = [{"name": b.name, "kind": b.kind, "version": b.version, "status": b.status,
             "connected": b.connected, "elo": round(b.elo, 1), "ci95": round(b.ci95, 1),
             "elo_low": round(b.elo_low, 1), "elo_high": round(b.elo_high, 1),
             "matches": b.matches, "faults": dict(b.faults), "mark": b.mark} for b in bots]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table

    from arena.tournament.standings import interval_text   # numpy: only for the table
    table = Table(title="bots entered")
    for col in ("name", "kind", "version", "status", "connected", "Elo", "95%", "matches",
                "faults", "mark"):
        table.add_column(col)
    for r in rows:
        faults = ", ".join(f"{n} {k}" for k, n in sorted(r["faults"].items())) or "0"
        # an Elo alone said nothing of how little some bots had shown (one match: -640 +1531)
        table.add_row(r["name"], r["kind"], str(r["version"]), r["status"],
                      "yes" if r["connected"] else "no", f"{r['elo']:.0f}" if r["matches"] else "-",
                      interval_text(r["elo"], r["elo_low"], r["elo_high"], r["ci95"])
                      if r["matches"] else "-", str(r["matches"]), faults, r["mark"])
    output.console().print(table)
    return 0


def run_bots_remove(args: argparse.Namespace) -> int:
    """Withdraw a bot from the server; its results stay."""
    with client(args) as c:
        answer = c.remove(args.name)
    print(f"bot {answer.name} removed: it plays no more; its results stay")
    return 0


def run_bots_logs(args: argparse.Namespace) -> int:
    """A hosted bot's recent output, its control characters made printable."""
    with client(args) as c:
        answer = c.logs(args.name)
    if not answer.text:   # on stderr: the output stays the bot's alone (nothing, here)
        print(f"arena bots logs: {args.name} has no recent output (its processes wrote "
              "nothing)", file=sys.stderr)
    sys.stdout.write(printable(answer.text, keep="\n\t"))   # the bot's output: no escape acts
    return 0
