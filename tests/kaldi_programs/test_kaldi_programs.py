"""Kaldi-style programs built against the Kaldi facade, run as their users run them.

The suite's own programs (tests/kaldi_programs/*.cc) always; Kaldi's own programs when the build
found their sources (TABLIO_KALDI_PROGRAMS_DIR), else those tests are skipped. Outputs are
compared with archives Kaldi itself wrote (tests/data/kaldi), byte for byte where Kaldi's
program would write the same bytes.
"""

import os
import pathlib
import struct
import subprocess

import pytest

BIN = pathlib.Path(os.environ.get("TABLIO_KALDI_BIN", ""))
DATA = pathlib.Path(os.environ.get("TABLIO_TEST_DATA", pathlib.Path(__file__).parent.parent / "data")) / "kaldi"
HOLDERS = DATA / "holders"
TIMEOUT = 120


def program(name, own=True):
    path = BIN / name
    if not path.exists():
        if own:
            pytest.fail(f"{path} was not built")
        pytest.skip(f"Kaldi's {name} was not built (no TABLIO_KALDI_PROGRAMS_DIR)")
    return str(path)


def run(name, *args, own=True, cwd=None, stdin=None):
    return subprocess.run([program(name, own), *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, timeout=TIMEOUT)


def ok(result):
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result


def expected_values(expect_file):
    """{key: (shape, [values])} of a tests/data .expect file."""
    out = {}
    for line in expect_file.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        key, _type, shape, *rest = line.split("\t")
        values = rest[0].split() if rest and rest[0] else []
        out[key] = (shape, values)
    return out


def parse_float(text):
    return float.fromhex(text) if "0x" in text else float(text)


def text_matrices(data):
    """{key: rows} of a text archive of matrices."""
    out, tokens = {}, data.decode().replace("[", " [ ").replace("]", " ] ").split("\n")
    key, rows = None, None
    for line in tokens:
        words = line.split()
        if not words:
            continue
        if key is None:
            key, rows = words[0], []
            words = words[2:]  # the key and "["
            if not words:
                continue
        end = "]" in words
        row = [float(w) for w in words if w != "]"]
        if row:
            rows.append(row)
        if end:
            out[key] = rows
            key = None
    return out


def text_table(data):
    """{key: rest of the line} of a text archive of one-line values."""
    return dict(line.split(None, 1) if " " in line else (line, "") for line in data.decode().splitlines())


def binary_matrices(data):
    """{key: (rows, cols, values)} of a binary archive of float matrices."""
    out, at = {}, 0
    while at < len(data):
        space = data.index(b" ", at)
        key = data[at:space].decode()
        assert data[space + 1:space + 3] == b"\0B" and data[space + 3:space + 6] == b"FM "
        rows, cols = struct.unpack_from("<xixi", data, space + 6)
        start = space + 16
        values = struct.unpack_from(f"<{rows * cols}f", data, start)
        out[key] = (rows, cols, list(values))
        at = start + 4 * rows * cols
    return out


def assert_close(got, want, rel=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=rel, abs=1e-30), (got, want)


# ----- the suite's own programs

def test_ali_to_post_round_trip_through_a_kaldi_style_holder(tmp_path):
    ali = HOLDERS / "int32-vector.bin.ark"
    post = tmp_path / "post.ark"
    result = ok(run("ali-to-post", "--weight=0.5", f"ark:{ali}", f"ark:{post}"))
    assert b"LOG (ali-to-post[" in result.stderr and b"Converted 4 alignments" in result.stderr
    checked = ok(run("ali-to-post", "--check", "--weight=0.5", f"ark:{post}", f"ark:{ali}"))
    assert checked.stdout == b"4 match, 0 differ\n"
    wrong = run("ali-to-post", "--check", "--weight=1", f"ark:{post}", f"ark:{ali}")
    assert wrong.returncode == 1 and wrong.stdout == b"1 match, 3 differ\n"  # the empty one matches


def test_ali_to_post_text_mode_and_an_option_that_opens_a_table():
    ali = HOLDERS / "int32-vector.bin.ark"
    result = ok(run("ali-to-post", "--class-map=7:70,42:4", "--write-lengths=ark,t:/dev/stderr",
                    f"ark:{ali}", "ark,t:-"))
    lines = result.stdout.decode().splitlines()
    assert lines[1] == "b_one [ 70 1 ] "
    assert lines[2].startswith("c_mixed [ 0 1 ] [ -1 1 ] [ 2147483647 1 ] [ -2147483648 1 ] [ 4 1 ]")
    assert b"c_mixed 5 \n" in result.stderr and b"d_seq 12 \n" in result.stderr  # Kaldi's int32 text


def test_options_config_files_help_and_errors(tmp_path):
    ali = HOLDERS / "int32-vector.bin.ark"
    config = tmp_path / "post.conf"
    config.write_text("# weights for the test\n\n--weight=0.25   # a comment\n--class_map=1:2\n")
    ok(run("ali-to-post", f"--config={config}", f"ark:{ali}", f"ark:{tmp_path / 'p.ark'}"))
    ok(run("ali-to-post", "--check", f"--config={config}", f"ark:{tmp_path / 'p.ark'}", f"ark:{ali}"))
    # The command line after --config overrides the file.
    assert run("ali-to-post", "--check", f"--config={config}", "--weight=1", f"ark:{tmp_path / 'p.ark'}",
               f"ark:{ali}").returncode == 1

    help_ = run("ali-to-post", "--help")
    assert help_.returncode == 0 and help_.stdout == b""
    text = help_.stderr.decode()
    assert "Usage:  ali-to-post [options]" in text and "Standard options:" in text
    assert "--weight" in text and "(float, default = 1)" in text
    assert "--write-lengths" in text and '(string, default = "")' in text

    unknown = run("ali-to-post", "--wieght=2", f"ark:{ali}", "ark:/dev/null")
    assert unknown.returncode == 255
    assert b"ERROR (ali-to-post[" in unknown.stderr and unknown.stderr.endswith(b"kaldi::KaldiFatalError")

    usage = run("ali-to-post", f"ark:{ali}")
    assert usage.returncode == 1 and b"Usage:" in usage.stderr

    bad_map = run("ali-to-post", "--class-map=1:x", f"ark:{ali}", "ark:/dev/null")
    assert bad_map.returncode == 255 and b"Invalid --class-map option 1:x" in bad_map.stderr


def test_print_args_and_verbose_logging():
    ali = HOLDERS / "int32-vector.bin.ark"
    result = ok(run("ali-to-post", "--verbose=1", "--class-map=", f"ark:{ali}", "ark:/dev/null"))
    first = result.stderr.decode().splitlines()[0]
    assert first.startswith(f"{program('ali-to-post')} --verbose=1 --class-map= ark:")
    assert b"VLOG[1] (ali-to-post[" in result.stderr and b"Renaming 0 classes" in result.stderr
    quiet = ok(run("ali-to-post", "--print-args=false", f"ark:{ali}", "ark:/dev/null"))
    assert b"VLOG" not in quiet.stderr and quiet.stderr.startswith(b"LOG (ali-to-post[")


def test_a_blank_script_line_ends_the_table_with_a_warning(tmp_path):
    scp = tmp_path / "ali.scp"
    lines = (DATA / "scp" / "ali.scp").read_text().splitlines()
    scp.write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n")
    result = run("ali-to-post", f"scp:{scp}", "ark,t:-", cwd=DATA / "scp")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.decode().splitlines()) == 1  # the entry before the blank line
    assert b"WARNING (ali-to-post[" in result.stderr and b"line 2" in result.stderr


def test_a_table_that_cannot_be_written_is_fatal_as_in_kaldi(tmp_path):
    ali = HOLDERS / "int32-vector.bin.ark"
    if not pathlib.Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    # The writer is closed by its destructor: the full disk is found there, as in Kaldi.
    full = run("ali-to-post", f"ark:{ali}", "ark:/dev/full")
    assert full.returncode in (-6, 134), full.stderr
    assert b"ERROR (ali-to-post[" in full.stderr and b"No space left on device" in full.stderr
    # A command that exits non-zero after taking every byte is a warning, as Kaldi's pipes.
    piped = run("ali-to-post", f"ark:{ali}", f"ark:| cat > {tmp_path / 'p.ark'}; exit 3")
    assert piped.returncode == 0, piped.stderr
    assert b"WARNING (ali-to-post[" in piped.stderr and b"status 3" in piped.stderr
    assert (tmp_path / "p.ark").stat().st_size > 0


def test_apply_mean_norm_per_utterance_and_per_speaker(tmp_path):
    feats = HOLDERS / "float-matrix.bin.ark"
    want = expected_values(HOLDERS / "float-matrix.bin.ark.expect")
    out = ok(run("apply-mean-norm", "-", f"ark:{feats}", "ark:-")).stdout
    got = binary_matrices(out)
    assert set(got) == {"a_0x0", "b_1x1", "c_3x4", "d_12x5"}
    rows, cols, values = got["c_3x4"]
    source = [parse_float(v) for v in want["c_3x4"][1]]
    for c in range(cols):
        column = [source[r * cols + c] for r in range(rows)]
        mean = sum(column) / rows
        assert_close([values[r * cols + c] for r in range(rows)], [v - mean for v in column], rel=1e-5)

    # Per speaker: every utterance of speaker s gets s's mean, through utt2spk.
    spk = tmp_path / "utt2spk"
    spk.write_text("a_0x0 s1\nb_1x1 s1\nc_3x4 s2\nd_12x5 s1\n")
    means = tmp_path / "means.ark"
    means.write_text("s2 [ 1 2 ]\n")
    result = run("apply-mean-norm", "--first-column=2", f"--utt2spk=ark:{spk}", f"ark:{means}",
                 f"ark:{feats}", "ark:-")
    assert result.returncode == 0, result.stderr
    got = binary_matrices(result.stdout)
    assert set(got) == {"c_3x4"}
    rows, cols, values = got["c_3x4"]
    for r in range(rows):
        assert_close(values[r * cols:r * cols + 2], source[r * cols:r * cols + 2])
        assert_close(values[r * cols + 2:r * cols + 4],
                     [source[r * cols + 2] - 1, source[r * cols + 3] - 2], rel=1e-5)
    assert b"Utterance a_0x0 has only 0 columns" in result.stderr
    assert b"Utterance b_1x1 has only 1 columns" in result.stderr
    assert b"No mean for utterance d_12x5" in result.stderr

    # As in Kaldi, an utterance missing from utt2spk is an error, not a missing mean.
    spk.write_text("c_3x4 s2\n")
    missing = run("apply-mean-norm", f"--utt2spk=ark:{spk}", f"ark:{means}", f"ark:{feats}", "ark:/dev/null")
    assert missing.returncode == 255 and b"a_0x0" in missing.stderr


def test_apply_mean_norm_on_single_files(tmp_path):
    source = DATA / "scp" / "files" / "f1.mat"
    out = tmp_path / "f1.txt"
    result = ok(run("apply-mean-norm", "--binary=false", "--scale=2", "-", source, out))
    assert b"to " + str(out).encode() in result.stderr
    rows = text_matrices(b"k " + out.read_bytes())["k"]
    for c in range(len(rows[0])):
        assert sum(r[c] for r in rows) == pytest.approx(0, abs=1e-3)
    mixed = run("apply-mean-norm", "-", f"ark:{HOLDERS / 'float-matrix.bin.ark'}", out)
    assert mixed.returncode == 255 and b"Cannot mix tables and single files" in mixed.stderr


def test_wav_durations_by_header_and_by_whole_file():
    wavs = HOLDERS / "wav.bin.ark"
    headers = text_table(ok(run("wav-durations", f"ark:{wavs}", "ark,t:-")).stdout)
    whole = text_table(ok(run("wav-durations", "--read-entire-file", f"ark:{wavs}", "ark,t:-")).stdout)
    assert headers == whole and len(headers) == 3
    scp = text_table(ok(run("wav-durations", "scp:wav.scp", "ark,t:-", cwd=DATA / "scp")).stdout)
    assert set(scp) == {"w1", "w2"} and all(float(v) > 0 for v in scp.values())


def test_feats_to_htk_writes_htk_files(tmp_path):
    feats = HOLDERS / "float-matrix.bin.ark"
    want = expected_values(HOLDERS / "float-matrix.bin.ark.expect")
    result = ok(run("feats-to-htk", f"--output-dir={tmp_path}", "--sample-kind=6", f"ark:{feats}"))
    script = text_table(result.stdout)
    assert set(script) == set(want)
    data = pathlib.Path(script["c_3x4"]).read_bytes()
    samples, period, size, kind = struct.unpack_from(">iihH", data)
    assert (samples, period, size, kind) == (3, 100000, 16, 6)
    assert_close(struct.unpack_from(">12f", data, 12), [parse_float(v) for v in want["c_3x4"][1]])
    (tmp_path / "htk.scp").write_bytes(result.stdout)


# ----- Kaldi's own programs, when built

def test_copy_general_feats_keeps_each_form_and_converts_them(tmp_path):
    # Kaldi's compressed archives are copied byte for byte: compressed matrices stay so.
    for method in (1, 2, 3, 7):
        cm = DATA / "compressed" / f"cm-method{method}.bin.ark"
        assert ok(run("copy-general-feats", f"ark:{cm}", "ark:-")).stdout == cm.read_bytes()
    # GeneralMatrix::Compress is Kaldi's automatic method: method 1's archive.
    source = DATA / "compressed" / "cm-source.bin.ark"
    ok(run("copy-general-feats", f"ark:{source}", f"ark,scp:{tmp_path / 'all.ark'},{tmp_path / 'all.scp'}"))
    lines = (tmp_path / "all.scp").read_text().splitlines(keepends=True)
    (tmp_path / "m1.scp").write_text("".join(l for l in lines if l.startswith("m1_")))
    compressed = ok(run("copy-general-feats", "--compress", f"scp:{tmp_path / 'm1.scp'}", "ark:-")).stdout
    assert compressed == (DATA / "compressed" / "cm-method1.bin.ark").read_bytes()
    # Sparse and back: values under the threshold dropped (-0 and a denormal), then written
    # full: the source's values, those zero.
    feats = HOLDERS / "float-matrix.bin.ark"
    sparse = tmp_path / "sparse.ark"
    result = ok(run("copy-general-feats", "--sparsify-threshold=1e-30", f"ark:{feats}", f"ark:{sparse}"))
    assert b"of them sparse" in result.stderr and b"SM " in sparse.read_bytes()
    dense = ok(run("copy-general-feats", "--full", f"ark:{sparse}", "ark:-")).stdout
    kept = {key: (rows, cols, [v if abs(v) >= 1e-30 else 0.0 for v in values])
            for key, (rows, cols, values) in binary_matrices(feats.read_bytes()).items()}
    assert binary_matrices(dense) == kept
    text = ok(run("copy-general-feats", f"ark:{sparse}", "ark,t:-")).stdout
    assert b" rows=" in text and b"dim=" in text
    again = ok(run("copy-general-feats", "--full", "ark:-", "ark:-", stdin=text)).stdout
    assert binary_matrices(again).keys() == binary_matrices(feats.read_bytes()).keys()
    lengths = ok(run("copy-general-feats", f"--write-num-rows=ark,t:{tmp_path / 'n'}", f"ark:{sparse}",
                     "ark:/dev/null"))
    assert (tmp_path / "n").read_text() == "a_0x0 0 \nb_1x1 1 \nc_3x4 3 \nd_12x5 12 \n", lengths.stderr


def test_copy_feats_copies_kaldi_archives_byte_for_byte(tmp_path):
    feats = HOLDERS / "float-matrix.bin.ark"
    assert ok(run("copy-feats", f"ark:{feats}", "ark:-", own=False)).stdout == feats.read_bytes()
    text = ok(run("copy-feats", f"ark:{feats}", "ark,t:-", own=False)).stdout
    assert text == (HOLDERS / "float-matrix.txt.ark").read_bytes()
    lengths = ok(run("copy-feats", f"--write-num-frames=ark,t:{tmp_path / 'n'}", f"ark:{feats}",
                     "ark:/dev/null", own=False))
    assert b"Copied 4 feature matrices" in lengths.stderr
    assert (tmp_path / "n").read_text() == "a_0x0 0 \nb_1x1 1 \nc_3x4 3 \nd_12x5 12 \n"


@pytest.mark.parametrize("method", range(1, 8))
def test_copy_feats_compresses_as_kaldi(tmp_path, method):
    # cm-methodN.bin.ark holds the source's matrices mN_* compressed by method N: the source
    # is cut to those through a script.
    source = DATA / "compressed" / "cm-source.bin.ark"
    ok(run("copy-feats", f"ark:{source}", f"ark,scp:{tmp_path / 'all.ark'},{tmp_path / 'all.scp'}", own=False))
    lines = (tmp_path / "all.scp").read_text().splitlines(keepends=True)
    (tmp_path / "m.scp").write_text("".join(l for l in lines if l.startswith(f"m{method}_")))
    got = ok(run("copy-feats", "--compress=true", f"--compression-method={method}", f"scp:{tmp_path / 'm.scp'}",
                 "ark:-", own=False)).stdout
    assert got == (DATA / "compressed" / f"cm-method{method}.bin.ark").read_bytes()


def test_copy_feats_reads_htk_files_from_a_script(tmp_path):
    feats = HOLDERS / "float-matrix.bin.ark"
    script = ok(run("feats-to-htk", f"--output-dir={tmp_path}", f"ark:{feats}")).stdout
    (tmp_path / "htk.scp").write_bytes(script)
    got = ok(run("copy-feats", "--htk-in", f"scp:{tmp_path / 'htk.scp'}", "ark:-", own=False)).stdout
    assert got == feats.read_bytes()


def test_copy_feats_single_files_and_blank_script_lines(tmp_path):
    scp = DATA / "scp"
    out = tmp_path / "utt2.txt"
    result = ok(run("copy-feats", "--binary=false", "feats.ark:85", out, own=False, cwd=scp))
    assert b"Copied features from feats.ark:85 to " in result.stderr
    assert out.read_bytes().startswith(b" [")
    broken = tmp_path / "feats.scp"
    lines = (scp / "feats.scp").read_text().splitlines()
    broken.write_text(lines[0] + "\nutt1-no-value\n" + lines[1] + "\n")
    result = run("copy-feats", f"scp:{broken}", "ark,t:-", own=False, cwd=scp)
    assert result.returncode == 0 and result.stdout.startswith(b"utt1  [")
    assert result.stdout.count(b"[") == 1 and b"WARNING" in result.stderr


def test_copy_int_vector_and_copy_vector_write_kaldis_text():
    for prog, name in (("copy-int-vector", "int32-vector"), ("copy-vector", "float-vector")):
        got = ok(run(prog, f"ark:{HOLDERS / (name + '.bin.ark')}", "ark,t:-", own=False)).stdout
        assert got == (HOLDERS / f"{name}.txt.ark").read_bytes(), prog


def test_copy_matrix_scales_and_applies_functions():
    feats = HOLDERS / "float-matrix.bin.ark"
    want = expected_values(HOLDERS / "float-matrix.bin.ark.expect")
    got = binary_matrices(ok(run("copy-matrix", "--scale=2", f"ark:{feats}", "ark:-", own=False)).stdout)
    assert_close(got["c_3x4"][2], [2 * parse_float(v) for v in want["c_3x4"][1]])
    mixed = run("copy-matrix", f"ark:{feats}", "out.mat", own=False)
    assert mixed.returncode == 255 and b"Cannot mix archives with regular files" in mixed.stderr


def test_feat_to_len_matrix_dim_subset_and_paste(tmp_path):
    scp = DATA / "scp"
    lengths = ok(run("feat-to-len", "scp:feats.scp", "ark,t:-", own=False, cwd=scp)).stdout
    assert lengths == b"utt1 5 \nutt2 6 \nutt3 2 \n"
    feats = HOLDERS / "float-matrix.bin.ark"
    dims = ok(run("matrix-dim", f"ark:{feats}", own=False)).stdout
    assert dims == b"a_0x0\t0\t0\nb_1x1\t1\t1\nc_3x4\t3\t4\nd_12x5\t12\t5\n"
    assert ok(run("matrix-dim", "files/f1.mat", own=False, cwd=scp)).stdout.count(b"\t") == 1
    subset = ok(run("subset-feats", "--n=2", f"ark:{feats}", "ark:-", own=False)).stdout
    assert list(binary_matrices(subset)) == ["a_0x0", "b_1x1"]
    pasted = binary_matrices(ok(run("paste-feats", f"ark:{feats}", f"ark:{feats}", "ark:-",
                                    own=False)).stdout)
    rows, cols, values = pasted["c_3x4"]
    source = [parse_float(v) for v in expected_values(HOLDERS / "float-matrix.bin.ark.expect")["c_3x4"][1]]
    assert (rows, cols) == (3, 8)
    assert_close(values[:8], source[:4] + source[:4])


def test_wav_copy_and_extract_segments(tmp_path):
    wavs = HOLDERS / "wav.bin.ark"
    assert ok(run("wav-copy", f"ark:{wavs}", "ark:-", own=False)).stdout == wavs.read_bytes()
    scp = DATA / "scp"
    single = tmp_path / "w1.wav"
    ok(run("wav-copy", "wav/w1.wav", single, own=False, cwd=scp))
    assert single.read_bytes() == (scp / "wav" / "w1.wav").read_bytes()
    segments = tmp_path / "segments"
    segments.write_text("s1 w1 0 -1\ns2 w1 0.0 0.0002\nbad w9 0 1\n\ns3 w2 0 0.0001 1\n")
    result = ok(run("extract-segments", "--min-segment-length=0", "scp:wav.scp", segments,
                    f"ark:{tmp_path / 'seg.ark'}", own=False, cwd=scp))
    assert b"Could not find recording w9" in result.stderr
    assert b"Invalid line in segments file" in result.stderr
    assert b"Successfully processed 3 lines out of 5" in result.stderr
    archive = (tmp_path / "seg.ark").read_bytes()
    assert archive.startswith(b"s1 " + (scp / "wav" / "w1.wav").read_bytes())  # the whole recording
    durations = text_table(ok(run("wav-durations", f"ark:{tmp_path / 'seg.ark'}", "ark,t:-")).stdout)
    assert set(durations) == {"s1", "s2", "s3"}
    assert float(durations["s2"]) == pytest.approx(0.0002, abs=1e-4)


