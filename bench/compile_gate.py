#!/usr/bin/python3
"""Compile cost, gated on what does not depend on the machine's speed.

For each translation unit of bench/compile_units (and the flags it is built with), measures
  - its preprocessed size: the non-blank lines g++ -E -P gives, which is what the front end
    parses;
  - its object code at -O2: text + data + bss of the object file, which is what the
    optimiser and code generator made;
and compares them with the budgets in bench/compile_budgets.json. A unit more than
--tolerance (3 %) over a budget fails the gate. Raising a budget is a commit of its own that
says why (run with --update to write the measured figures into the file).

The figures hold for the compiler and standard library the budgets were taken with (their
"compiler" entry): with another, the gate says so and exits 77, which CTest counts as skipped.

    bench/compile_gate.py [--cxx g++] [--tolerance 0.03] [--update] [--tree OLDER_CHECKOUT]
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
UNITS = ROOT / "bench" / "compile_units"
BUDGETS = ROOT / "bench" / "compile_budgets.json"
COMMON_FLAGS = ["-std=c++20", "-DTABLIO_WITH_ZLIB", "-DTABLIO_WITH_LMDB"]
SKIPPED = 77


def compiler_id(cxx):
    """The compiler's version line without the name it was called by (g++, c++, g++-12)."""
    line = subprocess.run([cxx, "--version"], check=True, capture_output=True, text=True).stdout.splitlines()[0]
    return line[line.index("("):] if line.startswith(("g++", "c++")) and "(" in line else line


def preprocessed_lines(cxx, source, flags):
    out = subprocess.run([cxx, *flags, "-E", "-P", str(source)], check=True, capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


def object_bytes(cxx, source, flags, folder):
    obj = pathlib.Path(folder) / (source.stem + ".o")
    subprocess.run([cxx, *flags, "-O2", "-c", str(source), "-o", str(obj)], check=True)
    # berkeley format: text data bss dec hex filename
    fields = subprocess.run(["size", "-B", str(obj)], check=True, capture_output=True,
                            text=True).stdout.splitlines()[1].split()
    return int(fields[3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--update", action="store_true", help="write the measured figures as the budgets")
    parser.add_argument("--tree", type=pathlib.Path, default=ROOT,
                        help="measure another checkout's headers (an older commit's) with these units and budgets")
    args = parser.parse_args()

    budgets = json.loads(BUDGETS.read_text())
    compiler = compiler_id(args.cxx)
    if compiler != budgets["compiler"] and not args.update:
        print(f"compile_gate: the budgets are {budgets['compiler']!r}'s, this is {compiler!r}: not checked")
        return SKIPPED

    over = []
    print(f"{'unit':<34} {'lines':>9} {'budget':>9} {'ratio':>6}   {'object':>9} {'budget':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for name, unit in budgets["units"].items():
            source = UNITS / unit["source"]
            flags = [*COMMON_FLAGS, f"-I{args.tree / 'include'}", *unit.get("flags", [])]
            try:
                lines = preprocessed_lines(args.cxx, source, flags)
                size = object_bytes(args.cxx, source, flags, folder)
            except subprocess.CalledProcessError:
                if args.tree == ROOT:
                    raise
                print(f"{name:<34} (does not compile with {args.tree})")
                continue
            if "preprocessed_lines" not in unit:  # a unit added without budgets: --update sets them
                print(f"{name:<34} {lines:>9} {'none':>9} {'':>6}   {size:>9} {'none':>9}")
                over.append(f"{name}: no budget yet")
                unit["preprocessed_lines"], unit["object_bytes"] = lines, size
                continue
            line_ratio, size_ratio = lines / unit["preprocessed_lines"], size / unit["object_bytes"]
            print(f"{name:<34} {lines:>9} {unit['preprocessed_lines']:>9} {line_ratio:>6.3f}   "
                  f"{size:>9} {unit['object_bytes']:>9} {size_ratio:>6.3f}")
            for what, ratio in (("preprocessed lines", line_ratio), ("object bytes", size_ratio)):
                if ratio > 1 + args.tolerance:
                    over.append(f"{name}: {what} {ratio:.3f}x the budget")
            if args.update:
                unit["preprocessed_lines"], unit["object_bytes"] = lines, size
    if args.update:
        budgets["compiler"] = compiler
        BUDGETS.write_text(json.dumps(budgets, indent=2) + "\n")
        print(f"compile_gate: wrote {BUDGETS.relative_to(ROOT)}")
        return 0
    for line in over:
        print(f"compile_gate: OVER: {line} (more than {args.tolerance:.0%})")
    if not over:
        print(f"compile_gate: every unit within {args.tolerance:.0%} of its budget")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
