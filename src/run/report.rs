//! What `gravel check` prints: the quantities a config derives.

use crate::config::limits;
use crate::config::Setup;
use crate::integrate::MAX_STEP_FRACTION;
use crate::math::figures::sig;
use crate::parallel::grid::Decomposition;
use glam::DVec3;
use std::fmt::Write;

/// A human-readable summary of a validated setup and the decomposition it would run on.
pub fn check_report(s: &Setup, decomp: &Decomposition) -> String {
    let g = |x: f64| sig(x, 4);
    let mut o = String::new();
    let n = s.initial.len();
    // One walk over the initial particles (a lattice is generated, not held).
    let mut frozen = 0;
    let (mut rmin, mut rmax) = (f64::INFINITY, 0.0f64);
    let (mut mmin, mut mmax) = (f64::INFINITY, 0.0f64);
    s.initial.for_each(|_, p| {
        frozen += usize::from(p.frozen);
        (rmin, rmax) = (rmin.min(p.radius), rmax.max(p.radius));
        (mmin, mmax) = (mmin.min(p.mass), mmax.max(p.mass));
    });
    let _ = writeln!(o, "config: {}", s.config_path.display());
    let _ = writeln!(
        o,
        "units: the config's own (m, kg, s if it is SI; gravel converts nothing); 4 significant digits, time steps exact"
    );
    let _ = writeln!(o, "particles at step 0: {n} ({frozen} frozen)");
    for src in &s.pours {
        let total = ((src.rate * src.until).floor() as u64).min(src.count.unwrap_or(u64::MAX));
        let _ = writeln!(
            o,
            "pouring: up to {total} particles of `{}` at {} per unit time until t = {}",
            s.materials[src.material as usize].name,
            g(src.rate),
            g(src.until)
        );
    }
    for line in size_lines(s) {
        let _ = writeln!(o, "{line}");
    }
    if n > 0 {
        let _ = writeln!(o, "radius: {} .. {}", g(rmin), g(rmax));
        let _ = writeln!(o, "mass: {} .. {}", g(mmin), g(mmax));
    }
    for m in &s.materials {
        let mut line = if m.density.is_nan() {
            format!(
                "material `{}`: no density (no particle block uses it)",
                m.name
            )
        } else {
            format!("material `{}`: density {}", m.name, g(m.density))
        };
        if let Some(e) = m.youngs_modulus {
            line += &format!(", youngs_modulus {}", g(e));
        }
        if let Some(nu) = m.poisson_ratio {
            line += &format!(", poisson_ratio {}", g(nu));
        }
        let _ = writeln!(o, "{line}");
    }
    for (k, l) in s.laws.laws.iter().enumerate() {
        let (a, b) = (k / s.laws.n, k % s.laws.n);
        if a > b {
            continue;
        }
        let mut parts = vec![l.normal.describe()];
        if l.tangential.name() != "none" {
            parts.push(l.tangential.describe());
        }
        if let Some(st) = &l.stochastic {
            parts.push(format!("stochastic {} between particles", st.describe()));
        }
        if let Some(r) = &l.rolling {
            parts.push(format!("rolling {}", r.describe()));
        }
        if let Some(sp) = &l.spinning {
            parts.push(format!("spinning {}", sp.describe()));
        }
        let _ = writeln!(
            o,
            "contact {}–{}: {}",
            s.materials[a].name,
            s.materials[b].name,
            parts.join(" + ")
        );
    }
    let ts = &s.time_scales;
    let _ = writeln!(o, "{}: {}", ts.kind, g(ts.critical));
    let _ = writeln!(
        o,
        "stable time step: {:e} (auto would choose {:e})",
        ts.stable, ts.auto
    );
    let _ = writeln!(
        o,
        "chosen time step: {:e} ({:.1}% of the stable limit)",
        s.dt,
        100.0 * s.dt / ts.stable
    );
    if s.dt > ts.stable {
        let _ = writeln!(
            o,
            "warning: the time step exceeds the stable limit {:e} (allowed by run.allow_large_dt = true); contacts may blow up",
            ts.stable
        );
    }
    step_bound_warnings(s, &mut o);
    let _ = writeln!(
        o,
        "steps: {} (simulated time {})",
        s.steps,
        g(s.steps as f64 * s.dt)
    );
    let _ = writeln!(o, "skin: {}; walls: {}", g(s.skin), s.walls.len());
    let _ = writeln!(
        o,
        "decomposition: {}; threads per rank: {}",
        decomp.describe(),
        if s.threads == 0 {
            "all available".to_string()
        } else {
            s.threads.to_string()
        }
    );
    if decomp.size() > 1 {
        let _ = writeln!(
            o,
            "load balancing: {}",
            match s.balance {
                Some(b) => format!(
                    "the cuts move when the largest rank's cost exceeds {} times the mean, checked every {} steps",
                    b.tolerance, b.every
                ),
                None => "off (balance = false): the cuts stay where they are".to_string(),
            }
        );
    }
    let max_n = n as u64
        + s.pours
            .iter()
            .map(|p| ((p.rate * p.until).floor() as u64).min(p.count.unwrap_or(u64::MAX)))
            .sum::<u64>();
    let _ = writeln!(o, "{}", memory_line(s, decomp, max_n));
    o
}

/// The estimated peak resident memory of a run's busiest rank
/// ([`limits::bytes_per_particle`] and the constants beside it): the
/// program, the HDF5 library's share for the frames written, the mesh
/// walls (whole on every rank), and the larger of the set-up (every rank
/// holds the records of the `list` blocks and relaxed fills; lattices,
/// random counts and files are generated or read, not held:
/// [`crate::insert::initial`]) and the run
/// (`max_n / ranks` particles, with a ghost shell of 10 % when the run has
/// several ranks, and MPI-IO's collective buffer). No rank gathers the others' particles: frames and
/// checkpoints are written by every rank ([`crate::io::collective`]).
fn memory_line(s: &Setup, decomp: &Decomposition, max_n: u64) -> String {
    let ranks = decomp.size() as f64;
    let frames = s.steps.checked_div(s.output.every).map_or(1, |k| k + 1);
    let fields = (s.output.every > 0).then_some(s.output.fields.len());
    let per = limits::bytes_per_particle(s.laws.history_len, s.wall_records(), fields);
    let (mut triangles, mut mesh_bytes) = (0, 0);
    for w in &s.walls {
        if let crate::geometry::walls::WallShape::Mesh { mesh, .. } = &w.shape {
            triangles += mesh.triangles().len();
            mesh_bytes += mesh.heap_bytes();
        }
    }
    let n = max_n as f64;
    let shell = if ranks > 1.0 { 1.1 } else { 1.0 };
    let collective = if ranks > 1.0 {
        limits::collective_buffer_bytes(n)
    } else {
        0.0
    };
    let run = n / ranks * shell * per + collective;
    let held = s.initial.held() as f64;
    let setup = held * limits::SETUP_BYTES_PER_PARTICLE;
    let hdf5 = limits::output_bytes(frames, decomp.size());
    let fixed = limits::base_bytes() + hdf5 + mesh_bytes as f64;
    let size = limits::describe_bytes;
    let meshes = if triangles > 0 {
        format!(
            ", {} of {triangles} mesh triangles",
            size(mesh_bytes as f64)
        )
    } else {
        String::new()
    };
    let what = if ranks > 1.0 {
        let held_line = if held > 0.0 {
            format!(
                ", or {} while every rank holds the {held} listed or relaxed at step 0",
                size(setup)
            )
        } else {
            String::new()
        };
        format!(
            "per rank: {} for up to {} of {max_n} particles ({:.0} B each){held_line}",
            size(run),
            (n / ranks).ceil(),
            per,
        )
    } else {
        format!(
            "{} for up to {max_n} particles ({:.0} B each)",
            size(run.max(setup)),
            per
        )
    };
    format!(
        "memory estimate: {} at the peak{}; {what}, {} of program and libraries, {} of HDF5 for {frames} frame(s){meshes}",
        size(fixed + run.max(setup)),
        if ranks > 1.0 { " of the busiest rank" } else { "" },
        size(limits::base_bytes()),
        size(hdf5),
    )
}

/// One line per `random` and `pour` block with its realised radius
/// distribution: count, mean, standard deviation, smallest and largest.
/// `gravel check` and the start of `gravel run` print these lines.
pub fn size_lines(s: &Setup) -> Vec<String> {
    let g = |x: f64| sig(x, 4);
    s.sizes
        .iter()
        .map(|b| {
            let st = &b.stats;
            let what = match b.kind {
                "pour" if st.count as u64 == crate::config::POUR_PREVIEW => {
                    format!("the first {} radii to pour", st.count)
                }
                "pour" => format!("the {} radii to pour", st.count),
                "random" if st.count as u64 == crate::config::POUR_PREVIEW => {
                    format!("the first {} radii placed", st.count)
                }
                _ => format!("{} particles placed", st.count),
            };
            format!(
                "radii of {} ({}): {what}, mean {}, sd {}, min {}, max {}",
                b.key,
                b.kind,
                g(st.mean),
                g(st.sd),
                g(st.min),
                g(st.max)
            )
        })
        .collect()
}

/// Warn about initial and pour velocities that move a particle more than
/// [`MAX_STEP_FRACTION`] of its radius in one step at the chosen `dt`: the
/// run would stop (exit 1) as soon as such a particle moves.
fn step_bound_warnings(s: &Setup, o: &mut String) {
    let f = MAX_STEP_FRACTION;
    let fast = |v: DVec3, r: f64| v.length() * s.dt > f * r;
    // The count, and the first in id order.
    let mut too_fast = 0usize;
    let mut first: Option<crate::state::particles::ParticleRecord> = None;
    s.initial.for_each(|_, p| {
        if !p.frozen && fast(p.v, p.radius) {
            too_fast += 1;
            if first.as_ref().is_none_or(|q| p.id < q.id) {
                first = Some(p.clone());
            }
        }
    });
    if let Some(p) = first {
        let _ = writeln!(
            o,
            "warning: {} initial particle(s) move more than {f} of their radius per step at dt = {:e} s, e.g. particle id {} at {:e} m/s ({:e} m per step, radius {:e} m); the run will stop on its first step",
            too_fast,
            s.dt,
            p.id,
            p.v.length(),
            p.v.length() * s.dt,
            p.radius
        );
    }
    for src in &s.pours {
        if fast(src.velocity, src.radius.min()) {
            let _ = writeln!(
                o,
                "warning: particles[{}].velocity: poured particles start at {:e} m/s, more than {f} of the smallest radius {:e} m per step at dt = {:e} s; the run will stop when they move",
                src.block,
                src.velocity.length(),
                src.radius.min(),
                s.dt
            );
        }
    }
}
