"""Seeds from a master secret: stable, 63 bits, three separate keys, unambiguous inputs."""

from __future__ import annotations

import re

from arena.seeds import MASTER_BITS, Seeds, fresh_master


def test_derivations_are_stable():
    # computed once: a change here changes the deals of every stored tournament, which
    # then resume with other cards
    s = Seeds(42)
    assert s.deal_seed(0, 0) == 7479962669328228527
    assert s.bot_seed(3, 1, 0) == 2440119561433227188
    assert s.match_id("cup", "t0-d0-r0") == "5f68cbee2a0b6a39"


def test_seeds_use_63_bits_and_do_not_repeat():
    s = Seeds(7)
    deals = [s.deal_seed(t, d) for t in range(40) for d in range(50)]
    assert all(0 <= x < 2**63 for x in deals)
    assert len(set(deals)) == len(deals)
    assert max(deals) > 2**62                     # the top bit is used, not wasted


def test_the_three_keys_are_separate():
    # the same parts under the deal, bot and id keys give unrelated values, so knowing
    # bot seeds or match ids tells nothing of a deal seed
    s = Seeds(5)
    parts = ("t1", 3)
    values = {s.deal_seed(*parts), s.bot_seed(*parts), int(s.match_id(*parts), 16)}
    assert len(values) == 3


def test_every_master_gives_other_seeds_even_small_and_huge_ones():
    masters = [0, 1, 2, -1, 10**40, 2**128 - 1, 12345678901234567890]
    for derive in (lambda s: s.deal_seed(0, 0), lambda s: s.bot_seed(0, 0, 0),
                   lambda s: s.match_id("x")):
        values = [derive(Seeds(m)) for m in masters]
        assert len(set(values)) == len(masters)


def test_parts_are_encoded_without_ambiguity():
    s = Seeds(9)
    assert s.deal_seed("a:b") != s.deal_seed("a", "b")
    assert s.deal_seed(1, 23) != s.deal_seed(12, 3)
    assert s.deal_seed("") != s.deal_seed()


def test_match_ids_are_16_hex_digits_naming_nothing():
    s = Seeds(3)
    ids = [s.match_id("cup", f"t{t}-d{d}-r{r}") for t in range(5) for d in range(20) for r in range(2)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_fresh_masters_are_128_random_bits():
    masters = {fresh_master() for _ in range(200)}
    assert len(masters) == 200
    assert all(0 <= m < 2**MASTER_BITS for m in masters)
    assert max(masters).bit_length() > MASTER_BITS - 8
