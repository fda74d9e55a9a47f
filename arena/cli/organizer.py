"""How an organiser command (``arena bots``, ``arena tournament --server``, ``arena
standings --server``) reaches a server: its options and its client."""

from __future__ import annotations

import argparse

from arena.server.client import OrganizerClient


def add_server_options(p: argparse.ArgumentParser, required: bool = True) -> None:
    """How an organiser command reaches a server."""
    p.add_argument("--server", required=required, metavar="ADDR",
                   help="the server's address, HOST:PORT (as arena serve printed it)")
    p.add_argument("--token", default=None,
                   help="the organiser token (default: $ONO99_ORGANIZER_TOKEN)")
    p.add_argument("--tls", action="store_true",
                   help="speak TLS to the server, trusting the system's certificates")
    p.add_argument("--tls-ca", default=None, metavar="FILE",
                   help="speak TLS, trusting this certificate (default: $ONO99_TLS_CA)")


def client(args: argparse.Namespace) -> OrganizerClient:
    """An organiser client for the server the command line names (--server, --token, TLS)."""
    return OrganizerClient(args.server, args.token, args.tls, args.tls_ca)
