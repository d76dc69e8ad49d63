#!/usr/bin/env python3
"""Feature extraction on a Dask cluster, as a Kaldi recipe runs make_fbank.sh with run.pl
JOB=1:N: the recordings of a wav.scp, split by lines into N jobs, each utterance's features
computed in numpy, written compressed as data/feats.JOB.ark + data/feats.JOB.scp, and the
whole table's data/feats.scp that Kaldi's programs read.

    make_features_dask.py WAV_SCP OUT_DIR [--jobs N] [--scheduler tcp://HOST:8786]
    make_features_dask.py data/train/wav.scp data/train --jobs 16 --scheduler tcp://10.0.0.1:8786
    make_features_dask.py --demo FOLDER     # makes 40 recordings in FOLDER and extracts them

Without --scheduler it starts a cluster of worker processes on this machine. Run it from the
recipe's folder: the names in wav.scp are relative to it, as Kaldi's are, on every worker.
"""

import argparse
import contextlib
import os

import numpy as np

import tablio
import tablio.dask


def log_mel_energies(utterance, bins=23):
    """A key and its recording -> the key and its features: log energies of 25 ms frames every
    10 ms in `bins` bands (a small fbank)."""
    key, (rate, wave) = utterance
    frame, shift = int(0.025 * rate), int(0.010 * rate)
    samples = wave[0]  # the first channel
    count = max(0, 1 + (len(samples) - frame) // shift)
    frames = np.lib.stride_tricks.sliding_window_view(samples, frame)[::shift][:count] * np.hamming(frame)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    bands = np.stack([band.sum(axis=1) for band in np.array_split(power, bins, axis=1)], axis=1)
    return key, np.log(bands + 1e-10).astype(np.float32)


def extract(wav_scp, out_dir, jobs, client=None):
    """Writes out_dir/feats.JOB.{ark,scp} for JOB in 1..jobs, then out_dir/feats.scp."""
    recordings = tablio.dask.read(f"scp:{wav_scp}", type="wave", npartitions=jobs)
    features = recordings.map(log_mel_energies)
    return tablio.dask.write(features, f"ark,scp:{out_dir}/feats.JOB.ark,{out_dir}/feats.JOB.scp",
                             compression_method=2, scheduler=client)


def demo(folder):
    """Recordings of noise, 0.5 to 2.4 s at 16 kHz, and their wav.scp."""
    rng = np.random.default_rng(0)
    os.makedirs(f"{folder}/wav", exist_ok=True)
    with open(f"{folder}/wav.scp", "w") as scp:
        for i in range(40):
            wave = (rng.standard_normal(8000 + 800 * i) * 1000).astype(np.int16)  # kaldiio's layout
            tablio.save_object(f"{folder}/wav/rec{i:03d}.wav", (16000, wave), type="wave", dtype=np.int16)
            scp.write(f"rec{i:03d} {folder}/wav/rec{i:03d}.wav\n")
    return f"{folder}/wav.scp", f"{folder}/data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wav_scp", nargs="?")
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--scheduler", help="a running cluster's scheduler address")
    parser.add_argument("--demo", metavar="FOLDER")
    args = parser.parse_args()
    if args.demo:
        args.wav_scp, args.out_dir = demo(args.demo)
    elif not (args.wav_scp and args.out_dir):
        parser.error("give WAV_SCP and OUT_DIR, or --demo FOLDER")

    from distributed import Client, LocalCluster
    with contextlib.ExitStack() as stack:
        if args.scheduler:
            client = stack.enter_context(Client(args.scheduler))
        else:  # worker processes on this machine
            cluster = stack.enter_context(LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                                       dashboard_address="127.0.0.1:0"))
            client = stack.enter_context(Client(cluster))
        written = extract(args.wav_scp, args.out_dir, args.jobs, client)
    count = sum(shard.samples for shard in written.shards)
    print(f"{count} utterances in {len(written.shards)} jobs; the table: scp:{written.index}")

    # What Kaldi's programs read: every utterance of wav.scp, in its order.
    keys = list(tablio.random_access(f"scp:{written.index}", type="matrix").keys())
    wanted = list(tablio.random_access(f"scp:{args.wav_scp}", type="wave").keys())
    if keys != wanted:
        raise SystemExit(f"{written.index} lists other utterances than {args.wav_scp}")


if __name__ == "__main__":
    main()
