import contextlib
import importlib.util
import multiprocessing
import os
import pathlib
import sys

import pytest

# The package under test: the build tree's (CTest sets PYTHONPATH), else an installed one.
REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("TABLIO_TEST_DATA", REPO / "tests" / "data"))

# Under AddressSanitizer (TABLIO_SANITIZED), no process is forked from the threaded test
# process: GCC 12's runtime does not hold its allocator and thread registry across fork(), so a
# child forked while a thread of the parent starts or ends (a remote table's fetch, a queue's
# feeder) can hang in them for good. Workers start by forkserver there instead of the default
# fork, and cases that ask for fork run in the plain build only.
SANITIZED = bool(os.environ.get("TABLIO_SANITIZED"))
if SANITIZED:
    multiprocessing.set_start_method("forkserver", force=True)


def program_environment(**extra):
    """The environment for a program the build made (the tool, the C++ copier): the interpreter's
    preloaded sanitizer runtime is left out, since such a program links its own."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(extra)
    return env


# Nor do the jobs of many processes run there (tests marked worker_processes, and those whose
# parameters start workers or ranks another way): each worker and rank is a fresh interpreter
# running the C++ the in-process tests run under the sanitizers, and their orchestration is
# Python, tested in the plain build; a loader of a test that checks more than its workers reads in
# the test's process there (loader_workers). A few tests still start workers there, for what
# happens in a worker alone: a table reopened in one, an error carried back from one
# (test_torch.py), images decoded in a worker's threads (test_images.py), a spawned worker
# stopped early (test_threads_paths.py).
LAUNCHERS = {"fork", "spawn", "forkserver", "mp.spawn", "torchrun"}


def launched_by(params):
    """The start methods and launchers a test's parameters name (alone, or in a dict)."""
    values = [w for v in params.values() for w in (v.values() if isinstance(v, dict) else [v])]
    return {v for v in values if isinstance(v, str) and v in LAUNCHERS}


def loader_workers(count, context=None):
    """DataLoader's arguments for `count` workers (started by `context`); none under the sanitizers,
    where the loader reads in the test's own process: the C++ each worker would run."""
    if SANITIZED:
        return {}
    return {"num_workers": count, **({"multiprocessing_context": context} if context else {})}


def pytest_configure(config):
    config.addinivalue_line("markers", "worker_processes: starts DataLoader workers or ranks (a job of many "
                                       "processes); not run under the sanitizers")


def pytest_collection_modifyitems(items):
    if not SANITIZED:
        return
    forked = pytest.mark.skip(reason="fork() from a threaded process can hang in the sanitizer's runtime")
    many = pytest.mark.skip(reason="a job of many processes: the same C++ in each, run in the plain build")
    for item in items:
        launchers = launched_by(item.callspec.params) if hasattr(item, "callspec") else set()
        if "fork" in launchers:
            item.add_marker(forked)
        elif launchers or item.get_closest_marker("worker_processes"):
            item.add_marker(many)


@pytest.fixture
def data():
    return DATA


@pytest.fixture
def in_folder(monkeypatch):
    """Runs the test with a data folder as the current directory (scripts name files
    relative to it, as Kaldi wrote them)."""
    def enter(folder):
        monkeypatch.chdir(DATA / folder)
        return DATA / folder
    return enter


# Loopback servers for the tests of remote storage (tests/remote/servers.py): nginx, s3rver
# and a fault-injecting proxy, started by the tests that ask for them and ended after. Where
# one is missing its tests are skipped, unless TABLIO_REQUIRE_SERVERS is set (as the test
# script sets it): there they fail, so that no run passes without them unnoticed.


def unavailable(reason):
    if os.environ.get("TABLIO_REQUIRE_SERVERS"):
        pytest.fail(f"{reason} (TABLIO_REQUIRE_SERVERS is set)")
    pytest.skip(reason)

@pytest.fixture(scope="session")
def remote():
    """The module tests/remote/servers.py."""
    name = "tablio_remote_servers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "remote" / "servers.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it, as dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def nginx(remote, tmp_path):
    """nginx serving an empty folder, nginx.root, over http."""
    if reason := remote.why_nginx_cannot_run():
        unavailable(reason)
    (tmp_path / "www").mkdir()
    with remote.Nginx(tmp_path / "www") as server:
        yield server


@pytest.fixture(scope="session")
def s3server(remote, tmp_path_factory):
    """s3rver, for the whole session: tests make buckets of their own names."""
    if reason := remote.why_s3rver_cannot_run():
        unavailable(reason)
    with remote.S3Server(tmp_path_factory.mktemp("s3rver")) as server:
        yield server


@pytest.fixture
def fault_proxy(remote):
    """Starts FaultProxy(upstream_url, ...) for the test: fault_proxy(nginx.url)."""
    with contextlib.ExitStack() as stack:
        yield lambda upstream, **options: stack.enter_context(remote.FaultProxy(upstream, **options))
