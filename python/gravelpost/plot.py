"""Plots of a gravel run, written to PNG files with matplotlib's Agg backend."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .read import time_average  # noqa: E402

STRESS = ("xx", "yy", "zz", "xy", "xz", "yz")
VECTOR = ("x", "y", "z")


def _label(name, units):
    """An axis label: `name [units]`, or `name` when there is no unit."""
    return f"{name} [{units}]" if units else name


def _component_names(count):
    """Names of the components of a trailing axis of length `count`."""
    if count == 6:
        return STRESS
    if count == 3:
        return VECTOR
    return tuple(str(k) for k in range(count))


def _component_index(component, count):
    """The index of `component` (an int or a name such as 'z' or 'xy')."""
    if isinstance(component, str):
        names = _component_names(count)
        if component not in names:
            raise ValueError(f"component {component!r} is not one of {names}")
        return names.index(component)
    return int(component)


def _save(fig, out):
    """Write `fig` to `out` (creating its folder), close it, return `out`."""
    out = os.fspath(out)
    folder = os.path.dirname(out)
    if folder:
        os.makedirs(folder, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _lines(run, column):
    """The thermo column `column` as a list of (label, values) lines: one
    for a scalar column, one per component (and wall) otherwise."""
    data = run.thermo[column]
    if data.ndim == 1:
        return [(column, data)]
    if data.ndim == 3 and data.shape[1] == len(run.walls):
        return [
            (f"{wall} {c}", data[:, w, k])
            for w, wall in enumerate(run.walls)
            for k, c in enumerate(_component_names(data.shape[2]))
        ]
    flat = data.reshape(data.shape[0], -1)
    names = _component_names(flat.shape[1])
    return [(f"{column} {names[k]}", flat[:, k]) for k in range(flat.shape[1])]


def plot_thermo(run, columns, out):
    """Plot the thermo `columns` against time, one panel per column (one line
    per component for a tensor or per-wall column); write a PNG to `out` and
    return its path."""
    columns = list(columns)
    if not columns:
        raise ValueError("plot_thermo: no columns to plot")
    time = run.thermo["time"]
    fig, axes = plt.subplots(len(columns), 1, sharex=True, squeeze=False,
                             figsize=(7, 2.2 * len(columns) + 0.8))
    for ax, column in zip(axes[:, 0], columns):
        lines = _lines(run, column)
        for label, values in lines:
            ax.plot(time, values, label=label)
        ax.set_ylabel(_label(column, run.units(column)))
        if len(lines) > 1:
            ax.legend(fontsize="small", ncol=3)
    axes[-1, 0].set_xlabel(_label("time", run.units("time")))
    return _save(fig, out)


def plot_wall_forces(run, out):
    """Plot the three components of each wall's force (thermo `wall_force`)
    against time, one panel per wall named by `run.walls`; return the path."""
    if "wall_force" not in run.thermo or not run.walls:
        raise ValueError(f"{run.path}: no walls, so no wall forces")
    time = run.thermo["time"]
    force = run.thermo["wall_force"]
    units = run.units("wall_force")
    fig, axes = plt.subplots(len(run.walls), 1, sharex=True, squeeze=False,
                             figsize=(7, 2.2 * len(run.walls) + 0.8))
    for w, (ax, wall) in enumerate(zip(axes[:, 0], run.walls)):
        for k, c in enumerate(VECTOR):
            ax.plot(time, force[:, w, k], label=f"F{c}")
        ax.set_title(wall)
        ax.set_ylabel(_label("force", units))
        ax.legend(fontsize="small", ncol=3)
    axes[-1, 0].set_xlabel(_label("time", run.units("time")))
    return _save(fig, out)


def plot_stress(run, out):
    """Plot the six components of the thermo `stress` against time; return
    the path."""
    if "stress" not in run.thermo:
        raise ValueError(f"{run.path}: no thermo column 'stress'")
    time = run.thermo["time"]
    stress = run.thermo["stress"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, c in enumerate(STRESS):
        ax.plot(time, stress[:, k], label=c)
    ax.set_xlabel(_label("time", run.units("time")))
    ax.set_ylabel(_label("stress", run.units("stress")))
    ax.legend(fontsize="small", ncol=3)
    return _save(fig, out)


def _diagnostic(run, name, kind):
    """The diagnostic `name` of `run`, checked to be of `kind`."""
    if name not in run.diagnostics:
        raise KeyError(f"{run.path}: no diagnostic {name!r}")
    diag = run.diagnostics[name]
    if diag.kind != kind:
        raise ValueError(f"diagnostic {name!r} is of kind {diag.kind!r}, not {kind!r}")
    return diag


def _row(values, average):
    """The last row of `values`, or the mean of its last `average` rows."""
    return values[-1] if average is None else time_average(values, average)


def plot_profile(run, name, quantity, out, average=None, component=None):
    """Plot `quantity` of the `profile` diagnostic `name` against its bin
    centres: the last row, or the mean of the last `average` rows. For a
    vector or tensor quantity, `component` (index or name, e.g. 'z', 'xy')
    picks one component; by default every one is drawn. Returns the path."""
    diag = _diagnostic(run, name, "profile")
    centres = diag.fixed["bin_centres"]
    values = _row(diag.table[quantity], average)
    if values.ndim == 1:
        lines = [(quantity, values)]
    else:
        names = _component_names(values.shape[1])
        picks = range(values.shape[1]) if component is None else [
            _component_index(component, values.shape[1])]
        lines = [(f"{quantity} {names[k]}", values[:, k]) for k in picks]
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, line in lines:
        ax.plot(centres, line, marker=".", label=label)
    axis = diag.attrs.get("axis", "position")
    ax.set_xlabel(_label(axis, diag.units("bin_centres")))
    ax.set_ylabel(_label(quantity, diag.units(quantity)))
    step = diag.table["step"]
    when = f"step {int(step[-1])}" if average is None else f"mean of last {average} rows"
    ax.set_title(f"{name}: {when}")
    if len(lines) > 1:
        ax.legend(fontsize="small", ncol=3)
    return _save(fig, out)


def plot_coarse_grain(run, name, field, out, component=None, average=None):
    """Plot `field` of the `coarse_grain` diagnostic `name` (last row, or mean
    of the last `average` rows). One gridded axis: a line against that axis's
    coordinates (every component unless `component` is given). Two or three:
    an image of the first two axes (for three, at the middle index of the
    third), of `component` (default the first). Returns the path."""
    diag = _diagnostic(run, name, "coarse_grain")
    axes = diag.attrs["axes"]
    values = _row(diag.table[field], average)
    has_components = values.ndim == len(axes) + 1
    units = diag.units(field)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if len(axes) == 1:
        coords = diag.fixed[axes]
        if has_components:
            names = _component_names(values.shape[-1])
            picks = range(values.shape[-1]) if component is None else [
                _component_index(component, values.shape[-1])]
            for k in picks:
                ax.plot(coords, values[:, k], marker=".", label=f"{field} {names[k]}")
            ax.legend(fontsize="small", ncol=3)
        else:
            ax.plot(coords, values, marker=".")
        ax.set_xlabel(_label(axes, diag.units(axes)))
        ax.set_ylabel(_label(field, units))
        ax.set_title(name)
    else:
        title = field
        if has_components:
            k = _component_index(0 if component is None else component, values.shape[-1])
            values = values[..., k]
            title = f"{field} {_component_names(diag.table[field].shape[-1])[k]}"
        if len(axes) == 3:
            middle = values.shape[2] // 2
            values = values[:, :, middle]
            third = diag.fixed[axes[2]][middle]
            title += f" at {axes[2]} = {third:.4g}"
        a, b = diag.fixed[axes[0]], diag.fixed[axes[1]]
        image = ax.imshow(values.T, origin="lower", aspect="auto",
                          extent=_extent(a, b))
        ax.set_xlabel(_label(axes[0], diag.units(axes[0])))
        ax.set_ylabel(_label(axes[1], diag.units(axes[1])))
        ax.set_title(f"{name}: {title}")
        fig.colorbar(image, ax=ax, label=_label(field, units))
    return _save(fig, out)


def _extent(a, b):
    """imshow's extent for cells centred on grid coordinates `a` and `b`."""

    def edges(c):
        c = np.asarray(c, dtype=float)
        half = (c[1] - c[0]) / 2 if len(c) > 1 else 0.5
        return c[0] - half, c[-1] + half

    return (*edges(a), *edges(b))
