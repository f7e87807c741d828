//! `gravel`: the command-line front end (`run`, `check`, `info`).

use clap::{Parser, Subcommand};
use gravel::config::Setup;
use gravel::error::GravelError;
use gravel::parallel::comm::Comm;
#[cfg(not(feature = "mpi"))]
use gravel::parallel::comm::SerialComm;
use gravel::parallel::grid::Decomposition;
use gravel::run::{run_with, RunOptions};
use gravel::sim::Stage;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gravel",
    version,
    about = "Discrete element method for granular materials, bitwise reproducible on any number of threads and ranks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a simulation.
    Run {
        /// The TOML config.
        config: PathBuf,
        /// Override the number of steps (1 to 2^53).
        #[arg(long, allow_negative_numbers = true)]
        steps: Option<i128>,
        /// Override the output directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Continue from a checkpoint.
        #[arg(long)]
        restart: Option<PathBuf>,
        /// Rayon threads per rank (0 = all available).
        #[arg(long, allow_negative_numbers = true)]
        threads: Option<i128>,
        /// No progress output (the final summary is still printed).
        #[arg(long)]
        quiet: bool,
        /// Write the final state (particles and contact history, exact bits
        /// as hex) to this text file, for comparing runs bit for bit.
        #[arg(long, value_name = "FILE")]
        dump_state: Option<PathBuf>,
        /// With --dump-state: also dump every N steps, to FILE.<step, 9 digits>.
        #[arg(
            long,
            value_name = "N",
            default_value_t = 0,
            requires = "dump_state",
            allow_negative_numbers = true
        )]
        dump_every: i128,
        /// Replace the output of an earlier run of the same name in the output
        /// directory (without it, such a run is refused).
        #[arg(long)]
        overwrite: bool,
    },
    /// Validate a config and print what it derives.
    Check {
        /// The TOML config.
        config: PathBuf,
        /// Show the decomposition this many MPI ranks would use.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
        ranks: i128,
    },
    /// Summarise an output or checkpoint file.
    Info {
        /// The HDF5 file.
        file: PathBuf,
        /// Read every dataset and check its checksums; exit 2 naming the damaged
        /// frames.
        #[arg(long)]
        verify: bool,
    },
}

fn main() -> ExitCode {
    // A reader that closes our standard output early (`gravel check c.toml |
    // head`) ends the process quietly, as it does any Unix filter, instead of
    // making `println!` panic. Only the summary and reports go to standard
    // output, after the run and its checkpoint are written.
    // SAFETY: called first thing in `main`, before any thread is started;
    // `SIG_DFL` is a valid disposition for `SIGPIPE`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    gravel::run::tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let (comm, session) = transport();
    let (rank, size) = (comm.rank(), comm.size());
    let launched = gravel::parallel::launcher::check_environment(size, cfg!(feature = "mpi"))
        .map_err(|m| GravelError::config(std::path::Path::new("environment"), m));
    match launched.and_then(|()| dispatch(cli.command, comm)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Config errors are the same on every rank: rank 0 speaks for all.
            // A failure on another rank was reported there.
            let speak = match &e {
                GravelError::Config { .. } => rank == 0,
                GravelError::Elsewhere(_) => false,
                _ => true,
            };
            if speak {
                eprintln!("error: {e}");
            }
            if size > 1 && matches!(e, GravelError::Io(_)) {
                // I/O errors happen on one rank: the others would wait forever.
                abort(e.exit_code());
            }
            // Any other error reaches every rank; the silent ones wait for
            // the message, or mpirun, seeing them exit first, may stop the
            // rank that reports before it has. (MPI is finalised only when
            // `session` goes, after this: finalising in the run, before the
            // message, let that happen.)
            if size > 1 {
                session.barrier();
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// The transport: MPI when built with it (a plain start is a 1-rank job),
/// with the session that keeps MPI initialised until `main` returns.
#[cfg(feature = "mpi")]
fn transport() -> (Box<dyn Comm>, gravel::parallel::mpi_comm::MpiSession) {
    match gravel::parallel::mpi_comm::MpiComm::init() {
        Some((c, session)) => (Box::new(c), session),
        None => {
            eprintln!("error: MPI could not be initialised with serialised thread support");
            std::process::exit(1);
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn transport() -> (Box<dyn Comm>, NoSession) {
    (Box::new(SerialComm), NoSession)
}

/// Without MPI there is one rank, and nothing to wait for.
#[cfg(not(feature = "mpi"))]
struct NoSession;

#[cfg(not(feature = "mpi"))]
impl NoSession {
    fn barrier(&self) {}
}

#[cfg(feature = "mpi")]
fn abort(code: i32) -> ! {
    use mpi::traits::Communicator;
    mpi::topology::SimpleCommunicator::world().abort(code)
}

#[cfg(not(feature = "mpi"))]
fn abort(code: i32) -> ! {
    std::process::exit(code)
}

/// Refuse an unknown `GRAVEL_ISA` ([`gravel::simd::isa`]) or `GRAVEL_HALO`
/// ([`gravel::parallel::node_pages`]) before anything runs.
fn check_variables() -> Result<(), GravelError> {
    gravel::simd::isa::check_request()
        .and_then(|()| gravel::parallel::node_pages::check_request())
        .map_err(|m| GravelError::config(std::path::Path::new("environment"), m))
}

/// A whole-number flag as a `u64`: a negative value or one beyond `u64` is
/// refused (exit 2), naming the flag, its value and what is allowed; the
/// bounds within are checked where the flag is used.
fn whole(config: &Path, flag: &str, n: i128, allowed: &str) -> Result<u64, GravelError> {
    u64::try_from(n)
        .map_err(|_| GravelError::config(config, format!("{flag} {n}: must be {allowed}")))
}

/// `path` must be a file: a directory or a missing path is refused (exit 2)
/// before the HDF5 library sees it.
fn checkpoint_file(path: &Path, what: &str) -> Result<(), GravelError> {
    let problem = if path.is_dir() {
        "is a directory"
    } else if !path.exists() {
        "does not exist"
    } else {
        return Ok(());
    };
    let p = path.display();
    Err(GravelError::config(
        path,
        if what == "info" {
            format!("info: {p} {problem}; give an output or checkpoint file (.h5)")
        } else {
            format!("{what}: {p} {problem}, cannot restart from it; give a checkpoint file (.h5)")
        },
    ))
}

fn dispatch(cmd: Command, comm: Box<dyn Comm>) -> Result<(), GravelError> {
    match cmd {
        Command::Run {
            config,
            steps,
            out,
            restart,
            threads,
            quiet,
            dump_state,
            dump_every,
            overwrite,
        } => {
            check_variables()?;
            let steps = steps
                .map(|n| whole(&config, "--steps", n, "a whole number, 1 to 2^53"))
                .transpose()?;
            let threads = threads
                .map(|n| {
                    whole(
                        &config,
                        "--threads",
                        n,
                        "a whole number, 0 to 1024 (0 = all available)",
                    )
                })
                .transpose()?
                .map(|n| n as usize);
            let dump_every = whole(
                &config,
                "--dump-every",
                dump_every,
                "a whole number ≥ 0 (0 = only the final state)",
            )?;
            if let Some(r) = &restart {
                checkpoint_file(r, "--restart")?;
            }
            let reading = std::time::Instant::now();
            let setup = Setup::from_file_shared(&config, comm.as_ref())?;
            let config_seconds = reading.elapsed().as_secs_f64();
            let opts = RunOptions {
                steps,
                out,
                threads,
                restart,
                quiet,
                dump_state,
                dump_every,
                overwrite,
            };
            let s = run_with(setup, &opts, comm)?;
            // --quiet hides the progress only: the summary is always printed.
            if s.is_root() {
                if s.first_step > 0 {
                    println!("restarted from step {}", s.first_step);
                }
                println!(
                    "done: {} steps of {} particles in {:.3} s on {} rank(s) x {} thread(s): {:.3} million particle-steps/s per core",
                    s.steps,
                    s.particles,
                    s.seconds,
                    s.ranks,
                    s.threads,
                    s.particle_steps_per_second_per_core() / 1e6
                );
                let spent = |stage| s.timers.spent(stage).as_secs_f64();
                println!(
                    "time: force {:.3} s, neighbor {:.3} s ({} rebuilds), integrate {:.3} s, insert {:.3} s, output {:.3} s; hot loops: {}",
                    spent(Stage::Force),
                    spent(Stage::Neighbor),
                    s.timers.rebuilds,
                    spent(Stage::Integrate),
                    spent(Stage::Insert),
                    spent(Stage::Output),
                    gravel::simd::isa::active().name()
                );
                if s.ranks > 1 {
                    for (r, st) in s.per_rank.iter().enumerate() {
                        println!(
                            "rank {r}: {} owned, {} ghosts (ratio {:.3}), {} contacts, comm {:.1}% of {:.3} s, force {:.3} s",
                            st.owned,
                            st.ghosts,
                            st.ghosts as f64 / (st.owned.max(1)) as f64,
                            st.contacts,
                            100.0 * st.comm_seconds / st.seconds.max(1e-12),
                            st.seconds,
                            st.force_seconds
                        );
                    }
                    let b = &s.balance;
                    let owned: Vec<f64> = s.per_rank.iter().map(|r| r.owned as f64).collect();
                    let mean = owned.iter().sum::<f64>() / owned.len() as f64;
                    let max = owned.iter().copied().fold(0.0, f64::max);
                    println!(
                        "balance: imbalance {:.3} (max/mean cost), owned {:.3} (max/mean); {} rebalances in {} checks ({:.3} s), worst imbalance found {:.3}",
                        s.imbalance,
                        if mean > 0.0 { max / mean } else { 1.0 },
                        b.rebalances,
                        b.checks,
                        s.balance_seconds,
                        b.worst_imbalance.max(s.imbalance)
                    );
                    println!("decomposition: {}", s.decomposition);
                }
                let io = &s.io;
                println!(
                    "set-up: config {:.2} s, {} {:.2} s; written: {} frame(s) in {:.2} s, {} checkpoint(s) in {:.2} s",
                    config_seconds,
                    if s.first_step > 0 {
                        "checkpoint read and restored"
                    } else {
                        "particles placed and first forces"
                    },
                    io.start_seconds,
                    io.frames,
                    io.frame_seconds,
                    io.checkpoints,
                    io.checkpoint_seconds
                );
                if let Some(o) = &s.output {
                    println!("output: {}", o.display());
                }
                if let Some(c) = &s.checkpoint {
                    println!("checkpoint: {}", c.display());
                }
            }
            Ok(())
        }
        Command::Check { config, ranks } => {
            check_variables()?;
            let ranks = whole(&config, "--ranks", ranks, "a whole number, 1 or more")? as usize;
            if ranks == 0 {
                return Err(GravelError::config(&config, "--ranks 0: must be 1 or more"));
            }
            let setup = Setup::from_file(&config)?;
            // Every random fill placed whole, slab by slab: whether it holds its count.
            setup.initial.check_placed().map_err(|(k, u)| {
                GravelError::config(&config, gravel::insert::cells::unplaced_message(k, &u))
            })?;
            let decomp = Decomposition::for_ranks(&setup, ranks, 0)?;
            if comm.rank() == 0 {
                print!("{}", gravel::run::report::check_report(&setup, &decomp));
                println!(
                    "hot loops: {} build ({} to choose)",
                    gravel::simd::isa::active().name(),
                    gravel::simd::isa::ISA_VAR
                );
            }
            Ok(())
        }
        Command::Info { file, verify } => {
            if comm.rank() != 0 {
                return Ok(());
            }
            checkpoint_file(&file, "info")?;
            let is_checkpoint = gravel::io::checkpoint::is_checkpoint(&file);
            if verify && !is_checkpoint {
                // (A checkpoint is read and verified in full by its summary.)
                let found = gravel::io::verify::verify(&file)
                    .map_err(|e| GravelError::config(&file, e.what()))?;
                println!("{}: {found}", file.display());
                return Ok(());
            }
            let text = if is_checkpoint {
                gravel::io::checkpoint::summarize(&file)
            } else {
                gravel::io::info::summarize(&file)
            }
            .map_err(|e| GravelError::config(&file, e.what()))?;
            print!("{text}");
            Ok(())
        }
    }
}
