"""A training job over tar samples in S3 (s3rver on loopback), 2 ranks x 2 spawned workers
launched by torch.distributed.run, saving its loader's state every few steps, is killed with
SIGKILL mid-epoch (every rank and worker at once); restarted from the last state with 2 ranks
it yields what the uninterrupted job yielded after that state, step for step; restarted with
3 ranks x 1 worker it delivers every record that no rank had consumed, exactly once, ranks in
step. Runs with and without shuffle buffers, batched by DataLoader and by the dataset."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import tablio

torch = pytest.importorskip("torch")

DEADLINE = 240  # seconds for one job, every process included
N, BATCH, SAVE_EVERY, STOP_AFTER = 240, 4, 3, 5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def bucket_shards(s3server):
    bucket = s3server.create_bucket("resume-samples")
    env = s3server.env()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with tablio.writer(f"tar,maxcount=40:s3://{bucket}/train-%04d.tar", type="sample") as w:
            for i in range(N):
                w[f"k{i:05d}"] = {"cls": i, "txt": f"sample {i}", "bin": bytes(i % 7)}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return f"tar:s3://{bucket}/train-{{0000..0005}}.tar", env


def launch(world, workers, config, env, kill_when_stopped=False):
    """Runs resume_job.py under torch.distributed.run; with kill_when_stopped, SIGKILLs the
    launcher, its ranks and their workers once every rank has stopped."""
    config = dict(config, workers=workers)
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc_per_node={world}",
               "--master_addr=127.0.0.1", f"--master_port={free_port()}", "--max_restarts=0",
               "--redirects=1", "--tee=1", f"--log_dir={config['out']}/logs-{config['tag']}",
               os.path.join(os.path.dirname(__file__), "resume_job.py"), json.dumps(config)]
    job = subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=dict(os.environ, OMP_NUM_THREADS="1", TABLIO_CACHE="", **env), text=True)
    deadline = time.monotonic() + DEADLINE
    try:
        if kill_when_stopped:
            stopped = [os.path.join(config["out"], f"stopped-rank{r}") for r in range(world)]
            while not all(os.path.exists(s) for s in stopped):
                assert job.poll() is None, job.stdout.read()
                assert time.monotonic() < deadline, "the job did not reach its stop"
                time.sleep(0.1)
            os.killpg(job.pid, signal.SIGKILL)  # preempted: nothing gets to clean up
            job.wait()
            for s in stopped:
                os.remove(s)
            return
        output, _ = job.communicate(timeout=DEADLINE)
        assert job.returncode == 0, output
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()


def steps(out, tag, rank):
    with open(os.path.join(out, f"{tag}-rank{rank}.log")) as f:
        return [json.loads(line) for line in f]


RUNS = [dict(shuffle=True, batching="sample"), dict(shuffle=False, batching="dataset")]


@pytest.mark.worker_processes
@pytest.mark.parametrize("run", RUNS, ids=["shuffled-sample", "ordered-dataset"])
def test_a_killed_job_resumes_exactly_and_elastically(bucket_shards, tmp_path, run):
    rspec, env = bucket_shards
    config = dict(run, rspec=rspec, batch=BATCH, save_every=SAVE_EVERY, out=str(tmp_path))
    launch(2, 2, dict(config, tag="whole"), env)
    whole = [steps(tmp_path, "whole", r) for r in range(2)]
    assert [len(w) for w in whole] == [N // 2 // BATCH] * 2

    launch(2, 2, dict(config, tag="killed", stop_after=STOP_AFTER), env, kill_when_stopped=True)
    killed = [steps(tmp_path, "killed", r) for r in range(2)]
    states = [json.load(open(tmp_path / f"state-rank{r}.json")) for r in range(2)]
    assert states[0] == states[1] and states[0]["yielded"] == SAVE_EVERY  # one state for the whole job
    assert all(k == w[:STOP_AFTER] for k, w in zip(killed, whole))
    saved = str(tmp_path / "resume-from.json")  # the resumed runs save states of their own
    json.dump(states[0], open(saved, "w"))

    launch(2, 2, dict(config, tag="same", resume=saved), env)
    for rank in range(2):
        assert steps(tmp_path, "same", rank) == whole[rank][SAVE_EVERY:]  # step for step

    launch(3, 1, dict(config, tag="elastic", resume=saved), env)
    elastic = [steps(tmp_path, "elastic", r) for r in range(3)]
    assert len({len(e) for e in elastic}) == 1  # ranks in step
    consumed = [k for w in whole for s in w[:SAVE_EVERY] for k in s["keys"]]
    delivered = [k for e in elastic for s in e for k in s["keys"]]
    assert sorted(consumed + delivered) == [f"k{i:05d}" for i in range(N)]  # the epoch, exactly once


@pytest.mark.worker_processes
def test_the_ddp_resume_example_trains_the_same_model_stopped_and_resumed(tmp_path):
    """examples/python/resume_ddp.py --check: 2 ranks over Fashion-MNIST tar samples, stopped
    between checkpoints and resumed, train the model the unstopped job trains, bit for bit."""
    if not os.path.exists("/usr/share/datasets/fashion-mnist"):
        pytest.skip("needs Debian's dataset-fashion-mnist")
    script = os.path.join(os.path.dirname(__file__), "../../examples/python/resume_ddp.py")
    job = subprocess.Popen([sys.executable, script, "--world-size", "2", "--work", str(tmp_path), "--limit", "6000",
                            "--save-every", "10", "--check"], start_new_session=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        output, _ = job.communicate(timeout=DEADLINE)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert job.returncode == 0, output
    assert "the same model as the epoch without stopping" in output
