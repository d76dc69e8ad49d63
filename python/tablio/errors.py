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


def excerpt(text, most=MAX_QUOTED):
    """The first `most` characters of text, and "..." when there are more."""
    text = str(text)
    return text[:most] + ("..." if len(text) > most else "")


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
