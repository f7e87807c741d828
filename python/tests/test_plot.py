"""Every plot function writes a PNG; bad requests are refused."""

import pytest

from gravelpost import open_run
from gravelpost import plot

PNG = b"\x89PNG\r\n\x1a\n"


def assert_png(path, expected):
    """`path` is `expected` and holds a non-empty PNG image."""
    assert str(path) == str(expected)
    data = open(path, "rb").read()
    assert data.startswith(PNG) and len(data) > 1000


def test_plot_thermo_scalar_and_shaped_columns(gravel_file, tmp_path):
    run = open_run(gravel_file)
    out = tmp_path / "figs" / "thermo.png"
    path = plot.plot_thermo(run, ["kinetic_energy", "stress", "wall_force"], out)
    assert_png(path, out)


def test_plot_thermo_needs_columns(gravel_file, tmp_path):
    with pytest.raises(ValueError):
        plot.plot_thermo(open_run(gravel_file), [], tmp_path / "x.png")


def test_plot_wall_forces_and_stress(gravel_file, tmp_path):
    run = open_run(gravel_file)
    assert_png(plot.plot_wall_forces(run, tmp_path / "walls.png"), tmp_path / "walls.png")
    assert_png(plot.plot_stress(run, tmp_path / "stress.png"), tmp_path / "stress.png")


def test_plot_wall_forces_without_walls(plain_file, tmp_path):
    with pytest.raises(ValueError, match="no walls"):
        plot.plot_wall_forces(open_run(plain_file), tmp_path / "walls.png")


@pytest.mark.parametrize("quantity, kwargs", [
    ("packing_fraction", {}),
    ("packing_fraction", {"average": 3}),
    ("mean_velocity", {}),
    ("mean_velocity", {"component": "z"}),
    ("stress", {"component": "xy", "average": 2}),
])
def test_plot_profile(gravel_file, tmp_path, quantity, kwargs):
    out = tmp_path / f"profile_{quantity}.png"
    run = open_run(gravel_file)
    assert_png(plot.plot_profile(run, "bed", quantity, out, **kwargs), out)


def test_plot_profile_refuses_other_kinds_and_bad_components(gravel_file, tmp_path):
    run = open_run(gravel_file)
    with pytest.raises(ValueError, match="coarse_grain"):
        plot.plot_profile(run, "cg_z", "density", tmp_path / "x.png")
    with pytest.raises(ValueError, match="component"):
        plot.plot_profile(run, "bed", "mean_velocity", tmp_path / "x.png", component="q")
    with pytest.raises(KeyError):
        plot.plot_profile(run, "absent", "density", tmp_path / "x.png")


@pytest.mark.parametrize("name", ["cg_z", "cg_xyz"])
@pytest.mark.parametrize("field, component", [
    ("density", None), ("velocity", None), ("velocity", "z"), ("stress_contact", "zz"),
])
def test_plot_coarse_grain(gravel_file, tmp_path, name, field, component):
    out = tmp_path / f"{name}_{field}.png"
    run = open_run(gravel_file)
    assert_png(plot.plot_coarse_grain(run, name, field, out, component=component), out)
