"""Shared fixtures: synthetic gravel output files written with h5py, in the
layout docs/output.md describes."""

import os
import sys

import h5py
import numpy as np
import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

ROWS = 5
DT = 1e-4
STEPS = np.arange(ROWS) * 100.0
WALLS = ["floor", "lid"]
SCALARS = ["step", "time", "particles", "kinetic_energy", "rotational_energy",
           "potential_energy", "elastic_energy", "contacts", "max_overlap",
           "temperature", "rotational_temperature"]
UNITS = {"time": "s", "kinetic_energy": "J", "rotational_energy": "J",
         "potential_energy": "J", "elastic_energy": "J", "max_overlap": "1",
         "temperature": "J", "rotational_temperature": "J", "stress": "Pa",
         "stress_kinetic": "Pa", "stress_contact": "Pa", "wall_force": "N",
         "wall_torque": "N m"}
FRAME_IDS = {0: [3, 0, 2, 1], 200: [1, 3, 0, 2, 4]}
BINS = 4
GRID = {"x": 3, "y": 4, "z": 5}


def thermo_value(column):
    """The synthetic content of a thermo column: each entry distinct."""
    if column == "step":
        return STEPS.copy()
    if column == "time":
        return STEPS * DT
    k = (SCALARS + ["stress", "stress_kinetic", "stress_contact",
                    "wall_force", "wall_torque"]).index(column)
    if column.startswith("stress"):
        shape = (ROWS, 6)
    elif column.startswith("wall"):
        shape = (ROWS, len(WALLS), 3)
    else:
        shape = (ROWS,)
    return k * 1000.0 + np.arange(np.prod(shape), dtype=float).reshape(shape)


def _table(group, name, data, units=None):
    """A resizable chunked f64 dataset, first axis the rows."""
    data = np.asarray(data, dtype=float)
    ds = group.create_dataset(name, data=data, chunks=(16,) + data.shape[1:],
                              maxshape=(None,) + data.shape[1:])
    if units:
        ds.attrs["units"] = units
    return ds


def _fixed(group, name, data, units=None):
    """A dataset written once (not resizable)."""
    ds = group.create_dataset(name, data=np.asarray(data, dtype=float))
    if units:
        ds.attrs["units"] = units
    return ds


def cg_value(field, shape):
    """Synthetic coarse-grained field values: distinct and known."""
    return np.arange(np.prod(shape), dtype=float).reshape(shape) + len(field)


def write_gravel_file(path, walls=True, diagnostics=True):
    """Write a synthetic gravel output file at `path`; return `path`."""
    string = h5py.string_dtype("utf-8")
    with h5py.File(path, "w", track_order=True) as f:
        f.attrs["version"] = "0.1.0"
        f.attrs["config"] = "[run]\nname = \"synthetic\"\n"
        f.attrs.create("ranks", 1, dtype=np.uint32)
        f.attrs.create("threads", 2, dtype=np.uint32)
        f.create_dataset("materials", data=["glass", "steel"], dtype=string)
        if walls:
            f.create_dataset("walls", data=WALLS, dtype=string)
        frames = f.create_group("frames", track_order=True)
        for step, ids in sorted(FRAME_IDS.items(), reverse=True):
            g = frames.create_group(f"{step:09d}", track_order=True)
            g.attrs.create("step", step, dtype=np.uint64)
            g.attrs["time"] = step * DT
            ids = np.array(ids, dtype=np.uint64)
            g.create_dataset("id", data=ids)
            g.create_dataset("position", data=np.outer(ids, [1.0, 2.0, 3.0]))
            g.create_dataset("radius", data=1e-3 * (1 + ids))
            g.create_dataset("material", data=(ids % 2).astype(np.uint32))
            g.create_dataset("frozen", data=(ids == 0).astype(np.uint8))
            g.create_dataset("velocity", data=np.outer(ids, [-1.0, 0.0, 1.0]))
            g.create_dataset("omega", data=np.outer(ids, [0.0, 5.0, 0.0]))
        thermo = f.create_group("thermo", track_order=True)
        columns = SCALARS + ["stress", "stress_kinetic", "stress_contact"]
        if walls:
            columns += ["wall_force", "wall_torque"]
        for column in columns:
            _table(thermo, column, thermo_value(column), UNITS.get(column))
        if diagnostics:
            d = f.create_group("diagnostics", track_order=True)
            p = d.create_group("bed", track_order=True)
            p.attrs["kind"] = "profile"
            p.attrs["axis"] = "z"
            _table(p, "step", STEPS)
            _table(p, "time", STEPS * DT, "s")
            _table(p, "particles", np.ones((ROWS, BINS)))
            _table(p, "packing_fraction",
                   np.arange(ROWS * BINS, dtype=float).reshape(ROWS, BINS) / 100, "1")
            _table(p, "mean_velocity",
                   np.arange(ROWS * BINS * 3, dtype=float).reshape(ROWS, BINS, 3), "m/s")
            _table(p, "stress", np.zeros((ROWS, BINS, 6)), "Pa")
            edges = np.linspace(0.0, 0.004, BINS + 1)
            _fixed(p, "bin_centres", (edges[1:] + edges[:-1]) / 2, "m")
            _fixed(p, "bin_edges", edges, "m")
            for axes in ("z", "xyz"):
                g = d.create_group(f"cg_{axes}", track_order=True)
                g.attrs["kind"] = "coarse_grain"
                g.attrs["axes"] = axes
                g.attrs["kernel"] = "gaussian"
                _table(g, "step", STEPS)
                _table(g, "time", STEPS * DT, "s")
                grid = tuple(GRID[a] for a in axes)
                for field, tail, units in (("density", (), "kg/m^3"),
                                           ("velocity", (3,), "m/s"),
                                           ("momentum", (3,), "kg/(m^2 s)"),
                                           ("stress_kinetic", (6,), "Pa"),
                                           ("stress_contact", (6,), "Pa")):
                    _table(g, field, cg_value(field, (ROWS,) + grid + tail), units)
                for a in axes:
                    _fixed(g, a, np.linspace(0.0, 0.01, GRID[a]), "m")
            c = d.create_group("chains", track_order=True)
            c.attrs["kind"] = "contacts"
            _table(c, "step", STEPS)
            _table(c, "time", STEPS * DT, "s")
            counts = np.arange(ROWS, dtype=float)
            _table(c, "start", np.concatenate([[0.0], np.cumsum(counts)[:-1]]))
            _table(c, "count", counts)
            total = int(counts.sum())
            lst = c.create_group("list", track_order=True)
            lst.create_dataset("id", data=np.stack([np.arange(total), np.arange(total) + 1], axis=1))
            lst.create_dataset("wall", data=-np.ones(total, dtype=np.int64))
            lst.create_dataset("force_normal", data=np.arange(total, dtype=float)).attrs["units"] = "N"
    return path


@pytest.fixture
def gravel_file(tmp_path):
    """A synthetic gravel output with walls and diagnostics."""
    return str(write_gravel_file(tmp_path / "synthetic.h5"))


@pytest.fixture
def plain_file(tmp_path):
    """A synthetic gravel output without walls or diagnostics."""
    return str(write_gravel_file(tmp_path / "plain.h5", walls=False, diagnostics=False))


@pytest.fixture
def not_gravel_file(tmp_path):
    """An HDF5 file that is not a gravel output."""
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=np.arange(3))
        f.attrs["creator"] = "someone else"
    return str(path)
