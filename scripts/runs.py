"""What the measurement scripts (bench, memory, scaling) share: the Open MPI settings of
scripts/mpi-env, read from that file so that the shell and Python launchers agree, the
mpirun flags, and the peak resident memory that `/usr/bin/time -v` reports."""

import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# scripts/mpi-env's MPIRUN_FLAGS.
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def sourced(name):
    """This process's environment with every `export KEY=VALUE` of scripts/NAME
    (`"${KEY:-default}"` keeps KEY if it is set)."""
    env = dict(os.environ)
    with open(os.path.join(ROOT, "scripts", name)) as f:
        for line in f:
            m = re.match(r"\s*export\s+(\w+)=(\S+)", line)
            if not m:
                continue
            key, value = m.group(1), m.group(2)
            default = re.fullmatch(r'"?\$\{(\w+):-([^}]*)\}"?', value)
            env[key] = env.get(default.group(1), default.group(2)) if default else value
    return env


def mpi_env():
    """This process's environment with scripts/mpi-env's settings."""
    return sourced("mpi-env")


def build(mpi):
    """Build gravel in release: the MPI build (target/mpi) or the serial one (target)."""
    cmd = ["cargo", "build", "--release", "--quiet"]
    if mpi:
        cmd += ["--features", "mpi", "--target-dir", os.path.join(ROOT, "target", "mpi")]
    env = mpi_env() if mpi else sourced("serial-env")
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)


def ensure_time():
    """Install GNU time (`/usr/bin/time -v` reports the peak resident memory) if missing."""
    if not os.path.exists("/usr/bin/time"):
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise SystemExit("/usr/bin/time is missing: install GNU time (apt-get install time)")
        subprocess.run(["apt-get", "install", "-y", "-q", "time"], check=True,
                       stdout=subprocess.DEVNULL)


def peak_rss_mb(stderr):
    """Each process's peak resident memory in MB, from `/usr/bin/time -v` reports in stderr."""
    return [int(k) / 1024 for k in re.findall(r"Maximum resident set size \(kbytes\): (\d+)", stderr)]
