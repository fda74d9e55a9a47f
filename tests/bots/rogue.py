"""A bot speaking the raw protocol (no SDK), which misbehaves on purpose for the tests.

    rogue.py MODE [TRIGGER]

It answers its first TRIGGER-1 turns with its first legal card, then, from turn TRIGGER:
  sleep          sleeps $ROGUE_SLEEP seconds before answering (a late answer is stale)
  exit           exits with code 1 (a crash in the middle of a match)
  garbage_card   answers with a card outside the Card enum, and again after each refusal
  unspecified    answers with CARD_UNSPECIFIED, and again after each refusal
  garbage_bytes  sends bytes that are not a BotMessage
  not_in_hand    answers once with a card it does not hold, then correctly
  other_turn     answers once with a turn id never given to it, then correctly
  stale          answers once with the previous turn's id, then correctly
  stale_match    answers its first turn of each match but the first once with its last
                 turn id of the match before (a late answer), then correctly
  flood          sends $ROGUE_FLOOD (default 200000) actions for turns not its own, as
                 fast as it can, and never reads its stream again
  padded         answers with its first legal card padded by an unknown field of
                 argv[3] (else $ROGUE_PAD, else 8000) bytes ("=N": to N bytes in all),
                 and again after each refusal
  wrong_token    says hello with a wrong token (no trigger)
  bad_protocol   says hello with protocol version 99 (no trigger)
  no_hello       sends an action first (no trigger)
  record         plays random legal cards (seeded from the match start) and records every
                 message it receives, hex-encoded, one per line on stdout after "REC "
                 (the arena keeps it in the bot's log: a sandboxed bot writes nowhere else)
  good           plays its first legal card every turn
  garbage_always answers every turn with a card outside the Card enum, and again after
                 each refusal of its open turn (none after the turn is over): it forfeits
                 every match by too many refused actions, and floods nothing
and, whatever the turn count (for check-bot's situations):
  slow_sometimes sleeps $ROGUE_SLEEP seconds before every TRIGGER-th answer (with
                 argv[3] "log_bank", it logs "bank N", the bank_ms of each turn)
  linger         stays 30 s after the goodbye before exiting
  one_match      exits (code 0) at the end of its first match
  crash_on_owed  exits with code 1 at a turn owing two cards
  crash_on_over_limit  exits with code 1 at an over-limit turn
  crash_on_four99      exits with code 1 when its own four 99s are played
  crash_on_big_tables  exits with code 1 at the start of a match of more than 4 seats
  modern_only    exits with code 1 at the start of a match of another ruleset
Every refusal code and rejection code it receives is printed on stdout after "LOG ".
"""

import os
import queue
import random
import sys
import time

import grpc
from ono99.v1 import referee_pb2 as pb

MODE = sys.argv[1]
TRIGGER = int(sys.argv[2]) if len(sys.argv) > 2 else 3
def log(line):
    """A line for the test, on stdout: the arena keeps it in the bot's log (a sandboxed bot
    can write nowhere else)."""
    print("LOG " + line, flush=True)


def varint(n):
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def padded(msg):
    """``msg`` serialized, with an unknown length-delimited field 15 of $ROGUE_PAD bytes
    (valid protobuf: a parser keeps it as an unknown field); "=N" (argv[3] or
    $ROGUE_PAD): as many as make the whole message N bytes."""
    spec = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("ROGUE_PAD", "8000")
    body = msg.SerializeToString()
    if spec.startswith("="):
        total = int(spec[1:])
        size = next(n for n in range(total, -1, -1)
                    if len(body) + 1 + len(varint(n)) + n <= total)
        assert len(body) + 1 + len(varint(size)) + size == total, spec
    else:
        size = int(spec)
    return body + b"\x7a" + varint(size) + b"x" * size


def main():
    channel = grpc.insecure_channel(os.environ["ONO99_REFEREE"])
    grpc.channel_ready_future(channel).result(timeout=10)
    play = channel.stream_stream("/ono99.v1.Referee/Play", request_serializer=lambda b: b,
                                 response_deserializer=pb.RefereeMessage.FromString)
    outbox = queue.SimpleQueue()

    def send(msg):
        outbox.put(msg if isinstance(msg, bytes) else msg.SerializeToString())

    def requests():
        while True:
            item = outbox.get()
            if item is None:
                return
            yield item

    token = "wrong-token" if MODE == "wrong_token" else os.environ["ONO99_TOKEN"]
    version = 99 if MODE == "bad_protocol" else 1
    if MODE == "no_hello":
        send(pb.BotMessage(action=pb.Action(turn_id=1, card=7)))
    else:
        send(pb.BotMessage(hello=pb.Hello(name="rogue", token=token, protocol_version=version)))
    turns = 0
    seat = -1
    previous = None
    new_match = False
    last_legal = None
    pending = None  # the open turn to answer correctly after a deliberate mistake
    rng = random.Random(0)
    record = sys.stdout if MODE == "record" else None
    call = play(requests())
    try:
        for msg in call:
            kind = msg.WhichOneof("kind")
            if record:
                record.write("REC " + msg.SerializeToString().hex() + "\n")
                record.flush()
            if kind == "refusal":
                log("refusal " + pb.RefusalCode.Name(msg.refusal.code))
                return 3
            if kind == "goodbye":
                if MODE == "linger":
                    time.sleep(30)
                return 0
            if kind == "match_start":
                rng = random.Random(msg.match_start.bot_seed)
                new_match = True
                seat = msg.match_start.seat
                if ((MODE == "crash_on_big_tables" and msg.match_start.rules.seats > 4)
                        or (MODE == "modern_only" and msg.match_start.rules.ruleset != "modern")):
                    os._exit(1)
            if kind == "match_end" and MODE == "one_match":
                return 0
            if MODE == "crash_on_four99" and kind in ("events", "turn", "match_end"):
                for e in getattr(msg, kind).events:
                    if e.WhichOneof("kind") == "four_ninety_nines" and e.four_ninety_nines.seat == seat:
                        os._exit(1)
            if kind == "rejected":
                log("rejected " + pb.ErrorCode.Name(msg.rejected.code))
                if MODE == "garbage_card" or (MODE == "garbage_always"
                                              and msg.rejected.code == pb.ERROR_CODE_MALFORMED):
                    send(pb.BotMessage(action=pb.Action(turn_id=msg.rejected.turn_id, card=999)))
                elif MODE == "padded":
                    send(padded(pb.BotMessage(action=pb.Action(turn_id=msg.rejected.turn_id,
                                                               card=last_legal))))
                elif MODE == "unspecified":
                    send(pb.BotMessage(action=pb.Action(turn_id=msg.rejected.turn_id, card=0)))
                elif pending is not None:
                    send(pb.BotMessage(action=pb.Action(turn_id=pending.turn_id, card=pending.legal[0])))
                    pending = None
                continue
            if kind != "turn":
                continue
            t = msg.turn
            turns += 1
            answer = pb.BotMessage(action=pb.Action(turn_id=t.turn_id, card=t.legal[0]))
            if ((MODE == "crash_on_owed" and t.view.owed == 2)
                    or (MODE == "crash_on_over_limit" and t.over_limit)):
                os._exit(1)
            if MODE == "slow_sometimes" and sys.argv[3:4] == ["log_bank"]:
                log(f"bank {t.bank_ms}")
            if MODE == "slow_sometimes" and turns % TRIGGER == 0:
                time.sleep(float(os.environ.get("ROGUE_SLEEP", "0.2")))
            if MODE == "stale_match" and new_match and previous is not None:
                answer.action.turn_id = previous
                pending = t
            new_match = False
            if MODE == "record":
                answer.action.card = t.legal[rng.randrange(len(t.legal))]
            elif MODE == "garbage_always":
                answer.action.card = 999
            elif turns == TRIGGER:
                if MODE == "sleep":
                    time.sleep(float(os.environ.get("ROGUE_SLEEP", "2")))
                elif MODE == "exit":
                    os._exit(1)
                elif MODE == "garbage_card":
                    answer.action.card = 999
                elif MODE == "unspecified":
                    answer.action.card = 0
                elif MODE == "garbage_bytes":
                    send(b"\x0a\xff\xff\xff\xff\xff\xff")
                    continue
                elif MODE == "padded":
                    last_legal = t.legal[0]
                    send(padded(answer))
                    continue
                elif MODE == "not_in_hand":
                    missing = [c for c in range(1, 18) if c not in t.view.hand]
                    answer.action.card = missing[0]
                    pending = t
                elif MODE == "other_turn":
                    answer.action.turn_id = t.turn_id + 1_000_000
                    pending = t
                elif MODE == "flood":
                    bogus = pb.BotMessage(action=pb.Action(turn_id=t.turn_id + 10**9, card=7))
                    data = bogus.SerializeToString()
                    for _ in range(int(os.environ.get("ROGUE_FLOOD", "200000"))):
                        send(data)
                    log("flooded")
                    time.sleep(3600)   # and never reads again
                elif MODE == "stale" and previous is not None:
                    answer.action.turn_id = previous
                    pending = t
            previous = t.turn_id
            send(answer)
    except grpc.RpcError as exc:
        log("rpc_error " + exc.code().name)
        return 5
    finally:
        outbox.put(None)
        call.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
