//! Every path a run will write, checked before anything is built or written
//! ([`check_paths`]), and the lock that keeps a second run out of an output
//! while one writes it ([`OutputLock`]).
//!
//! The rule (docs/config.md, "Output paths"): a run is refused with exit 2,
//! before step 0 and before any existing file is touched, when the output
//! directory cannot be created or written, when one of the run's files is
//! taken by a directory, when the `--dump-state` file cannot be written, when
//! the output of an earlier run is in the way (unless `--overwrite` or
//! `--restart`), or when another run is writing the same output now.

use super::RunOptions;
use crate::config::Setup;
use crate::io::checkpoint;
use crate::io::verify::verify;
use rustix::fs::{flock, Access, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The files a run named `name` writes in `dir`.
pub(crate) struct RunFiles {
    /// `DIR/NAME.h5`.
    pub h5: PathBuf,
    /// `DIR/NAME.xdmf`.
    pub xdmf: PathBuf,
    /// `DIR/NAME.checkpoint.h5`.
    pub checkpoint: PathBuf,
    /// `DIR/NAME.checkpoint.h5.tmp`.
    pub checkpoint_tmp: PathBuf,
    /// `DIR/NAME.lock`.
    pub lock: PathBuf,
    /// `DIR/NAME.h5.journal`, the output's undo journal while it is written.
    pub journal: PathBuf,
}

impl RunFiles {
    pub(crate) fn new(dir: &Path, name: &str) -> Self {
        let checkpoint = checkpoint::checkpoint_path(dir, name);
        let h5 = dir.join(format!("{name}.h5"));
        Self {
            journal: crate::io::journal::journal_path(&h5),
            h5,
            xdmf: dir.join(format!("{name}.xdmf")),
            checkpoint_tmp: checkpoint::temporary_path(&checkpoint),
            checkpoint,
            lock: dir.join(format!("{name}.lock")),
        }
    }
}

/// How the output directory is named in messages: by the flag that gave it, or by
/// its config key.
fn dir_key(setup: &Setup, opts: &RunOptions) -> String {
    let dir = setup.output.dir.display();
    match opts.out {
        Some(_) => format!("--out {dir}"),
        None => format!("output.dir = \"{dir}\""),
    }
}

/// Checks every path the run will write, reading only (rank 0): the output
/// directory, the run's files in it, an earlier run's output, a run writing it now,
/// and the `--dump-state` file. The message names the flag or key and the path.
pub(crate) fn check_paths(setup: &Setup, opts: &RunOptions) -> Result<(), String> {
    let dir = &setup.output.dir;
    let key = dir_key(setup, opts);
    check_dir(dir, &key, "output directory")?;
    let files = RunFiles::new(dir, &setup.name);
    for path in [
        &files.h5,
        &files.xdmf,
        &files.checkpoint,
        &files.checkpoint_tmp,
        &files.lock,
        &files.journal,
    ] {
        if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            return Err(format!(
                "{key}: {} is a directory, but the run writes a file there",
                path.display()
            ));
        }
    }
    if let Some(pid) = probe_lock(&files.lock) {
        return Err(busy(&key, &files.h5, pid));
    }
    let earlier = [&files.h5, &files.checkpoint]
        .into_iter()
        .find(|p| p.exists());
    let restart = opts.restart.is_some();
    if let Some(old) = earlier.filter(|_| !restart && !opts.overwrite) {
        return Err(format!(
            "{key}: {} holds the output of an earlier run; pass --overwrite to replace it, --restart {} to continue it, or choose another --out",
            old.display(),
            files.checkpoint.display()
        ));
    }
    if !restart && files.h5.is_file() && rustix::fs::access(&files.h5, Access::WRITE_OK).is_err() {
        return Err(format!(
            "{key}: --overwrite would replace {}, but it is not writable",
            files.h5.display()
        ));
    }
    if restart && files.h5.is_file() {
        // A restart appends to it: it must be writable and whole.
        if rustix::fs::access(&files.h5, Access::READ_OK | Access::WRITE_OK).is_err() {
            return Err(format!(
                "{key}: the restart appends to {}, but it is not writable",
                files.h5.display()
            ));
        }
        if let Err(e) = verify(&files.h5) {
            return Err(format!(
                "{key}: the restart appends to {}, which does not verify (gravel info --verify): {}; move it away to start a new output, or choose another --out",
                files.h5.display(),
                e.what()
            ));
        }
    }
    if let Some(dump) = &opts.dump_state {
        let key = format!("--dump-state {}", dump.display());
        if dump.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            return Err(format!("{key}: is a directory, not a file"));
        }
        let parent = match dump.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        for (what, path) in [
            ("the output", &files.h5),
            ("the XDMF sidecar", &files.xdmf),
            ("the checkpoint", &files.checkpoint),
            ("the checkpoint's temporary file", &files.checkpoint_tmp),
            ("the lock file", &files.lock),
            ("the output's journal", &files.journal),
        ] {
            if same_file(dump, path) {
                return Err(format!(
                    "{key}: is {what} of this run ({}); choose another file",
                    path.display()
                ));
            }
        }
        match parent.metadata() {
            Ok(m) if m.is_dir() => writable(parent, &key, "folder")?,
            Ok(_) => return Err(format!("{key}: {} is not a directory", parent.display())),
            Err(e) => {
                return Err(format!(
                    "{key}: the folder {} does not exist ({e}); the dump is not created there",
                    parent.display()
                ))
            }
        }
    }
    Ok(())
}

/// `a` and `b` name the same file: the same name in the same folder (folders
/// compared once resolved, when they exist).
fn same_file(a: &Path, b: &Path) -> bool {
    let folder = |p: &Path| {
        let parent = match p.parent() {
            Some(q) if !q.as_os_str().is_empty() => q,
            _ => Path::new("."),
        };
        parent
            .canonicalize()
            .unwrap_or_else(|_| parent.to_path_buf())
    };
    a.file_name() == b.file_name() && folder(a) == folder(b)
}

/// `dir` is a writable directory, or can be created: its nearest existing ancestor
/// is a writable directory.
fn check_dir(dir: &Path, key: &str, what: &str) -> Result<(), String> {
    match dir.metadata() {
        Ok(m) if m.is_dir() => return writable(dir, key, what),
        Ok(_) => {
            return Err(format!(
                "{key}: {} is a file, not a directory",
                dir.display()
            ))
        }
        Err(e) if !missing(&e) => {
            return Err(format!("{key}: cannot reach {}: {e}", dir.display()))
        }
        Err(_) => {}
    }
    for above in dir.ancestors().skip(1) {
        let above = if above.as_os_str().is_empty() {
            Path::new(".")
        } else {
            above
        };
        match above.metadata() {
            Ok(m) if m.is_dir() => {
                return writable(above, key, "folder")
                    .map_err(|m| format!("{m}, so the {what} {} cannot be created", dir.display()))
            }
            Ok(_) => {
                return Err(format!(
                    "{key}: cannot create the {what} {}: {} is a file, not a directory",
                    dir.display(),
                    above.display()
                ))
            }
            Err(e) if !missing(&e) => {
                return Err(format!(
                    "{key}: cannot create the {what} {}: {}: {e}",
                    dir.display(),
                    above.display()
                ))
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// The path is not there (or a file stands where a folder of it should be: the
/// ancestors say which).
fn missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The directory `dir` lets this process create files in it.
fn writable(dir: &Path, key: &str, what: &str) -> Result<(), String> {
    rustix::fs::access(dir, Access::WRITE_OK | Access::EXEC_OK)
        .map_err(|e| format!("{key}: the {what} {} is not writable ({e})", dir.display()))
}

/// The message for an output another run holds.
fn busy(key: &str, h5: &Path, pid: Option<u32>) -> String {
    let who = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
    format!(
        "{key}: another gravel run{who} is writing {} now; wait for it to end or choose another --out",
        h5.display()
    )
}

/// Whether another process holds the lock file `path` now (with its pid, if it wrote
/// one); `None` when it is free or missing. Takes and drops the lock at once.
fn probe_lock(path: &Path) -> Option<Option<u32>> {
    let file = File::open(path).ok()?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => None,
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Some(read_pid(&file)),
        Err(_) => None,
    }
}

fn read_pid(mut file: &File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The file system has no `flock` (rather than: the lock is taken).
fn unsupported(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    [Errno::NOSYS, Errno::OPNOTSUPP, Errno::NOLCK].contains(&e)
}

/// An exclusive advisory lock (`flock`) on `DIR/NAME.lock`, held while the run
/// writes its output and released when it ends, however it ends (the kernel drops
/// the lock of a killed process). The file is left in place; its content is the
/// pid of the run holding it.
#[derive(Debug)]
pub(crate) struct OutputLock {
    _file: File,
}

impl OutputLock {
    /// Creates the output directory if missing and takes the lock, or says why not:
    /// another run holds it, or the file system refused.
    pub(crate) fn take(setup: &Setup, opts: &RunOptions) -> Result<Self, String> {
        let key = dir_key(setup, opts);
        let dir = &setup.output.dir;
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "{key}: cannot create the output directory {}: {e}",
                dir.display()
            )
        })?;
        let files = RunFiles::new(dir, &setup.name);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&files.lock)
            .map_err(|e| format!("{key}: cannot open {}: {e}", files.lock.display()))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                return Err(busy(&key, &files.h5, read_pid(&file)));
            }
            Err(e) if unsupported(e) => {
                // Some parallel file systems (Lustre without its `flock` option)
                // have no flock: run unguarded rather than not at all.
                eprintln!(
                    "warning: {}: the file system does not support locks ({e}); a second run into this output will not be stopped",
                    files.lock.display()
                );
            }
            Err(e) => return Err(format!("{key}: cannot lock {}: {e}", files.lock.display())),
        }
        // The pid is for the message of a run refused while this one holds it.
        let _ = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(Self { _file: file })
    }
}
