#!/usr/bin/env python3
"""Poured beds: packing fraction and coordination against friction.

    PYTHONPATH=python python scripts/studies/packing.py out/studies/packing_mu?.?.h5 \
        [--png docs/studies/img/packing.png]

Reads the output files of configs/studies/packing_mu<mu>.toml with
gravelpost (mu is read from the config stored in each file) and prints,
per friction coefficient:

- phi and Z of the `bulk` region diagnostic (5 d to 14 d above the floor),
  last row (10 samples over the last 0.05 s), and the drift of both since
  the row 0.1 s earlier;
- the ratio of kinetic to potential energy at the end (settled: tiny);
- from the last frame, over the particles whose centre is in the same
  region: the fraction with no contact (rattlers in the strict sense), and
  the coordination without rattlers, i.e. over the particles with at least
  2 contacts (mu > 0) or 4 contacts (mu = 0), contacts still counted with
  every partner (one pass, not the recursive removal of the jamming
  literature);
- the mean overlap of the bulk's contacts over the mean diameter and the
  vertical stress at mid-bulk, to judge the distance from zero pressure;
- an estimate at zero pressure: over the depth profile's bins inside the
  bulk, phi fitted against the vertical stress P = sigma_zz as
  phi = phi_0 + b P^{2/3} (Hertz contacts: the overlap grows as P^{2/3}),
  phi_0 printed (an extrapolation over a factor ~2.5 in P: a rough
  estimate; the same for Z, Z - Z_c growing as P^{1/3}, scatters too much
  to be worth printing);

and writes one PNG: phi and Z against mu, with the limits Silbert (Soft
Matter 6 (2010) 2918) reports for the jamming point, and the phi profiles
in depth.
"""
import argparse
import re

import numpy as np

from gravelpost import open_run


def friction_of(config):
    m = re.search(r"tangential\s*=\s*\{[^}]*friction\s*=\s*([0-9.eE+-]+)", config)
    return float(m.group(1))


def contacts(x, r, box, periodic):
    """Number of touching partners (overlap > 0) of every sphere, and the
    overlaps of the pairs (each once); the floor z = 0 counts as a partner."""
    n = len(r)
    count = np.zeros(n, int)
    overlaps = []
    for i in range(n - 1):
        d = x[i + 1:] - x[i]
        for a in range(3):
            if periodic[a]:
                d[:, a] -= box[a] * np.round(d[:, a] / box[a])
        gap = np.sqrt((d * d).sum(axis=1)) - (r[i] + r[i + 1:])
        hit = np.nonzero(gap < 0.0)[0]
        count[i] += len(hit)
        count[i + 1 + hit] += 1
        overlaps.extend(-gap[hit])
    count += (x[:, 2] < r).astype(int)
    return count, np.array(overlaps)


def analyse(path):
    run = open_run(path)
    mu = friction_of(run.config)
    bulk = run.diagnostics["bulk"]
    t = bulk.table["time"]
    phi, z = bulk.table["packing_fraction"], bulk.table["coordination"]
    k0 = np.searchsorted(t, t[-1] - 0.1 - 1e-9)
    lo, hi = bulk.fixed["lo"], bulk.fixed["hi"]
    ke = run.thermo["kinetic_energy"][-1] / abs(run.thermo["potential_energy"][-1])
    frame = run.frame(run.frame_steps()[-1])
    x, r = frame["position"], frame["radius"]
    box = np.array([hi[0] - lo[0], hi[1] - lo[1], np.inf])
    count, ov = contacts(x, r, box, (True, True, False))
    inside = np.all((x >= lo) & (x < hi), axis=1)
    c = count[inside]
    least = 4 if mu == 0 else 2
    kept = c >= least
    depth = run.diagnostics["depth"]
    szz_mid = depth.table["stress"][-1][:, 2]
    zc = depth.fixed["bin_centres"]
    mid = 0.5 * (lo[2] + hi[2])
    inb = (zc > lo[2]) & (zc < hi[2])
    pz = depth.table["stress"][-1][inb, 2]
    phi0 = np.polyfit(pz ** (2 / 3), depth.table["packing_fraction"][-1][inb], 1)[1]
    return dict(
        mu=mu, phi=phi[-1], z=z[-1], dphi=phi[-1] - phi[k0], dz=z[-1] - z[k0], ke=ke,
        n=int(inside.sum()), z_frame=c.mean(), rattlers=float((c == 0).mean()),
        few=float((~kept).mean()), z_nr=c[kept].mean(), least=least,
        overlap=ov.mean() / (2 * r.mean()), szz=float(np.interp(mid, zc, szz_mid)),
        d=2 * r.mean(), phi0=phi0, zprof=zc, phiprof=depth.table["packing_fraction"][-1],
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--png", default="docs/studies/img/packing.png")
    a = ap.parse_args()
    res = sorted((analyse(p) for p in a.files), key=lambda r: r["mu"])
    print("| μ | φ bulk | Z bulk | Δφ, ΔZ over last 0.1 s | KE/PE | particles | no contact "
          "| below the cut | Z without them | mean overlap / d | σ_zz mid-bulk (Pa) | φ at P → 0 (fit) |")
    print("|" + "---|" * 12)
    for r in res:
        print(
            f"| {r['mu']:g} | {r['phi']:.4f} | {r['z']:.3f} | {r['dphi']:+.4f}, {r['dz']:+.3f} "
            f"| {r['ke']:.1e} | {r['n']} | {r['rattlers']:.1%} | {r['few']:.1%} (< {r['least']}) "
            f"| {r['z_nr']:.3f} | {r['overlap']:.1e} | {r['szz']:.0f} | {r['phi0']:.3f} |"
        )
        if abs(r["z_frame"] - r["z"]) > 0.05:
            print(f"  note: the frame's Z {r['z_frame']:.3f} differs from the diagnostic's")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(11, 3.6))
    mus = np.array([r["mu"] for r in res])
    xs = np.where(mus > 0, mus, 0.01)
    ax[0].semilogx(xs, [r["phi"] for r in res], "o-", label="gravel, poured bed (bulk)")
    ax[0].semilogx(xs, [r["phi0"] for r in res], "o:", mfc="none", color="C0",
                   label="gravel, extrapolated to P → 0")
    ax[0].axhspan(0.63, 0.65, color="C1", alpha=0.2, label="Silbert 2010, μ → 0: ≈ 0.64")
    ax[0].axhspan(0.55, 0.58, color="C2", alpha=0.2, label="Silbert 2010, large μ: ≈ 0.55–0.58")
    ax[0].set(xlabel="μ (μ = 0 drawn at 0.01)", ylabel="packing fraction φ", ylim=(0.52, 0.68))
    ax[1].semilogx(xs, [r["z"] for r in res], "o-", label="gravel, all particles")
    ax[1].semilogx(xs, [r["z_nr"] for r in res], "s--", label="gravel, without rattlers")
    ax[1].axhline(6, color="C1", alpha=0.6, label="Silbert 2010, μ → 0: ≈ 6")
    ax[1].axhline(4, color="C2", alpha=0.6, label="Silbert 2010, large μ: ≈ 4")
    ax[1].set(xlabel="μ (μ = 0 drawn at 0.01)", ylabel="coordination Z", ylim=(3, 7))
    for r in res:
        ax[2].plot(r["phiprof"], r["zprof"] / r["d"], label=f"μ = {r['mu']:g}")
    ax[2].axhspan(0.010 / res[0]["d"], 0.028 / res[0]["d"], color="grey", alpha=0.15)
    ax[2].set(xlabel="packing fraction φ (1 mm bins)", ylabel="height / d", xlim=(0, 0.8))
    for x in ax:
        x.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.png, dpi=80)
    print(f"\nwrote {a.png}")


if __name__ == "__main__":
    main()
