#!/usr/bin/env python3
"""Trains on Fashion-MNIST with DistributedDataParallel from WebDataset-style tar shards
(one sample per image: "NNNNNNNN.u8" its pixels, "NNNNNNNN.cls" its label), checkpointing the
model, the optimizer and tablio.torch.DataLoader's state every --save-every steps, so that a
job that is stopped (preempted, killed) goes on from its last checkpoint exactly where it was.

    resume_ddp.py --world-size 2 --work /tmp/fmnist-resume [--stop-after 100]   # train, or go on
    resume_ddp.py --world-size 2 --work /tmp/fmnist-resume --check             # stop, resume, compare

--stop-after N ends the job after N steps, as a preemption would (with no final checkpoint);
running it again without it resumes from the last checkpoint. --check trains the epoch once
without stopping and once stopped and resumed, and checks that both give the same model.
--world-size 0 is for torch.distributed.run, which sets RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT. Needs Debian's python3-torch and dataset-fashion-mnist.
"""

import argparse
import os
import shutil
import socket
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn

import tablio
import tablio.torch

FASHION = "/usr/share/datasets/fashion-mnist"


def make_shards(work, limit):
    """Fashion-MNIST's training set as tar shards of 10,000 samples, with their shard index."""
    if not os.path.exists(os.path.join(work, "fashion.shardindex.json")):
        images = tablio.idx.read(f"{FASHION}/train-images-idx3-ubyte.gz")[:limit]
        labels = tablio.idx.read(f"{FASHION}/train-labels-idx1-ubyte.gz")[:limit]
        with tablio.writer(f"tar,maxcount=10000:{work}/fashion-%06d.tar", type="sample") as w:
            for i in range(len(labels)):
                w[f"{i:08d}"] = {"u8": images[i].tobytes(), "cls": int(labels[i])}
    return f"tar:{work}/fashion-%06d.tar"


def to_input(batch):
    """A batch of samples as (images in [0, 1], labels)."""
    pixels = np.frombuffer(b"".join(batch["u8"]), np.uint8).reshape(-1, 28, 28)
    return torch.from_numpy(pixels.astype(np.float32) / 255), batch["cls"]


def train(rank, world, work, port, checkpoint, stop_after, save_every):
    if port:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    else:
        dist.init_process_group("gloo")  # torch.distributed.run's environment
    rank = dist.get_rank()
    dataset = tablio.torch.TableIterableDataset(f"tar:{work}/fashion-%06d.tar", type="sample", decode=True, shuffle=True,
                                                seed=0, batch_size=64)
    loader = tablio.torch.DataLoader(dataset, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset.set_epoch(0)
    if os.path.exists(checkpoint):  # every rank loads the one checkpoint: its loader state is the job's
        saved = torch.load(checkpoint)
        model.module.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        loader.load_state_dict(saved["loader"])
    for batch in loader:
        images, labels = to_input(batch)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
        step = loader.state_dict()["yielded"]
        if step % save_every == 0 and rank == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                     "loader": loader.state_dict()}
            torch.save(state, checkpoint + ".part")
            os.replace(checkpoint + ".part", checkpoint)  # a checkpoint is whole, or the last one stays
        if step == stop_after:
            break  # as if preempted: no final checkpoint
    else:
        if rank == 0:
            torch.save(model.module.state_dict(), os.path.join(work, "model.pt"))
    dist.destroy_process_group()


def run(world, work, checkpoint, stop_after, save_every):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    torch.multiprocessing.spawn(train, args=(world, work, port, checkpoint, stop_after, save_every), nprocs=world,
                                join=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=0, help="processes to start here (0: torch.distributed.run)")
    parser.add_argument("--work", required=True)
    parser.add_argument("--stop-after", type=int, default=0, help="end the job after this many steps")
    parser.add_argument("--save-every", type=int, default=20, help="steps between checkpoints")
    parser.add_argument("--limit", type=int, default=60000, help="train on the first LIMIT images")
    parser.add_argument("--check", action="store_true", help="train whole, then stopped and resumed: same model?")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    checkpoint = os.path.join(args.work, "checkpoint.pt")
    if not args.world_size:  # started by torch.distributed.run, once per process
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args.work, None, checkpoint, args.stop_after,
              args.save_every)
        return
    make_shards(args.work, args.limit)
    if not args.check:
        run(args.world_size, args.work, checkpoint, args.stop_after, args.save_every)
        print("stopped; run again to resume" if args.stop_after and not os.path.exists(
            os.path.join(args.work, "model.pt")) else "trained one epoch")
        return
    for name in ("checkpoint.pt", "model.pt"):
        if os.path.exists(os.path.join(args.work, name)):
            os.remove(os.path.join(args.work, name))
    run(args.world_size, args.work, checkpoint, 0, 10**9)  # the epoch without stopping
    shutil.move(os.path.join(args.work, "model.pt"), os.path.join(args.work, "model-whole.pt"))
    stop = args.stop_after or 2 * args.save_every + args.save_every // 2
    run(args.world_size, args.work, checkpoint, stop, args.save_every)  # stopped between checkpoints
    run(args.world_size, args.work, checkpoint, 0, args.save_every)  # and resumed
    whole = torch.load(os.path.join(args.work, "model-whole.pt"))
    resumed = torch.load(os.path.join(args.work, "model.pt"))
    if not all(torch.equal(whole[k], resumed[k]) for k in whole):
        sys.exit("the resumed job trained another model")
    print(f"stopped after {stop} steps, resumed from step {stop // args.save_every * args.save_every}: "
          "the same model as the epoch without stopping")


if __name__ == "__main__":
    main()
