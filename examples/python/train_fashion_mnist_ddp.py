#!/usr/bin/env python3
"""Trains a small classifier on Fashion-MNIST for one epoch with DistributedDataParallel
(gloo, on this machine's loopback), reading the images from a Caffe LMDB through
tablio.torch.TableDataset; with --compare, trains again from torchvision's FashionMNIST on
the same seed and sample order and checks that both give the same model.

    train_fashion_mnist_ddp.py --world-size 2 --work /tmp/fmnist [--compare]

Across machines, start it with `python3 -m torch.distributed.run` instead of --world-size:
it then reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment.
Needs Debian's python3-torch, python3-torchvision and dataset-fashion-mnist.
"""

import argparse
import gzip
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


def make_lmdb(work):
    """Fashion-MNIST's training images as Caffe's convert_mnist_data stores them."""
    db = os.path.join(work, "fashion_train_lmdb")
    if not os.path.exists(os.path.join(db, "data.mdb")):
        images = tablio.idx.read(f"{FASHION}/train-images-idx3-ubyte.gz")
        labels = tablio.idx.read(f"{FASHION}/train-labels-idx1-ubyte.gz")
        with tablio.writer(f"lmdb:{db}", type="datum") as w:
            for i in range(len(labels)):
                w[f"{i:08d}"] = (images[i][np.newaxis], int(labels[i]))
    return db


def make_torchvision_root(work):
    """The raw files torchvision's FashionMNIST looks for, from Debian's package."""
    raw = os.path.join(work, "torchvision", "FashionMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        if not os.path.exists(os.path.join(raw, name)):
            with gzip.open(f"{FASHION}/{name}.gz") as src, open(os.path.join(raw, name), "wb") as out:
                shutil.copyfileobj(src, out)
    return os.path.join(work, "torchvision")


class LmdbImages(torch.utils.data.Dataset):
    """(float image in [0, 1], label), as torchvision's ToTensor() gives them."""

    def __init__(self, db):
        self.table = tablio.torch.TableDataset(f"lmdb:{db}", type="datum")

    def __len__(self):
        return len(self.table)

    def __getitem__(self, i):
        image, label = self.table[i]
        return image.float().div(255), label


def train(rank, world, source, work, port):
    if port:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    else:
        dist.init_process_group("gloo")  # torch.distributed.run's environment
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        if source == "tablio":
            if rank == 0:
                make_lmdb(work)
            dist.barrier()  # the other ranks open the database once rank 0 has written all of it
            dataset = LmdbImages(os.path.join(work, "fashion_train_lmdb"))
        else:
            import torchvision
            dataset = torchvision.datasets.FashionMNIST(os.path.join(work, "torchvision"), train=True,
                                                        transform=torchvision.transforms.ToTensor())
        sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
        loader = torch.utils.data.DataLoader(dataset, batch_size=64, sampler=sampler)
        torch.manual_seed(0)
        model = nn.parallel.DistributedDataParallel(
            nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        sampler.set_epoch(0)
        for images, labels in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), labels).backward()
            optimizer.step()
        if rank == 0:
            torch.save(model.module.state_dict(), os.path.join(work, f"model-{source}.pt"))
    finally:
        dist.destroy_process_group()


def accuracy(work, source):
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    model.load_state_dict(torch.load(os.path.join(work, f"model-{source}.pt")))
    images = torch.from_numpy(np.array(tablio.idx.read(f"{FASHION}/t10k-images-idx3-ubyte.gz"))).float().div(255)
    labels = torch.from_numpy(np.array(tablio.idx.read(f"{FASHION}/t10k-labels-idx1-ubyte.gz")).astype(np.int64))
    with torch.no_grad():
        return (model(images.unsqueeze(1)).argmax(1) == labels).float().mean().item()


def run(world, source, work):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    torch.multiprocessing.spawn(train, args=(world, source, work, port), nprocs=world, join=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=0, help="processes to start here (0: torch.distributed.run)")
    parser.add_argument("--work", required=True)
    parser.add_argument("--compare", action="store_true", help="train from torchvision too; same model?")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if not args.world_size:  # started by torch.distributed.run, once per process
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "tablio", args.work, None)
        return
    make_lmdb(args.work)
    run(args.world_size, "tablio", args.work)
    print(f"tablio LMDB: test accuracy after one epoch {accuracy(args.work, 'tablio'):.4f}")
    if args.compare:
        make_torchvision_root(args.work)
        run(args.world_size, "torchvision", args.work)
        print(f"torchvision: test accuracy after one epoch {accuracy(args.work, 'torchvision'):.4f}")
        ours = torch.load(os.path.join(args.work, "model-tablio.pt"))
        theirs = torch.load(os.path.join(args.work, "model-torchvision.pt"))
        if not all(torch.equal(ours[k], theirs[k]) for k in ours):
            sys.exit("the models differ")
        print("same model from tablio and from torchvision")


if __name__ == "__main__":
    main()
