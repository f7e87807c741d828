#!/usr/bin/env python3
"""Cut a smaller chute out of the LAMMPS chute benchmark's particles.

    python scripts/studies/chute_data.py LX LY ZTOP OUT.csv [--scale-v F]

Reads configs/data/chute.csv (40 x 20 periodic, a frozen rough base at
z < 1.2 and about 37 d of flowing grains at 26 degrees) and keeps the
frozen base particles with x < LX, y < LY, and the mobile ones with
x < LX, y < LY and z < ZTOP.  The cut makes new periodic seams: a mobile
particle that overlaps another particle across a seam (minimum image in
the new box) is dropped, so that the file starts without overlaps between
mobile grains.  Velocities are multiplied by F (default 1): the benchmark's
flow is that of a 37 d deep layer at 26 degrees, faster than a thinner
layer's.  Only numpy is needed.
"""
import argparse
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("lx", type=float)
ap.add_argument("ly", type=float)
ap.add_argument("ztop", type=float)
ap.add_argument("out")
ap.add_argument("--scale-v", type=float, default=1.0)
ap.add_argument("--src", default="configs/data/chute.csv")
a = ap.parse_args()

d = np.genfromtxt(a.src, delimiter=",", names=True)
frozen = d["frozen"] == 1
keep = (d["x"] < a.lx) & (d["y"] < a.ly)
keep &= frozen | (d["z"] < a.ztop)
d = d[keep]
frozen = d["frozen"] == 1
box = np.array([a.lx, a.ly])
xyz = np.stack([d["x"], d["y"], d["z"]], axis=1)
r = d["radius"]
alive = np.ones(len(d), bool)
# Greedy: walk the mobile particles, drop one that overlaps a kept one.
order = np.argsort(frozen)[::-1]  # frozen first, they are always kept
kept = []
for k in order:
    if not frozen[k] and kept:
        q = np.array(kept)
        dx = xyz[q] - xyz[k]
        dx[:, :2] -= box * np.round(dx[:, :2] / box)
        dist = np.sqrt((dx**2).sum(axis=1))
        if np.any(dist < (r[q] + r[k]) - 1e-3):
            alive[k] = False
            continue
    kept.append(k)
d = d[alive]
for c in ("vx", "vy", "vz", "wx", "wy", "wz"):
    d[c] *= a.scale_v
d = d[np.argsort(d["id"])]
with open(a.out, "w") as f:
    f.write("id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n")
    for row in d:
        f.write(
            f"{int(row['id'])},{int(row['frozen'])},"
            + ",".join(f"{row[c]:.6g}" for c in ("x", "y", "z", "radius", "density",
                                                 "vx", "vy", "vz", "wx", "wy", "wz"))
            + "\n"
        )
n_frozen = int((d["frozen"] == 1).sum())
print(f"{a.out}: {len(d)} particles, {n_frozen} frozen, {int((~alive).sum())} dropped at the seams")
