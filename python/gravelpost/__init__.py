"""gravelpost: read gravel's HDF5 output into numpy arrays and plot it.

    from gravelpost import open_run
    run = open_run("out/pour.h5")
    run.thermo["kinetic_energy"]
"""

from .read import Diagnostic, NotGravelOutput, Run, open_run, time_average

__all__ = ["Diagnostic", "NotGravelOutput", "Run", "open_run", "time_average"]
