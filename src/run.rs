//! The run driver: thread pool, the step loop, output cadence, progress.

use crate::comm::{Comm, SerialComm};
use crate::config::Setup;
use crate::diagnostics::THERMO_COLUMNS;
use crate::error::{GravelError, Result};
use crate::io::h5out::{Frame, OutputFile};
use crate::sim::{Simulation, Timers};
use glam::DVec3;
use std::io::IsTerminal;
use std::path::PathBuf;
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
    /// No progress output.
    pub quiet: bool,
}

/// What a finished run reports.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Steps run.
    pub steps: u64,
    /// Particles at the end.
    pub particles: u64,
    /// Wall-clock seconds in the step loop.
    pub seconds: f64,
    /// Rayon threads used.
    pub threads: usize,
    /// Stage timers.
    pub timers: Timers,
    /// Output file written, if any.
    pub output: Option<PathBuf>,
}

impl RunSummary {
    /// Particle-steps per second per core (thread).
    pub fn particle_steps_per_second_per_core(&self) -> f64 {
        self.particles as f64 * self.steps as f64 / self.seconds / self.threads as f64
    }
}

/// Run a validated setup to the end on one process.
pub fn run(setup: Setup, opts: &RunOptions) -> Result<RunSummary> {
    run_with(setup, opts, Box::new(SerialComm))
}

/// Run a validated setup with the given transport.
pub fn run_with(mut setup: Setup, opts: &RunOptions, comm: Box<dyn Comm>) -> Result<RunSummary> {
    if let Some(s) = opts.steps {
        setup.steps = s;
    }
    if let Some(d) = &opts.out {
        setup.output.dir = d.clone();
    }
    let threads = opts.threads.unwrap_or(setup.threads);
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
    let mut sim = Simulation::new(setup, comm)?;
    let rank0 = sim.comm().rank() == 0;
    let mut out = Output::create(&sim, threads)?;
    out.record(&sim, total)?;
    let progress = Progress::new(total, opts.quiet || !rank0);
    let start = Instant::now();
    while sim.step < total {
        if let Err(e) = sim.step() {
            progress.finish();
            out.flush()?;
            return Err(e);
        }
        out.record(&sim, total)?;
        progress.tick(sim.step, sim.particles.n_owned);
    }
    let seconds = start.elapsed().as_secs_f64();
    progress.finish();
    out.flush()?;
    let particles = sim.comm().sum_u64(sim.particles.n_owned as u64);
    Ok(RunSummary {
        steps: total,
        particles,
        seconds,
        threads,
        timers: sim.timers,
        output: out.path(),
    })
}

/// The output file of a run (rank 0 writes it) and its cadence.
struct Output {
    file: Option<OutputFile>,
    every: u64,
    thermo_every: u64,
    fields: Vec<String>,
}

impl Output {
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
            Some(OutputFile::create(
                &path,
                env!("CARGO_PKG_VERSION"),
                &s.config_text,
                sim.comm().size() as u32,
                threads as u32,
                &THERMO_COLUMNS,
            )?)
        } else {
            None
        };
        Ok(Self {
            file,
            every: s.output.every,
            thermo_every: s.output.thermo_every,
            fields: s.output.fields.clone(),
        })
    }

    /// Write what is due at the current step (the last step always gets a frame and a thermo row).
    fn record(&mut self, sim: &Simulation, total: u64) -> Result<()> {
        let step = sim.step;
        let last = step == total;
        if step % self.thermo_every == 0 || last {
            let row = sim.thermo().row();
            if let Some(f) = &mut self.file {
                f.append_thermo(&row)?;
            }
        }
        if (self.every > 0 && step % self.every == 0) || last {
            self.frame(sim)?;
        }
        Ok(())
    }

    fn frame(&mut self, sim: &Simulation) -> Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let p = &sim.particles;
        let n = p.n_owned;
        let arr = |v: &[DVec3]| -> Vec<[f64; 3]> { v[..n].iter().map(|x| x.to_array()).collect() };
        let position: Vec<[f64; 3]> = p.x[..n]
            .iter()
            .map(|&x| sim.setup.domain.wrap(x).to_array())
            .collect();
        let data: Vec<(&str, Vec<[f64; 3]>)> = self
            .fields
            .iter()
            .map(|f| {
                let v = match f.as_str() {
                    "velocity" => arr(&p.v),
                    "omega" => arr(&p.omega),
                    "force" => arr(&p.force),
                    _ => arr(&p.torque),
                };
                (f.as_str(), v)
            })
            .collect();
        file.write_frame(&Frame {
            step: sim.step,
            time: sim.time(),
            id: &p.id[..n],
            position: &position,
            radius: &p.radius[..n],
            material: &p.material[..n],
            fields: data.iter().map(|(k, v)| (*k, v.as_slice())).collect(),
        })?;
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

/// A progress bar on a terminal, periodic log lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    log_every: u64,
    total: u64,
    start: Instant,
    quiet: bool,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(total);
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
            start: Instant::now(),
            quiet,
        }
    }

    fn tick(&self, step: u64, particles: usize) {
        if self.quiet {
            return;
        }
        if let Some(b) = &self.bar {
            if step % 64 == 0 || step == self.total {
                b.set_position(step);
                b.set_message(format!("{particles} particles"));
            }
        } else if step % self.log_every == 0 {
            let el = self.start.elapsed().as_secs_f64();
            let rate = step as f64 / el.max(1e-9);
            let eta = (self.total - step) as f64 / rate.max(1e-9);
            eprintln!(
                "step {step}/{} ({:.0}%)  {rate:.0} steps/s  eta {eta:.0} s  {particles} particles",
                self.total,
                100.0 * step as f64 / self.total as f64
            );
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
