"""lowest: the first legal card in the order of the Card enum. Deterministic, and the very
card the referee plays for a faulty seat with --on-fault play."""

from ono99.bot import Bot, run


class LowestBot(Bot):
    name = "lowest"

    def choose(self, view):
        return view.legal[0]


if __name__ == "__main__":
    raise SystemExit(run(LowestBot()))
