"""The Python SDK for ONO 99 Arena bots.

    from ono99.bot import Bot, run

    class Lowest(Bot):
        name = "lowest"

        def choose(self, view):
            return view.legal[0]

    if __name__ == "__main__":
        raise SystemExit(run(Lowest()))

``run`` reads the referee address and token from ``--referee``/``--token`` or the
environment (``ONO99_REFEREE``/``ONO99_TOKEN``), retries the connection for a while,
and plays until the referee says goodbye. :mod:`ono99.bot.testing` has a fake referee
for unit tests.
"""

__version__ = "0.1.0"

from ono99.bot.base import Bot  # noqa: E402
from ono99.bot.client import play, run  # noqa: E402
from ono99.bot.model import Event, Match, MatchResult, Rules, SeatInfo, View  # noqa: E402

__all__ = ["Bot", "Event", "Match", "MatchResult", "Rules", "SeatInfo", "View", "play", "run"]
