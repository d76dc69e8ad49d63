#!/usr/bin/env python3
"""Making a dataset with tablio.dask, in one run: a Kaldi archive of float matrices (features)
converted to compressed-matrix archive splits (Kaldi's CompressionMethod 1, as copy-feats
--compress writes), the CPU-bound conversion of a feature-extraction recipe:

- 2 Dask worker processes (a distributed.LocalCluster on loopback) against `tablio shard
  --type=compressed-matrix` in one process (target >= 1.7x faster), and against the least one
  process does: `tablio copy --compress` of the whole archive to one file, one pass (`tablio
  shard` reads its input twice, the first time to count the entries);
- tablio.dask against the same per-shard function run by hand in a multiprocessing.Pool of 2
  (target <= 1.1x: what Dask's scheduling costs).

The three write the same splits, byte for byte (checked). The cluster and the pool are started
before the clock (a cluster outlives a conversion).

    bench/dask_bench.py [--build build/release]
"""

import filecmp
import multiprocessing
import os
import shutil
import subprocess
import tempfile

import numpy as np

from timing import fastest, package, row

SPLITS = 4
METHOD = 1  # kAutomaticMethod: what copy-feats --compress and a compressed-matrix table write


def features(tablio, path):
    """About 160 MB of fbank-like features: 2,000 utterances of 300-700 frames of 40 bins."""
    rng = np.random.default_rng(0)
    with tablio.writer(f"ark:{path}", type="matrix") as w:
        for i in range(2000):
            frames = 300 + (i * 37) % 400
            w[f"utt{i:05d}"] = (rng.standard_normal((frames, 40)) * 3 + 10).astype(np.float32)


def by_hand(k, archive, out):
    """One split, as tablio.dask's tasks make it: a range of the archive read by key, written,
    then renamed into place."""
    import tablio.dask as td
    entries = td._read_entries(f"ark:{archive}", "matrix", {}, k, SPLITS, True)
    written = td._write_shard(entries, f"ark:{out}/feats.{k + 1}.ark", "matrix", {"compression_method": METHOD},
                              {"allow_network": True, "allow_pipes": False, "confine": None})
    for final, partial in written[5].items():  # published, as the client publishes them
        os.replace(partial, final)


def same_splits(a, b):
    names = [f"feats.{k + 1}.ark" for k in range(SPLITS)]
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert match == names, (mismatch, errors)


def main():
    args, tablio = package(__doc__, "release")
    import tablio.dask
    import distributed
    tool = os.path.join(args.build, "tools", "tablio")
    work = tempfile.mkdtemp(prefix="tablio-dask-bench-")
    try:
        archive = os.path.join(work, "feats.ark")
        features(tablio, archive)
        print(f"== Kaldi archive of {os.path.getsize(archive) / 1e6:.0f} MB of float matrices -> "
              f"{SPLITS} compressed-matrix splits, 2 cores")
        outputs = {name: os.path.join(work, name) for name in ("tool", "dask", "pool")}
        for folder in outputs.values():
            os.mkdir(folder)

        def one_process():
            subprocess.run([tool, "shard", "--type=compressed-matrix", f"ark:{archive}",
                            f"ark:{outputs['tool']}/feats.ark", str(SPLITS)], check=True, stdout=subprocess.DEVNULL)

        def one_pass():
            subprocess.run([tool, "copy", "--compress", f"--compression-method={METHOD}", f"ark:{archive}",
                            f"ark:{work}/copy.ark"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address="127.0.0.1:0", silence_logs=50) as cluster, \
                distributed.Client(cluster) as client, multiprocessing.Pool(2) as pool:
            client.run(lambda: __import__("tablio.dask"))  # as a cluster in use has it

            def on_dask():
                bag = tablio.dask.read(f"ark:{archive}", type="matrix", npartitions=SPLITS)
                tablio.dask.write(bag, f"ark:{outputs['dask']}/feats.ark", compression_method=METHOD,
                                  scheduler=client)

            def in_pool():
                pool.starmap(by_hand, [(k, archive, outputs["pool"]) for k in range(SPLITS)])

            pool.starmap(by_hand, [(k, archive, outputs["pool"]) for k in range(SPLITS)])  # imports, warm
            alone = fastest(one_process, 3)
            copy_time = fastest(one_pass, 3)
            dask_time = fastest(on_dask, 3)
            pool_time = fastest(in_pool, 3)
        same_splits(outputs["tool"], outputs["dask"])
        same_splits(outputs["tool"], outputs["pool"])
        row("2 Dask workers vs tablio shard, 1 process", dask_time, alone, "tablio shard", ">= 1.7x faster",
            throughput=True)
        row("2 Dask workers vs tablio copy --compress", dask_time, copy_time, "one process, one pass",
            ">= 1.7x faster", throughput=True)
        row("tablio.dask vs the same shards in a Pool(2)", dask_time, pool_time, "multiprocessing.Pool",
            "<= 1.1x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
