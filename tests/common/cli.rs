//! Starting the `gravel` binary and reading what it printed.

use std::ffi::OsStr;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_gravel");

/// A command that starts the binary (add arguments, environment, working directory).
pub fn gravel_command() -> Command {
    Command::new(BIN)
}

/// Run `gravel` with `args` in `cwd` and wait for it.
pub fn gravel<I, S>(args: I, cwd: &Path) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    gravel_command()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("cannot start the gravel binary")
}

/// Bytes a process printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit status (and signal), stdout and stderr of a finished process, for failure messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status {:?} (signal {:?})\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        out.status.signal(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Write `text` to `dir/name` and return the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// One mpirun at a time: the machine has two cores and the runs oversubscribe them.
static MPIRUN: Mutex<()> = Mutex::new(());

/// `run CONFIG --quiet --threads 1 --out OUT --dump-state DUMP`: the
/// arguments of a run whose final state is compared across rank counts.
pub fn dump_run_args<'a>(config: &'a Path, out: &'a Path, dump: &'a Path) -> Vec<&'a str> {
    let s = |p: &'a Path| p.to_str().expect("a UTF-8 path");
    vec![
        "run",
        s(config),
        "--quiet",
        "--threads",
        "1",
        "--out",
        s(out),
        "--dump-state",
        s(dump),
    ]
}

/// `mpirun -np NP gravel ARGS` in `cwd` (oversubscribed, unbound, root
/// allowed: the settings of `scripts/mpi-env`), one at a time, killed after
/// five minutes.
pub fn mpirun(np: usize, args: &[&str], cwd: &Path) -> Output {
    mpirun_with_env(np, &[], args, cwd)
}

/// As [`mpirun`], with the variables `env` set in every rank's environment.
pub fn mpirun_with_env(np: usize, env: &[(&str, &str)], args: &[&str], cwd: &Path) -> Output {
    let _guard = MPIRUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new("mpirun");
    cmd.envs(env.iter().copied());
    cmd.args(["--oversubscribe", "--bind-to", "none", "-np"])
        .arg(np.to_string())
        .arg(BIN)
        .args(args)
        .current_dir(cwd)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("mpirun must be installed (scripts/install-deps)");
    let start = Instant::now();
    let limit = Duration::from_secs(300);
    loop {
        if child.try_wait().expect("wait on mpirun").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("mpirun -np {np} {args:?} ran over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("mpirun output")
}
