"""Seeds that no bot can compute: a run's secret and the keyed functions derived from it.

Everything random in a run comes from one *master* seed: 128 bits from the operating
system (:func:`fresh_master`) unless the organiser passes ``--seed N``. The master never
leaves the organiser's side (the database, the organiser's logs); what a bot receives is
derived from it by keyed BLAKE2b, each use under its own key:

* the **deal key** gives the engine's seeds (the cards): never sent anywhere;
* the **bot key** gives the seeds sent to bots in their match start;
* the **id key** gives the opaque match ids bots see.

A bot holding any number of bot seeds and match ids would have to invert BLAKE2b, or
search the 2^128 masters, to learn a deal: with a known master (``--seed 1``) it only
has to run this module, which is why ``--seed`` is for trusted bots. Keys are separate,
so even a leaked deal seed says nothing about bot seeds, and the other way round.
"""

from __future__ import annotations

import hashlib
import secrets

#: Bits of a fresh master secret.
MASTER_BITS = 128


def fresh_master() -> int:
    """A new master secret from the operating system's generator."""
    return secrets.randbits(MASTER_BITS)


def _encode(parts: tuple[object, ...]) -> bytes:
    """Parts as unambiguous bytes: each is length-prefixed, so ("a:b",) != ("a", "b")."""
    out = bytearray()
    for p in parts:
        b = str(p).encode()
        out += len(b).to_bytes(4, "big") + b
    return bytes(out)


def _key(master: int, label: bytes) -> bytes:
    # str(master): any int, negative or huge, gives distinct bytes; 64 bytes is BLAKE2b's
    # longest key, and the personalisation keeps the three keys apart
    return hashlib.blake2b(str(master).encode(), digest_size=64, person=label).digest()


def _seed(key: bytes, person: bytes, parts: tuple[object, ...]) -> int:
    digest = hashlib.blake2b(_encode(parts), key=key, digest_size=8, person=person).digest()
    return int.from_bytes(digest, "big") >> 1   # 63 bits: fits every signed 64-bit integer


class Seeds:
    """The deal, bot and id functions of one master seed."""

    __slots__ = ("_deal", "_bot", "_id")

    def __init__(self, master: int) -> None:
        self._deal = _key(master, b"ono99/deal-key")
        self._bot = _key(master, b"ono99/bot-key")
        self._id = _key(master, b"ono99/id-key")

    def deal_seed(self, *parts: object) -> int:
        """The engine's seed for the deal named by ``parts`` (63 bits)."""
        return _seed(self._deal, b"ono99/deal", parts)

    def bot_seed(self, *parts: object) -> int:
        """The seed a bot receives for ``parts`` (63 bits); reveals nothing of deals."""
        return _seed(self._bot, b"ono99/bot", parts)

    def match_id(self, *parts: object) -> str:
        """An opaque match id for ``parts``: 16 hex digits that name nothing."""
        return f"{_seed(self._id, b'ono99/match-id', parts):016x}"

    def fresh_attempt(self, *parts: object) -> tuple[str, int]:
        """A match id and a deal seed for one attempt at the match named by ``parts``,
        new at every call (a random attempt number): where a bot that saw an attempt cut
        short could remember it (a remote bot), the next is another deal."""
        attempt = secrets.randbits(63)
        return self.match_id(*parts, attempt), self.deal_seed(*parts, attempt)
