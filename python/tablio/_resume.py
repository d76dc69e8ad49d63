"""Where an interrupted epoch stands, from what a loader yielded: a pure function of the
epoch's plans (tablio._plan), with no I/O and nothing asked of the processes that read.

A loader's state says which epoch, how many items the loader of each rank had yielded (ranks
step together, so one number), and the configuration that produced them: world size,
workers, records per item, the plan's options, and the state this run itself resumed from
when it did so with another configuration ("previous"). DataLoader hands items out round
robin over its workers (tablio._plan.round_robin), so the number yielded tells how many each
worker handed out, and the plans tell which records those were.

Resuming with the same configuration, each worker skips what it handed out, and the workers
are rotated so that the round robin goes on where it stopped: the same sequence follows.
Resuming with another, the epoch's records not yet consumed by any rank ("remaining") are
planned anew over the new ranks and workers.
"""

import hashlib

import numpy as np

from tablio import _plan

_CONFIG = ("world", "workers", "records_per_item", "drop_last", "options", "tables")


def tables_digest(sizes):
    """What a state checks the tables against: their number of records each."""
    return hashlib.sha256(np.asarray(sizes, np.int64).tobytes()).hexdigest()[:32]


def config(sizes, options, world, workers, records_per_item, drop_last):
    """A state's configuration: everything besides the epoch and the count that decides which
    worker read what."""
    return {"world": world, "workers": max(1, workers), "records_per_item": records_per_item,
            "drop_last": bool(drop_last), "options": dict(options._asdict()),
            "tables": {"count": len(sizes), "records": int(sum(sizes)), "digest": tables_digest(sizes)}}


def same_config(state, other):
    return all(state.get(name) == other.get(name) for name in _CONFIG)


def items(records, state):
    """How many items a worker with `records` records yields under the state's configuration."""
    per = state["records_per_item"]
    return records // per if state["drop_last"] else -(-records // per)


def salt(previous):
    """What sets a resumed epoch's shuffle apart from the runs before it: how many there were."""
    depth = 0
    while previous:
        depth, previous = depth + 1, previous.get("previous")
    return ("resume", depth) if depth else ()


def remaining(sizes, epoch, previous):
    """The epoch's stream positions not consumed by the runs `previous` describes, in stream
    order (None when no run was: all of them)."""
    if not previous:
        return None
    before = remaining(sizes, epoch, previous.get("previous"))
    total = int(sum(sizes))
    left = np.zeros(total, bool)
    if before is None:
        left[:] = True
    else:
        left[before] = True
    for rank in range(previous["world"]):
        plans = worker_plans(sizes, epoch, rank, previous, before)
        taken, _ = _plan.round_robin([items(p.records, previous) for p in plans], previous["yielded"])
        for plan, count in zip(plans, taken):
            left[plan.positions[:min(count * previous["records_per_item"], plan.records)]] = False
    return np.flatnonzero(left)


def worker_plans(sizes, epoch, rank, state, positions):
    """The plans of a rank's workers under a state's configuration, over `positions`."""
    options = _plan.Options(**state["options"])
    return [_plan.worker_plan(sizes, options, epoch, rank, state["world"], worker, state["workers"], positions,
                              salt(state.get("previous")))
            for worker in range(state["workers"])]


def check_tables(state, sizes):
    """Refuses a state made over other tables: its plans would be of other records."""
    tables = state.get("tables", {})
    if tables.get("digest") != tables_digest(sizes) or tables.get("records") != int(sum(sizes)):
        raise ValueError(f"the state was saved over {tables.get('count')} tables of {tables.get('records')} "
                         f"records, and the dataset has {len(sizes)} of {int(sum(sizes))} (or other sizes)")


def check_order(state, config):
    """Refuses a state whose epoch had another order: shuffled or not, or from another seed.
    (Batch sizes, buffers, ranks and workers may change: the epoch's records stay where they
    were.)"""
    for name in ("shuffle", "seed"):
        saved, now = state.get("options", {}).get(name), config["options"][name]
        if saved != now:
            raise ValueError(f"the state's epoch was read with {name}={saved!r}, and this loader reads it with "
                             f"{name}={now!r}: its records are in another order")
