#!/usr/bin/env python3
"""Angle of repose of a heap from a gravel output file (e.g. configs/heap.toml).

    python3 scripts/repose_angle.py OUT.h5 [--material 0] [--bin 0.004]

Reads the last frame, keeps the particles of one material (default 0, the
poured beads; the frozen base is another material), and builds the free
surface profile h(x): in bins of width `--bin` along x, the highest point
z + r of any particle. On each flank of the heap (left and right of the
highest bin), a straight line is fitted by least squares to the bins whose
height lies between 20 % and 80 % of the heap's height above the base; the
angle of repose is atan(|slope|), printed per flank and as their mean.
Needs h5py and numpy (pip install h5py numpy).
"""
import argparse
import math

import h5py
import numpy as np


def profile(x, top, width):
    lo, hi = x.min(), x.max()
    nb = max(1, int(math.ceil((hi - lo) / width)))
    idx = np.minimum(((x - lo) / width).astype(int), nb - 1)
    h = np.full(nb, np.nan)
    for b in range(nb):
        sel = idx == b
        if sel.any():
            h[b] = top[sel].max()
    centres = lo + (np.arange(nb) + 0.5) * width
    ok = ~np.isnan(h)
    return centres[ok], h[ok]


def flank_angle(xc, h, base, height):
    sel = (h > base + 0.2 * height) & (h < base + 0.8 * height)
    if sel.sum() < 3:
        return float("nan"), int(sel.sum())
    slope = np.polyfit(xc[sel], h[sel], 1)[0]
    return math.degrees(math.atan(abs(slope))), int(sel.sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--material", type=int, default=0)
    ap.add_argument("--bin", type=float, default=0.004, help="bin width along x (m)")
    a = ap.parse_args()
    with h5py.File(a.file, "r") as f:
        frames = sorted(f["frames"].keys())
        g = f["frames"][frames[-1]]
        pos = g["position"][:]
        rad = g["radius"][:]
        mat = g["material"][:]
        time = g.attrs["time"]
    keep = mat == a.material
    base = (pos[~keep, 2] + rad[~keep]).max() if (~keep).any() else 0.0
    x, top = pos[keep, 0], pos[keep, 2] + rad[keep]
    xc, h = profile(x, top, a.bin)
    peak = int(np.argmax(h))
    height = h[peak] - base
    left, nl = flank_angle(xc[: peak + 1], h[: peak + 1], base, height)
    right, nr = flank_angle(xc[peak:], h[peak:], base, height)
    print(
        f"{a.file}: frame t = {time:.3f} s, {keep.sum()} particles, heap height "
        f"{height * 1e3:.1f} mm, base width {(x.max() - x.min()) * 1e3:.0f} mm"
    )
    print(f"left flank {left:.1f} deg ({nl} bins), right flank {right:.1f} deg ({nr} bins)")
    print(f"angle of repose {0.5 * (left + right):.1f} deg")


if __name__ == "__main__":
    main()
