"""Text from strangers, made safe to show: bots' output, names and details in records.

A terminal runs what an escape sequence asks (set its title, write the clipboard, clear
the screen, draw a link), and a bidi override turns the rest of a line around. Whatever a
bot or a shared file chose goes through :func:`printable` before it is printed or stored for
printing: its characters that are not printable are written as Python escapes.
"""

from __future__ import annotations

from google.protobuf.message import Message


def printable(text: str, keep: str = "") -> str:
    """``text`` with each character that is not printable (C0 and C1 controls, ESC among
    them; bidi and other format characters; anything ``str.isprintable`` refuses) written
    as its escape (``\\x1b``, ``\\u202e``), except those in ``keep`` (e.g. newlines)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def printable_strings(message: Message) -> None:
    """Every string in ``message`` (nested messages, repeated fields and maps included)
    through :func:`printable`, in place."""
    for field, value in message.ListFields():
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entries = []                       # copied out, then put back: keys change too
            for key, item in value.items():
                if isinstance(item, Message):
                    item = type(item).FromString(item.SerializeToString())
                    printable_strings(item)
                elif isinstance(item, str):
                    item = printable(item)
                entries.append((printable(key) if isinstance(key, str) else key, item))
            value.clear()
            for key, item in entries:
                if isinstance(item, Message):
                    value[key].CopyFrom(item)
                else:
                    value[key] = item
        elif field.is_repeated:
            if field.type == field.TYPE_STRING:
                value[:] = [printable(v) for v in value]
            elif field.type == field.TYPE_MESSAGE:
                for item in value:
                    printable_strings(item)
        elif field.type == field.TYPE_STRING:
            setattr(message, field.name, printable(value))
        elif field.type == field.TYPE_MESSAGE:
            printable_strings(value)


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 table``, ``3 tables``; ``1 match``, ``2 matches`` (``many`` given)."""
    return f"{n} {one if n == 1 else many or one + 's'}"
