"""gravelpost on the real binary's output: a settled bed weighs on its floor."""

import math
import os
import subprocess

import pytest

from conftest import REPO
from gravelpost import open_run
from gravelpost import plot

CONFIG = """
[run]
name = "bed"
dt = 1e-5
steps = {steps}
seed = 1
gravity = [0.0, 0.0, -9.81]

[domain]
lo = [0.0, 0.0, 0.0]
hi = [0.01, 0.01, 0.03]
periodic = [true, true, false]

[[material]]
name = "glass"
density = 2500.0
youngs_modulus = 5.0e6
poisson_ratio = 0.3

[contact]
normal = {{ model = "hertz", restitution = 0.2 }}
tangential = {{ model = "spring_slider", friction = 0.5, mindlin = true }}

[[wall]]
name = "floor"
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[particles]]
kind = "random"
material = "glass"
radius = {radius}
count = {count}
region = {{ lo = [0.0, 0.0, 0.0], hi = [0.01, 0.01, 0.03] }}

[output]
every = 0
thermo_every = 1000
"""

# 0.4 s: at 0.2 s (20,000 steps) the 20 beads still rattle and the floor's
# force is off the weight by a few per cent; at 0.4 s they are at rest.
STEPS = 40_000
COUNT = 20
RADIUS = 1e-3


def gravel_binary():
    """The debug binary, built first if it is missing."""
    binary = os.path.join(REPO, "target", "debug", "gravel")
    if not os.path.exists(binary):
        subprocess.run(["cargo", "build", "--quiet"], cwd=REPO, check=True)
    return binary


@pytest.fixture(scope="module")
def bed_run(tmp_path_factory):
    """Run the real binary on a bed of 20 beads; return the opened output."""
    folder = tmp_path_factory.mktemp("bed")
    config = folder / "cfg.toml"
    config.write_text(CONFIG.format(steps=STEPS, radius=RADIUS, count=COUNT))
    out = folder / "out"
    subprocess.run([gravel_binary(), "run", str(config), "--quiet", "--out", str(out)],
                   check=True, timeout=300)
    return open_run(str(out / "bed.h5"))


def test_the_floor_carries_the_weight(bed_run):
    run = bed_run
    assert run.walls == ["floor"]
    assert run.materials == ["glass"]
    assert run.thermo["step"][-1] == STEPS
    assert run.thermo["wall_force"].shape == (STEPS // 1000 + 1, 1, 3)
    last = run.frame(run.frame_steps()[-1])
    assert len(last["id"]) == COUNT
    mass = 2500.0 * 4.0 / 3.0 * math.pi * RADIUS**3
    weight = COUNT * mass * 9.81
    floor = run.thermo["wall_force"][-1, 0, 2]
    assert floor < 0
    assert abs(-floor - weight) < 0.01 * weight, (floor, weight)


def test_plots_of_a_real_run(bed_run, tmp_path):
    for path in (plot.plot_wall_forces(bed_run, tmp_path / "walls.png"),
                 plot.plot_stress(bed_run, tmp_path / "stress.png")):
        assert os.path.getsize(path) > 1000
