//! Bounds on sizes and counts, checked before anything is allocated or
//! generated: the particle count must fit in memory, the thread count and
//! the step count must be sane (see `docs/config.md`, "Sizes and counts").

use super::context::Ctx;
use crate::error::Result;

/// The most steps a run may take: 2⁵³, the largest count that a step
/// index and the simulated time `step · dt` (an `f64`) both hold exactly.
pub const MAX_STEPS: u64 = 1 << 53;

/// The most rayon threads per rank (`[parallel] threads`, `--threads`).
/// A fixed bound, not one derived from the machine, so that a config
/// checked on one machine is valid on another.
pub const MAX_THREADS: usize = 1024;

/// The bytes one particle holds at a run's peak on one rank, fitted to
/// peak resident memory measured on 2026-11-28 after the share slots and
/// the contact history came to take memory only for the pairs in contact
/// (pools of entries) and the frames to be written in chunks of 8,192
/// rows (`docs/performance.md`, "Memory"): `200 + 90 h` (particle arrays,
/// neighbour-list rows, about 4 pair jobs with their entry numbers, the
/// shares and `h` history values of about 2 contacts, and at a rebuild the
/// search's scratch and the history carried through it), plus `8 h` per
/// wall-history record, plus 32 when frames are written (the id order and
/// one column). `history_len` is `h`, `wall_records` the wall records per
/// particle, `frame_fields` the fields of the frames, if any. The fit's
/// cases (serial build, `scripts/memory`): the chute (`h = 3`, no wall,
/// frames: 37 MiB at its peak, 571 B a particle above the program, HDF5's
/// share and the frames' 32), a lattice of 250,047 Hertz–Mindlin spheres
/// on a floor, not yet in contact at its peak (`h = 3`, one wall, frames:
/// 128 MiB, 404 B) and the dense pack (`h = 6`, one wall, frames: 71 MiB,
/// 771 B).
pub fn bytes_per_particle(
    history_len: usize,
    wall_records: usize,
    frame_fields: Option<usize>,
) -> f64 {
    let h = history_len as f64;
    200.0 + 90.0 * h + wall_records as f64 * 8.0 * h + frame_fields.map_or(0.0, |_| 32.0)
}

/// The buffer MPI-IO's collective writes hold on a rank that gathers the
/// file's blocks (an Open MPI aggregator) for a run of `particles`: at most
/// 10 MiB, and no more than the blocks it gathers, fitted as 160 B per
/// particle. Measured: the one rank of four at 6–11 MiB above the others on
/// the 250,047-sphere bed and the dense pack, none on 3,000 beads.
pub fn collective_buffer_bytes(particles: f64) -> f64 {
    (160.0 * particles).min(10.0 * 1024.0 * 1024.0)
}

/// The bytes one particle held as a record (a `list` block's or a relaxed
/// `fill`'s; a lattice and a random count are generated and a file is
/// read, not held) costs while the config is read and checked (the list
/// and what its checks build), on every rank: measured 492 B (the dense
/// pack, when its CSV file was held) by `gravel check`'s peak resident
/// memory.
pub const SETUP_BYTES_PER_PARTICLE: f64 = 500.0;

/// The resident memory of the program before any particle: the binary and
/// its libraries, measured for a run of one particle (one frame, one
/// checkpoint): 12.6 MB (serial build) and 24.0 MB (MPI build, one rank)
/// with HDF5 linked from its static archive (`build.rs`), 18 and 30.6 MB
/// with the shared `libhdf5` and the 35 libraries it loads.
pub fn base_bytes() -> f64 {
    let mib = match (cfg!(feature = "mpi"), cfg!(hdf5_static)) {
        (false, true) => 12.5,
        (false, false) => 18.0,
        (true, true) => 24.0,
        (true, false) => 30.5,
    };
    mib * 1024.0 * 1024.0
}

/// The HDF5 library's memory for a file of `frames` frames written by
/// `ranks` ranks. One process (the serial writer,
/// [`crate::io::collective`]'s `Transfer::Serial`): its metadata cache
/// grows by about 0.16 MiB a frame up to about 25 MiB (measured on
/// 2026-12-06, HDF5 from its static archive, one particle: 1.0, 7.2, 15.0,
/// 23.9 and 24.8 MiB above a one-frame run for 10, 50, 100, 200 and 400
/// frames; the chute on one rank: 2.4, 5.9 and 18.2 MiB for 11, 31 and 101
/// frames). Several ranks writing through MPI-IO: about 0.5 MiB and
/// 0.02 MiB a frame, up to 6 MiB, on the busiest rank (the chute on four
/// ranks: 0.2–0.8 MiB for 31 frames, 1.8 for 101; one particle on two and
/// four ranks, its rank: 1.8, 2.7, 4.0 and 5.3 MiB for 40, 100, 200 and
/// 400 frames, the other ranks none).
pub fn output_bytes(frames: u64, ranks: usize) -> f64 {
    let frames = frames as f64;
    let mib = if ranks > 1 {
        (0.5 + 0.02 * frames).min(6.0)
    } else {
        (0.16 * frames).min(25.0)
    };
    mib * 1024.0 * 1024.0
}

/// The memory available to a new process now, in bytes: `MemAvailable` of
/// `/proc/meminfo`. `None` where it cannot be read (not Linux): then no
/// memory check is made.
pub fn available_memory() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024.0)
}

/// A memory size in words: `1.5 GiB`.
pub fn describe_bytes(bytes: f64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Tracks the particles a config will hold (initial and poured) block by
/// block, and refuses the block that takes the total past the memory
/// available, before it is generated.
pub(super) struct MemoryBudget {
    per_particle: f64,
    available: Option<f64>,
    /// Particles counted so far.
    pub(super) particles: f64,
}

impl MemoryBudget {
    pub(super) fn new(history_len: usize) -> Self {
        Self {
            per_particle: bytes_per_particle(history_len, 0, None),
            available: available_memory(),
            particles: 0.0,
        }
    }

    /// Count `n` more particles (an upper bound, as `f64` so that absurd
    /// counts do not overflow) for the input `what` (`particles[0].count =
    /// 1000000000000`); refuse if the total no longer fits.
    pub(super) fn add(&mut self, cx: &Ctx, what: &str, n: f64) -> Result<()> {
        self.particles += n;
        let needed = self.particles * self.per_particle;
        match self.available {
            Some(have) if needed > have => Err(cx.err(format!(
                "{what}: gives up to {:.3e} particles in all, which need about {} of memory, but only {} is available on this machine; lower it",
                self.particles,
                describe_bytes(needed),
                describe_bytes(have)
            ))),
            _ => Ok(()),
        }
    }

    /// [`MemoryBudget::add`] for a block of `n` particles whose `count` key
    /// (`{key}.count`) may cap it: the input named is `count` where it is the
    /// smaller, else the one `uncapped` describes.
    pub(super) fn add_capped(
        &mut self,
        cx: &Ctx,
        key: &str,
        count: Option<u64>,
        n: f64,
        uncapped: impl FnOnce() -> String,
    ) -> Result<()> {
        match count {
            Some(c) if (c as f64) < n => self.add(cx, &format!("{key}.count = {c}"), c as f64),
            _ => self.add(cx, &uncapped(), n),
        }
    }
}

/// `n` if it is a usable number of steps: at least 1 and at most [`MAX_STEPS`].
pub(super) fn steps(cx: &Ctx, key: &str, n: u64) -> Result<u64> {
    check_steps(n).map_err(|m| cx.err(format!("{key} = {n}: {m}")))
}

/// The message for a step count outside `1..=MAX_STEPS`, if it is.
pub fn check_steps(n: u64) -> std::result::Result<u64, String> {
    if n == 0 {
        Err("a run needs at least 1 step".to_string())
    } else if n > MAX_STEPS {
        Err(format!(
            "more than the {MAX_STEPS} (2^53) steps a run may take"
        ))
    } else {
        Ok(n)
    }
}

/// The message for a thread count above [`MAX_THREADS`], if it is.
pub fn check_threads(n: usize) -> std::result::Result<usize, String> {
    if n > MAX_THREADS {
        Err(format!(
            "at most {MAX_THREADS} threads per rank (0 = all available)"
        ))
    } else {
        Ok(n)
    }
}

/// `v` if it is finite, positive and not subnormal (so that its inverse is
/// finite too): the test every derived quantity (mass, inertia, time
/// scales) must pass.
pub(super) fn usable(v: f64) -> bool {
    v.is_normal() && v > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_words() {
        assert_eq!(describe_bytes(512.0), "512.0 B");
        assert_eq!(describe_bytes(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
        assert_eq!(
            describe_bytes(1e30),
            format!("{:.1} EiB", 1e30 / 1024f64.powi(6))
        );
    }

    #[test]
    fn the_memory_model_adds_history_walls_and_frames() {
        // h = 3 (the chute, the bed), h = 6 with one wall (the dense pack).
        assert_eq!(bytes_per_particle(3, 0, None), 470.0);
        assert_eq!(bytes_per_particle(6, 1, None), 740.0 + 48.0);
        // Frames cost one column at a time, whatever their fields.
        assert_eq!(bytes_per_particle(3, 0, Some(3)), 470.0 + 32.0);
        assert_eq!(bytes_per_particle(3, 0, Some(0)), 470.0 + 32.0);
        // The HDF5 share saturates.
        let mib = |frames, ranks| output_bytes(frames, ranks) / (1024.0 * 1024.0);
        assert!((mib(10, 1) - 1.6).abs() < 1e-9);
        assert_eq!(mib(10_000, 1), 25.0);
        // Far less when the ranks write together through MPI-IO.
        assert!((mib(100, 4) - 2.5).abs() < 1e-9);
        assert_eq!(mib(10_000, 4), 6.0);
    }

    #[test]
    fn step_and_thread_bounds() {
        assert!(check_steps(0).is_err());
        assert_eq!(check_steps(1), Ok(1));
        assert_eq!(check_steps(MAX_STEPS), Ok(MAX_STEPS));
        assert!(check_steps(MAX_STEPS + 1).is_err());
        assert_eq!(check_threads(0), Ok(0));
        assert_eq!(check_threads(MAX_THREADS), Ok(MAX_THREADS));
        assert!(check_threads(MAX_THREADS + 1).is_err());
    }

    #[test]
    fn derived_quantities_must_be_normal_and_positive() {
        assert!(usable(1e-300));
        for bad in [0.0, -1.0, 1e-310, f64::INFINITY, f64::NAN] {
            assert!(!usable(bad), "{bad}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn available_memory_is_read_on_linux() {
        let m = available_memory().expect("MemAvailable in /proc/meminfo");
        assert!(m > 0.0);
    }

    #[test]
    fn the_budget_refuses_the_block_that_does_not_fit() {
        let cx = Ctx {
            file: std::path::Path::new("unit.toml"),
        };
        let mut b = MemoryBudget {
            per_particle: 100.0,
            available: Some(1000.0),
            particles: 0.0,
        };
        b.add(&cx, "particles[0].count = 5", 5.0).unwrap();
        let e = b.add(&cx, "particles[1].count = 6", 6.0).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("particles[1].count = 6"), "{e}");
        assert!(e.contains("1.1 KiB") && e.contains("1000.0 B"), "{e}");
        let mut unknown = MemoryBudget {
            available: None,
            ..b
        };
        assert!(unknown.add(&cx, "x", 1e30).is_ok());
    }
}
