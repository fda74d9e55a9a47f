"""What the viewer's HTTP server logs of its visitors: one line for a request it could not
read, nothing (but for debugging) for a visitor gone; a traceback only for a real fault.

aiohttp logs on its ``aiohttp.server`` logger, as an ERROR with a traceback of about
1 KB, both a request it cannot parse (a bad header, a NUL in the path: anyone's, daily,
on a public address) and a handler's exception, which includes a page gone before its
WebSocket's answer was written (ConnectionResetError): 311 of them, 324 KB, after one
test of review 41, among which a real fault's traceback would be lost. Its own
"premature client disconnection" it already logs for debugging only; this does the same
for those it does not know, and leaves every other exception's traceback as it was.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.log import server_logger

from arena.text import printable


class ServerLog(logging.LoggerAdapter):
    """aiohttp's server logger (give it to the runner as ``logger``), with a malformed
    request as one INFO line and a visitor gone mid-answer as one DEBUG line."""

    def __init__(self, logger: logging.Logger = server_logger) -> None:
        super().__init__(logger, {})

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        exc = _exception(kwargs.get("exc_info"))
        if level >= logging.ERROR and isinstance(exc, HttpProcessingError):
            # aiohttp's "Error handling request from %s", request.remote
            sender = args[0] if args else "a client"
            self.logger.info("a malformed HTTP request from %s, answered %d: %s", sender,
                             exc.code or 400, _first_line(exc.message))
        elif level >= logging.ERROR and isinstance(exc, ConnectionResetError):
            self.logger.debug("a visitor left before its answer was sent: %s", exc)
        else:
            super().log(level, msg, *args, **kwargs)


def _exception(exc_info: object) -> BaseException | None:
    """The exception a logging call's ``exc_info`` names (True: the one being handled)."""
    if isinstance(exc_info, BaseException):
        return exc_info
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        return exc_info[1]
    return sys.exc_info()[1] if exc_info else None


def _first_line(message: str) -> str:
    """The reason alone: aiohttp's message goes on with the line it could not read (the
    client's bytes) and a caret under the fault."""
    line = (message or "").strip().split("\n", 1)[0].rstrip(":")
    return printable(line) or "unreadable"
