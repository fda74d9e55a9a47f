"""What every fuzzing state machine shares: the server under fuzz, how a failure is told,
and the invariant that the server stays well."""

from __future__ import annotations

import functools

from hypothesis.stateful import RuleBasedStateMachine, invariant
from ono99.transport import grpc

from arena.fuzz.client import Outcome, server_stream, unary, client_stream
from arena.fuzz.target import ServedArena


class Broken(AssertionError):
    """The server did not do what its protocol says."""


class _Skip(Exception):
    """What was drawn does not fit the rule now: the step does nothing."""


def only_if(condition) -> None:
    """Go on with the step only if ``condition``. (Hypothesis's ``assume`` in a rule would
    throw the whole example away, steps already run included.)"""
    if not condition:
        raise _Skip


def step(fn):
    """A rule or invariant that, if it raises, marks the machine failed: its teardown then
    only cleans up (checking more would hide the first failure)."""
    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except _Skip:
            return None
        except BaseException:
            self.failed = True
            raise

    return run


class FuzzMachine(RuleBasedStateMachine):
    """A state machine against one :class:`ServedArena` (shared by every example)."""

    def __init__(self, target: ServedArena) -> None:
        super().__init__()
        self.t = target
        self.failed = False

    # ---------------------------------------------------------------- calls

    def _run(self, call, address: str, *args, timeout: float = 60.0) -> Outcome:
        async def go() -> Outcome:   # the channel is made (and used) in the client's loop
            return await call(self.t.channels.get(address), *args)

        return self.t.loop.run(go(), timeout)

    def unary(self, address: str, path: str, data: bytes, metadata=None) -> Outcome:
        self.t.messages += 1
        return self._run(unary, address, path, data, metadata)

    def server_stream(self, address: str, path: str, data: bytes, metadata=None, limit: int = 3,
                      wait: float = 10.0) -> Outcome:
        """The first ``limit`` replies (each waited for ``wait`` s at most: a stream that
        may rightly stay silent, as TV before a match, is given less)."""
        self.t.messages += 1
        return self._run(server_stream, address, path, data, metadata, limit, wait)

    def client_stream(self, address: str, path: str, requests: list[bytes], metadata=None) -> Outcome:
        self.t.messages += len(requests) or 1
        return self._run(client_stream, address, path, requests, metadata, timeout=120)

    # ---------------------------------------------------------------- invariants

    @invariant()
    @step
    def server_is_well(self) -> None:
        """No handler raised, no task failed, the server runs."""
        errors = self.t.new_errors()
        if errors:
            raise Broken("the server logged an error:\n" + "\n".join(errors))
        if not self.t.alive():
            raise Broken(f"the server exited with {self.t.proc.returncode}")


def expect(outcome: Outcome, code, what: str, words: str | None = None) -> None:
    """The call ended with ``code`` (and details containing ``words``). A call whose
    writes the server cut short by ending it early is reported INTERNAL by gRPC's client:
    that is taken for the error expected."""
    if outcome.write_failed and outcome.code == grpc.StatusCode.INTERNAL and code != grpc.StatusCode.OK:
        return
    if outcome.code != code or (words is not None and words not in outcome.details):
        raise Broken(f"{what}: expected {code.name}" + (f" ({words!r})" if words else "")
                     + f", got {outcome.code.name}: {outcome.details[:300]!r}")
