#!/usr/bin/env python3
"""Remote objects against their limits, in one run, on loopback (nginx, s3rver):

- reading a TFRecord file, an archive of matrices and tar shards in order from nginx and from
  S3, against `curl -s URL > /dev/null` of the same objects (the network and the server,
  nothing parsed); and through a proxy that adds 20 ms to every request (a far server),
  against the same proxy with none;
- random access to 1% of a TFRecord's records by key over S3 (through its index script), one
  by one and in batches of 256, against boto3's get_object(Range=...) per record (what S3
  map-style datasets do), on loopback and 20 ms away;
- a second epoch through the cache, against the local file.

    bench/remote_bench.py [--build build/release]

Needs the Python package built with tablio::curl (<build>/python), nginx-light, curl, awscli's
botocore and boto3, and s3rver (TABLIO_S3RVER_DIR, or npm-installed into build/s3rver).
Ratios are ours / theirs in time (lower is faster), and as a share of their throughput where
the target is one. Where a target is below what is physically possible, the floor is printed
beside: the same work with nothing left to save (curl's fetch and the local parse at once, one
round trip more, the server's own rate).
"""

import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from timing import ROOT, fastest, package, row

sys.path.insert(0, os.path.join(ROOT, "tests", "remote"))
import servers  # noqa: E402

LATENCY = 0.02


def make_inputs(tablio, folder):
    """A TFRecord of 60,000 records of 800 bytes (Fashion-MNIST's size) with its index, an
    archive of 400 float matrices of 500x80 (64 MB), 3 tar shards of 20,000 members."""
    rng = np.random.default_rng(5)
    images = rng.integers(0, 255, (60000, 784), dtype=np.uint8)
    with tablio.writer(f"tfrecord,key=id,scp:{folder}/train.tfrecord,{folder}/train.scp", type="example") as w:
        for i in range(len(images)):
            w[f"r{i:05d}"] = {"image": images[i].tobytes(), "label": np.array([i % 10])}
    with tablio.writer(f"ark:{folder}/feats.ark") as w:
        for i in range(400):
            w[f"utt{i:04d}"] = rng.standard_normal((500, 80)).astype(np.float32)
    with tablio.writer(f"tar,maxcount=20000:{folder}/shard-%06d.tar", type="bytes") as w:
        for i in range(60000):
            w[f"s{i:05d}"] = images[i].tobytes()


def proxy_process(upstream, latency, ready):
    """A FaultProxy in a process of its own (its threads must not share the benchmark's GIL)."""
    with servers.FaultProxy(upstream) as proxy:
        if latency:
            proxy.faults.add(servers.Latency(latency))
        ready.put(proxy.url)
        while True:
            time.sleep(3600)


class Proxy:
    def __init__(self, upstream, latency):
        context = multiprocessing.get_context("spawn")
        ready = context.Queue()
        self.process = context.Process(target=proxy_process, args=(upstream, latency, ready), daemon=True)
        self.process.start()
        self.url = ready.get(timeout=60)

    def close(self):
        self.process.kill()
        self.process.join(10)


def curl(urls, *options, parallel=0):
    """Fetches each of `urls` ((url, range or None) pairs) to /dev/null, `parallel` at a time."""
    lines = []
    for i, (url, byte_range) in enumerate(urls):
        lines += ["next"] if i else []
        lines += [f'url = "{url}"', 'output = "/dev/null"'] + [f'{o} = "{v}"' for o, v in options]
        lines += [f'range = "{byte_range}"'] if byte_range else []
    config = "\n".join(lines) + "\n"
    more = ["--parallel", "--parallel-max", str(parallel)] if parallel else []
    return lambda: subprocess.run(["curl", "-sf", "--no-progress-meter", *more, "-K", "-"], input=config.encode(),
                                  check=True)


def together(*jobs):
    """The jobs run at once, each on a thread of its own (curl in its own process, tablio's
    parsing without the GIL)."""
    def run():
        threads = [threading.Thread(target=job) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return run


def main():
    args, tablio = package(__doc__, "release")
    folder = tempfile.mkdtemp(prefix="tablio-remotebench-")
    proxies = []
    try:
        www = os.path.join(folder, "www")
        os.makedirs(www)
        make_inputs(tablio, www)
        shards = [f"shard-{i:06d}.tar" for i in range(3)]

        with servers.Nginx(www) as nginx, servers.S3Server(os.path.join(folder, "s3")) as s3:
            s3.create_bucket("bench")
            client = s3.client()
            for name in os.listdir(www):
                client.upload_file(os.path.join(www, name), "bench", name)
            os.environ.update(s3.env())
            signed = [("aws-sigv4", f"aws:amz:{s3.region}:s3"), ("user", f"{s3.access_key}:{s3.secret_key}"),
                      ("header", "x-amz-content-sha256: UNSIGNED-PAYLOAD")]

            def read(fmt, base, names, type_):
                spec = f"{fmt}:" + ",".join(f"{base}/{n}" for n in names)

                def run():
                    with tablio.open(spec, type=type_) as table:
                        for _ in table.batches(1024):
                            pass
                return run

            tables = [("TFRecord", "tfrecord", ["train.tfrecord"], "bytes"),
                      ("ark of matrices", "ark", ["feats.ark"], "matrix"),
                      ("tar, 3 shards", "tar", shards, "bytes")]
            print("reading in order (the limit: curl of the same objects):")
            for label, fmt, names, type_ in tables:
                for where, base, url, options in (("nginx", nginx.url, nginx.url, ()),
                                                  ("S3", "s3://bench", f"{s3.endpoint}/bench", signed)):
                    fetch = curl([(f"{url}/{n}", None) for n in names], *options)
                    # On loopback the server, the transfer and the parse share this machine's
                    # cores: no reader is faster than curl's fetch and the local parse run at once.
                    both = fastest(together(fetch, read(fmt, www, names, type_)), 7)
                    row(f"{label} from {where}", fastest(read(fmt, base, names, type_), 7), fastest(fetch, 7),
                        "curl " + ("--aws-sigv4 " if options else "-s ") + "URL", "throughput >= 0.9x",
                        throughput=True, floor=(both, "curl and the local read at once"))

            print(f"reading in order, {LATENCY * 1e3:.0f} ms added to every request:")
            near, far = Proxy(nginx.url, 0), Proxy(nginx.url, LATENCY)
            proxies += [near, far]
            for label, fmt, names, type_ in tables:
                there = fastest(read(fmt, near.url, names, type_))
                row(f"{label} from nginx + {LATENCY * 1e3:.0f} ms", fastest(read(fmt, far.url, names, type_)), there,
                    "the same with none", "throughput >= 0.8x", throughput=True,
                    floor=(there + LATENCY, "the same with none + one round trip"))

            print("random access to 1% of 60,000 records by key, over S3:")
            index = os.path.join(folder, "index.scp")
            lines = open(os.path.join(www, "train.scp")).read().replace(www, "s3://bench").splitlines()
            with open(index, "w") as f:
                f.write("\n".join(lines) + "\n")
            offsets = {line.split()[0]: int(line.rsplit(":", 1)[1]) for line in lines}
            ends = dict(zip(sorted(offsets, key=offsets.get), sorted(offsets.values())[1:] +
                            [os.path.getsize(os.path.join(www, "train.tfrecord"))]))
            keys = random.Random(1).sample(sorted(offsets), 600)

            def one_by_one():
                table = tablio.random_access(f"scp,key=id:{index}", type="example")
                for key in keys:
                    table[key]

            def batched():
                table = tablio.random_access(f"scp,key=id:{index}", type="example")
                for i in range(0, len(keys), 256):
                    table.lookup(keys[i:i + 256])

            def boto3_per_record(endpoint):
                c = s3.client(endpoint)

                def run():
                    for key in keys:
                        c.get_object(Bucket="bench", Key="train.tfrecord",
                                     Range=f"bytes={offsets[key]}-{ends[key] - 1}")["Body"].read()
                return run

            peer = fastest(boto3_per_record(s3.endpoint), 2)
            row("one by one", fastest(one_by_one, 2), peer, "boto3 get_object(Range=...) per record", "faster")
            # On loopback the server is the limit: the requests batches make (neighbours coalesced),
            # sent by curl as fast as the server answers them.
            with servers.FaultProxy(s3.endpoint) as counting:
                os.environ["AWS_ENDPOINT_URL"] = counting.url
                batched()
                os.environ["AWS_ENDPOINT_URL"] = s3.endpoint
            ranges = [(f"{s3.endpoint}/bench/train.tfrecord", r.header("Range")[len("bytes="):])
                      for r in counting.requests if r.header("Range")]
            server = min(fastest(curl(ranges, *signed, parallel=n), 3) for n in (16, 64))
            row("in batches of 256", fastest(batched, 3), peer, "the same", "<= 0.1x",
                floor=(server, f"the server's rate: its {len(ranges)} requests by curl --parallel"))
            far_s3 = Proxy(s3.endpoint, LATENCY)
            proxies.append(far_s3)
            os.environ["AWS_ENDPOINT_URL"] = far_s3.url
            row(f"in batches of 256, {LATENCY * 1e3:.0f} ms away", fastest(batched, 2),
                fastest(boto3_per_record(far_s3.url), 1), "the same, as far", "<= 0.1x")
            os.environ["AWS_ENDPOINT_URL"] = s3.endpoint

            print("a second epoch through the cache:")
            cache = os.path.join(folder, "cache")
            cached = read(f"tfrecord,cache={cache}", "s3://bench", ["train.tfrecord"], "bytes")
            cached()  # the first epoch fetches
            row("TFRecord, cached copy", fastest(cached), fastest(read("tfrecord", www, ["train.tfrecord"], "bytes")),
                "the local file", "<= 1.1x")
    finally:
        for p in proxies:
            p.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
