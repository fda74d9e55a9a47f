"""A short fuzz of the three services of a real ``arena serve`` (arena/fuzz, and
docs/reliability.md): Hypothesis state machines send each service valid, out-of-order,
repeated, foreign, extreme and undecodable messages over gRPC, and check every answer
against the protocol, while two real bots play healthy tournaments on the same server.

The examples are the same at every run (derandomize, no example database), so that CI is
repeatable; ``arena bench fuzz --seconds S`` runs new ones for as long as asked."""

from __future__ import annotations

import pytest
from support.processes import env_for, kill_marked, new_mark

from arena.fuzz.run import fuzz_settings, run_machine
from arena.fuzz.target import ServedArena

#: the server's memory may grow this much over the short fuzz (its caches, gRPC's pools)
GROWTH_KIB = 32 * 1024


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """One served arena for the module (the machines' examples share it, as a server's
    clients do), with its healthy bots; every process it started is gone at the end."""
    value = new_mark()
    served = ServedArena(tmp_path_factory.mktemp("fuzz"), env=env_for(value)).start()
    yield served
    served.stop()
    kill_marked(value)


@pytest.mark.parametrize("machine, examples", [("referee", 12), ("organizer", 12), ("spectator", 4)])
def test_every_answer_is_the_one_the_protocol_promises(target, machine, examples):
    failure = run_machine(target, machine, fuzz_settings(examples, steps=20, derandomize=True))
    assert failure is None, failure


def test_the_server_stayed_well_through_the_fuzz(target):
    """No handler raised and no task failed (the server's output), the healthy bots'
    matches all finished without a verdict and go on, and memory stayed bounded."""
    assert target.errors() == []
    assert target.check_healthy(30) == []
    assert target.healthy.matches > 0
    grown = target.rss_kb() - target.rss_start_kb
    assert grown < GROWTH_KIB, f"the server grew by {grown / 1024:.0f} MiB over the fuzz"


def test_a_session_refused_too_often_outside_its_turns_is_cut_off_and_comes_back(target):
    """The referee cuts a session off past MAX_REFUSED_OUTSIDE refused messages while no
    turn of its is open (between matches too), with a goodbye: the model did not know
    the rule, and a long fuzz run took the goodbye for a wrong answer (17 second hellos
    from the seat not to act). It expects the cut-off now, and the bot comes back."""
    from ono99.v1 import referee_pb2 as rpb

    from arena.fuzz.referee import RefereeMachine
    from arena.referee.session import MAX_REFUSED_OUTSIDE

    machine = RefereeMachine(target)
    try:
        machine.begin(seed=7)
        waiting = next(i for i, b in enumerate(machine.bots) if b.open_turn is None)
        old = machine.bots[waiting].stream
        for _ in range(MAX_REFUSED_OUTSIDE + 1):
            machine.hello_again(waiting, rpb.Hello(name="again", protocol_version=1))
        assert machine.bots[waiting].stream is not old     # cut off, and back
        machine.nothing_unexpected()
        machine.play_legal(0)                              # the match goes on
    finally:
        machine.teardown()
