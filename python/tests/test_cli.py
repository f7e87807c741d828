"""`python -m gravelpost summary|plot` as a user runs it."""

import os
import subprocess
import sys

from conftest import PYTHON_DIR


def gravelpost(*args):
    """Run the command line in a child process; return the completed process."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "gravelpost", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=60)


def test_summary_names_everything(gravel_file):
    done = gravelpost("summary", gravel_file)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert gravel_file in out
    for name in ("kinetic_energy", "stress_contact", "wall_torque", "floor", "lid",
                 "glass", "steel", "bed", "profile", "cg_xyz", "coarse_grain"):
        assert name in out, name
    assert "frames: 2" in out
    assert "5 rows" in out
    assert "steps: 0 to 400" in out


def test_plot_writes_every_png(gravel_file, tmp_path):
    out = tmp_path / "pngs"
    done = gravelpost("plot", gravel_file, "--out", out)
    assert done.returncode == 0, done.stderr
    paths = done.stdout.split()
    names = {os.path.basename(p) for p in paths}
    for expected in ("synthetic_energies.png", "synthetic_stress.png",
                     "synthetic_wall_forces.png", "synthetic_bed_packing_fraction.png",
                     "synthetic_cg_z_density.png", "synthetic_cg_xyz_velocity.png"):
        assert expected in names
    for p in paths:
        assert os.path.getsize(p) > 0
    assert sorted(os.listdir(out)) == sorted(names)


def test_plot_without_walls_skips_wall_forces(plain_file, tmp_path):
    done = gravelpost("plot", plain_file, "--out", tmp_path / "pngs")
    assert done.returncode == 0, done.stderr
    names = {os.path.basename(p) for p in done.stdout.split()}
    assert names == {"plain_energies.png", "plain_stress.png"}


def test_not_gravel_file_exits_2_naming_it(not_gravel_file):
    for command in ("summary", "plot"):
        done = gravelpost(command, not_gravel_file)
        assert done.returncode == 2
        assert not_gravel_file in done.stderr
        assert "Traceback" not in done.stderr


def test_missing_file_exits_2_naming_it(tmp_path):
    missing = str(tmp_path / "missing.h5")
    done = gravelpost("summary", missing)
    assert done.returncode == 2
    assert missing in done.stderr
