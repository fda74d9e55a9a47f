"""pusher: raise the total as far as it may, so the next seat has less room.

Owing two, it deflects when it can. Otherwise it plays its highest legal number card and
keeps -10, reverses and forcing cards for when nothing else is legal; then it prefers a
forcing card (the next seat owes two at a high total).
"""

from ono99.bot import Bot, run

NUMBERS = {str(v): v for v in range(11)}
PREFERENCE = ("P2", "DP", "R", "H", "99", "-10")   # when no number card is legal


class PusherBot(Bot):
    name = "pusher"

    def choose(self, view):
        legal = view.legal
        deflectors = {"R", "P2"} if view.match.rules.ruleset == "modern" else {"R", "H"}
        if view.owed == 2:
            for card in legal:
                if card in deflectors:
                    return card
        numbers = [c for c in legal if c in NUMBERS]
        if numbers:
            return max(numbers, key=NUMBERS.__getitem__)
        for card in PREFERENCE:
            if card in legal:
                return card
        return legal[0]


if __name__ == "__main__":
    raise SystemExit(run(PusherBot()))
