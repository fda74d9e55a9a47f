"""The fuzzer: Hypothesis state machines against a real ``arena serve`` (docs/reliability.md).

- :mod:`arena.fuzz.target`: the server under fuzz, in a process of its own, with two
  healthy bots playing tournaments beside the fuzz; its output read for errors, its
  memory measured.
- :mod:`arena.fuzz.client`: raw gRPC calls (any bytes on a method's path) from a loop of
  the fuzzer's own.
- :mod:`arena.fuzz.values`: what is sent: extreme numbers, strings and enum values, bytes
  that are not protobuf.
- :mod:`arena.fuzz.referee`, :mod:`arena.fuzz.organizer`, :mod:`arena.fuzz.spectator`: a
  state machine per service, each with a model that predicts every answer.
- :mod:`arena.fuzz.run`: the machines in turn, for a number of examples or a time.

Needs Hypothesis (the ``dev`` extra); the tests in tests/fuzz run it briefly, and ``arena
bench fuzz --seconds S`` for as long as asked.
"""
