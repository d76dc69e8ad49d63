"""Shard indexes: the JSON that WebDataset's indexed datasets (wids) read, listing a sharded
table's files with each one's number of samples and size, so that an epoch over thousands of
remote shards is planned without reading them.

Writers of shards (numbered tar shards, tablio.shard, the tool's shard command) write the
index beside the shards once all are complete ("train-%06d.tar" -> "train.shardindex.json");
write(rspec) writes one for shards that have none. load() reads tablio's and wids' indexes:
a "shardlist" of {"url", "nsamples", "filesize"}, URLs relative to the index's folder (or its
"base_path"/"base"), and "datasets" that list more shards or name another index.

An index names files and objects only: nothing in it (a url, a source_url, a base_path) is
ever run as a command, whatever allow_pipes says. Every function that opens one takes the
access options tablio.open() takes (allow_network, allow_pipes, confine, limits); under the
process's untrusted policy (tablio.set_untrusted()) an index and its shards are confined to
the index's folder unless confine= names another, and a remote index names remote objects only,
none outside its own folder. A shard's url names one file or object: no command, standard
input, list, pattern (glob, braces, %d, @N) or offset.
"""

import fnmatch
import json
import os
import re
from typing import NamedTuple
from urllib.parse import unquote

import tablio
from tablio import _tablio
from .errors import excerpt, printable

__all__ = ["Shard", "ShardIndex", "load", "find", "write", "name_for", "named_by", "check_size", "shown"]


class Shard(NamedTuple):
    url: str  # resolved: a path or URL that opens it
    samples: int
    size: int  # bytes, or None when the index gives none
    first_key: str = None
    last_key: str = None
    sorted: bool = False  # keys increase through the shard: [first_key, last_key] bounds them


class ShardIndex(NamedTuple):
    source: str  # where the index was read
    name: str
    format: str  # tablio's format of the shards ("tar", "tfrecord"), or None (wids': tar)
    value_type: str  # a tar table's member extension, or None
    shards: list  # [Shard]
    access: tuple = (True, True, None, None)  # what it was read with (shard_index.access()); its shards: no commands
    key: str = None  # the Example feature a TFRecord table keeps its keys in (key=), or None

    def options(self):
        """The keywords of tablio.open() its shards are opened with: the index's access, and
        never a command."""
        allow_network, _, confine, limits = self.access
        return {"allow_network": allow_network, "allow_pipes": False, "confine": confine, "limits": limits}

    def rspecs(self, options=None):
        """A specifier per shard, in the index's order, with `options` ("tar,cache=DIR"; by
        default the index's format, tar for wids') and, for tar tables, ext= the index's member
        extension, for TFRecord tables key= its key feature, unless the options give one."""
        options = options or self.format or "tar"
        if options.split(",")[0] == "tar" and self.value_type and "ext=" not in options:
            options += f",ext={self.value_type}"
        if options.split(",")[0] == "tfrecord" and self.key and "key=" not in options:
            options += f",key={self.key}"
        return [f"{options}:{shard.url}" for shard in self.shards]

    def keys_differ(self, type, options=None):
        """Whether reading the shards as `type` gives other keys than the index lists: a TFRecord
        index made with no key feature (of record numbers, as --type=bytes shards make it),
        whose records keep their keys in a "key" feature that values stored as Examples of their
        form (matrices, Datums...) are read under (tablio.open finds it)."""
        if self.format != "tfrecord" or self.key or not self.shards or not type:
            return False
        if options and any(o.startswith("key=") for o in options.split(",")):
            return False  # the options name the feature: the index's keys are not used
        first = self.rspecs(options)[0]
        try:
            return _tablio.reading_rspec(first, type, self.access) != first
        except (OSError, tablio.FormatError):
            return False  # a shard that cannot be read is an error where it is read

    def check_reads(self, type, options=None):
        """Refuses to plan a table read as `type` with `options` ("tar,ext=cls"; None for an
        "index:" specifier, which reads what the index counts, samples if `type` is) by an index
        that counts other entries: another format, or other tar members, whose counts differ;
        or that lists other keys than reading the shards as `type` gives (keys_differ)."""
        fmt = (options or self.format or "tar").split(",")[0]
        if self.format and fmt != self.format:
            raise tablio.UsageError(f"the shard index {shown(self.source)} lists {self.format} shards, "
                                    f"but they are read as {fmt}")
        if self.keys_differ(type, options):
            raise tablio.UsageError(
                f"the shard index {shown(self.source)} lists the records by number, but its shards keep their keys "
                f"in a 'key' feature, which reading them as {type!r} takes: write the index as they are read "
                f"(tablio.shard_index.write('tfrecord:PATTERN', type={type!r}), or tablio shard --type={type}), "
                "or give index=False to count them")
        if fmt != "tar" or not self.value_type:  # wids' indexes say nothing of extensions
            return
        own = _tablio.tar_extension(type)
        if options is None:
            wanted = "*" if own == "*" else self.value_type
        else:
            wanted = next((o[4:] for o in options.split(",") if o.startswith("ext=")), own)
        if wanted != self.value_type:
            pattern = f"tar,ext={wanted}:PATTERN"
            raise tablio.UsageError(
                f"the shard index {shown(self.source)} counts {_entries(self.value_type)}, but this reads "
                f"{_entries(wanted)}, whose counts differ: write their own index "
                f"(tablio.shard_index.write({pattern!r}, type={type!r})), or give index=False to count them")


def _entries(extension):
    return "samples (ext=*)" if extension == "*" else f"the members KEY.{extension}"


def name_for(pattern):
    """Where the index of the shards `pattern` names goes: beside them, after the name's part
    before the shard number ("s3://b/train-%06d.tar" -> "s3://b/train.shardindex.json")."""
    return _tablio.shard_index_name(pattern)


def shown(name):
    """A path or URL as messages show it: a URL without its query string and credentials (a
    presigned URL's signature, user:password@), as the C++ library shows remote names, and
    control characters escaped."""
    if "://" not in name:
        return printable(name)
    name = re.split(r"[?#]", name, maxsplit=1)[0]
    return printable(re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@", r"\1", name))


def _folder(source):
    at = source.rfind("/")
    return source[:at + 1] if at >= 0 else ""


def _is_remote(name):
    """Whether a name is a remote object's, as tablio opens it (any other "x://" is a local path)."""
    return _tablio.is_remote_name(name)


def _resolved(url, base):
    if _is_remote(url) or url.startswith(("/", "~")) or not base:
        return os.path.expanduser(url)
    return base.rstrip("/") + "/" + url


# An index of a million shards is about 150 MB: anything past this is not an index. One read
# as input from others (untrusted or confined) is at most 64 MiB, some 400,000 shards: Python
# takes about 25 times an index's bytes to parse it.
MAX_INDEX_BYTES = 1 << 30
MAX_UNTRUSTED_INDEX_BYTES = 1 << 26


# Indexes are flat; one that nests deeper is no index (and would exhaust Python's stack).
MAX_DEPTH = 16
# Counts and sizes as the C++ tables take them.
_MAX_COUNT = (1 << 63) - 1


def access(allow_network=True, allow_pipes=True, confine=None, limits=None):
    """The access options of tablio.open() as the package's functions pass them on."""
    return (bool(allow_network), bool(allow_pipes), confine, limits)


def _confined(source, given):
    """The access an index at `source` is read with: never a command; under the untrusted
    policy with no confining folder given, confined to the index's own folder."""
    allow_network, _, confine, limits = given
    if confine is None and _tablio.process_policy()[0] and not _is_remote(source):
        confine = _folder(source) or "."
    return (allow_network, False, confine, limits)


class _Named(str):
    """The name of an index another index named: input after `caller`, the part the caller gave;
    `guarded` when the index is read as input from others."""
    caller = ""
    guarded = False


def _named_by_index(name, caller, given):
    named = _Named(name)
    named.caller, named.guarded = caller, _guarded(given)
    return named


def _guarded(given):
    """Whether an index read with `given` access is input from others: under the untrusted
    policy, or confined to a folder."""
    return bool(_tablio.process_policy()[0]) or (given is not None and given[2] is not None)


def _caller_part(source):
    """What of the names an index at `source` holds, resolved, the caller gave: its folder."""
    return source.caller if isinstance(source, _Named) else _folder(source)


def _named(source):
    """An index's name as messages show it: the caller's whole, one an index named quoted short."""
    return _quoted(source, source, source.guarded) if isinstance(source, _Named) else shown(source)


def _read(source, given):
    text = _tablio.read_file(source, MAX_UNTRUSTED_INDEX_BYTES if _guarded(given) else MAX_INDEX_BYTES, given)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, or nested past any index
        raise tablio.FormatError(f"{_named(source)} is not a shard index (JSON): {type(e).__name__}: "
                                 f"{excerpt(str(e), 80)}", shown(source)) from None


def _fail(source, what):
    raise tablio.FormatError(f"{_named(source)} is not a shard index: {what}", shown(source))


def _names_command(name):
    return isinstance(name, str) and (name.strip().startswith("|") or name.strip().endswith("|"))


# What would make a shard's url more than one file or object when opened as a specifier's name:
# standard input, a list, a glob, braces, a printf number, name@N, an offset (with a range).
_NOT_ONE_OBJECT = re.compile(r"^-$|[,*\[{\0]|%\d*d|@\d+$|:\d+(\[[^\]]*\])?$")


def _names_one_object(url):
    """Whether a shard's url opens as one file or object. A URL's query (a presigned URL's) is
    no pattern."""
    if _names_command(url):
        return False
    if _is_remote(url) and not url.startswith("s3://"):
        url = re.split(r"[?#]", url, maxsplit=1)[0]
    elif "?" in url:
        return False
    if _is_remote(url):  # the host ("[::1]:8080") is no pattern
        url = url.split("://", 1)[1].partition("/")[2]
    return not _NOT_ONE_OBJECT.search(url)


def _escapes(url):
    """Whether a relative url leaves its index's folder ("..", "%2e%2e%2f" to a server)."""
    return not _is_remote(url) and ".." in unquote(url).split("/")


def _count(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def _shards(source, desc, base, given, named=False, depth=0, remote_only=False):
    if depth > MAX_DEPTH:
        _fail(source, f"'datasets' nested more than {MAX_DEPTH} deep")
    if not isinstance(desc, dict):
        _fail(source, "expected a JSON object")
    if "shardlist" not in desc and "datasets" not in desc:
        _fail(source, "it has no 'shardlist' (nor 'datasets')")
    if desc.get("wids_version", 1) != 1:
        _fail(source, f"wids_version {json.dumps(desc.get('wids_version'))[:16]} (this reads version 1)")
    named_base = desc.get("base_path") or desc.get("base")
    if named_base is not None and (not isinstance(named_base, str) or _names_command(named_base)):
        _fail(source, "its 'base_path' names no folder (a folder or a URL, never a command)")
    base = named_base or base
    listed = desc.get("shardlist", [])
    if not isinstance(listed, list):
        _fail(source, "'shardlist' is not a list")
    out = []
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            _fail(source, f"shard {i} has no 'url'")
        url = entry["url"].strip()
        if not url or not _names_one_object(url):
            _fail(source, f"shard {i} ({_quoted(entry['url'])}) names no file or object: a shard's url names one, "
                          "never a command, standard input, list, pattern or offset")
        if remote_only:
            _check_remote(source, f"shard {i}", url, base)
        samples, size = entry.get("nsamples"), entry.get("filesize")
        if not _count(samples):
            _fail(source, f"shard {i} ({_quoted(url)}) has no count of samples ('nsamples' from 0 to 2**63-1)")
        if size is not None and not _count(size):
            _fail(source, f"shard {i} ({_quoted(url)}) has a 'filesize' that is not a size")
        if size is not None and samples > size:  # every record takes a byte at least
            _fail(source, f"shard {i} ({_quoted(url)}) has {samples} samples in {size} bytes")
        first, last = entry.get("first_key"), entry.get("last_key")
        ranged = entry.get("sorted") is True and isinstance(first, str) and isinstance(last, str) and first <= last
        out.append(Shard(_resolved(url, base), samples, size, first, last, ranged))
    components = desc.get("datasets", [])
    if not isinstance(components, list):
        _fail(source, "'datasets' is not a list")
    named_here = set()  # the indexes its components name, each read once
    for component in components:
        if not isinstance(component, dict):
            _fail(source, "a 'datasets' entry is not an object")
        if "source_url" in component:
            other = component["source_url"]
            if not isinstance(other, str) or not other.strip() or _names_command(other):
                _fail(source, "a 'source_url' names no index (a file or a URL, never a command)")
            if named:
                _fail(source, "an index named by another names a third")
            if remote_only:
                _check_remote(source, "a 'source_url'", other.strip(), base)
            other = _named_by_index(_resolved(other.strip(), base), _caller_part(source), given)
            nested = _read(other, given)  # where it may be read: only then is it looked at
            if _identity(other) in named_here:  # its shards would repeat anyway
                _fail(source, f"it names the index {_quoted(other, source, _guarded(given))} twice")
            named_here.add(_identity(other))
            out += _shards(other, nested, _folder(other), given, True, depth + 1, remote_only)
        else:
            out += _shards(source, component, base, given, named, depth + 1, remote_only)
    return out


def _identity(url):
    """What a shard is, whatever name the index gives it: a local file's device and inode (through
    links, './' and '//'), a remote object's URL."""
    if not _is_remote(url):
        try:
            st = os.stat(url)
            return (st.st_dev, st.st_ino)
        except OSError:  # opening it says what is wrong
            pass
    return url


def _check_remote(source, what, url, base):
    """Under the untrusted policy, a remote index reaches no local file and nothing outside its
    folder: its urls resolve to objects, relative ones without '..'."""
    if not _is_remote(_resolved(url, base)) or _escapes(url) or (base and _escapes(base)):
        _fail(source, f"{what} ({_quoted(url)}) names a local file or leaves the index's folder: an untrusted "
                      "remote index names objects beside it")


def _quoted(text, source=None, guarded=True):
    """What an index holds (a URL without its credentials or query), as messages quote input: 16
    bytes of it, after the folder of the caller's index (`source`) shown whole. A name (`source`
    given) a trusted index holds (not `guarded`) is shown whole."""
    whole, given = shown(text), shown(_caller_part(source)) if source is not None else ""
    if source is not None and not guarded:
        return whole
    if given and whole.startswith(given):
        return "'" + given + excerpt(whole[len(given):]) + "'"
    return "'" + excerpt(whole) + "'"


def load(source, allow_network=True, allow_pipes=True, confine=None, limits=None):
    """The shard index at `source` (a path or URL), its shards' URLs resolved. Nothing it names
    is run as a command, whatever allow_pipes says; the other options as tablio.open() takes them."""
    given = _confined(source, access(allow_network, allow_pipes, confine, limits))
    desc = _read(source, given)
    if not isinstance(desc, dict):
        _fail(source, "expected a JSON object")
    remote_only = _is_remote(source) and bool(_tablio.process_policy()[0])
    shards = _shards(source, desc, _folder(source), given, remote_only=remote_only)
    name, fmt, value_type, key = (desc.get(k) for k in ("name", "format", "value_type", "key"))
    for field, value in (("name", name), ("format", fmt), ("value_type", value_type), ("key", key)):
        if value is not None and not isinstance(value, str):
            _fail(source, f"its '{field}' is not a string")
    # The format and the extension become parts of specifiers (rspecs()): they name one, no more.
    if fmt is not None and fmt not in _MIN_RECORD_BYTES:
        _fail(source, f"its 'format' {_quoted(fmt)} is none of {', '.join(_MIN_RECORD_BYTES)}")
    if value_type is not None and not re.fullmatch(r"\*|[A-Za-z0-9_][A-Za-z0-9_.-]*", value_type):
        _fail(source, f"its 'value_type' {_quoted(value_type)} is no member extension")
    if key is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./-]*", key):
        _fail(source, f"its 'key' {_quoted(key)} is no feature name")
    total = sum(shard.samples for shard in shards)
    if total > _MAX_COUNT:
        _fail(source, "its shards hold more than 2**63-1 samples in all")
    if given[2] is not None or _tablio.process_policy()[0]:  # confined or untrusted: an index is input
        if total > _UNTRUSTED_MOST_SAMPLES:
            _fail(source, f"its shards claim {total} samples, more than untrusted input may ({_UNTRUSTED_MOST_SAMPLES})")
        _check_sizes(source, shards, fmt or "tar", given)
    # A shard listed twice, by any name, would give its records twice. Told apart by what they are,
    # once an untrusted index's shards are known to be where it may name (no stat of a name
    # elsewhere tells what exists there).
    seen = set()
    for shard in shards:
        if _identity(shard.url) in seen:
            _fail(source, f"it lists {_quoted(shard.url, source, _guarded(given))} twice")
        seen.add(_identity(shard.url))
    return ShardIndex(source, name, fmt, value_type, shards, given, key)


# The fewest bytes a record takes in an uncompressed shard of each format: a tar member's
# header block, a TFRecord's length, CRCs and no data.
_MIN_RECORD_BYTES = {"tar": 512, "tfrecord": 16}
# An index read as untrusted input plans at most this many samples (the untrusted
# limits' element count): an epoch's plan takes some bytes per sample.
_UNTRUSTED_MOST_SAMPLES = 1 << 26
# How many times its size a compressed shard may inflate past its first MiB (untrusted_limits'
# expansion).
_UNTRUSTED_EXPANSION = 100


def _check_sizes(source, shards, fmt, given):
    """For an index read as untrusted or confined input: its shards are what it says before
    anything is planned from its counts, each one's size, and no more records than that size
    holds (an epoch planned from a lying index would allocate what it claims). A remote shard
    costs one request (HEAD) here; a trusted index's shards are checked when opened."""
    smallest = _MIN_RECORD_BYTES[fmt]
    for shard in shards:
        size = _tablio.stored_size(shard.url, given)
        if shard.size is not None and size != shard.size:
            _changed(shard, size, source, given)
        # A compressed shard holds at most what the expansion limit lets it inflate to.
        compressed = shard.url.endswith((".gz", ".zz", ".zlib", ".z"))
        if shard.samples > (size * _UNTRUSTED_EXPANSION + (1 << 20) if compressed else size) // smallest:
            _fail(source, f"{_quoted(shard.url, source, _guarded(given))} holds {size} bytes, too few for "
                          f"{shard.samples} records of {smallest} bytes or more")


def check_size(shard, source, given=None):
    """Raises FormatError when the shard's size is not its index's (the shards changed since
    they were indexed): one request for a remote shard. `given`: the index's access."""
    if shard.size is None:
        return
    size = _tablio.stored_size(shard.url, given)
    if size != shard.size:
        _changed(shard, size, source, given)


def _changed(shard, size, source, given):
    raise tablio.FormatError(f"{_quoted(shard.url, source, _guarded(given))} has {size} bytes, and its shard index "
                             f"{_named(source)} says {shard.size}: the shards changed since they were indexed",
                             shown(shard.url))


def named_by(rspec):
    """The index an "index:PATH_OR_URL" specifier names, or None for another specifier."""
    return rspec[len("index:"):] if rspec.startswith("index:") else None


def _as_glob(pattern):
    """A shard pattern as a glob its shards' names match: "%06d", "{000..099}" and "@16"
    become what they stand for."""
    glob = re.sub(r"%0(\d+)d", lambda m: "[0-9]" * int(m.group(1)), pattern)
    glob = re.sub(r"%\d*d", "*", glob).replace("%%", "%")
    glob = re.sub(r"\{[^{}]*\}", "*", glob)
    return re.sub(r"@(\d+)$", lambda m: f"-*-of-{int(m.group(1)):05d}", glob)


def _expand_braces(pattern):
    """The names a pattern's braces name: "{000..099}" (zero-padded as its bounds are) and
    "{a,b}", each brace in turn; a pattern without braces is itself."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    body, head, tail = m.group(1), pattern[:m.start()], pattern[m.end():]
    r = re.fullmatch(r"(\d+)\.\.(\d+)", body)
    if r:
        first, last = r.group(1), r.group(2)
        width = len(first) if first.startswith("0") and len(first) > 1 else 0
        items = [f"{i:0{width}d}" for i in range(int(first), int(last) + 1)]
    else:
        items = body.split(",")
    return [name for item in items for name in _expand_braces(head + item + tail)]


def find(rspec, allow_network=True, allow_pipes=True, confine=None, limits=None):
    """The index beside the shards a TFRecord or tar specifier names, or None when there is
    none (one request for a remote one) or it lists other shards than the pattern names
    (another sharding of the same table in the same folder). Access options as load() takes them."""
    fmt, _, name = rspec.partition(":")
    if fmt.split(",")[0] not in ("tar", "tfrecord") or not name or "," in name or _names_command(name):
        return None
    try:
        index = load(name_for(name), allow_network, allow_pipes, confine, limits)
    except FileNotFoundError:
        return None
    if not index.shards:
        return None
    if re.search(r"\{[^{}]*\}", name):  # braces name their shards: exactly the index's, or not it
        return index if sorted(_expand_braces(name)) == sorted(shard.url for shard in index.shards) else None
    glob = _as_glob(name)
    if not all(fnmatch.fnmatchcase(shard.url, glob) for shard in index.shards):
        return None
    return index


def write(rspec, type="bytes", allow_network=True, allow_pipes=True, confine=None, limits=None):
    """Writes the shard index of a TFRecord or tar table's files beside them, counting each
    file's entries as `type` reads them (the tar members' extension is the type's, or ext=).
    Returns its name. Access options as tablio.open() takes them."""
    given = access(allow_network, allow_pipes, confine, limits)
    return _tablio.index_shards(rspec, type, given).split("\n", 1)[0]
