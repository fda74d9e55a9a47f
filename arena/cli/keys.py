"""Single key presses from the terminal, for `arena replay`'s controls.

While a :class:`KeyReader` is open, the terminal is in cbreak mode (each key arrives at
once, unechoed; Ctrl-C still interrupts); it is put back as it was however the block
ends, Ctrl-C included. Arrows and Home/End arrive as escape sequences, which terminals
spell in more than one way: each is read as one name.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty

#: Escape sequences by the name they are read as (xterm, VT220 and rxvt spellings).
SEQUENCES = {
    "\x1b[C": "right", "\x1bOC": "right", "\x1b[D": "left", "\x1bOD": "left",
    "\x1b[A": "up", "\x1bOA": "up", "\x1b[B": "down", "\x1bOB": "down",
    "\x1b[H": "home", "\x1bOH": "home", "\x1b[1~": "home", "\x1b[7~": "home",
    "\x1b[F": "end", "\x1bOF": "end", "\x1b[4~": "end", "\x1b[8~": "end",
}


def parse_keys(text: str) -> list[str]:
    """Key names in what the terminal sent: ``right``, ``home``... for sequences,
    ``space``, ``escape``, else the character itself; an unknown sequence is dropped."""
    keys = []
    i = 0
    while i < len(text):
        if text[i] == "\x1b":
            for sequence, name in SEQUENCES.items():
                if text.startswith(sequence, i):
                    keys.append(name)
                    i += len(sequence)
                    break
            else:
                end = i + 1
                if end < len(text) and text[end] in "[O":   # an unknown sequence: skip it
                    end += 1
                    while end < len(text) and not (text[end].isalpha() or text[end] == "~"):
                        end += 1
                    i = end + 1
                else:
                    keys.append("escape")
                    i = end
            continue
        keys.append("space" if text[i] == " " else text[i])
        i += 1
    return keys


class KeyReader:
    """Keys from ``stdin`` (a terminal), in cbreak mode while open."""

    def __init__(self, stdin=None) -> None:
        self.fd = (stdin or sys.stdin).fileno()
        self._saved = None

    def __enter__(self) -> KeyReader:
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    def read(self, timeout: float) -> list[str]:
        """The keys pressed within ``timeout`` s (none if none)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return []
        data = os.read(self.fd, 64)
        if not data:        # end of input: nothing more will come
            return ["eof"]
        return parse_keys(data.decode("utf-8", "replace"))
