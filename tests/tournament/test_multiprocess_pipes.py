"""The multi-process executor's channel from a worker: a pipe of its own, so a worker
that dies in the middle of a message ends its own pipe and nothing else."""

from __future__ import annotations

import multiprocessing
import os
import queue
import struct
import threading

from arena.tournament.multiprocess import _read


def _half_a_message(writer) -> None:
    """A worker that sends one whole message, then the first 10 bytes of a 1000-byte one,
    and dies (as kill -9 leaves a pipe)."""
    writer.send(("whole",))
    os.write(writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
    os._exit(9)


def test_a_worker_that_dies_in_the_middle_of_a_message_ends_its_own_pipe():
    """The reader gets the whole message, then EOF, and stops; on one queue shared by the
    workers, the partial message would block the parent's reads for good."""
    ctx = multiprocessing.get_context("spawn")
    reader, writer = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_half_a_message, args=(writer,))
    worker.start()
    writer.close()
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    thread = threading.Thread(target=_read, args=(7, reader, inbox), daemon=True)
    thread.start()
    assert inbox.get(timeout=30) == ("whole",)
    assert inbox.get(timeout=30) == ("eof", 7)
    thread.join(timeout=5)
    assert not thread.is_alive()
    worker.join(timeout=10)
    assert worker.exitcode == 9
