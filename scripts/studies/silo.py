#!/usr/bin/env python3
"""Janssen silo study: fit the saturation of the vertical stress with depth.

    PYTHONPATH=python python scripts/studies/silo.py OUT/silo.h5 [--png FIG.png]
        [--profile depth] [--rows 4] [--side 0.02] [--mu-wall 0.5]
        [--phi-deg 20.5 24.0]

Reads a run of configs/studies/silo.toml (or any square silo whose side walls
are the thermo's walls 1-4 and floor wall 0) with gravelpost and prints:

- the weight of the beads (last frame, density from the config) against the
  floor's and the side walls' vertical forces (last thermo row);
- the bed height H: where the packing fraction of the profile falls to half
  of its bulk value;
- the Janssen fit sigma_zz(depth) = sigma_inf (1 - exp(-depth/lambda)),
  depth = H - z, over the bins from two bead diameters below the surface to
  one silo side L above the floor (the two regions where the fit is not
  expected to hold are left out), and K = (L/4) / (mu_w lambda) from it;
- the stress ratio sigma_h/sigma_zz measured over the same bins
  (sigma_h = (sigma_xx + sigma_yy)/2, the cross-section mean; for a slice of
  uniform stress, as Janssen assumes, this is the wall normal stress);
- the wall friction actually mobilised on the side walls,
  sum |F_z| / sum |F_n|, and K with it;
- Jaky's K0 = 1 - sin(phi) and the Rankine bounds for the friction angles
  given by --phi-deg.

The profile is the mean of the last --rows rows. Needs numpy, h5py,
matplotlib and gravelpost (python/ on PYTHONPATH).
"""

import argparse
import math
import sys
import tomllib

import numpy as np

from gravelpost import open_run

G = 9.81


def janssen(depth, sigma_inf, lam):
    return sigma_inf * (1.0 - np.exp(-depth / lam))


def fit_janssen(depth, szz):
    """Least squares of sigma_inf (linear) for each lambda on a fine
    logarithmic grid, then refined by golden section: no scipy needed."""

    def cost(lam):
        f = 1.0 - np.exp(-depth / lam)
        s = float(f @ szz / (f @ f))
        r = szz - s * f
        return float(r @ r), s

    grid = np.geomspace(1e-4, 10.0, 400)
    costs = [cost(lam)[0] for lam in grid]
    k = int(np.argmin(costs))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(100):
        c, d = b - phi * (b - a), a + phi * (b - a)
        if cost(c)[0] < cost(d)[0]:
            b = d
        else:
            a = c
    lam = 0.5 * (a + b)
    res, s = cost(lam)
    rms = math.sqrt(res / len(depth))
    return s, lam, rms


def write_reset(path, out_dir, time, lift):
    """Stage 2 of the protocol: the last frame of run `path`, lifted by
    `lift` metres, as a CSV file (at rest: zero velocities and spins) and a
    config that starts from it, the run's own config with its particle
    blocks replaced by that file, named `silo_reset`. Lifting the bed off
    its floor is lowering the floor under it, as Vanel and Clement (Eur.
    Phys. J. B 11 (1999) 525) lower the piston under their column: the bed
    slides down along the walls by up to `lift` and lands on the floor, so
    that the wall friction is mobilised upwards over the whole height. (A
    bed read from a file also starts without contact history: every
    tangential spring starts at zero.)"""
    import os
    import re

    run = open_run(path)
    config = tomllib.loads(run.config)
    density = {m["name"]: m.get("density") for m in config["material"]}["glass"]
    last = run.frame(run.frame_steps()[-1])
    os.makedirs(out_dir, exist_ok=True)
    csv = os.path.join(out_dir, "settled.csv")
    with open(csv, "w") as f:
        f.write("id,frozen,x,y,z,radius,density,vx,vy,vz,wx,wy,wz\n")
        for i, x, r in zip(last["id"], last["position"], last["radius"]):
            f.write(f"{i},0,{float(x[0])!r},{float(x[1])!r},{float(x[2]) + lift!r},{float(r)!r},{float(density)!r},0,0,0,0,0,0\n")
    text = run.config
    text = re.sub(r'(?m)^name = "silo"', 'name = "silo_reset"', text, count=1)
    text = re.sub(r"(?m)^time = .*$", f"time = {time!r}", text, count=1)
    block = (
        "[[particles]]             # the bed settled by stage 1, without contact history\n"
        'kind = "file"\n'
        'path = "settled.csv"\n'
        'material = "glass"\n\n'
    )
    text = re.sub(r"(?s)\[\[particles\]\].*?(?=\[\[diagnostics\]\]|\[output\])", block, text)
    toml = os.path.join(out_dir, "silo_reset.toml")
    with open(toml, "w") as f:
        f.write(text)
    print(f"wrote {csv} ({len(last['id'])} beads at t = {last['time']} s, "
          f"lifted by {lift} m) and {toml}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument(
        "--reset",
        metavar="DIR",
        help="write DIR/settled.csv and DIR/silo_reset.toml (stage 2) and stop",
    )
    ap.add_argument("--reset-time", type=float, default=0.25, help="stage 2 length (s)")
    ap.add_argument("--lift", type=float, default=1e-4,
                    help="stage 2: lift the bed off the floor by this much (m)")
    ap.add_argument("--png", help="write the figure here")
    ap.add_argument("--profile", default="depth", help="name of the z profile")
    ap.add_argument("--rows", type=int, default=2, help="profile rows averaged (0.05 s each)")
    ap.add_argument("--side", type=float, default=0.02, help="silo side L (m)")
    ap.add_argument("--mu-wall", type=float, default=0.5, help="wall friction mu_w")
    ap.add_argument(
        "--phi-deg",
        type=float,
        nargs=2,
        default=[20.5, 24.0],
        help="range of the bed's friction angle (degrees) for Jaky's K0",
    )
    a = ap.parse_args()
    if a.reset:
        write_reset(a.file, a.reset, a.reset_time, a.lift)
        return 0

    run = open_run(a.file)
    config = tomllib.loads(run.config)
    density = {m["name"]: m.get("density") for m in config["material"]}["glass"]
    L = a.side
    area = L * L

    # Weight, from the last frame.
    last = run.frame(run.frame_steps()[-1])
    r = last["radius"]
    mass = 4.0 / 3.0 * math.pi * r**3 * density
    weight = float(mass.sum() * G)
    n = len(r)
    d_mean = float(2.0 * r.mean())

    # Wall forces, last thermo row: walls 0 floor, 1-4 sides.
    wf = run.thermo["wall_force"][-1]
    floor = -wf[0, 2]
    sides_z = -wf[1:5, 2].sum()
    normal = np.array([abs(wf[1, 0]), abs(wf[2, 0]), abs(wf[3, 1]), abs(wf[4, 1])])
    mu_mob = float(np.abs(wf[1:5, 2]).sum() / normal.sum())
    ke = run.thermo["kinetic_energy"][-1]

    # Profile, mean of the last rows.
    prof = run.diagnostics[a.profile]
    z = prof.fixed["bin_centres"]
    edges = prof.fixed["bin_edges"]
    dz = float(edges[1] - edges[0])
    rows = min(a.rows, prof.rows)
    stress = prof.table["stress"][-rows:].mean(axis=0)  # bins x 6
    phi = prof.table["packing_fraction"][-rows:].mean(axis=0)
    sxx, syy, szz = stress[:, 0], stress[:, 1], stress[:, 2]
    sh = 0.5 * (sxx + syy)

    # Bed height: where the packing fraction falls to half its bulk value.
    bulk_sel = (z > 0.2 * z.max()) & (phi > 0.3)
    phi_bulk = float(np.median(phi[bulk_sel]))
    top = int(np.nonzero(phi > 0.5 * phi_bulk)[0].max())
    # linear interpolation between bin `top` and `top + 1`
    p0, p1 = phi[top], phi[top + 1]
    H = float(z[top] + dz * (p0 - 0.5 * phi_bulk) / (p0 - p1))
    rho_b = phi_bulk * density
    depth = H - z

    # The Janssen range: 2 diameters below the surface to L above the floor.
    fit_sel = (depth > 2.0 * d_mean) & (z > L)
    s_inf, lam, rms = fit_janssen(depth[fit_sel], szz[fit_sel])
    k_fit = L / 4.0 / (a.mu_wall * lam)
    k_mob = L / 4.0 / (mu_mob * lam)
    ratio = sh[fit_sel] / szz[fit_sel]
    k_meas, k_meas_sd = float(ratio.mean()), float(ratio.std())
    lam_from_sinf = s_inf / (rho_b * G)

    # The wall friction mobilised at each depth, from the balance of a slice:
    # (L/4) (rho(z) g - d sigma_zz / d depth) = tau_w, over sigma_h; the
    # gradient over 5 bins (10 mm), the local density from the packing.
    k5 = np.ones(5) / 5.0
    szz_s = np.convolve(szz, k5, mode="same")
    grad = -np.gradient(szz_s, z)  # d sigma_zz / d depth
    tau_w = L / 4.0 * (phi * density * G - grad)
    mu_local = tau_w / np.convolve(sh, k5, mode="same")

    # Deep-bed stress against the hydrostatic one.
    floor_sel = (z > L) & (z < L + 2 * dz)
    deep = float(szz[floor_sel].mean())
    hydro = float(rho_b * G * depth[floor_sel].mean())

    # Horizontal stress integrated against the side walls' normal force
    # (virial: integral of sigma_xx over the box = L |F_x| at rest).
    int_sxx = float(sxx.sum() * area * dz)
    int_syy = float(syy.sum() * area * dz)

    print(f"file: {a.file}")
    print(f"beads {n}, mean diameter {d_mean*1e3:.3f} mm, weight {weight:.5f} N, "
          f"KE {ke:.3e} J")
    print(f"silo side L {L*1e3:.1f} mm, wall friction mu_w {a.mu_wall}")
    print(f"bed height H {H*1e3:.1f} mm (H/L {H/L:.2f}), bulk packing {phi_bulk:.4f}, "
          f"bulk density {rho_b:.1f} kg/m3")
    print()
    print("| quantity | value |")
    print("| --- | --- |")
    print(f"| floor force / weight | {floor/weight:.4f} |")
    print(f"| side walls' vertical force / weight | {sides_z/weight:.4f} |")
    print(f"| (floor + side walls) / weight | {(floor+sides_z)/weight:.5f} |")
    print(f"| floor force / weight of a Janssen bed, "
          f"(lambda/H)(1 - exp(-H/lambda)) | "
          f"{lam/H*(1-math.exp(-H/lam)):.4f} |")
    print(f"| mobilised wall friction sum|F_z|/sum|F_n| | {mu_mob:.4f} |")
    print(f"| integral sigma_xx dV / (L |F_x|), walls x | "
          f"{int_sxx/(L*0.5*(normal[0]+normal[1])):.4f} |")
    print(f"| integral sigma_yy dV / (L |F_y|), walls y | "
          f"{int_syy/(L*0.5*(normal[2]+normal[3])):.4f} |")
    print(f"| fit range (depth) | {depth[fit_sel].min()*1e3:.1f} to "
          f"{depth[fit_sel].max()*1e3:.1f} mm, {fit_sel.sum()} bins |")
    print(f"| sigma_inf (fit) | {s_inf:.2f} Pa |")
    print(f"| lambda (fit) | {lam*1e3:.2f} mm = {lam/L:.3f} L |")
    print(f"| rms residual of the fit | {rms:.2f} Pa ({rms/s_inf*100:.2f} % of sigma_inf) |")
    print(f"| sigma_inf / (rho_b g lambda) | {s_inf/(rho_b*G*lam):.4f} |")
    print(f"| deep sigma_zz / hydrostatic rho_b g depth (z = L..L+2dz) | "
          f"{deep/hydro:.4f} ({deep:.1f} / {hydro:.1f} Pa) |")
    print(f"| K from the fit, mu_w = {a.mu_wall} | {k_fit:.4f} |")
    print(f"| K from the fit, mobilised mu = {mu_mob:.3f} | {k_mob:.4f} |")
    print(f"| K measured, sigma_h/sigma_zz over the fit range | "
          f"{k_meas:.4f} +- {k_meas_sd:.4f} (sd over bins) |")
    for phi_deg in a.phi_deg:
        s = math.sin(math.radians(phi_deg))
        print(f"| Jaky K0 = 1 - sin phi, phi = {phi_deg} deg | {1-s:.4f} "
              f"(Rankine active {(1-s)/(1+s):.4f}, passive {(1+s)/(1-s):.4f}) |")
    print(f"| lambda implied by sigma_inf = rho_b g lambda | {lam_from_sinf*1e3:.2f} mm |")
    print()
    print("local mobilised wall friction tau_w/sigma_h (slice balance, 10 mm windows):")
    for lo_d in range(0, int(H * 1e3), 10):
        sel = (depth * 1e3 >= lo_d) & (depth * 1e3 < lo_d + 10) & (z > 2 * dz) & (depth > 2 * dz)
        if sel.any():
            print(f"  depth {lo_d:3d}-{lo_d+10:3d} mm: {np.mean(mu_local[sel]):+.3f}")

    if a.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        inside = depth > -dz
        fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(10.5, 4.2), sharey=True)
        dd = np.linspace(0.0, depth[inside].max(), 200)
        ax1.plot(szz[inside], depth[inside] * 1e3, "o", ms=3, label=r"$\sigma_{zz}$")
        ax1.plot(sh[inside], depth[inside] * 1e3, "s", ms=3,
                 label=r"$(\sigma_{xx}+\sigma_{yy})/2$")
        ax1.plot(janssen(dd, s_inf, lam), dd * 1e3, "-", color="C0",
                 label=rf"Janssen fit, $\lambda$={lam*1e3:.1f} mm")
        ax1.plot(rho_b * G * dd, dd * 1e3, "--", color="grey",
                 label=r"hydrostatic $\rho_b g\,$depth")
        ax1.axhspan(depth[fit_sel].min() * 1e3, depth[fit_sel].max() * 1e3,
                    color="C2", alpha=0.08, label="fit range")
        ax1.set_xlim(0, 1.6 * s_inf)
        ax1.set_xlabel("stress (Pa)")
        ax1.set_ylabel("depth below the surface (mm)")
        ax1.invert_yaxis()
        ax1.legend(fontsize=7, loc="lower left")
        ax2.plot(sh[inside] / szz[inside], depth[inside] * 1e3, "o", ms=3,
                 label=r"$\sigma_h/\sigma_{zz}$ measured")
        ax2.axvline(k_fit, color="C0", label=rf"K fit ($\mu_w$={a.mu_wall})")
        for phi_deg, ls in zip(a.phi_deg, [":", "--"]):
            ax2.axvline(1 - math.sin(math.radians(phi_deg)), color="k", ls=ls,
                        label=rf"Jaky $1-\sin\phi$, $\phi$={phi_deg:g}°")
        ax2.set_xlim(0, 1.5)
        ok = inside & (z > 3 * dz) & (depth > 2 * dz)
        ax3.plot(mu_local[ok], depth[ok] * 1e3, "o-", ms=3, lw=0.8,
                 label=r"$\tau_w/\sigma_h$ from the slice balance")
        ax3.axvline(a.mu_wall, color="k", ls="--", label=rf"$\mu_w$ = {a.mu_wall}")
        ax3.axvline(0, color="grey", lw=0.5)
        ax3.set_xlim(-0.6, 0.8)
        ax3.set_xlabel("mobilised wall friction")
        ax3.legend(fontsize=7, loc="lower left")
        ax2.set_xlabel("stress ratio K")
        ax2.legend(fontsize=7, loc="lower right")
        fig.suptitle(f"Square silo L = {L*1e3:.0f} mm, {n} beads, "
                     f"$\\mu_w$ = {a.mu_wall}", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.png, dpi=90)
        print(f"wrote {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
