"""What the measurement scripts (bench, memory, scaling, side-by-side) share: the Open MPI
settings of scripts/mpi-env, read from that file so that the shell and Python launchers
agree, the mpirun flags, the peak resident memory that `/usr/bin/time -v` reports, and the
confidence interval of a median of rounds."""

import math
import os
import re
import shutil
import statistics
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


def median_interval(values, confidence=0.95):
    """The median of `values` and a distribution-free confidence interval for the median of
    the distribution they are drawn from: the order statistics x_(k) and x_(n+1-k), with k
    the largest rank for which P(B < k) <= (1 - confidence) / 2, B ~ Binomial(n, 1/2) (the
    number of rounds below the true median). The rounds of a shared machine are far from
    normal (a busy neighbour slows some of them by a third), so no shape is assumed. With
    too few rounds for the confidence asked (five give 94 %, four 88 %), the interval is
    the whole range and `covered` says what it holds.
    Returns (median, low, high, covered)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no rounds")

    def below(k):
        """P(B < k)."""
        return sum(math.comb(n, i) for i in range(k)) / 2.0 ** n

    # From the whole range (k = 1) inwards, while the next rank keeps the confidence.
    k = 1
    while k + 1 <= (n + 1) // 2 and below(k + 1) <= (1.0 - confidence) / 2.0:
        k += 1
    # P(x_(k) <= median <= x_(n+1-k)) = 1 - 2 P(B < k).
    return statistics.median(xs), xs[k - 1], xs[n - k], 1.0 - 2.0 * below(k)


def median_text(values, digits=3):
    """`median (low-high, C % interval, n rounds)` of `median_interval`."""
    med, lo, hi, covered = median_interval(values)
    return (f"{med:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f}, "
            f"{100 * covered:.0f} % interval of the median, {len(values)} rounds)")
