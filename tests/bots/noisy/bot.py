"""noisy: plays its first legal card and writes 2 KB to stderr every turn (for the tests
of a bot whose log cannot be written)."""

import sys

from ono99.bot import Bot, run


class Noisy(Bot):
    name = "noisy"

    def choose(self, view):
        sys.stderr.write("x" * 2000 + "\n")
        return view.legal[0]


if __name__ == "__main__":
    raise SystemExit(run(Noisy()))
