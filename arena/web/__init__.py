"""The web viewer (``arena web``, ``--web``): a page that follows a spectator service.

:mod:`arena.web.server` is its HTTP side (aiohttp), a client of the spectator service
through :class:`arena.watch.client.AsyncSpectatorClient`, behind :mod:`arena.web.guard`
(who may reach it), :mod:`arena.web.serverlog` (what it logs of its visitors) and with
:mod:`arena.web.records` (records' JSON, kept); ``static/``
is the page itself.
The defaults and the error live here, so that the commands name them without importing
aiohttp, which only a viewer that runs needs.
"""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8099


class WebServeError(OSError):
    """The viewer cannot listen where it was asked (one line: where, and why)."""
