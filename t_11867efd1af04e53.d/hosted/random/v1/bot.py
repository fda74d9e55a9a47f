"""random: a uniformly random legal card. The baseline every bot should beat."""

from ono99.bot import Bot, run


class RandomBot(Bot):
    name = "random"

    def choose(self, view):
        legal = view.legal
        return legal[self.random.randrange(len(legal))]


if __name__ == "__main__":
    raise SystemExit(run(RandomBot()))
