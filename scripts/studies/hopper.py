#!/usr/bin/env python3
"""Hopper study: the discharge rate of a silo against Beverloo's law.

    PYTHONPATH=python python scripts/studies/hopper.py OUT/hopper.h5
        [--orifice 0.014] [--open 0.1] [--fit 0.15 0.5] [--core core]

Reads a run of configs/hopper.toml (or any run with an outlet and a `region`
diagnostic over the settled bed) with gravelpost and prints:

- the beads at step 0: their number, mass m0 and mean diameter d (frame 0,
  density from the config's first material with one);
- the bulk density rho_b = phi * rho_s, phi the packing fraction of the
  region diagnostic --core in its last row before the gate opens (--open, s);
- the mass flow rate W: the least-squares slope of the thermo column
  `deleted_mass` against time over the rows where between --fit fractions of
  m0 have left, and the slopes over each half of that window;
- Beverloo's W_B = C rho_b sqrt(g) (D - k d)^(5/2), C = 0.58, k = 1.5
  (Beverloo, Leniger & van de Velde, Chem. Eng. Sci. 15 (1961) 260), D the
  orifice's diameter (--orifice, m), and W / W_B.

Needs numpy, h5py and gravelpost (python/ on PYTHONPATH); see
python/requirements.txt. Study page: docs/studies/hopper.md.
"""

import argparse
import math
import sys
import tomllib

import numpy as np

from gravelpost import open_run

G = 9.81
C = 0.58
K = 1.5


def slope(t, m):
    """Least-squares slope of m against t."""
    t, m = np.asarray(t), np.asarray(m)
    tc = t - t.mean()
    return float(tc @ (m - m.mean()) / (tc @ tc))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--orifice", type=float, default=0.014, help="orifice diameter D (m)")
    ap.add_argument("--open", type=float, default=0.1, help="when the gate opens (s)")
    ap.add_argument("--fit", type=float, nargs=2, default=[0.15, 0.5],
                    help="window: fractions of the initial mass discharged")
    ap.add_argument("--core", default="core", help="the region diagnostic of the bed")
    a = ap.parse_args()

    run = open_run(a.file)
    config = tomllib.loads(run.config)
    rho_s = next(m["density"] for m in config["material"] if "density" in m)
    first = run.frame(run.frame_steps()[0])
    r = np.asarray(first["radius"])
    m0 = float(np.sum(4.0 / 3.0 * math.pi * r**3 * rho_s))
    d = 2.0 * float(r.mean())
    print(f"{len(r)} beads, m0 = {m0:.4e} kg, mean diameter d = {d * 1e3:.4f} mm "
          f"(D/d = {a.orifice / d:.2f})")

    core = run.diagnostics[a.core].table
    before = np.nonzero(core["time"] <= a.open + 1e-12)[0]
    if len(before) == 0:
        sys.exit(f"no row of diagnostic {a.core!r} before t = {a.open} s")
    row = before[-1]
    phi = float(core["packing_fraction"][row])
    rho_b = phi * rho_s
    print(f"settled bed ({a.core!r}, row at t = {core['time'][row]:.3f} s): "
          f"phi = {phi:.4f}, rho_b = {rho_b:.0f} kg/m3")

    t = np.asarray(run.thermo["time"])
    m = np.asarray(run.thermo["deleted_mass"])
    lo, hi = a.fit
    reached = m[-1] / m0
    if reached < hi:
        sys.exit(f"only {100 * reached:.1f} % of the mass left by t = {t[-1]:.3f} s; "
                 f"the window asks for {100 * hi:.0f} %: run longer or lower --fit")
    mid = 0.5 * (lo + hi)
    pick = lambda a_, b_: (m >= a_ * m0) & (m <= b_ * m0)
    w = slope(t[pick(lo, hi)], m[pick(lo, hi)])
    w1 = slope(t[pick(lo, mid)], m[pick(lo, mid)])
    w2 = slope(t[pick(mid, hi)], m[pick(mid, hi)])
    w_b = C * rho_b * math.sqrt(G) * (a.orifice - K * d) ** 2.5
    print(f"W = {w:.4e} kg/s over {100 * lo:.0f} %-{100 * hi:.0f} % discharged "
          f"(halves {w1:.4e}, {w2:.4e}); {len(r) and int(round(w / (m0 / len(r))))} beads/s")
    print(f"Beverloo (C = {C}, k = {K}): W_B = {w_b:.4e} kg/s; W / W_B = {w / w_b:.3f}")


if __name__ == "__main__":
    main()
