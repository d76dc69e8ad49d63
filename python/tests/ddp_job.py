"""One rank of a small distributed job over tablio.torch.TableIterableDataset, as test_torch.py
runs it: started by torch.multiprocessing.spawn (run()), or as a script by PyTorch's launcher
(torch.distributed.run), which sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.

For each of two epochs it records the keys of every step, and asks the other ranks (gloo on
loopback) for their step counts, as DDP's all-reduce would meet them. The config says how the
job runs: DataLoader workers and their start method, persistent or not, per-sample or
dataset-level batches, shuffling, and whether the dataset is made before the process group.

    ddp_job.py CONFIG_JSON     (under torch.distributed.run)
"""

import datetime
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.utils.data

import tablio.torch as tt


def make_dataset(config):
    return tt.TableIterableDataset(config["rspec"], type="example", shuffle=config["shuffle"], seed=11,
                                   shuffle_buffer=64, uneven=config["uneven"], with_keys=True,
                                   batch_size=config["batch"] if config["batching"] == "dataset" else None)


def run(rank, world, config):
    if config["construct"] == "before":
        ds = make_dataset(config)
    timeout = datetime.timedelta(seconds=60)
    if "port" in config:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{config['port']}", rank=rank,
                                world_size=world, timeout=timeout)
    else:
        dist.init_process_group("gloo", timeout=timeout)  # the launcher's environment
    try:
        if config["construct"] == "after":
            ds = make_dataset(config)
        context = config["workers_by"]  # None: what this process gives its workers by default
        loader_options = {"num_workers": config["workers"], "persistent_workers": config["persistent"],
                          "multiprocessing_context": context}
        if config["batching"] == "dataset":
            loader = torch.utils.data.DataLoader(ds, batch_size=None, **loader_options)
        else:
            loader = torch.utils.data.DataLoader(ds, batch_size=config["batch"], collate_fn=tt.collate,
                                                 **loader_options)
        epochs = []
        for epoch in range(2):
            ds.set_epoch(epoch)
            steps = []
            for keys, values in loader:
                assert values["x"].dtype == torch.int64 and values["x"].shape == (len(keys), 1)
                assert [int(v) for v in values["x"][:, 0]] == [int(k[1:]) for k in keys]
                steps.append(list(keys))
            counts = torch.tensor([len(steps), -len(steps)])
            dist.all_reduce(counts, op=dist.ReduceOp.MAX)
            epochs.append({"steps": steps, "most_steps": int(counts[0]), "fewest_steps": -int(counts[1]),
                           "len": len(loader) if config["batching"] == "dataset" else len(ds)})
        out = {"epochs": epochs, "start_method": torch.multiprocessing.get_start_method()}
        with open(os.path.join(config["out"], f"rank{dist.get_rank()}.json"), "w") as f:
            json.dump(out, f)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), json.loads(sys.argv[1]))
