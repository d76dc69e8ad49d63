"""The exceptions tablio raises besides OSError's own (for I/O with an errno, and filename)."""

import re

# How a format error's message says where: "format error in 'PATH' at byte N (key 'K'): ...".
_WHERE = re.compile(r"format error in '(?P<path>.*?)'(?: at byte (?P<offset>\d+))?(?: \(key '(?P<key>.*?)'\))?: "
                    r"expected")


# How much of the input a message quotes, as the C++ library's messages do (max_quoted_bytes):
# an error must not carry a file's contents into a log.
MAX_QUOTED = 16
# A key that names an entry is input like any other (max_quoted_key_bytes).
MAX_QUOTED_KEY = MAX_QUOTED


# What a message never shows as it is: control characters (C0, DEL, C1) and the marks that
# reorder a line on a terminal, as the C++ library's messages escape them.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\udc80-\udcff]")


def _escaped(match):
    c = ord(match.group())
    return f"\\x{c - 0xdc00 if 0xdc80 <= c <= 0xdcff else c:02x}" if c < 0x100 or c >= 0xdc80 else f"\\u{c:04x}"


def printable(text):
    """Text from the input as a message shows it: control characters escaped (\\xNN), so that
    nothing in a file moves a terminal's cursor or forges a log line."""
    return _CONTROL.sub(_escaped, str(text))


def excerpt(text, most=MAX_QUOTED):
    """The first `most` bytes of text (UTF-8, never cutting a character), "..." when there are
    more, control characters escaped: what a message may quote of the input."""
    text = str(text)
    data = text.encode("utf-8", "surrogateescape")
    if len(data) <= most:
        return printable(text)
    cut = most
    while cut > 0 and (data[cut] & 0xC0) == 0x80:  # not inside a character
        cut -= 1
    return printable(data[:cut].decode("utf-8", "surrogateescape")) + "..."


def key_excerpt(key):
    """A key that names an entry, as messages quote it."""
    return excerpt(key, MAX_QUOTED_KEY)


class FormatError(ValueError):
    """Bytes that do not follow the format: truncated, corrupted, or beyond the limits.

    ``path`` is the file (or stream) name, ``offset`` the byte offset where the problem was
    found (None when unknown) and ``key`` the table key it happened under (None when unknown).
    An error made again from its message alone (as PyTorch's DataLoader does with an error
    raised in a worker) takes them from the message.
    """

    def __init__(self, message, path=None, offset=None, key=None):
        super().__init__(message)
        if path is None and offset is None and key is None:
            found = list(_WHERE.finditer(str(message)))
            if found:
                where = found[-1]
                path, key = where["path"], where["key"]
                offset = int(where["offset"]) if where["offset"] is not None else None
        self.path = path
        self.offset = offset
        self.key = key

    def __reduce__(self):  # pickled with its place (to another process)
        return type(self), (self.args[0] if self.args else "", self.path, self.offset, self.key)


class DataLossError(FormatError):
    """A TFRecord whose length or data CRC does not match, or that is cut short."""


class UsageError(ValueError):
    """A request that can never succeed: a bad specifier or type, a closed table."""


class AccessError(UsageError):
    """A name that the access options or the process's policy refuse to open: a command,
    standard input, the network, a path outside the confining folder, a device."""


class StreamError(OSError):
    """An input or output that failed with no errno to tell: a command's exit status, an HTTP
    status, a remote object that changed while it was read. ``filename`` is the path, URL or
    command; the message says what happened (and names it too)."""

    def __str__(self):
        return self.strerror if self.strerror is not None else super().__str__()
