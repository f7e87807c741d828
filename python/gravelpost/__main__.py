"""Command line: `python -m gravelpost summary FILE` and
`python -m gravelpost plot FILE --out DIR`."""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from .read import NotGravelOutput, open_run

ENERGIES = ("kinetic_energy", "rotational_energy", "potential_energy", "elastic_energy")


def _value(array):
    """The last row of a thermo column, printed compactly."""
    last = np.asarray(array[-1]) if len(array) else np.asarray(np.nan)
    if last.ndim == 0:
        return f"{float(last):.6g}"
    return np.array2string(last, precision=4, separator=", ")


def summary(run, stream=sys.stdout):
    """Print what `run` holds: steps, frames, thermo columns with their last
    values, walls, materials and diagnostics with their kinds and rows."""
    p = lambda *args: print(*args, file=stream)  # noqa: E731
    p(f"file: {run.path}")
    p(f"gravel {run.version}, {run.ranks} rank(s) x {run.threads} thread(s)")
    steps = run.thermo.get("step")
    if steps is not None and len(steps):
        p(f"steps: {int(steps[0])} to {int(steps[-1])} ({len(steps)} thermo rows)")
    frames = run.frame_steps()
    if frames:
        p(f"frames: {len(frames)} (steps {frames[0]} to {frames[-1]})")
    else:
        p("frames: none")
    p(f"materials: {', '.join(run.materials) or 'none'}")
    p(f"walls: {', '.join(run.walls) or 'none'}")
    p("thermo (last row):")
    for column, values in run.thermo.items():
        units = run.units(column)
        p(f"  {column}: {_value(values)}{' ' + units if units else ''}")
    if run.diagnostics:
        p("diagnostics:")
        for name, diag in run.diagnostics.items():
            p(f"  {name}: {diag.kind}, {diag.rows} rows, columns {', '.join(diag.table)}")
    else:
        p("diagnostics: none")


def plot_all(run, out):
    """Write the standard plots of `run` into folder `out`; return the paths."""
    from . import plot

    base = os.path.splitext(os.path.basename(run.path))[0]
    path = lambda what: os.path.join(out, f"{base}_{what}.png")  # noqa: E731
    written = []
    energies = [c for c in ENERGIES if c in run.thermo]
    if energies:
        written.append(plot.plot_thermo(run, energies, path("energies")))
    if "stress" in run.thermo:
        written.append(plot.plot_stress(run, path("stress")))
    if run.walls and "wall_force" in run.thermo:
        written.append(plot.plot_wall_forces(run, path("wall_forces")))
    for name, diag in run.diagnostics.items():
        if diag.rows == 0:
            continue
        for field in diag.table:
            if field in ("step", "time"):
                continue
            if diag.kind == "profile":
                written.append(plot.plot_profile(run, name, field, path(f"{name}_{field}")))
            elif diag.kind == "coarse_grain":
                written.append(plot.plot_coarse_grain(run, name, field, path(f"{name}_{field}")))
    return written


def main(argv=None):
    """Run the command line; returns the exit status (2 for a bad file)."""
    parser = argparse.ArgumentParser(prog="python -m gravelpost",
                                     description="Summarise or plot a gravel output file.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary", help="print what the file holds")
    s.add_argument("file")
    p = sub.add_parser("plot", help="write PNG plots into --out")
    p.add_argument("file")
    p.add_argument("--out", default=".", help="folder for the PNG files (default: .)")
    args = parser.parse_args(argv)
    try:
        run = open_run(args.file)
    except (FileNotFoundError, NotGravelOutput) as err:
        print(f"gravelpost: error: {err}", file=sys.stderr)
        return 2
    if args.command == "summary":
        summary(run)
    else:
        for written in plot_all(run, args.out):
            print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
