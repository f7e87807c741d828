"""Read a gravel HDF5 output file (layout in docs/output.md) into numpy arrays."""

from __future__ import annotations

import os

import h5py
import numpy as np


class NotGravelOutput(ValueError):
    """Raised when a file is HDF5 but carries neither gravel's root
    attribute `version` nor a `/thermo` group."""


def _text(value):
    """A string attribute or dataset element as `str` (h5py may give bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return value if isinstance(value, str) else str(value)


def _ordered_names(group):
    """The names of `group`'s members in creation order where the file tracks
    it (gravel's files do), in name order otherwise."""
    plist = group.id.get_create_plist()
    if plist.get_link_creation_order() & h5py.h5p.CRT_ORDER_TRACKED:
        names = []

        def collect(name):
            names.append(name.decode("utf-8"))

        group.id.links.iterate(collect, idx_type=h5py.h5.INDEX_CRT_ORDER)
        return names
    return sorted(group.keys())


def _strings(f, name):
    """A 1-D string dataset as a list of `str`; an empty list when absent."""
    if name not in f:
        return []
    return [_text(v) for v in f[name][()]]


def _units(obj):
    """The `units` string attribute of an HDF5 object, or None."""
    if "units" in obj.attrs:
        return _text(obj.attrs["units"])
    return None


def time_average(array, rows):
    """The mean of `array` over its last `rows` rows (first axis).

    `rows` larger than the number of rows averages over all of them."""
    array = np.asarray(array)
    if rows < 1:
        raise ValueError(f"time_average: rows must be at least 1, got {rows}")
    return array[-rows:].mean(axis=0)


class Diagnostic:
    """One `/diagnostics/<name>` group, read whole.

    Attributes: `name`, `kind` (the group's `kind` attribute), `attrs` (all
    its string attributes), `table` (column name -> array: the resizable
    datasets, first axis the rows, in creation order, `step` and `time`
    first), `fixed` (name -> array: the datasets written once, such as
    `bin_centres` or grid coordinates), and for a `contacts` list `contacts`
    (name -> array over every row's contacts one after the other: `id`,
    `wall`, `point`, `normal`, `overlap`, `force_normal`,
    `force_tangential`; see `contacts_at`)."""

    def __init__(self, name, group):
        self.name = name
        self.attrs = {}
        for key, value in group.attrs.items():
            if isinstance(value, (str, bytes)):
                self.attrs[key] = _text(value)
        self.kind = self.attrs.get("kind")
        self.table = {}
        self.fixed = {}
        self.contacts = {}
        self._units = {}
        for key in _ordered_names(group):
            ds = group[key]
            if key == "list" and isinstance(ds, h5py.Group):
                for name in _ordered_names(ds):
                    self.contacts[name] = ds[name][()]
                    self._units[name] = _units(ds[name])
                continue
            if not isinstance(ds, h5py.Dataset):
                continue
            resizable = ds.chunks is not None and ds.maxshape and ds.maxshape[0] is None
            (self.table if resizable else self.fixed)[key] = ds[()]
            self._units[key] = _units(ds)

    @property
    def rows(self):
        """Number of rows of the table."""
        return len(self.table["step"]) if "step" in self.table else 0

    def contacts_at(self, row):
        """The contacts of row `row` of a `contacts` list (negative counts
        from the end): name -> array, as `contacts`."""
        row = range(self.rows)[row]
        start = int(self.table["start"][row])
        count = int(self.table["count"][row])
        return {name: values[start:start + count] for name, values in self.contacts.items()}

    def units(self, name):
        """The `units` attribute of dataset `name` (table or fixed), or None."""
        return self._units.get(name)

    def __repr__(self):
        return f"Diagnostic({self.name!r}, kind={self.kind!r}, rows={self.rows})"


class Run:
    """A gravel output file. Root attributes, names, the thermo table and the
    diagnostics are read when the run is opened; frames when asked for."""

    def __init__(self, path):
        self.path = os.fspath(path)
        try:
            f = self._open()
        except OSError as err:
            raise NotGravelOutput(f"{self.path}: not an HDF5 file ({err})") from err
        with f:
            if "version" not in f.attrs and "thermo" not in f:
                raise NotGravelOutput(
                    f"{self.path}: not a gravel output file "
                    "(no root attribute 'version' and no /thermo group)"
                )
            self.version = _text(f.attrs["version"]) if "version" in f.attrs else None
            self.config = _text(f.attrs["config"]) if "config" in f.attrs else None
            self.ranks = int(f.attrs["ranks"]) if "ranks" in f.attrs else None
            self.threads = int(f.attrs["threads"]) if "threads" in f.attrs else None
            self.materials = _strings(f, "materials")
            self.walls = _strings(f, "walls")
            self.thermo = {}
            self._thermo_units = {}
            if "thermo" in f:
                group = f["thermo"]
                for key in _ordered_names(group):
                    self.thermo[key] = group[key][()]
                    self._thermo_units[key] = _units(group[key])
            self.diagnostics = {}
            if "diagnostics" in f:
                group = f["diagnostics"]
                for key in _ordered_names(group):
                    if isinstance(group[key], h5py.Group):
                        self.diagnostics[key] = Diagnostic(key, group[key])
            self._frames = {}
            if "frames" in f:
                for key in f["frames"]:
                    self._frames[int(key)] = key

    def _open(self):
        """Open the file read-only, without HDF5's file lock (as gravel does)."""
        return h5py.File(self.path, "r", locking=False)

    def units(self, column):
        """The `units` attribute of thermo column `column`, or None."""
        return self._thermo_units.get(column)

    def frame_steps(self):
        """The steps of the stored frames, sorted."""
        return sorted(self._frames)

    def frame(self, step):
        """The frame at `step` as a dict of arrays, rows sorted by `id`, with
        `step` and `time` from the group's attributes."""
        step = int(step)
        if step not in self._frames:
            raise KeyError(f"{self.path}: no frame at step {step}")
        with self._open() as f:
            group = f["frames"][self._frames[step]]
            data = {key: group[key][()] for key in _ordered_names(group)}
            order = np.argsort(data["id"], kind="stable")
            n = len(order)
            for key, value in data.items():
                if value.ndim >= 1 and value.shape[0] == n:
                    data[key] = value[order]
            data["step"] = int(group.attrs["step"])
            data["time"] = float(group.attrs["time"])
        return data

    def __repr__(self):
        rows = len(self.thermo.get("step", ()))
        return f"Run({self.path!r}, thermo rows={rows}, frames={len(self._frames)})"


def open_run(path):
    """Open gravel output file `path` and return a `Run`.

    Raises FileNotFoundError for a missing file and NotGravelOutput for an
    HDF5 file that is not gravel's."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    return Run(path)
