"""IDX files (MNIST, Fashion-MNIST) as numpy arrays."""

from . import _tablio, shard_index


def read(path, allow_network=True, allow_pipes=True, confine=None, limits=None):
    """The whole file as a read-only ndarray over the mapped file: no copy.

    The array has the file's shape and type, with multi-byte types big-endian as stored
    (numpy computes with them as with any other array). A gzip file is inflated first.
    Raises FormatError (with .path and .offset) for a bad or truncated file. Access options as
    tablio.open() takes them.
    """
    return _tablio.idx_read(path, shard_index.access(allow_network, allow_pipes, confine, limits))


def write(path, array, allow_network=True, allow_pipes=True, confine=None):
    """Writes an array (uint8, int8, int16, int32, float32 or float64, at least one
    dimension) as an IDX file; path is any wxfilename ("out-idx3-ubyte", "| gzip -c > x.gz").
    Access options as tablio.writer() takes them."""
    _tablio.idx_write(path, array, shard_index.access(allow_network, allow_pipes, confine, None))
