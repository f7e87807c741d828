//! The run driver: thread pool, the step loop, output cadence, progress.

mod frame;
mod preflight;
pub mod report;

use crate::config::limits;
use crate::config::{Measure, Setup};
use crate::diagnostics::contact_list::sorted_contacts;
use crate::diagnostics::{self, sampler, Sampled};
use crate::diagnostics::{thermo_columns, Thermo, MAX_OVERLAP};
use crate::error::{GravelError, IoError, Result};
use crate::geometry::mesh::TriMesh;
use crate::geometry::walls::WallShape;
use crate::io::checkpoint;
use crate::io::frames::{self, OutputFile};
use crate::io::xdmf::WallScene;
use crate::math::figures::sig;
use crate::parallel::balance::BalanceLog;
use crate::parallel::comm::{Comm, SerialComm};
use crate::sim::timers::Lap;
use crate::sim::{Simulation, Stage, Timers};
use crate::state::pack::{Pack, Unpack};
use frame::SimFrame;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Command-line overrides of a run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Override `[run] steps`.
    pub steps: Option<u64>,
    /// Override `[output] dir`.
    pub out: Option<PathBuf>,
    /// Override `[parallel] threads`.
    pub threads: Option<usize>,
    /// Continue from this checkpoint instead of starting at step 0.
    pub restart: Option<PathBuf>,
    /// No progress output.
    pub quiet: bool,
    /// Write the final state with exact bits here (see [`Simulation::dump_state`]).
    pub dump_state: Option<PathBuf>,
    /// Also dump the state every this many steps, to `<dump_state>.<step, 9 digits>` (0: only the final state).
    pub dump_every: u64,
    /// Replace the output of an earlier run of the same name in the output directory
    /// (without it, such a run is refused; a restart appends instead).
    pub overwrite: bool,
}

/// Load and timing figures of one rank at the end of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankStats {
    /// Owned particles.
    pub owned: u64,
    /// Ghosts.
    pub ghosts: u64,
    /// Contacts of the owned particles ([`diagnostics::contacts_on_rank`]).
    pub contacts: u64,
    /// Seconds in the step loop.
    pub seconds: f64,
    /// Of which waiting in communication.
    pub comm_seconds: f64,
    /// Of which in the force stage.
    pub force_seconds: f64,
}

/// Where a run's set-up and output time went (rank 0's clock).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IoTimes {
    /// Seconds from the validated config to the first step: the initial
    /// particles placed (or the checkpoint read and restored), the first
    /// neighbour list and forces, the output opened.
    pub start_seconds: f64,
    /// Frames written, and the seconds they took (gather included).
    pub frames: u64,
    /// Seconds writing frames.
    pub frame_seconds: f64,
    /// Checkpoints written, the final one included.
    pub checkpoints: u64,
    /// Seconds writing checkpoints (snapshot, gather and file).
    pub checkpoint_seconds: f64,
}

/// What a finished run reports.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Steps run (by this invocation: a restart counts from its checkpoint).
    pub steps: u64,
    /// The step the run started from (0, or the checkpoint's step).
    pub first_step: u64,
    /// Particles at the end.
    pub particles: u64,
    /// Wall-clock seconds in the step loop.
    pub seconds: f64,
    /// Rayon threads used per rank.
    pub threads: usize,
    /// Ranks.
    pub ranks: usize,
    /// Per-rank figures, on rank 0 (empty elsewhere).
    pub per_rank: Vec<RankStats>,
    /// What load balancing did (all zero when it was off).
    pub balance: BalanceLog,
    /// Seconds load balancing took (checks and moves), on rank 0.
    pub balance_seconds: f64,
    /// The imbalance at the end (max / mean of the per-rank cost).
    pub imbalance: f64,
    /// The grid of subdomains at the end ([`crate::parallel::grid::Decomposition::describe`]).
    pub decomposition: String,
    /// Set-up and output times.
    pub io: IoTimes,
    /// Stage timers.
    pub timers: Timers,
    /// Output file written, if any.
    pub output: Option<PathBuf>,
    /// The final checkpoint, if this rank wrote it.
    pub checkpoint: Option<PathBuf>,
}

impl RunSummary {
    /// Particle-steps per second per core (thread × rank).
    pub fn particle_steps_per_second_per_core(&self) -> f64 {
        self.particles as f64 * self.steps as f64
            / self.seconds
            / (self.threads * self.ranks) as f64
    }

    /// Whether this process is rank 0 (the one that reports).
    pub fn is_root(&self) -> bool {
        !self.per_rank.is_empty()
    }
}

/// Run a validated setup to the end on one process.
pub fn run(setup: Setup, opts: &RunOptions) -> Result<RunSummary> {
    run_with(setup, opts, Box::new(SerialComm))
}

/// Run a validated setup with the given transport.
pub fn run_with(mut setup: Setup, opts: &RunOptions, comm: Box<dyn Comm>) -> Result<RunSummary> {
    // A refused flag is bad input (exit 2), named with the config it runs.
    let config_path = setup.config_path.clone();
    let flag = |name: &str, value: String, m: String| {
        GravelError::config(&config_path, format!("{name} {value}: {m}"))
    };
    if let Some(s) = opts.steps {
        setup.steps = limits::check_steps(s).map_err(|m| flag("--steps", s.to_string(), m))?;
    }
    if let Some(d) = &opts.out {
        setup.output.dir = d.clone();
    }
    let threads = opts.threads.unwrap_or(setup.threads);
    limits::check_threads(threads).map_err(|m| flag("--threads", threads.to_string(), m))?;
    // Every path the run writes, before anything is built or written.
    agree(comm.as_ref(), &config_path, || {
        preflight::check_paths(&setup, opts)
    })?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| GravelError::Run(format!("cannot start {threads} threads: {e}")))?;
    let threads = pool.current_num_threads();
    pool.install(|| drive(setup, opts, comm, threads))
}

fn drive(
    setup: Setup,
    opts: &RunOptions,
    comm: Box<dyn Comm>,
    threads: usize,
) -> Result<RunSummary> {
    let total = setup.steps;
    let started = Instant::now();
    let mut sim = match &opts.restart {
        None => Simulation::new(setup, comm)?,
        Some(path) => resume(setup, comm, path)?,
    };
    let first = sim.step;
    let rank0 = sim.comm().rank() == 0;
    // Held until the run ends: a second run into this output is refused meanwhile.
    let mut lock = None;
    agree(sim.comm(), &sim.setup.config_path, || {
        lock = Some(preflight::OutputLock::take(&sim.setup, opts)?);
        Ok(())
    })?;
    let mut out = Output::open(&sim, threads, opts.restart.is_some())?;
    // The output has drawn the walls whole: each rank now keeps of a mesh
    // the triangles near its subdomain.
    sim.keep_mesh_parts();
    // The set-up's transients (the config's particle list, validation
    // grids) were freed in the arena of the thread that made them.
    give_back_freed_memory();
    out.io.start_seconds = started.elapsed().as_secs_f64();
    let ckpt_path = checkpoint::checkpoint_path(&sim.setup.output.dir, &sim.setup.name);
    let ckpt_every = sim.setup.output.checkpoint_every;
    if rank0 && !opts.quiet {
        for line in report::size_lines(&sim.setup) {
            eprintln!("{line}");
        }
    }
    let mut progress = Progress::new(
        first,
        total,
        expected_particles(&sim.setup, total),
        opts.quiet || !rank0,
    );
    // Communication of the set-up (first migration, halo, insertion) is
    // outside the timed loop: the share printed is of the loop's time.
    let comm_before = sim.timers.comm;
    // The periodic checkpoints and state dumps between the steps (the
    // last step's are written after the loop).
    let checkpoint_due =
        |step: u64| ckpt_every > 0 && step.is_multiple_of(ckpt_every) && step < total;
    let dump_due = |step: u64| opts.dump_every > 0 && step.is_multiple_of(opts.dump_every);
    let start = Instant::now();
    while sim.step < total {
        let next = sim.step + 1;
        // The wall loads only where a row will read them.
        sim.keep_loads = out.reads_loads(next, total);
        // The second half kick waits for the next step's first pass where
        // nothing after this step reads the velocities.
        sim.defer_kick = !(out.reads_state(next, total)
            || checkpoint_due(next)
            || (opts.dump_state.is_some() && dump_due(next)));
        if let Err(e) = sim.step() {
            progress.finish();
            out.flush()?;
            return Err(e);
        }
        let mut clock = Lap::start();
        if let Err(e) = out.record(&sim, total) {
            progress.finish();
            out.flush()?;
            return Err(e);
        }
        // The step's rows were their only readers: not held through a
        // checkpoint (48 B a wall and owned particle).
        sim.wall_loads.release();
        if checkpoint_due(sim.step) {
            write_checkpoint(&sim, &mut out, &ckpt_path)?;
        }
        progress.tick(
            sim.step,
            sim.time(),
            sim.particles.n_owned,
            out.last.as_ref(),
        );
        if let Some(path) = &opts.dump_state {
            if dump_due(sim.step) {
                let mut name = path.clone().into_os_string();
                name.push(format!(".{:09}", sim.step));
                write_dump(&sim, &PathBuf::from(name))?;
            }
        }
        sim.timers.add(Stage::Output, clock.lap());
    }
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    let mut clock = Lap::start();
    write_checkpoint(&sim, &mut out, &ckpt_path)?;
    let particles = sim.comm().sum_u64(sim.particles.n_owned as u64);
    if let Some(path) = &opts.dump_state {
        write_dump(&sim, path)?;
    }
    sim.timers.add(Stage::Output, clock.lap());
    let mine = {
        let mut b = Vec::new();
        b.put_u64(sim.particles.n_owned as u64);
        b.put_u64(sim.ghosts() as u64);
        b.put_u64(diagnostics::contacts_on_rank(&sim.view()));
        b.put_f64(seconds);
        b.put_f64(sim.timers.comm.saturating_sub(comm_before).as_secs_f64());
        b.put_f64(sim.timers.spent(Stage::Force).as_secs_f64());
        b
    };
    let imbalance = sim.imbalance();
    let per_rank = sim
        .comm()
        .gather(&mine)
        .unwrap_or_default()
        .iter()
        .map(|b| {
            let mut u = Unpack::new(b);
            RankStats {
                owned: u.u64(),
                ghosts: u.u64(),
                contacts: u.u64(),
                seconds: u.f64(),
                comm_seconds: u.f64(),
                force_seconds: u.f64(),
            }
        })
        .collect();
    Ok(RunSummary {
        steps: total - first,
        first_step: first,
        particles,
        seconds,
        threads,
        ranks: sim.comm().size(),
        per_rank,
        balance: sim.balancer.log,
        balance_seconds: sim.balancer.time.as_secs_f64(),
        imbalance,
        decomposition: sim.decomp.describe(),
        io: out.io,
        timers: sim.timers,
        output: out.path(),
        checkpoint: rank0.then_some(ckpt_path),
    })
}

/// Set glibc's allocator for a run's memory (call first, before any
/// thread): allocations of 1 MiB and more (a rank's particle columns,
/// neighbour rows, output columns) are mapped pages of their own, given
/// back to the system when freed, and the heap is trimmed only when 256 MiB
/// lie free at its top. By default glibc raises its mapping threshold to
/// the size of each large block freed (up to 32 MiB), so the transient
/// blocks of the set-up, a rebuild or a frame stay in the heap, in the
/// resident memory, for the rest of the run. Measured on a lattice of
/// 250,047 Hertz–Mindlin spheres: peak resident memory 251,216 KiB by
/// default, 243,008 KiB with these settings; on the chute the rate is
/// unchanged (side by side, 6 rounds: 1.053, 0.891–1.086). A 1 MiB
/// threshold alone (which also fixes the trim threshold at 128 KiB) cost
/// the chute 4 % (0.959) in page faults.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes the allocator's thresholds; it is
    // called before any other thread exists, and both values are in range.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// Return the freed memory of every allocator arena to the system
/// (glibc's `malloc_trim`): memory freed in one thread's arena is otherwise
/// kept for that arena's next allocations, and counts in the run's
/// resident memory while another thread does the work.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory; any pad is valid.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Runs `decide` on rank 0 and tells every rank its outcome (collective): rank 0
/// returns its refusal as a bad-input error naming `config`; the other ranks return
/// a silent one (rank 0 speaks for all), so that every rank exits 2.
fn agree(
    comm: &dyn Comm,
    config: &Path,
    decide: impl FnOnce() -> std::result::Result<(), String>,
) -> Result<()> {
    let verdict = if comm.rank() == 0 { decide() } else { Ok(()) };
    let refused = comm.max_f64(f64::from(u8::from(verdict.is_err()))) > 0.5;
    match verdict {
        Err(m) => Err(GravelError::config(config, m)),
        Ok(()) if refused => Err(GravelError::config(config, "refused on rank 0")),
        Ok(()) => Ok(()),
    }
}

/// Write [`Simulation::dump_state`] to `path` (rank 0; collective).
fn write_dump(sim: &Simulation, path: &std::path::Path) -> Result<()> {
    if let Some(text) = sim.dump_state() {
        std::fs::write(path, text).map_err(|e| {
            GravelError::Io(format!(
                "{}: cannot write the state dump: {e}",
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Flush the output (so that it is consistent with the checkpoint should the process
/// die), then write the checkpoint of the current step atomically, every rank its
/// own rows. Collective.
fn write_checkpoint(sim: &Simulation, out: &mut Output, path: &Path) -> Result<()> {
    let start = Instant::now();
    out.flush()?;
    // Straight from the arrays, one column at a time: no copy of the state.
    let header = sim.snapshot_header();
    let rows = sim.rows();
    let version = env!("CARGO_PKG_VERSION");
    checkpoint::write_shared(path, &header, &rows, version, sim.comm())?;
    out.io.checkpoints += 1;
    out.io.checkpoint_seconds += start.elapsed().as_secs_f64();
    Ok(())
}

/// Read the checkpoint at `path` (each rank a slice of it), check that `setup` may
/// continue it, and restore it. Every refusal is a bad-input error (exit 2) naming
/// the file at fault; nothing has been written when it happens.
fn resume(setup: Setup, comm: Box<dyn Comm>, path: &Path) -> Result<Simulation> {
    let snap = checkpoint::read_shared(path, comm.as_ref()).map_err(|e| {
        GravelError::config(
            path,
            format!("cannot restart from this checkpoint: {}", e.what()),
        )
    })?;
    let changed = snap.compat.changed(&setup.compat());
    if !changed.is_empty() {
        return Err(GravelError::config(
            &setup.config_path,
            format!(
                "cannot continue the checkpoint {} with this config: it changed the {}; only [output], the number of steps (or time) and the threads may change on a restart",
                path.display(),
                changed.join(", ")
            ),
        ));
    }
    if snap.step > setup.steps {
        return Err(GravelError::config(
            &setup.config_path,
            format!(
                "the checkpoint {} is at step {}, past the {} steps of this run; raise [run] steps or pass --steps",
                path.display(),
                snap.step,
                setup.steps
            ),
        ));
    }
    Simulation::from_snapshot(setup, comm, &snap)
        .map_err(|e| GravelError::config(path, format!("cannot restart from this checkpoint: {e}")))
}

/// The samplers of the `[[diagnostics]]` blocks that write tables.
fn samplers(s: &Setup) -> Vec<Box<dyn Sampled>> {
    s.diagnostics
        .iter()
        .filter_map(|d| sampler(d, &s.domain))
        .collect()
}

/// The `[[diagnostics]]` contact lists: name and `every`.
fn contact_lists(s: &Setup) -> Vec<(String, u64)> {
    s.diagnostics
        .iter()
        .filter(|d| d.measure == Measure::Contacts)
        .map(|d| (d.name.clone(), d.every))
        .collect()
}

/// The output file of a run (rank 0 writes it) and its cadence.
struct Output {
    /// The output file (every rank knows it: frames are written by all).
    path: PathBuf,
    /// The file open for writing, on rank 0.
    file: Option<OutputFile>,
    /// The region, profile and coarse-graining diagnostics, with their
    /// samples since their last row.
    tables: Vec<Box<dyn Sampled>>,
    /// The contact lists: name and steps between lists.
    lists: Vec<(String, u64)>,
    every: u64,
    thermo_every: u64,
    fields: Vec<String>,
    /// The last thermo row, which the progress lines show (no reduction of their own).
    last: Option<Thermo>,
    /// Set-up and output times so far.
    io: IoTimes,
}

impl Output {
    /// Create the output file and record the first state; or, on a restart, append to
    /// the existing file (cut back to the checkpoint's step) if there is one.
    fn open(sim: &Simulation, threads: usize, restart: bool) -> Result<Self> {
        let path = sim.setup.output.dir.join(format!("{}.h5", sim.setup.name));
        let rank0 = sim.comm().rank() == 0;
        // Rank 0 decides; the exact max reduction tells every rank.
        let exists = restart
            && sim
                .comm()
                .max_f64(f64::from(u8::from(rank0 && path.exists())))
                > 0.5;
        if exists {
            let file = if rank0 {
                let append = |path: &Path| -> std::result::Result<OutputFile, IoError> {
                    let mut file = OutputFile::open_append(path)?;
                    // Before the cut, which rewrites the sidecar.
                    file.set_walls(wall_scene(&sim.setup));
                    file.cut_after(sim.step)?;
                    Ok(file)
                };
                Some(append(&path).map_err(|e| {
                    GravelError::Io(format!(
                        "{e} (while appending to the existing output after step {}; pass --out DIR to write a new output file instead)",
                        sim.step
                    ))
                })?)
            } else {
                None
            };
            let s = &sim.setup.output;
            let mut out = Self {
                path,
                file,
                tables: samplers(&sim.setup),
                lists: contact_lists(&sim.setup),
                every: s.every,
                thermo_every: s.thermo_every,
                fields: s.fields.clone(),
                last: None,
                io: IoTimes::default(),
            };
            out.add_diagnostics()?;
            return Ok(out);
        }
        let mut out = Self::create(sim, threads)?;
        out.add_diagnostics()?;
        out.record(sim, sim.setup.steps)?;
        Ok(out)
    }

    fn create(sim: &Simulation, threads: usize) -> Result<Self> {
        let s = &sim.setup;
        let file = if sim.comm().rank() == 0 {
            std::fs::create_dir_all(&s.output.dir).map_err(|e| {
                GravelError::Io(format!(
                    "{}: cannot create the output directory: {e}",
                    s.output.dir.display()
                ))
            })?;
            let path = s.output.dir.join(format!("{}.h5", s.name));
            let mut file = OutputFile::create(
                &path,
                env!("CARGO_PKG_VERSION"),
                &s.config_text,
                sim.comm().size() as u32,
                threads as u32,
                &thermo_columns(s.walls.len()),
            )?;
            let names: Vec<&str> = s.materials.iter().map(|m| m.name.as_str()).collect();
            file.write_materials(&names)?;
            let names: Vec<&str> = s.wall_names.iter().map(String::as_str).collect();
            file.write_walls(&names)?;
            let meshes: Vec<(&str, &TriMesh)> = s
                .walls
                .iter()
                .zip(&s.wall_names)
                .filter_map(|(w, name)| match &w.shape {
                    WallShape::Mesh { mesh, .. } => Some((name.as_str(), &**mesh)),
                    _ => None,
                })
                .collect();
            file.write_wall_meshes(&meshes)?;
            file.set_walls(wall_scene(s));
            Some(file)
        } else {
            None
        };
        Ok(Self {
            path: s.output.dir.join(format!("{}.h5", s.name)),
            file,
            tables: samplers(s),
            lists: contact_lists(s),
            every: s.output.every,
            thermo_every: s.output.thermo_every,
            fields: s.output.fields.clone(),
            last: None,
            io: IoTimes::default(),
        })
    }

    /// Create each diagnostic's group (or find it, appending after a restart).
    fn add_diagnostics(&mut self) -> Result<()> {
        if let Some(f) = &mut self.file {
            for b in &self.tables {
                f.add_diagnostic(b.name(), &b.columns(), &b.fixed(), &b.attrs())?;
            }
            for (name, _) in &self.lists {
                f.add_contact_list(name)?;
            }
        }
        Ok(())
    }

    /// Whether what is due at `step` reads the contact loads (the thermo
    /// row's stress and wall columns, a diagnostic's stress).
    fn reads_loads(&self, step: u64, total: u64) -> bool {
        self.thermo_due(step, total)
            || self.tables.iter().any(|b| b.samples_at(step))
            || self
                .lists
                .iter()
                .any(|(_, every)| step.is_multiple_of(*every))
    }

    /// Whether [`Self::record`] reads the state at `step`: a thermo row, a
    /// diagnostic's sample or row, a contact list or a frame is due (the
    /// last step always has a frame and a thermo row).
    fn reads_state(&self, step: u64, total: u64) -> bool {
        self.reads_loads(step, total)
            || self.tables.iter().any(|b| b.writes_at(step))
            || self.frame_due(step, total)
    }

    /// Whether a frame is due at `step` (the last step always has one).
    fn frame_due(&self, step: u64, total: u64) -> bool {
        (self.every > 0 && step.is_multiple_of(self.every)) || step == total
    }

    /// Whether a thermo row is due at `step` (the last step always has one).
    fn thermo_due(&self, step: u64, total: u64) -> bool {
        step.is_multiple_of(self.thermo_every) || step == total
    }

    /// Write what is due at the current step (the last step always gets a frame and a thermo row).
    fn record(&mut self, sim: &Simulation, total: u64) -> Result<()> {
        let step = sim.step;
        if self.thermo_due(step, total) {
            let thermo = sim.thermo();
            if let Some(f) = &mut self.file {
                f.append_thermo(&thermo.row())?;
            }
            // The bound on overlaps, read from the row (the same on every rank).
            let too_deep = thermo.max_overlap > MAX_OVERLAP;
            self.last = Some(thermo);
            if too_deep {
                if let Some(e) = sim.overlap_error() {
                    return Err(e);
                }
            }
        }
        for b in &mut self.tables {
            if b.samples_at(step) {
                b.sample(&sim.view(), sim.comm());
            }
            if b.writes_at(step) {
                let row = b.take_row(step, sim.time());
                if let Some(f) = &mut self.file {
                    f.append_diagnostic(b.name(), &row)?;
                }
            }
        }
        for (name, every) in &self.lists {
            if step.is_multiple_of(*every) {
                let mine = sorted_contacts(&sim.view());
                if sim.comm().size() == 1 {
                    if let Some(f) = &mut self.file {
                        f.append_contacts(name, step, sim.time(), &mine)?;
                    }
                    continue;
                }
                // Every rank writes its contacts at its offset; the writer
                // then adds the list's row.
                let suspended = self.file.take().map(OutputFile::suspend);
                let (start, count) =
                    frames::append_contacts_collective(&self.path, sim.comm(), name, &mine)?;
                if let Some(s) = suspended {
                    let mut f = s.reopen()?;
                    f.append_contact_row(name, step, sim.time(), start, count)?;
                    self.file = Some(f);
                }
            }
        }
        if self.frame_due(step, total) {
            self.frame(sim)?;
        }
        Ok(())
    }

    /// Write a frame: every rank's owned rows, sorted by id within each
    /// rank's part ([`SimFrame`]). On several ranks rank 0 closes the
    /// file, every rank writes its rows at its offset
    /// ([`frames::write_frame_collective`]), and rank 0 opens it again.
    /// Collective.
    fn frame(&mut self, sim: &Simulation) -> Result<()> {
        let start = Instant::now();
        self.write_frame(sim)?;
        self.io.frames += 1;
        self.io.frame_seconds += start.elapsed().as_secs_f64();
        Ok(())
    }

    /// [`Self::frame`]'s work.
    fn write_frame(&mut self, sim: &Simulation) -> Result<()> {
        let frame = SimFrame::new(sim, &self.fields);
        if sim.comm().size() == 1 {
            if let Some(file) = &mut self.file {
                file.write_frame(&frame)?;
            }
            return Ok(());
        }
        let suspended = self.file.take().map(OutputFile::suspend);
        let total = frames::write_frame_collective(&self.path, sim.comm(), &frame)?;
        if let Some(s) = suspended {
            let entry = frames::frame_entry(&frame, total as usize);
            self.file = Some(s.resume(entry)?);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(f) = &mut self.file {
            f.flush()?;
        }
        Ok(())
    }

    fn path(&self) -> Option<PathBuf> {
        self.file.as_ref().map(|f| f.path().to_path_buf())
    }
}

/// The particles a run will hold at its end, at most: those of step 0 and
/// what every pour source owes by the last step (for the progress lines'
/// ETA, which a growing pour would otherwise underestimate).
fn expected_particles(setup: &Setup, total: u64) -> f64 {
    let end = total as f64 * setup.dt;
    let poured: f64 = setup
        .pours
        .iter()
        .map(|p| {
            let owed = (p.rate * p.until.min(end)).floor();
            p.count.map_or(owed, |c| owed.min(c as f64))
        })
        .sum();
    setup.initial_count as f64 + poured
}

/// A progress bar on a terminal, periodic log lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    log_every: u64,
    total: u64,
    /// Particles expected at the end ([`expected_particles`]).
    final_particles: f64,
    /// Step and clock of the last log line: rates are of the recent window.
    last: (u64, Instant),
    quiet: bool,
}

impl Progress {
    fn new(first: u64, total: u64, final_particles: f64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(total);
            b.set_position(first);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps  {per_sec}  eta {eta}  {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Self {
            bar,
            log_every: (total / 10).max(1),
            total,
            final_particles,
            last: (first, Instant::now()),
            quiet,
        }
    }

    /// Show step `step` (simulated time `time`, `owned` particles on this
    /// rank) with the last thermo row's particle count, kinetic energy and
    /// contacts.
    fn tick(&mut self, step: u64, time: f64, owned: usize, thermo: Option<&Thermo>) {
        if self.quiet {
            return;
        }
        let particles = thermo.map_or(owned as f64, |t| t.particles);
        let state = match thermo {
            Some(t) => format!(
                "t = {}  KE {}  {:.0} contacts  {:.0} particles",
                sig(time, 4),
                sig(t.kinetic_energy, 4),
                t.contacts,
                t.particles
            ),
            None => format!("t = {}  {particles:.0} particles", sig(time, 4)),
        };
        if let Some(b) = &self.bar {
            if step.is_multiple_of(64) || step == self.total {
                b.set_position(step);
                b.set_message(state);
            }
        } else if step.is_multiple_of(self.log_every) {
            // The rate of the recent window, in particle-steps: the
            // remaining steps cost what the particles of the end will.
            let (since, at) = self.last;
            let el = at.elapsed().as_secs_f64().max(1e-9);
            let rate = (step - since) as f64 / el;
            let per_particle = rate * particles.max(1.0);
            let eta = (self.total - step) as f64 * particles.max(self.final_particles).max(1.0)
                / per_particle.max(1e-9);
            eprintln!(
                "step {step}/{} ({:.0}%)  {state}  {rate:.0} steps/s  eta {eta:.0} s",
                self.total,
                100.0 * step as f64 / self.total as f64
            );
            self.last = (step, Instant::now());
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The walls as the XDMF sidecar draws them.
fn wall_scene(setup: &Setup) -> WallScene {
    WallScene {
        walls: setup.walls_at(0.0),
        moving: setup.moving_walls.clone(),
        names: setup.wall_names.clone(),
        domain: setup.domain,
    }
}
