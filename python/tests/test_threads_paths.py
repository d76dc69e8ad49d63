"""threads=N through the paths users take, the tool on files and Python, against one thread:
the same entries, values, errors, messages and exit statuses, on tables where threads once lost
good entries, refused a valid archive, or changed an exit status; a spawned DataLoader worker
stopped early, and a thread inside tablio at interpreter exit, end cleanly."""
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import SANITIZED, program_environment

np = pytest.importorskip("numpy")
tablio = pytest.importorskip("tablio")

TOOL = os.environ.get("TABLIO_TOOL")
needs_tool = pytest.mark.skipif(not TOOL, reason="TABLIO_TOOL names the tool (set by the build's tests)")
THREADS = (1, 2, 4)


@pytest.fixture
def every_entry_to_threads():
    """Tables hand every entry they can to their threads, whatever they measure (else tables this
    small stay in their own thread, and the threads' paths go untried)."""
    tablio._tablio._set_thread_use("always")
    yield
    tablio._tablio._set_thread_use("measured")


def tool(*args, cwd=None):
    """The tool's exit status, output and error output, with tables using their threads."""
    done = subprocess.run([TOOL, *args], capture_output=True, cwd=cwd, timeout=300,
                          env=program_environment(TABLIO_THREAD_USE="always"))
    return done.returncode, done.stdout, done.stderr


def python_reading(rspec, threads, type="matrix"):
    """The keys and values Python reads, then the error that ended the reading, if one did."""
    got = []
    try:
        for key, value in tablio.open(rspec, type=type, threads=threads):
            got.append((key, value.tobytes() if isinstance(value, np.ndarray) else repr(value)))
    except (ValueError, OSError) as e:  # FormatError, UsageError, StreamError
        got.append((type(e).__name__, str(e)))
    return got


def three_matrices_and_a_script(folder, bad_lines):
    """A 3-matrix ark,scp table, and a script with bad lines between its good ones."""
    with tablio.writer(f"ark,scp:{folder}/a.ark,{folder}/a.scp", type="matrix") as w:
        for i in range(3):
            w[f"u{i}"] = np.arange(12, dtype=np.float32).reshape(3, 4) + i
    good = (folder / "a.scp").read_text().splitlines()
    lines = [good[0]] + bad_lines + good[1:]
    (folder / "b.scp").write_text("\n".join(lines) + "\n")


@pytest.mark.usefixtures("every_entry_to_threads")
def test_good_entries_after_a_bad_script_line_are_kept_under_p(tmp_path, monkeypatch):
    three_matrices_and_a_script(tmp_path, ["bad a.ark:6"])
    for threads in THREADS:
        assert [k for k, _ in tablio.open(f"scp,p:{tmp_path}/b.scp", type="matrix", threads=threads)] == \
            ["u0", "u1", "u2"], threads
    if TOOL:
        one = tool("copy", "--threads=1", "scp,p:b.scp", "ark,t:-", cwd=tmp_path)
        assert one[0] == 0 and one[1].count(b"[") == 3
        for threads in THREADS[1:]:
            assert tool("copy", f"--threads={threads}", "scp,p:b.scp", "ark,t:-", cwd=tmp_path) == one
    # 30 lines, 5 of them bad: 25 entries at every thread count.
    with tablio.writer(f"ark,t,scp:{tmp_path}/t.ark,{tmp_path}/t.scp", type="matrix") as w:
        for i in range(25):
            w[f"k{i:02d}"] = np.full((2 + i % 3, 3), i, dtype=np.float32)
    lines = (tmp_path / "t.scp").read_text().splitlines()
    for n, at in enumerate((2, 7, 11, 18, 23)):
        offset = int(lines[at].rsplit(":", 1)[1])
        lines.insert(at + n, f"bad{n} t.ark:{offset + 2 + n}")
    (tmp_path / "b30.scp").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    readings = {threads: python_reading("scp,p:b30.scp", threads) for threads in THREADS}
    assert len(readings[1]) == 25 and all(r == readings[1] for r in readings.values())


@pytest.mark.usefixtures("every_entry_to_threads")
def test_examples_that_do_not_decode_through_a_script_are_left_out_under_p(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/good.tfrecord", type="example") as w:
        for i in range(6):
            w[f"{i:08d}"] = {"label": np.array([i])}
    records = [record for _, record in tablio.open(f"tfrecord:{tmp_path}/good.tfrecord", type="bytes")]
    with tablio.writer(f"tfrecord,scp:{tmp_path}/e.tfrecord,{tmp_path}/e.scp", type="bytes") as w:
        for i, record in enumerate(records):
            w[f"r{i}"] = b"no Example" if i in (1, 4) else record
    readings = {t: python_reading(f"scp,p:{tmp_path}/e.scp", t, type="example") for t in THREADS}
    assert [k for k, _ in readings[1]] == ["r0", "r2", "r3", "r5"]
    assert all(r == readings[1] for r in readings.values())


@pytest.mark.usefixtures("every_entry_to_threads")
def test_an_archive_whose_objects_straddle_the_reader_windows_reads_whole(tmp_path):
    with tablio.writer(f"ark:{tmp_path}/z.ark", type="matrix") as w:
        for i in range(600):
            w[f"utt{i:06d}"] = np.zeros((1 + (i * 7) % 500, 80), np.float32)
    with tablio.writer(f"ark:{tmp_path}/zc.ark", type="matrix", compression_method=3) as w:
        for i in range(600):
            w[f"utt{i:06d}"] = np.zeros((1 + (i * 7) % 500, 80), np.float32)
    for name in ("z.ark", "zc.ark"):
        for threads in (2, 3, 8):
            assert sum(1 for _ in tablio.open(f"ark:{tmp_path}/{name}", type="matrix", threads=threads)) == 600
        if TOOL:
            status, _, err = tool("copy", "--threads=2", f"ark:{tmp_path}/{name}", "ark:/dev/null")
            assert status == 0 and b"copied 600 entries" in err


@needs_tool
def test_the_tool_exits_and_says_the_same_at_every_thread_count(tmp_path):
    """A value the output refuses, first or later: one exit status and one message."""
    for name, bad in (("first", 0), ("u03", 3)):
        with tablio.writer(f"lmdb:{tmp_path}/{name}_lmdb", type="example") as w:
            for i in range(20):
                example = {"label": np.array([i], np.int64), "f": np.arange(100, dtype=np.float32)}
                if i == bad:
                    example["key"] = [b"own"]
                w[f"u{i:02d}"] = example
        seen = {t: tool("copy", "--type=example", f"--threads={t}", f"lmdb:{tmp_path}/{name}_lmdb",
                        f"tfrecord,key=key:{tmp_path}/o.tfrecord") for t in THREADS}
        status, _, message = seen[1]
        assert status == (2 if bad == 0 else 1), message
        assert f"the value of key 'u{bad:02d}'".encode() in message
        assert all(s == seen[1] for s in seen.values()), (name, seen)


@needs_tool
def test_a_matrix_that_cannot_be_compressed_leaves_what_one_thread_leaves(tmp_path):
    """NaN among the last matrices, within what the threads hold in flight."""
    for bad in (0, 150, 295, 299):
        with open(tmp_path / "in.txt", "w") as f:
            for i in range(300):
                m = np.arange(12, dtype=np.float32).reshape(3, 4) + i
                if i == bad:
                    m[1, 1] = np.nan
                f.write(f"k{i:03d} [\n" + "\n".join(" ".join(str(x) for x in row) for row in m) + " ]\n")
        made = {}
        for threads in (1, 2, 3, 8):
            out = tmp_path / f"n{threads}.ark"
            status, _, err = tool("copy", "--compress", f"--threads={threads}", "ark,t:in.txt",
                                  f"ark,scp:{out},{tmp_path}/n.scp", cwd=tmp_path)
            assert status == 1 and f"the value of key 'k{bad:03d}'".encode() in err
            made[threads] = (out.read_bytes(), (tmp_path / "n.scp").read_text().replace(str(out), "OUT"))
        assert all(m == made[1] for m in made.values()), bad
        assert made[1][1].count("\n") == bad


SPAWNED_EARLY_STOP = textwrap.dedent("""
    import io, sys, tarfile
    import numpy as np, torch
    import tablio.torch as tt
    from PIL import Image
    def shard(path):
        with tarfile.open(path, "w") as t:
            for i in range(64):
                b = io.BytesIO()
                Image.fromarray(np.full((48, 64, 3), i, np.uint8)).save(b, "JPEG")
                for ext, data in (("jpg", b.getvalue()), ("cls", str(i % 10).encode())):
                    info = tarfile.TarInfo(f"{i:06d}.{ext}")
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
    if __name__ == "__main__":
        shard(sys.argv[1])
        ds = tt.TableIterableDataset("tar:" + sys.argv[1], type="sample", images=True, threads=2, batch_size=16)
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1, multiprocessing_context="spawn")
        for i, batch in enumerate(loader):
            if i == 1:
                break
        del loader
        print("stopped", flush=True)
""")


def test_a_spawned_worker_stopped_early_ends_cleanly(tmp_path):
    """The case docs/pytorch.md gives for resuming: stop mid-epoch, drop the loader."""
    pytest.importorskip("torch")
    pytest.importorskip("PIL")
    script = tmp_path / "early_stop.py"
    script.write_text(SPAWNED_EARLY_STOP)
    # Again and again for the races of a stop; once under the sanitizers, for its memory.
    for _ in range(1 if SANITIZED else 4):
        done = subprocess.run([sys.executable, str(script), str(tmp_path / "train-000000.tar")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "stopped" in done.stdout, done.stderr
        assert "terminate called" not in done.stderr and "killed by signal" not in done.stderr, done.stderr


def test_a_thread_inside_tablio_at_interpreter_exit_ends_cleanly(tmp_path):
    """A daemon thread reading (with threads or not) while the interpreter exits: Python ends it,
    and the process exits 0 rather than abort."""
    with tablio.writer(f"ark:{tmp_path}/m.ark", type="matrix", compression_method=2) as w:
        for i in range(200):
            w[f"u{i:03d}"] = np.ones((300, 40), np.float32) * i
    script = textwrap.dedent(f"""
        import threading, time, tablio
        def read(threads):
            while True:
                for _ in tablio.open("ark:{tmp_path}/m.ark", type="matrix", threads=threads):
                    pass
        for threads in (1, 2):
            threading.Thread(target=read, args=(threads,), daemon=True).start()
        time.sleep(0.3)
        open_table = iter(tablio.open("ark:{tmp_path}/m.ark", type="matrix", threads=2))
        next(open_table)
    """)
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "terminate called" not in done.stderr, done.stderr


def forty_matrices(nan_at=None):
    rng = np.random.default_rng(5)
    for i in range(40):
        m = rng.normal(size=(20, 8)).astype(np.float32)
        if i == nan_at:
            m[0, 0] = np.nan
        yield f"k{i:03d}", m


@pytest.mark.usefixtures("every_entry_to_threads")
@pytest.mark.parametrize("stop", ["input", "interrupt"])
def test_a_writer_left_by_another_exception_keeps_every_value_it_took(tmp_path, stop):
    # The caller's input fails (or an interrupt) with values still in the writer's threads: they
    # are written, as one thread had written them.
    def write(threads):
        with pytest.raises(KeyboardInterrupt if stop == "interrupt" else tablio.FormatError):
            with tablio.writer(f"ark,scp:{tmp_path}/{threads}.ark,{tmp_path}/{threads}.scp",
                               type="compressed-matrix", compression_method=2, threads=threads) as w:
                for i, (key, m) in enumerate(forty_matrices()):
                    if i == 23:
                        if stop == "interrupt":
                            raise KeyboardInterrupt
                        tablio.open(f"ark:{tmp_path}/missing-or-cut.ark", type="matrix")
                    w[key] = m
        return (tmp_path / f"{threads}.ark").read_bytes(), len((tmp_path / f"{threads}.scp").read_text().splitlines())

    (tmp_path / "missing-or-cut.ark").write_bytes(b"k000 \0BFM \4")
    one = write(1)
    assert one[1] == 23
    for threads in (2, 4):
        assert write(threads) == one


@pytest.mark.usefixtures("every_entry_to_threads")
def test_a_caller_who_goes_on_after_a_failed_value_gets_what_one_thread_gives(tmp_path):
    # A NaN among the last values: one thread raises at its write(); threads at a later write()
    # or at close(). A caller who catches the error and goes on (closing again) has the values
    # after it written, as one thread writes them.
    def write(threads):
        w = tablio.writer(f"ark:{tmp_path}/{threads}.ark", type="compressed-matrix", compression_method=2,
                          threads=threads)
        raised = 0
        for key, m in forty_matrices(nan_at=37):
            try:
                w[key] = m
            except tablio.UsageError:
                raised += 1
        for _ in range(3):
            try:
                w.close()
                break
            except tablio.UsageError:
                raised += 1
        return raised, (tmp_path / f"{threads}.ark").read_bytes()

    one = write(1)
    assert one[0] == 1
    for threads in (2, 4):
        assert write(threads) == one


def test_the_specifiers_threads_wins_and_is_said_once(tmp_path):
    from tablio import _threaded
    assert _threaded("ark,threads=1:a.ark", 4) == "ark,threads=1:a.ark"
    assert _threaded("ark:a.ark", 4) == "ark,threads=4:a.ark"
    with tablio.writer(f"ark:{tmp_path}/a.ark", type="matrix") as w:
        w["a"] = np.zeros((2, 2), np.float32)
    with pytest.raises(tablio.UsageError):
        tablio.open(f"ark,threads=2,threads=3:{tmp_path}/a.ark", type="matrix")
    assert len(list(tablio.open(f"ark,threads=2,threads=2:{tmp_path}/a.ark", type="matrix"))) == 1
