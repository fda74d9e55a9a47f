"""Information hiding over the wire: every message every bot received, across many
matches of every ruleset, carries no card hidden from that seat at that moment."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from google.protobuf.descriptor import FieldDescriptor
from ono99.v1 import game_pb2, referee_pb2

from support.matches import play, spec

from arena.referee.results import MatchSpec, TimeControl
from arena.referee.wire import card_from_wire, event_to_wire
from arena.rules.events import decisions
from arena.rules.rulesets import make_config
from arena.seeds import Seeds, fresh_master

CARD_ENUM = game_pb2.Card.DESCRIPTOR


def received(logs, name):
    """Every message the recording bot ``name`` received, from its log (the bot runs in the
    sandbox: its output is the one thing it can leave)."""
    lines = (logs / f"{name}.stderr.log").read_text().splitlines()
    return [referee_pb2.RefereeMessage.FromString(bytes.fromhex(line[4:]))
            for line in lines if line.startswith("REC ")]


def card_fields(msg, path=""):
    """Every (path, card value) of Card-typed fields in a message, recursively."""
    for field, value in msg.ListFields():
        name = f"{path}.{field.name}" if path else field.name
        if field.type == FieldDescriptor.TYPE_ENUM and field.enum_type is CARD_ENUM:
            values = value if field.is_repeated else [value]
            for v in values:
                yield name, v
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                continue
            items = value if field.is_repeated else [value]
            for i, item in enumerate(items):
                yield from card_fields(item, f"{name}[{i}]" if field.is_repeated else name)


def snapshots(result):
    """Replay the match; the game state after each step, keyed by its event count."""
    game = result.spec.new_game()
    states = {len(game.events): snapshot(game)}
    for d in decisions(result.events):
        game.play(d[1], d[2]) if d[0] == "play" else game.forfeit(d[1])
        states[len(game.events)] = snapshot(game)
    assert game.events == result.events
    return states


def snapshot(game):
    return {"hands": [None if h is None else list(h) for h in game.hands],
            "in_game": list(game.in_game), "revealed": dict(game.revealed)}


def check_stream(messages, seat, result):
    states = snapshots(result)
    public = [event_to_wire(e) for e in result.events]
    delivered = 0
    for msg in messages:
        kind = msg.WhichOneof("kind")
        body = getattr(msg, kind)
        events = list(getattr(body, "events", []))
        # the events a seat receives are exactly the public record, in order
        assert events == public[delivered:delivered + len(events)]
        delivered += len(events)
        if kind in ("match_end", "match_start", "welcome", "goodbye"):
            continue  # match_end reveals every hand: the match is over
        state = states.get(delivered)
        for path, value in card_fields(body):
            card = card_from_wire(value)
            if path.startswith("events["):
                if ".seat_eliminated.hand" in path:
                    victim = int(events[int(path[7:path.index("]")])].seat_eliminated.seat)
                    assert not states[max(states)]["in_game"][victim]
                continue  # played cards are public; the record was compared above
            assert kind == "turn", f"{kind} carries card {value} at {path}"
            assert state is not None, f"turn at event {delivered} matches no state of the game"
            if path == "view.hand" or path == "legal":
                assert card in state["hands"][seat], f"{path}: {card} not in seat {seat}'s hand"
            elif path.startswith("view.seats[") and path.endswith(".revealed"):
                other = int(path[len("view.seats["):path.index("]")])
                assert not state["in_game"][other], f"hand of seat {other} shown while it plays"
                assert card in state["revealed"][other]
            else:
                pytest.fail(f"a turn carries card {card} at {path}")
        if kind == "turn":
            hand = [card_from_wire(v) for v in body.view.hand]
            assert Counter(hand) == Counter(state["hands"][seat])
    assert delivered == len(public)


@pytest.mark.parametrize("ruleset, options, seats", [
    ("modern", None, 4),
    ("modern", None, 2),
    ("classic", {"ninety_nine_on_zero": True}, 3),
    ("classic", {"scoring": "points", "points_target": 60}, 3),
    ("classic-set99", None, 5),
])
def test_no_message_carries_a_hidden_card(rogue, tmp_path, ruleset, options, seats):
    folders = [rogue("record", name=f"rec{seat}") for seat in range(seats)]
    results = play(folders, lambda names: [spec(names, ruleset, seed, options)
                                           for seed in range(1, 9)], log_dir=tmp_path / "logs")
    for seat in range(seats):
        messages = received(tmp_path / "logs", f"rec{seat}")
        by_match: dict[str, list] = {}
        for msg in messages:
            kind = msg.WhichOneof("kind")
            match_id = getattr(getattr(msg, kind), "match_id", None)
            if match_id:
                by_match.setdefault(match_id, []).append(msg)
        assert len(by_match) == len(results)
        for result in results:
            check_stream(by_match[result.match_id], seat, result)
            assert any(m.WhichOneof("kind") == "turn" for m in by_match[result.match_id])


def numbers(msg):
    """Every number a message carries: integer fields, and every run of digits or of hex
    digits in its strings (a seed could hide in a match id or a reason), recursively."""
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                values = [v for kv in value.items() for v in kv]
            else:
                for item in values:
                    yield from numbers(item)
                continue
        for v in values:
            if isinstance(v, bool):
                continue
            if isinstance(v, int):
                yield field.name, v
            elif isinstance(v, str):
                for run in re.findall(r"[0-9]+", v):
                    yield field.name, int(run)
                for run in re.findall(r"[0-9a-fA-F]{8,}", v):
                    yield field.name, int(run, 16)


def test_no_message_carries_a_number_equal_to_a_seed_of_the_run(rogue, tmp_path):
    # seeds as a tournament makes them, from a secret master: the deals, every seat's bot
    # seed; a bot receives its own bot seed in its match start, and nothing else of these
    master = fresh_master()
    seeds = Seeds(master)
    seats = 3
    folders = [rogue("record", name=f"rec{seat}") for seat in range(seats)]
    config = make_config("classic", {"scoring": "points", "points_target": 60}, seats)
    specs = {}

    def make(names):
        out = []
        for d in range(6):
            match_spec = MatchSpec(seeds.match_id("cup", f"t0-d{d}"), config, seeds.deal_seed(0, d),
                             tuple(names), TimeControl(),
                             tuple(seeds.bot_seed(0, d, s) for s in range(seats)))
            specs[match_spec.match_id] = match_spec
            out.append(match_spec)
        return out

    play(folders, make, log_dir=tmp_path / "logs")
    secret = {master, master & (2**64 - 1), master >> 64}
    for match_spec in specs.values():
        secret |= {match_spec.seed, match_spec.seed & 0xFFFFFFFF, match_spec.seed >> 32}
    for seat in range(seats):
        messages = received(tmp_path / "logs", f"rec{seat}")
        assert any(m.WhichOneof("kind") == "turn" for m in messages)
        for msg in messages:
            kind = msg.WhichOneof("kind")
            body = getattr(msg, kind)
            match_spec = specs.get(getattr(body, "match_id", ""))
            others = (set() if match_spec is None
                      else {s for i, s in enumerate(match_spec.bot_seeds) if i != seat})
            for name, value in numbers(body):
                assert value not in secret, f"{kind}.{name} carries a seed of the run: {value}"
                assert value not in others, f"{kind}.{name} carries another seat's bot seed"
                if value == spec_bot_seed(match_spec, seat):
                    assert (kind, name) == ("match_start", "bot_seed"), f"{kind}.{name}"


def spec_bot_seed(match_spec, seat):
    return None if match_spec is None else match_spec.bot_seeds[seat]
