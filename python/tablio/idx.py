"""IDX files (MNIST, Fashion-MNIST) as numpy arrays."""

from . import _tablio


def read(path):
    """The whole file as a read-only ndarray over the mapped file: no copy.

    The array has the file's shape and type, with multi-byte types big-endian as stored
    (numpy computes with them as with any other array). A gzip file is inflated first.
    Raises FormatError (with .path and .offset) for a bad or truncated file.
    """
    return _tablio.idx_read(path)


def write(path, array):
    """Writes an array (uint8, int8, int16, int32, float32 or float64, at least one
    dimension) as an IDX file; path is any wxfilename ("out-idx3-ubyte", "| gzip -c > x.gz")."""
    _tablio.idx_write(path, array)
