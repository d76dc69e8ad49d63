"""One rank of a training job that checkpoints its loader, as test_resume_killed.py runs it
under PyTorch's launcher (torch.distributed.run): tar samples from S3 through
tablio.torch.DataLoader with spawned workers, the ranks stepping together as DDP's all-reduce
makes them. Each step's keys go to a log as soon as the step is taken; every `save_every`
steps the loader's state is saved (written whole, then renamed over the last one); after
`stop_after` steps the rank waits to be killed.

    resume_job.py CONFIG_JSON
"""

import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import tablio.torch as tt


def main(config):
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank = dist.get_rank()
    batch = config["batch"]
    dataset = tt.TableIterableDataset(config["rspec"], type="sample", decode=True, shuffle=config["shuffle"],
                                      shuffle_buffer=32, seed=3, with_keys=True, uneven="drop",
                                      batch_size=batch if config["batching"] == "dataset" else None)
    loader = tt.DataLoader(dataset, batch_size=None if config["batching"] == "dataset" else batch,
                           collate_fn=tt.collate, num_workers=config["workers"], multiprocessing_context="spawn")
    dataset.set_epoch(0)
    if config.get("resume"):
        with open(config["resume"]) as f:
            loader.load_state_dict(json.load(f))
    out = config["out"]
    with open(os.path.join(out, f"{config['tag']}-rank{rank}.log"), "a") as log:
        for keys, values in loader:
            assert values["cls"].tolist() == [int(k[1:]) for k in keys]
            step = torch.ones(1)
            dist.all_reduce(step)  # every rank takes every step, as under DDP
            state = loader.state_dict()
            log.write(json.dumps({"step": state["yielded"], "keys": list(keys)}) + "\n")
            log.flush()
            if state["yielded"] % config["save_every"] == 0:
                saved = os.path.join(out, f"state-rank{rank}.json")
                with open(saved + ".part", "w") as f:
                    json.dump(state, f)
                os.replace(saved + ".part", saved)
            if state["yielded"] == config.get("stop_after"):
                open(os.path.join(out, f"stopped-rank{rank}"), "w").close()
                time.sleep(600)  # until killed
    dist.destroy_process_group()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
