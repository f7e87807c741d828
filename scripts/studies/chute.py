#!/usr/bin/env python3
"""Steady inclined chute flow: profiles, Bagnold fit and mu(I).

    PYTHONPATH=python python scripts/studies/chute.py out/studies/chute_*.h5 \
        [--from-fraction 0.5] [--png docs/studies/img/chute.png]

Reads the output files of configs/studies/chute_<angle>.toml (one per
angle; the angle is read from the gravity vector of the config stored in
the file) with gravelpost, averages the `depth` profile rows of the last half of each run
(`--from-fraction`; the transient is left out), and prints, per run:

- the free surface z_s (where the packing fraction falls to half its bulk
  value) and the depth H = z_s - z_b above the base (z_b = 1.2 d, the top
  of the frozen base's centres);
- the bulk: the bins from z_b + 4 to z_s - 4, where the packing fraction,
  mu = sigma_xz / sigma_zz and I = gammadot d / sqrt(sigma_zz / rho_p) are
  averaged (gammadot = dv_x/dz by central differences of the binned mean
  velocity; d = 1, rho_p = 1);
- the Bagnold fit v(z) = a - c (z_s - z)^{3/2} and a linear fit
  v(z) = a + b z over z_b + 1 .. z_s - 1, and their RMS residuals;
- the Bagnold coefficient A of v = (2/3) A [H^{3/2} - (H - z)^{3/2}]
  (Silbert et al.'s form, d = g = 1): from the fit, and from the bulk's
  I as the local law predicts, A = I sqrt(phi cos theta);
- the kinetic energy drift: the mean of the thermo kinetic energy over the
  second half of the averaging window over that of its first half.

and writes one PNG of four panels: v_x(z) with both fits, phi(z),
sigma_xz/sigma_zz against tan(theta), and mu(I) against the law
mu(I) = mu_s + (mu_2 - mu_s) / (I_0 / I + 1) with the glass-bead parameters
of Jop, Forterre & Pouliquen (J. Fluid Mech. 541 (2005) 167): mu_s =
tan 20.9 deg, mu_2 = tan 32.76 deg, I_0 = 0.279, and the same law
with mu_s = tan 20 deg, about the lowest angle of steady flow that Silbert
et al. (Phys. Rev. E 64 (2001) 051302) report for thick layers of this
contact model, mu_2 as Jop et al.'s, and I_0 fitted here to every run's
bulk (mu is measured from the stresses, so a run that is not steady still
gives a point of the local law).  A run is called steady when its bulk
stress ratio is within --steady (2 %) of tan(theta) and its kinetic energy
drift within 5 %.
"""
import argparse
import math
import re
import sys

import numpy as np

from gravelpost import open_run

Z_BASE = 1.2  # top of the frozen base's centres (configs/data/chute.csv)
JOP = (math.tan(math.radians(20.9)), math.tan(math.radians(32.76)), 0.279)
# The lowest angle of steady flow of thick layers with this contact model,
# about 20 degrees (Silbert et al. 2001), taken as mu_s of the second curve.
MU_S_DEG = 20.0


def mu_law(i, mu_s, mu_2, i_0):
    return mu_s + (mu_2 - mu_s) / (i_0 / i + 1.0)


def angle_of(config):
    m = re.search(r"gravity\s*=\s*\[([^\]]*)\]", config)
    g = [float(x) for x in m.group(1).split(",")]
    return math.degrees(math.atan2(g[0], -g[2]))


def analyse(path, from_fraction):
    run = open_run(path)
    theta = angle_of(run.config)
    prof = run.diagnostics["depth"]
    t = prof.table["time"]
    from_time = from_fraction * t[-1]
    keep = t >= from_time
    if keep.sum() < 2:
        sys.exit(f"{path}: fewer than 2 profile rows from t = {from_time}")
    z = prof.fixed["bin_centres"]
    phi = prof.table["packing_fraction"][keep].mean(axis=0)
    vx = prof.table["mean_velocity"][keep][:, :, 0]
    vx = vx.mean(axis=0)
    s = prof.table["stress"][keep].mean(axis=0)
    sxz, szz = s[:, 4], s[:, 2]
    # Free surface: phi falls to half of the plateau (the median above the base).
    body = (z > Z_BASE + 2) & (phi > 0.2)
    plateau = np.median(phi[body])
    top = np.where((z > Z_BASE + 2) & (phi < 0.5 * plateau))[0][0]
    z1, z2, p1, p2 = z[top - 1], z[top], phi[top - 1], phi[top]
    z_s = z1 + (0.5 * plateau - p1) * (z2 - z1) / (p2 - p1)
    bulk = (z >= Z_BASE + 4) & (z <= z_s - 4)
    flow = (z >= Z_BASE + 1) & (z <= z_s - 1)
    gdot = np.gradient(vx, z)
    # Compressive-positive stresses: the bed above a plane drags it
    # downhill, so sigma_xz = -tan(theta) sigma_zz < 0; mu = -sigma_xz/sigma_zz.
    mu = -sxz / szz
    inertial = gdot / np.sqrt(szz)
    # Fits over the flowing layer.
    zf, vf = z[flow], vx[flow]
    xb = (z_s - zf) ** 1.5
    bag = np.polyfit(xb, vf, 1)
    lin = np.polyfit(zf, vf, 1)
    rms_bag = np.sqrt(np.mean((np.polyval(bag, xb) - vf) ** 2))
    rms_lin = np.sqrt(np.mean((np.polyval(lin, zf) - vf) ** 2))
    # Kinetic energy drift over the averaging window.
    tt, ke = run.thermo["time"], run.thermo["kinetic_energy"]
    w = tt >= from_time
    half = tt[w][0] + 0.5 * (tt[w][-1] - tt[w][0])
    drift = ke[w & (tt >= half)].mean() / ke[w & (tt < half)].mean() - 1.0
    pb = phi[bulk]
    slope = np.polyfit(z[bulk], pb, 1)[0]
    return dict(
        path=path, theta=theta, rows=int(keep.sum()), t0=float(t[keep][0]), t1=float(t[keep][-1]),
        z=z, phi=phi, vx=vx, mu=mu, inertial=inertial, bulk=bulk, flow=flow,
        z_s=z_s, H=z_s - Z_BASE, phi_bulk=pb.mean(), phi_sd=pb.std(), phi_slope=slope,
        mu_bulk=mu[bulk].mean(), mu_sd=mu[bulk].std(), tan=math.tan(math.radians(theta)),
        i_bulk=inertial[bulk].mean(), i_sd=inertial[bulk].std(),
        bag=bag, lin=lin, a_fit=-1.5 * bag[0],
        a_local=inertial[bulk].mean() * math.sqrt(pb.mean() * math.cos(math.radians(theta))), rms_bag=rms_bag, rms_lin=rms_lin, v_surf=float(np.polyval(bag, 0.0)),
        drift=drift,
    )


def fit_i0(points, mu_s, mu_2):
    """Least-squares I_0 of the law with mu_s, mu_2 fixed (a scan, no scipy)."""
    grid = np.exp(np.linspace(np.log(1e-3), np.log(10.0), 4001))
    err = [sum((mu_law(i, mu_s, mu_2, g) - m) ** 2 for i, m in points) for g in grid]
    return float(grid[int(np.argmin(err))])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--from-fraction", type=float, default=0.5)
    ap.add_argument("--steady", type=float, default=0.02,
                    help="largest |mu/tan(theta) - 1| of a run called steady (default 0.02)")
    ap.add_argument("--png", default="docs/studies/img/chute.png")
    a = ap.parse_args()
    res = sorted((analyse(p, a.from_fraction) for p in a.files), key=lambda r: (r["H"], r["theta"]))
    for r in res:
        # Steady: the stress ratio balances gravity (a ratio below tan(theta)
        # means the layer accelerates, above it that it slows down), and the
        # kinetic energy changes by at most 5 % over the window's halves.
        r["steady"] = abs(r["mu_bulk"] / r["tan"] - 1) <= a.steady and abs(r["drift"]) <= 0.05
        r["label"] = f"{r['theta']:.0f}°, H = {r['H']:.0f}" + ("" if r["steady"] else " (not steady)")

    print("| θ (°) | tan θ | −σxz/σzz bulk (±sd) | rel. diff. | I bulk (±sd) | φ bulk (±sd) | dφ/dz (1/d) "
          "| H (d) | v_surf | RMS Bagnold | RMS linear | A fit | I sqrt(φ cos θ) | KE drift | window (τ) |")
    print("|" + "---|" * 15)
    for r in res:
        print(
            f"| {r['theta']:.1f} | {r['tan']:.4f} | {r['mu_bulk']:.4f} ± {r['mu_sd']:.4f} "
            f"| {r['mu_bulk'] / r['tan'] - 1:+.2%} | {r['i_bulk']:.4f} ± {r['i_sd']:.4f} "
            f"| {r['phi_bulk']:.4f} ± {r['phi_sd']:.4f} | {r['phi_slope']:+.5f} | {r['H']:.1f} "
            f"| {r['v_surf']:.2f} | {r['rms_bag']:.3f} | {r['rms_lin']:.3f} | {r['a_fit']:.4f} "
            f"| {r['a_local']:.4f} | {r['drift']:+.2%} "
            f"| {r['t0']:.0f}–{r['t1']:.0f} |"
        )
    # mu is measured from the stresses, not taken as tan(theta): every run
    # gives a point of the local law, steady or not.
    points = [(r["i_bulk"], r["mu_bulk"]) for r in res]
    mu_s, mu_2 = math.tan(math.radians(MU_S_DEG)), JOP[1]
    i0 = fit_i0(points, mu_s, mu_2)
    print()
    print("| θ (°) | H (d) | steady | I | μ measured | μ(I) Jop et al. 2005 | μ(I) μ_s = tan 20°, I_0 fitted |")
    print("|---|---|---|---|---|---|---|")
    for r in res:
        print(
            f"| {r['theta']:.1f} | {r['H']:.0f} | {'yes' if r['steady'] else 'no'} | {r['i_bulk']:.4f} | {r['mu_bulk']:.4f} "
            f"| {mu_law(r['i_bulk'], *JOP):.4f} | {mu_law(r['i_bulk'], mu_s, mu_2, i0):.4f} |"
        )
    print(f"\nI_0 fitted to all runs with mu_s = tan {MU_S_DEG}° = {mu_s:.4f}, "
          f"mu_2 = tan 32.76° = {mu_2:.4f}: {i0:.3f}")
    inv = [(r["theta"], JOP[2] * (r["mu_bulk"] - JOP[0]) / (JOP[1] - r["mu_bulk"])) for r in res]
    print("I that the Jop et al. law gives for the measured mu: "
          + ", ".join(f"{th:.1f}°: {i:.4f}" for th, i in inv))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 3, figsize=(13, 7.5))
    colours = plt.cm.viridis(np.linspace(0, 0.85, len(res)))
    for r, c in zip(res, colours):
        z, lab = r["z"], r["label"]
        f = r["flow"]
        pv = ax[0, 1] if r["H"] > 20 else ax[0, 0]
        pv.plot(r["vx"][f], z[f], "o", ms=3, color=c, label=lab)
        zz = np.linspace(z[f][0], r["z_s"], 100)
        pv.plot(np.polyval(r["bag"], (r["z_s"] - zz) ** 1.5), zz, "-", color=c, lw=1)
        pv.plot(np.polyval(r["lin"], zz), zz, ":", color=c, lw=1)
        ax[0, 2].plot(r["phi"], z, "-", color=c, label=lab)
        b = r["bulk"]
        ax[1, 0].plot(r["mu"][b] / r["tan"], z[b], "o-", ms=3, color=c, label=lab)
        mfc = c if r["steady"] else "none"
        ax[1, 1].errorbar(r["i_bulk"], r["mu_bulk"], xerr=r["i_sd"], yerr=r["mu_sd"], fmt="o",
                          color=c, mfc=mfc, label=lab)
        ax[1, 2].errorbar(r["i_bulk"], r["phi_bulk"], xerr=r["i_sd"], yerr=r["phi_sd"], fmt="o",
                          color=c, mfc=mfc, label=lab)
    for pv, what in ((ax[0, 0], "thin layers"), (ax[0, 1], "thick layer")):
        pv.set(xlabel="v_x / sqrt(g d)", ylabel="z / d",
               title=f"velocity, {what}: Bagnold fit (—), linear (···)")
    ax[0, 2].set(xlabel="packing fraction φ", ylabel="z / d", title="packing fraction",
                 xlim=(0, 0.7))
    ax[1, 0].axvline(1.0, color="k", ls="--", lw=1)
    ax[1, 0].set(xlabel="(−σ_xz / σ_zz) / tan θ", ylabel="z / d", title="stress ratio in the bulk")
    ii = np.linspace(0.005, 0.6, 300)
    ax[1, 1].plot(ii, mu_law(ii, *JOP), "k-", lw=1, label="Jop et al. 2005 (glass beads)")
    ax[1, 1].plot(ii, mu_law(ii, mu_s, mu_2, i0), "k--", lw=1,
                  label=f"μ_s = tan {MU_S_DEG:.0f}°, μ_2 as Jop, I_0 = {i0:.2f}")
    ax[1, 1].set(xlabel="I = γ̇ d / sqrt(P/ρ_p)", ylabel="μ = −σ_xz / σ_zz",
                 title="μ(I) (open: not steady)", xlim=(0, 0.6), ylim=(0.3, 0.6))
    ax[1, 2].set(xlabel="I", ylabel="bulk φ", title="φ(I)")
    for x in ax.flat:
        if x.get_legend_handles_labels()[0]:
            x.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.png, dpi=80)
    print(f"\nwrote {a.png}")


if __name__ == "__main__":
    main()
