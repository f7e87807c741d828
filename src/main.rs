//! `gravel`: the command-line front end (`run`, `check`, `info`).

use clap::{Parser, Subcommand};
use gravel::config::Setup;
use gravel::error::GravelError;
use gravel::run::{run, RunOptions};
use std::path::PathBuf;
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
        /// Override the number of steps.
        #[arg(long)]
        steps: Option<u64>,
        /// Override the output directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Continue from a checkpoint.
        #[arg(long)]
        restart: Option<PathBuf>,
        /// Rayon threads per rank (0 = all available).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress output.
        #[arg(long)]
        quiet: bool,
    },
    /// Validate a config and print what it derives.
    Check {
        /// The TOML config.
        config: PathBuf,
    },
    /// Summarise an output or checkpoint file.
    Info {
        /// The HDF5 file.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn dispatch(cmd: Command) -> Result<(), GravelError> {
    match cmd {
        Command::Run {
            config,
            steps,
            out,
            restart,
            threads,
            quiet,
        } => {
            let setup = Setup::from_file(&config)?;
            let opts = RunOptions {
                steps,
                out,
                threads,
                restart,
                quiet,
            };
            let s = run(setup, &opts)?;
            if !quiet {
                if s.first_step > 0 {
                    println!("restarted from step {}", s.first_step);
                }
                println!(
                    "done: {} steps of {} particles in {:.2} s on {} thread(s): {:.3} million particle-steps/s per core",
                    s.steps,
                    s.particles,
                    s.seconds,
                    s.threads,
                    s.particle_steps_per_second_per_core() / 1e6
                );
                println!(
                    "time: force {:.2} s, neighbor {:.2} s ({} rebuilds), integrate {:.2} s",
                    s.timers.force.as_secs_f64(),
                    s.timers.neighbor.as_secs_f64(),
                    s.timers.rebuilds,
                    s.timers.integrate.as_secs_f64()
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
        Command::Check { config } => {
            let setup = Setup::from_file(&config)?;
            print!("{}", gravel::report::check_report(&setup));
            Ok(())
        }
        Command::Info { file } => {
            let text = if gravel::io::checkpoint::is_checkpoint(&file) {
                gravel::io::checkpoint::summarize(&file)
            } else {
                gravel::io::h5out::summarize(&file)
            }
            .map_err(|e| GravelError::config(&file, e.to_string()))?;
            print!("{text}");
            Ok(())
        }
    }
}
