"""The reader against synthetic files whose content is known."""

import h5py
import numpy as np
import pytest

from conftest import (BINS, DT, FRAME_IDS, GRID, ROWS, SCALARS, STEPS, UNITS,
                      WALLS, cg_value, thermo_value)
from gravelpost import NotGravelOutput, open_run, time_average


def test_root_attributes_and_names(gravel_file):
    run = open_run(gravel_file)
    assert run.version == "0.1.0"
    assert run.config.startswith("[run]")
    assert (run.ranks, run.threads) == (1, 2)
    assert run.materials == ["glass", "steel"]
    assert run.walls == WALLS


def test_walls_absent_give_an_empty_list(plain_file):
    run = open_run(plain_file)
    assert run.walls == []
    assert "wall_force" not in run.thermo
    assert run.diagnostics == {}


def test_thermo_columns_in_creation_order_with_shapes_and_values(gravel_file):
    run = open_run(gravel_file)
    expected = SCALARS + ["stress", "stress_kinetic", "stress_contact",
                          "wall_force", "wall_torque"]
    # Creation order, which is not name order: 'step' before 'contacts'.
    assert list(run.thermo) == expected
    assert expected != sorted(expected)
    for column in SCALARS:
        assert run.thermo[column].shape == (ROWS,)
    for column in ("stress", "stress_kinetic", "stress_contact"):
        assert run.thermo[column].shape == (ROWS, 6)
    for column in ("wall_force", "wall_torque"):
        assert run.thermo[column].shape == (ROWS, len(WALLS), 3)
    for column in expected:
        np.testing.assert_array_equal(run.thermo[column], thermo_value(column))
    np.testing.assert_allclose(run.thermo["time"], STEPS * DT)


def test_thermo_units(gravel_file):
    run = open_run(gravel_file)
    for column in run.thermo:
        assert run.units(column) == UNITS.get(column)
    assert run.units("step") is None
    assert run.units("no_such_column") is None


def test_untracked_groups_fall_back_to_name_order(tmp_path):
    path = tmp_path / "untracked.h5"
    with h5py.File(path, "w") as f:
        f.attrs["version"] = "0.1.0"
        g = f.create_group("thermo")  # no creation order tracked
        for column in ("time", "step", "kinetic_energy"):
            g.create_dataset(column, data=np.zeros(2), maxshape=(None,), chunks=(4,))
    run = open_run(str(path))
    assert list(run.thermo) == ["kinetic_energy", "step", "time"]


def test_frames_sorted_by_step_and_rows_by_id(gravel_file):
    run = open_run(gravel_file)
    assert run.frame_steps() == sorted(FRAME_IDS)
    for step, ids in FRAME_IDS.items():
        frame = run.frame(step)
        n = len(ids)
        assert frame["step"] == step
        assert frame["time"] == pytest.approx(step * DT)
        np.testing.assert_array_equal(frame["id"], np.arange(n))
        ids = np.arange(n, dtype=float)
        # Every per-particle array moved with its id.
        np.testing.assert_array_equal(frame["position"], np.outer(ids, [1, 2, 3]))
        np.testing.assert_array_equal(frame["velocity"], np.outer(ids, [-1, 0, 1]))
        np.testing.assert_array_equal(frame["omega"], np.outer(ids, [0, 5, 0]))
        np.testing.assert_allclose(frame["radius"], 1e-3 * (1 + ids))
        np.testing.assert_array_equal(frame["material"], np.arange(n) % 2)
        np.testing.assert_array_equal(frame["frozen"], np.arange(n) == 0)
        assert frame["position"].shape == (n, 3)


def test_missing_frame_is_a_key_error(gravel_file):
    with pytest.raises(KeyError):
        open_run(gravel_file).frame(100)


def test_profile_table_and_fixed_split(gravel_file):
    diag = open_run(gravel_file).diagnostics["bed"]
    assert diag.kind == "profile"
    assert diag.attrs["axis"] == "z"
    assert list(diag.table) == ["step", "time", "particles", "packing_fraction",
                                "mean_velocity", "stress"]
    assert sorted(diag.fixed) == ["bin_centres", "bin_edges"]
    assert diag.rows == ROWS
    assert diag.table["packing_fraction"].shape == (ROWS, BINS)
    assert diag.table["mean_velocity"].shape == (ROWS, BINS, 3)
    assert diag.table["stress"].shape == (ROWS, BINS, 6)
    assert diag.fixed["bin_centres"].shape == (BINS,)
    assert diag.fixed["bin_edges"].shape == (BINS + 1,)
    np.testing.assert_array_equal(diag.table["step"], STEPS)
    assert diag.units("packing_fraction") == "1"
    assert diag.units("mean_velocity") == "m/s"
    assert diag.units("bin_centres") == "m"
    assert diag.units("step") is None


@pytest.mark.parametrize("axes", ["z", "xyz"])
def test_coarse_grain_diagnostics(gravel_file, axes):
    diag = open_run(gravel_file).diagnostics[f"cg_{axes}"]
    assert diag.kind == "coarse_grain"
    assert diag.attrs["axes"] == axes
    assert diag.attrs["kernel"] == "gaussian"
    assert list(diag.table) == ["step", "time", "density", "velocity", "momentum",
                                "stress_kinetic", "stress_contact"]
    assert list(diag.fixed) == list(axes)
    grid = tuple(GRID[a] for a in axes)
    assert diag.table["density"].shape == (ROWS,) + grid
    assert diag.table["velocity"].shape == (ROWS,) + grid + (3,)
    assert diag.table["stress_contact"].shape == (ROWS,) + grid + (6,)
    np.testing.assert_array_equal(diag.table["velocity"],
                                  cg_value("velocity", (ROWS,) + grid + (3,)))
    assert diag.units("density") == "kg/m^3"


def test_contact_lists_slice_by_row(gravel_file):
    diag = open_run(gravel_file).diagnostics["chains"]
    assert diag.kind == "contacts"
    assert diag.rows == ROWS
    assert list(diag.contacts) == ["id", "wall", "force_normal"]
    assert diag.units("force_normal") == "N"
    seen = 0
    for row in range(ROWS):
        at = diag.contacts_at(row)
        assert len(at["id"]) == row
        np.testing.assert_array_equal(at["force_normal"], np.arange(seen, seen + row))
        seen += row
    np.testing.assert_array_equal(diag.contacts_at(-1)["id"], diag.contacts_at(ROWS - 1)["id"])


def test_time_average():
    a = np.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(time_average(a, 1), a[-1])
    np.testing.assert_array_equal(time_average(a, 2), [7.0, 8.0])
    np.testing.assert_array_equal(time_average(a, 50), a.mean(axis=0))
    with pytest.raises(ValueError):
        time_average(a, 0)


def test_not_gravel_and_missing_files(not_gravel_file, tmp_path):
    with pytest.raises(NotGravelOutput, match="other.h5"):
        open_run(not_gravel_file)
    text = tmp_path / "notes.txt"
    text.write_text("not HDF5")
    with pytest.raises(NotGravelOutput, match="notes.txt"):
        open_run(str(text))
    with pytest.raises(FileNotFoundError, match="absent.h5"):
        open_run(str(tmp_path / "absent.h5"))
