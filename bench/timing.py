"""What the Python benchmarks share: the package under test, best-of-N timing, and rows of
ratios against a comparison (ours / theirs in time: lower is faster)."""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package(description, default_build):
    """Parses --build and imports the tablio package built there; gives (args, tablio)."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", default_build))
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import tablio
    return args, tablio


def fastest(fn, passes=5):
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def row(name, ours, theirs, against, target, *, throughput=False, floor=None):
    """Prints one comparison; `floor`, (seconds, what), is the least time physically possible."""
    line = f"  {name:<44} {ours * 1e3:9.1f} ms  vs {theirs * 1e3:9.1f} ms  {ours / theirs:6.2f}x"
    if throughput:
        line += f"  throughput {theirs / ours:5.2f}x"
    line += f"  ({against}; target {target})"
    if floor:
        line += f"\n  {'':<44} floor {floor[0] * 1e3:9.1f} ms: {floor[1]}; ours / floor {ours / floor[0]:.2f}x"
    print(line, flush=True)
