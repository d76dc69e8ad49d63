"""The exceptions tablio raises besides OSError (for I/O, with errno and filename)."""


class FormatError(ValueError):
    """Bytes that do not follow the format: truncated, corrupted, or beyond the limits.

    ``path`` is the file (or stream) name, ``offset`` the byte offset where the problem was
    found (None when unknown) and ``key`` the table key it happened under (None when unknown).
    """

    def __init__(self, message, path=None, offset=None, key=None):
        super().__init__(message)
        self.path = path
        self.offset = offset
        self.key = key


class DataLossError(FormatError):
    """A TFRecord whose length or data CRC does not match, or that is cut short."""


class UsageError(ValueError):
    """A request that can never succeed: a bad specifier or type, a closed table."""
