"""{{NAME}}: an ONO 99 bot on the Python SDK (ono99.bot). Start here.

choose(view) gets what this seat may know at its turn and returns one of view.legal, as
a token: "0" ... "10", "-10", "R", "P2" (modern), "DP", "H" (classic), "99". This one:
owing two cards, it deflects them when it can; otherwise it plays its highest number
card (the next seat has less room), and keeps the special cards for when nothing else
fits. docs/bots.md describes the View, the Match and the hooks.
"""

from ono99.bot import Bot, run

NUMBERS = {str(v): v for v in range(11)}
DEFLECTORS = {"modern": ("R", "P2"), "classic": ("R", "H"), "classic-set99": ("R", "H")}
LAST_RESORT = ("P2", "DP", "R", "H", "99", "-10")


class StarterBot(Bot):
    name = "{{NAME}}"

    def choose(self, view):
        legal = view.legal
        if view.owed == 2:   # the first card of an owed pair: pass the pair on if we can
            for card in DEFLECTORS.get(view.match.rules.ruleset, ()):
                if card in legal:
                    return card
        numbers = [c for c in legal if c in NUMBERS]
        if numbers:
            return max(numbers, key=NUMBERS.__getitem__)
        for card in LAST_RESORT:
            if card in legal:
                return card
        return legal[0]


if __name__ == "__main__":
    raise SystemExit(run(StarterBot()))
