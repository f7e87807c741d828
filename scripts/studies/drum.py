#!/usr/bin/env python3
"""Rotating-drum study: the dynamic angle of repose of the free surface.

    python scripts/studies/drum.py --sweep DIR        # write the sweep's configs
    PYTHONPATH=python python scripts/studies/drum.py RUN.h5 [RUN.h5 ...]
        [--png FIG.png] [--turn 1.3]

--sweep writes DIR/drum_mur<mu_r>_fr<Fr>.toml from the template
configs/studies/drum.toml, changing only the rolling friction mu_r (both
contact slots), the drum's angular velocity omega (Fr = omega^2 R / g) and the
run's length (0.3 s, the beads being poured in the first 0.2 s, plus 2.5 rad
of the drum's turn), and
prints one `gravel run` command per config.

For each run (read with gravelpost) it measures, in every frame after the
drum has turned --turn radians (the bed has then reached its steady rolling
state), up to the sweep's end, 0.3 s + 2.5 rad / omega:

- the surface angle: the beads whose centre lies in the middle of the drum,
  |x| < R/2, are cut into slices 3 mm wide along x; the highest point z + r
  of each slice is the free surface there, and a least-squares line through
  them gives the angle atan(|slope|);
- the angle of the bed's principal axis (the major axis of the covariance of
  the bead centres in the x-z plane): for a bed whose free surface is flat,
  a circular segment, it is parallel to the chord, so it is a second,
  independent measure of the same angle;
- the bed's mean rotation rate about the axis over the drum's,
  sum m (z v_x - x v_z) / (Omega sum m (x^2 + z^2)): about 1 when the bed
  turns with the drum, well below 1 if it slips.

It prints one table row per run (mean and standard deviation over frames)
and draws the angle against mu_r and against Fr.
"""

import argparse
import math
import os
import re
import sys
import tomllib

import numpy as np

G = 9.81
TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "studies", "drum.toml")
MU_R = [0.0, 0.05, 0.1, 0.2, 0.4]  # at FR0
FR = [1e-3, 3e-3, 1e-2, 3e-2]  # at MU_R0
MU_R0, FR0 = 0.1, 3e-3
FILL_TIME, TURN = 0.3, 2.5


def sweep(out_dir):
    text = open(TEMPLATE).read()
    radius = tomllib.loads(text)["wall"][0]["radius"]
    os.makedirs(out_dir, exist_ok=True)
    runs = [(m, FR0) for m in MU_R] + [(MU_R0, f) for f in FR if f != FR0]
    for mu_r, fr in runs:
        omega = math.sqrt(fr * G / radius)
        name = f"drum_mur{mu_r:g}_fr{fr:g}"
        t = text
        t = re.sub(r'(?m)^name = "drum"', f'name = "{name}"', t, count=1)
        t = re.sub(r"(?m)^time = .*$",
                   f"time = {FILL_TIME + TURN / omega:.4f}  # s: {FILL_TIME} s, then "
                   f"{TURN} rad more of the drum's turn", t, count=1)
        t = re.sub(r"(?m)^angular_velocity = .*$",
                   f"angular_velocity = {omega:.6f}  # rad/s: Fr = omega^2 R / g = {fr:g}", t)
        t = re.sub(r'(model = "epsd", friction = )[0-9.eE+-]+', rf"\g<1>{mu_r!r}", t)
        path = os.path.join(out_dir, name + ".toml")
        with open(path, "w") as f:
            f.write(t)
        print(f"target/release/gravel run {path} --out {out_dir} --threads 1 --overwrite")


def surface_angle(x, z, r, radius, width):
    sel = np.abs(x) < 0.5 * radius
    x, top = x[sel], z[sel] + r[sel]
    idx = np.floor((x + 0.5 * radius) / width).astype(int)
    xs, hs = [], []
    for b in np.unique(idx):
        k = idx == b
        j = np.argmax(top[k])
        xs.append(x[k][j])
        hs.append(top[k][j])
    slope, intercept = np.polyfit(xs, hs, 1)
    return math.degrees(math.atan(-slope)), intercept


def axis_angle(x, z):
    c = np.cov(np.vstack([x, z]))
    w, v = np.linalg.eigh(c)
    ex, ez = v[:, np.argmax(w)]
    a = math.degrees(math.atan2(ez, ex))
    # the major axis as a line: fold into (-90, 90], then the rise to -x is positive
    if a > 90:
        a -= 180
    if a <= -90:
        a += 180
    return -a


def measure(path, turn, width):
    from gravelpost import open_run

    run = open_run(path)
    cfg = tomllib.loads(run.config)
    wall = cfg["wall"][0]
    radius, omega = wall["radius"], wall["angular_velocity"]
    mu_r = cfg["contact"]["rolling"]["friction"]
    density = cfg["material"][0]["density"]
    surf, axis, rot, times = [], [], [], []
    for step in run.frame_steps():
        fr = run.frame(step)
        t = fr["time"]
        if omega * t < turn or len(fr["radius"]) == 0:
            continue
        if t > FILL_TIME + TURN / omega + 1e-9:
            continue  # a longer run: measure the sweep's window only
        p, r = fr["position"], fr["radius"]
        x, z = p[:, 0], p[:, 2]
        angle, intercept = surface_angle(x, z, r, radius, width)
        surf.append(angle)
        axis.append(axis_angle(x, z))
        if "velocity" in fr:
            v = fr["velocity"]
            m = r**3 * density
            rot.append(float((m * (z * v[:, 0] - x * v[:, 2])).sum()
                             / (omega * (m * (x * x + z * z)).sum())))
        times.append(t)
        last = fr  # the last frame measured
    return dict(
        path=path, mu_r=mu_r, omega=omega, fr=omega**2 * radius / G, radius=radius,
        n=len(last["radius"]), d=float(2 * last["radius"].mean()),
        surf=np.array(surf), axis=np.array(axis), rot=np.array(rot),
        frames=len(times), t0=min(times) if times else float("nan"),
        t1=max(times) if times else float("nan"), last=last, intercept=intercept,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--sweep", metavar="DIR", help="write the sweep's configs into DIR")
    ap.add_argument("--png", help="write the figure here")
    ap.add_argument("--turn", type=float, default=1.3,
                    help="measure after the drum has turned this many radians")
    ap.add_argument("--width", type=float, default=0.003, help="slice width (m)")
    a = ap.parse_args()
    if a.sweep:
        sweep(a.sweep)
        return 0
    res = [measure(f, a.turn, a.width) for f in a.files]
    res.sort(key=lambda q: (q["fr"], q["mu_r"]))
    print("| run | mu_r | omega (rad/s) | Fr | beads | frames (t) | surface angle (deg) "
          "| principal-axis angle (deg) | bed rotation / drum |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for q in res:
        print(f"| {os.path.basename(q['path'])} | {q['mu_r']:g} | {q['omega']:.4f} "
              f"| {q['fr']:.2g} | {q['n']} | {q['frames']} ({q['t0']:.2f}-{q['t1']:.2f} s) "
              f"| {q['surf'].mean():.1f} +- {q['surf'].std():.1f} "
              f"| {q['axis'].mean():.1f} +- {q['axis'].std():.1f} "
              f"| {q['rot'].mean():.3f} |" if len(q["rot"]) else "| - |")
    if a.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axs = plt.subplots(1, 3, figsize=(11.0, 3.6))
        by_mu = [q for q in res if math.isclose(q["fr"], FR0, rel_tol=0.02)]
        by_fr = [q for q in res if math.isclose(q["mu_r"], MU_R0)]
        for ax, group, key, label in [
            (axs[0], by_mu, "mu_r", r"rolling friction $\mu_r$"),
            (axs[1], by_fr, "fr", r"Froude number $\omega^2R/g$"),
        ]:
            if not group:
                continue
            group = sorted(group, key=lambda q: q[key])
            xs = [q[key] for q in group]
            ax.errorbar(xs, [q["surf"].mean() for q in group],
                        yerr=[q["surf"].std() for q in group], fmt="o-", ms=4,
                        capsize=3, label="free surface (fit)")
            ax.errorbar(xs, [q["axis"].mean() for q in group],
                        yerr=[q["axis"].std() for q in group], fmt="s--", ms=4,
                        capsize=3, label="principal axis")
            ax.set_xlabel(label)
            ax.set_ylabel("dynamic angle (deg)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        axs[0].set_title(f"Fr = {FR0:g}", fontsize=9)
        axs[1].set_title(rf"$\mu_r$ = {MU_R0:g}", fontsize=9)
        axs[1].set_xscale("log")
        ref = next((q for q in res if math.isclose(q["fr"], FR0, rel_tol=0.02)
                    and math.isclose(q["mu_r"], MU_R0)), res[0])
        last = ref["last"]
        p = last["position"]
        axs[2].scatter(p[:, 0] * 1e3, p[:, 2] * 1e3, s=2, c="C0")
        th = np.linspace(0, 2 * math.pi, 200)
        R = ref["radius"] * 1e3
        axs[2].plot(R * np.cos(th), R * np.sin(th), "k-", lw=0.8)
        ang = math.radians(ref["surf"][-1])
        xx = np.array([-0.5, 0.5]) * R
        axs[2].plot(xx, ref["intercept"] * 1e3 - np.tan(ang) * xx, "r-", lw=1.2,
                    label=f"surface {ref['surf'][-1]:.1f}°")
        axs[2].set_aspect("equal")
        axs[2].set_xlabel("x (mm)")
        axs[2].set_ylabel("z (mm)")
        axs[2].legend(fontsize=7, loc="upper right")
        axs[2].set_title(rf"last frame measured, $\mu_r$ = {ref['mu_r']:g}, "
                         rf"Fr = {ref['fr']:.2g}, t = {ref['t1']:.2f} s",
                         fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png, dpi=90)
        print(f"wrote {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
