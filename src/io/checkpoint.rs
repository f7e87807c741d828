//! Checkpoint files `<dir>/<name>.checkpoint.h5`: a [`Snapshot`] in HDF5,
//! written by every rank at once and read back by slices, on any number
//! of ranks.
//!
//! Layout (format version 3):
//! - root attributes `version` (gravel's, string), `config` (the TOML text the run
//!   was started with, string), `format` (`"gravel checkpoint"`) and
//!   `format_version` (u32, [`FORMAT_VERSION`]);
//! - `/checkpoint` with attributes `step`, `next_id`, `seed`, `history_len`, `walls`,
//!   `particles`, `pair_records`, `wall_records`, `deleted`, `rebuilt_at` (u64), `time`, `dt`,
//!   `deleted_mass` (f64), `flow_gradient` (f64 ×9, [`crate::neighbor::flow`]; a
//!   file without it has no flow fitted) and `checksum` (u64, see [`checksum`]);
//! - datasets, one row per particle: `id` (u64), `position`, `velocity`,
//!   `omega`, `x_ref`, `force`, `torque` (f64, N×3), `radius`, `mass` (f64),
//!   `material` (u32), `frozen` (u8), and where the row's records start:
//!   `pair_start`, `wall_start` (u64). The rows are the ranks' parts one
//!   after the other, each sorted by id (`id` identifies a row; on one rank
//!   the whole table is sorted by id);
//! - contact history keyed by global ids, each particle's records together
//!   and in the order of the rows: `pair_ids` (u64, M×2: particle, partner),
//!   `pair_history` (f64, M·h), `wall_ids` (u64, K), `wall_index` (u32, K),
//!   `wall_history` (f64, K·h); only records with a non-zero bit are stored;
//! - `pour_inserted` (u64, one per pouring source);
//! - `pour_waiting` (u64, W×3: source, first number, one past the last),
//!   the particles the sources drew that wait for room; a file without it
//!   (written before 2026-11-27) has none waiting;
//! - `/checkpoint/compat` with one u64 attribute per [`Compat`] entry.
//!
//! [`write_shared`] is atomic: the file is written as `<path>.tmp` by every
//! rank through MPI-IO ([`super::collective`]), closed, fsynced and renamed
//! over `path` by rank 0, and the directory fsynced, so a crash at any
//! moment leaves either the old checkpoint or the new one. The checksum is
//! a sum of one hash per row ([`rows_hash`]), so each rank hashes only its
//! own rows. [`read_shared`] gives each rank an even slice of the rows,
//! and checks the format, the shapes, the checksum (summed over the ranks)
//! and the consistency of the records, so a truncated or damaged file is
//! refused with a message naming the file and what is wrong.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use glam::DVec3;
use hdf5::types::{VarLenAscii, VarLenUnicode};
use hdf5::File;

use super::collective::{self, write_rows, write_vectors, Part, Pieces};
use super::layout::{write_attr, write_str_attr};
use crate::error::{Context, IoError, IoResult};
use crate::parallel::comm::{sum_wrapping, Comm, RowSpan, SerialComm};
use crate::state::particles::ParticleRecord;
use crate::state::rows::{RowView, StateRows};
use crate::state::snapshot::{Compat, Fnv, Snapshot};

/// The checkpoint layout version this build writes and reads.
pub const FORMAT_VERSION: u32 = 3;
/// The value of the root attribute `format`.
pub const FORMAT: &str = "gravel checkpoint";
/// The group holding the state.
pub const GROUP: &str = "checkpoint";
/// Test hook: when this environment variable holds a step number, the process kills
/// itself with SIGKILL half way through writing the checkpoint of that step (after
/// the temporary file is partly written), to test that a crash during a write
/// leaves the previous checkpoint intact.
pub const ABORT_HOOK: &str = "GRAVEL_TEST_ABORT_IN_CHECKPOINT";

/// The checkpoint path of run `name` in `dir`: `<dir>/<name>.checkpoint.h5`.
#[must_use]
pub fn checkpoint_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.checkpoint.h5"))
}

/// The temporary file a checkpoint is written to before the rename: `<path>.tmp`.
#[must_use]
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// The checksum of `snap` as a checkpoint stores it: [`header_hash`] plus
/// [`rows_hash`], modulo 2^64.
#[must_use]
pub fn checksum(snap: &Snapshot) -> u64 {
    let totals = snap.counts().map(|c| c as u64);
    header_hash(snap, totals).wrapping_add(rows_hash(snap))
}

/// FNV-1a over every scalar and text of `snap` (its rows left out), with
/// the numbers of particles, pair records and wall records over all ranks
/// (`totals`), in a fixed order. Every rank computes the same.
#[must_use]
pub fn header_hash(snap: &Snapshot, totals: [u64; 3]) -> u64 {
    let mut h = Fnv::default();
    for v in [
        snap.step,
        snap.seed,
        snap.next_id,
        snap.history_len as u64,
        snap.walls as u64,
        totals[0],
        totals[1],
        totals[2],
        snap.deleted,
    ] {
        h.u64(v);
    }
    h.f64(snap.time);
    h.f64(snap.dt);
    h.f64(snap.deleted_mass);
    snap.pour_inserted.iter().for_each(|&v| h.u64(v));
    // Hashed only when some wait, so that older files still verify.
    snap.pour_waiting.iter().flatten().for_each(|&v| h.u64(v));
    // Likewise only with a flow fitted.
    if snap.flow.iter().any(|&v| v != 0.0) {
        h.u64(snap.rebuilt_at);
        snap.flow.iter().for_each(|&v| h.f64(v));
    }
    h.str(&snap.config_text);
    for (k, v) in &snap.compat.entries {
        h.str(k);
        h.u64(*v);
    }
    h.finish()
}

/// The sum, modulo 2^64, of one FNV-1a hash per particle row (its fields)
/// and one per history record (its particle's id, its partner's id or wall
/// index, and its values). A sum does not depend on the order of the rows,
/// so each rank adds up its own rows and the ranks' sums add up to the
/// same checksum on any number of ranks; no rank hashes the whole payload.
#[must_use]
pub fn rows_hash(rows: &dyn StateRows) -> u64 {
    let mut sum = 0u64;
    let vec = |f: &mut Fnv, v: DVec3| v.to_array().iter().for_each(|&c| f.f64(c));
    rows.for_each_particle(&mut |row| {
        let mut f = Fnv::default();
        let r = &row.particle;
        f.u64(r.id);
        for v in [r.x, r.v, r.omega, row.x_ref, row.force, row.torque] {
            vec(&mut f, v);
        }
        f.f64(r.radius);
        f.f64(r.mass);
        f.u64(u64::from(r.material));
        f.u64(u64::from(r.frozen));
        sum = sum.wrapping_add(f.finish());
    });
    let mut record = |a: u64, b: u64, values: &[f64]| {
        let mut f = Fnv::default();
        f.u64(a);
        f.u64(b);
        values.iter().for_each(|&v| f.f64(v));
        sum = sum.wrapping_add(f.finish());
    };
    rows.for_each_pair(&mut |a, b, values| record(a, b, values));
    rows.for_each_wall(&mut |a, w, values| record(a, u64::from(w), values));
    sum
}

/// Write `snap` to `path` atomically, from one process (see
/// [`write_shared`]).
///
/// # Errors
/// As [`write_shared`].
pub fn write(path: &Path, snap: &Snapshot, version: &str) -> IoResult<()> {
    write_shared(path, snap, snap, version, &SerialComm)
}

/// Write the checkpoint of `header` (the run's scalars and texts; its rows
/// are not read) whose rows are every rank's `rows` (this rank's
/// particles, sorted by id, each followed by its records), atomically (see
/// the module documentation): every rank writes its rows into
/// `<path>.tmp` at its offset ([`super::collective`]), one column at a
/// time; once all have closed it, rank 0 syncs it, renames it over `path`
/// and syncs the directory. `version` is gravel's version, stored as the
/// root attribute `version`. Collective.
///
/// # Errors
/// If the temporary file cannot be written, synced or renamed; `path` is then untouched.
pub fn write_shared(
    path: &Path,
    header: &Snapshot,
    rows: &dyn StateRows,
    version: &str,
    comm: &dyn Comm,
) -> IoResult<()> {
    let tmp = temporary_path(path);
    let abort_at = std::env::var(ABORT_HOOK)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    let local = rows.counts().map(|c| c as u64);
    let spans = RowSpan::of(comm, &local);
    let totals = [spans[0].total, spans[1].total, spans[2].total];
    let sum = header_hash(header, totals).wrapping_add(sum_wrapping(comm, rows_hash(rows)));
    let (file, transfer) = collective::create(&tmp, comm).at(&tmp, "creating the checkpoint")?;
    let part = |span| Part {
        span,
        transfer,
        checksummed: false,
    };
    let contents = Contents {
        header,
        rows,
        parts: [part(spans[0]), part(spans[1]), part(spans[2])],
        lead: comm.rank() == 0,
        comm,
        checksum: sum,
        abort: abort_at == Some(header.step),
    };
    contents
        .write(&file, version)
        .at(&tmp, "writing the checkpoint")?;
    file.close().at(&tmp, "closing the checkpoint")?;
    comm.barrier();
    if comm.rank() == 0 {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .at(&tmp, "syncing the checkpoint to disk")?;
        std::fs::rename(&tmp, path).at(path, "renaming the new checkpoint into place")?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .at(dir, "syncing the checkpoint directory")?;
    }
    Ok(())
}

/// One rank's part of a checkpoint: `parts` are this rank's particle rows,
/// pair records and wall records; the `lead` rank (0) writes the run-wide
/// rows.
struct Contents<'a> {
    header: &'a Snapshot,
    rows: &'a dyn StateRows,
    parts: [Part; 3],
    lead: bool,
    comm: &'a dyn Comm,
    checksum: u64,
    /// The test hook ([`ABORT_HOOK`]): die half way.
    abort: bool,
}

impl Contents<'_> {
    /// A column of the particle rows.
    fn column<T>(&self, get: impl Fn(&RowView) -> T) -> Vec<T> {
        let mut out = Vec::with_capacity(self.rows.counts()[0]);
        self.rows.for_each_particle(&mut |row| out.push(get(row)));
        out
    }

    /// Write everything, one column at a time. Collective.
    fn write(&self, file: &File, version: &str) -> hdf5::Result<()> {
        let snap = self.header;
        let [rows, pairs, walls] = self.parts;
        write_str_attr(file, "version", version)?;
        write_str_attr(file, "config", &snap.config_text)?;
        write_str_attr(file, "format", FORMAT)?;
        write_attr(file, "format_version", &FORMAT_VERSION)?;
        let g = file.create_group(GROUP)?;
        for (name, v) in [
            ("step", snap.step),
            ("next_id", snap.next_id),
            ("seed", snap.seed),
            ("history_len", snap.history_len as u64),
            ("walls", snap.walls as u64),
            ("particles", rows.span.total),
            ("pair_records", pairs.span.total),
            ("wall_records", walls.span.total),
            ("deleted", snap.deleted),
            ("rebuilt_at", snap.rebuilt_at),
        ] {
            write_attr(&g, name, &v)?;
        }
        (g.new_attr::<f64>().shape([9]).create("flow_gradient"))
            .and_then(|a| a.write_raw(&snap.flow))?;
        write_attr(&g, "time", &snap.time)?;
        write_attr(&g, "dt", &snap.dt)?;
        write_attr(&g, "deleted_mass", &snap.deleted_mass)?;
        let vectors = |name: &str, get: fn(&RowView) -> DVec3| {
            write_vectors(&g, name, &self.column(|r| get(r).to_array()), rows)
        };
        write_rows(&g, "id", &self.column(|r| r.particle.id), rows)?;
        vectors("position", |r| r.particle.x)?;
        vectors("velocity", |r| r.particle.v)?;
        vectors("omega", |r| r.particle.omega)?;
        if self.abort {
            // The test hook: leave a partly written temporary file behind, as a crash would.
            file.flush()?;
            kill_self();
        }
        vectors("x_ref", |r| r.x_ref)?;
        vectors("force", |r| r.force)?;
        vectors("torque", |r| r.torque)?;
        write_rows(&g, "radius", &self.column(|r| r.particle.radius), rows)?;
        write_rows(&g, "mass", &self.column(|r| r.particle.mass), rows)?;
        write_rows(&g, "material", &self.column(|r| r.particle.material), rows)?;
        let frozen = self.column(|r| u8::from(r.particle.frozen));
        write_rows(&g, "frozen", &frozen, rows)?;
        drop(frozen);
        // Where each row's records start, in the whole file.
        let starts = |pair: bool| -> Vec<u64> {
            let span = if pair { pairs.span } else { walls.span };
            let mut at = span.offset;
            let mut out = Vec::with_capacity(self.rows.counts()[0]);
            self.rows.for_each_record_count(&mut |p, w| {
                out.push(at);
                at += (if pair { p } else { w }) as u64;
            });
            out
        };
        write_rows(&g, "pair_start", &starts(true), rows)?;
        write_rows(&g, "wall_start", &starts(false), rows)?;
        // The records, in pieces as they are read from the rows: one walk
        // per table, as a table's collective writes must not interleave
        // with another's (`Pieces`).
        let h = snap.history_len;
        let comm = self.comm;
        let mut ids = Pieces::<u64>::create(&g, "pair_ids", Some(2), pairs, comm)?;
        self.rows.for_each_pair(&mut |a, b, _| ids.push(&[a, b]));
        ids.finish()?;
        let mut values = Pieces::<f64>::create(&g, "pair_history", None, pairs.times(h), comm)?;
        self.rows.for_each_pair(&mut |_, _, v| values.push(v));
        values.finish()?;
        let mut ids = Pieces::<u64>::create(&g, "wall_ids", None, walls, comm)?;
        self.rows.for_each_wall(&mut |a, _, _| ids.push(&[a]));
        ids.finish()?;
        let mut index = Pieces::<u32>::create(&g, "wall_index", None, walls, comm)?;
        self.rows.for_each_wall(&mut |_, w, _| index.push(&[w]));
        index.finish()?;
        let mut values = Pieces::<f64>::create(&g, "wall_history", None, walls.times(h), comm)?;
        self.rows.for_each_wall(&mut |_, _, v| values.push(v));
        values.finish()?;
        // Run-wide values: rank 0's rows.
        let pours: &[u64] = if self.lead { &snap.pour_inserted } else { &[] };
        let span = RowSpan {
            offset: 0,
            local: pours.len() as u64,
            total: snap.pour_inserted.len() as u64,
        };
        write_rows(&g, "pour_inserted", pours, Part { span, ..rows })?;
        let waiting: Vec<u64> = if self.lead {
            snap.pour_waiting.iter().flatten().copied().collect()
        } else {
            Vec::new()
        };
        let span = RowSpan {
            offset: 0,
            local: waiting.len() as u64 / 3,
            total: snap.pour_waiting.len() as u64,
        };
        collective::write_matrix(&g, "pour_waiting", &waiting, 3, Part { span, ..rows })?;
        let compat = g.create_group("compat")?;
        for (k, v) in &snap.compat.entries {
            write_attr(&compat, k, v)?;
        }
        write_attr(&g, "checksum", &self.checksum)?;
        Ok(())
    }
}

/// Sends SIGKILL to this process (the test hook); aborts if that fails.
fn kill_self() -> ! {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    std::thread::sleep(std::time::Duration::from_secs(5));
    std::process::abort()
}

/// Whether `path` is an HDF5 file with a `/checkpoint` group.
#[must_use]
pub fn is_checkpoint(path: &Path) -> bool {
    super::open_read(path).is_ok_and(|f| f.link_exists(GROUP))
}

/// Read and validate the whole checkpoint at `path` (one process): the
/// rows sorted by id, each particle's records after it.
///
/// # Errors
/// If the file is missing, not HDF5, not a checkpoint, of another format version,
/// truncated or damaged (a dataset missing or of the wrong shape, a checksum that
/// does not match, inconsistent records). The message names the file and the problem.
pub fn read(path: &Path) -> IoResult<Snapshot> {
    let part = read_part(path, 0, 1)?;
    part.verify(path, rows_hash(&part.snap))?;
    let mut snap = part.snap;
    snap.sort_by_id();
    snap.check()
        .map_err(|e| IoError::invalid(path, format!("inconsistent checkpoint: {e}")))?;
    Ok(snap)
}

/// The particles of rows `rows` of the checkpoint at `path` (clamped to
/// its rows), unchecked: what a `file` block reads of a checkpoint that
/// [`verify_by_parts`] passed.
///
/// # Errors
/// As [`read()`], but the checksum is not checked.
pub fn read_particles_rows(path: &Path, rows: Range<usize>) -> IoResult<Vec<ParticleRecord>> {
    let rows = |n: usize| rows.start.min(n)..rows.end.min(n);
    Ok(read_span(path, rows, Records::Without)?.snap.particles)
}

/// Check the checkpoint at `path` as [`read()`] does, reading it in
/// `parts` slices one after the other (bounded memory), and return its
/// number of particles.
///
/// # Errors
/// As [`read()`].
pub fn verify_by_parts(path: &Path, parts: usize) -> IoResult<u64> {
    let mut sum = 0u64;
    let mut last = None;
    for part in 0..parts.max(1) {
        let read = read_part(path, part, parts.max(1))?;
        sum = sum.wrapping_add(rows_hash(&read.snap));
        read.snap
            .check_rows()
            .map_err(|e| IoError::invalid(path, format!("inconsistent checkpoint: {e}")))?;
        last = Some(read);
    }
    let last = last.expect("at least one part");
    last.verify(path, sum)?;
    Ok(last.totals[0])
}

/// Check slice `part` of `parts` of the checkpoint at `path` as [`read()`]
/// checks its rows, and return the slice's [`rows_hash`]: the hashes of
/// all the slices, added up, go to [`verify_rows`].
///
/// # Errors
/// As [`read()`].
pub fn check_part(path: &Path, part: usize, parts: usize) -> IoResult<u64> {
    let read = read_part(path, part, parts)?;
    read.snap
        .check_rows()
        .map_err(|e| IoError::invalid(path, format!("inconsistent checkpoint: {e}")))?;
    Ok(rows_hash(&read.snap))
}

/// Check the checksum of the checkpoint at `path`, given the sum of the
/// [`check_part`] hashes of all its slices.
///
/// # Errors
/// As [`read()`]; the checksum does not match.
pub fn verify_rows(path: &Path, rows: u64) -> IoResult<()> {
    read_span(path, |_| 0..0, Records::Without)?.verify(path, rows)
}

/// The number of particles the checkpoint at `path` says it holds.
///
/// # Errors
/// As [`read()`].
pub fn particle_count(path: &Path) -> IoResult<u64> {
    Ok(read_span(path, |_| 0..0, Records::Without)?.totals[0])
}

/// Read this rank's slice of the checkpoint at `path`: an even share of
/// the rows, in the file's order, with their records (what each rank
/// holds then goes to the particles' owners, see
/// [`crate::sim::Simulation::from_snapshot`]). The checksum is added up
/// over the ranks and checked on each; a rank that cannot read its part
/// makes every rank refuse. Collective.
///
/// # Errors
/// As [`read()`].
pub fn read_shared(path: &Path, comm: &dyn Comm) -> IoResult<Snapshot> {
    let part = read_part(path, comm.rank(), comm.size());
    let mut failed = [u64::from(part.is_err())];
    comm.max_u64s(&mut failed);
    let part = match part {
        Err(e) => return Err(e),
        Ok(_) if failed[0] != 0 => {
            return Err(IoError::invalid(
                path,
                "another rank could not read its part of the checkpoint",
            ))
        }
        Ok(part) => part,
    };
    part.verify(path, sum_wrapping(comm, rows_hash(&part.snap)))?;
    let local = part.snap.check_rows();
    let mut bad = [u64::from(local.is_err())];
    comm.max_u64s(&mut bad);
    match local {
        Err(e) => Err(IoError::invalid(
            path,
            format!("inconsistent checkpoint: {e}"),
        )),
        Ok(()) if bad[0] != 0 => Err(IoError::invalid(
            path,
            "inconsistent checkpoint: another rank found inconsistent records in its part",
        )),
        Ok(()) => Ok(part.snap),
    }
}

/// One rank's slice of a checkpoint, before its checksum is checked.
struct PartRead {
    snap: Snapshot,
    /// The numbers of particles, pair records and wall records in the file.
    totals: [u64; 3],
    /// The checksum the file holds.
    stored: u64,
}

impl PartRead {
    /// Check the stored checksum against the header and `rows` (the
    /// [`rows_hash`] of every rank's slice together).
    fn verify(&self, path: &Path, rows: u64) -> IoResult<()> {
        let sum = header_hash(&self.snap, self.totals).wrapping_add(rows);
        if sum != self.stored {
            return Err(IoError::invalid(
                path,
                format!(
                    "damaged checkpoint: the checksum of the contents is {sum:#018x}, the file says {:#018x}",
                    self.stored
                ),
            ));
        }
        Ok(())
    }
}

/// Read slice `part` of `parts` of the checkpoint at `path` (see
/// [`RowSpan::even_share`]): its rows and their records.
fn read_part(path: &Path, part: usize, parts: usize) -> IoResult<PartRead> {
    let rows = |n: usize| RowSpan::even_share(n as u64, part, parts).range();
    read_span(path, rows, Records::With)
}

/// Whether a read of a checkpoint's rows takes their contact history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Records {
    With,
    /// The particles only (a `file` block's), the history left unread.
    Without,
}

/// Read the rows `rows(n)` of the checkpoint at `path` of `n` particles,
/// with their records or not.
fn read_span(
    path: &Path,
    rows: impl FnOnce(usize) -> Range<usize>,
    records: Records,
) -> IoResult<PartRead> {
    std::fs::metadata(path).at(path, "opening the checkpoint")?;
    let file =
        super::open_read(path).at(path, "cannot open as an HDF5 file (truncated or damaged?)")?;
    let attr_str = |name: &str| -> Option<String> {
        let a = file.attr(name).ok()?;
        a.read_scalar::<VarLenUnicode>()
            .map(|s| s.as_str().to_owned())
            .or_else(|_| {
                a.read_scalar::<VarLenAscii>()
                    .map(|s| s.as_str().to_owned())
            })
            .ok()
    };
    if attr_str("format").as_deref() != Some(FORMAT) || !file.link_exists(GROUP) {
        return Err(IoError::invalid(
            path,
            "not a gravel checkpoint (no `format` attribute \"gravel checkpoint\" or no /checkpoint group)",
        ));
    }
    let fv = file
        .attr("format_version")
        .and_then(|a| a.read_scalar::<u32>())
        .at(path, "reading the attribute `format_version`")?;
    if fv != FORMAT_VERSION {
        return Err(IoError::invalid(
            path,
            format!("checkpoint format version {fv}; this gravel reads version {FORMAT_VERSION}"),
        ));
    }
    let config_text = attr_str("config")
        .ok_or_else(|| IoError::invalid(path, "the attribute `config` is missing"))?;
    let g = file.group(GROUP).at(path, "opening /checkpoint")?;
    let u = |name: &str| -> IoResult<u64> {
        g.attr(name).and_then(|a| a.read_scalar::<u64>()).at(
            path,
            format_args!("reading the attribute /checkpoint@{name}"),
        )
    };
    let f = |name: &str| -> IoResult<f64> {
        g.attr(name).and_then(|a| a.read_scalar::<f64>()).at(
            path,
            format_args!("reading the attribute /checkpoint@{name}"),
        )
    };
    let totals = [u("particles")?, u("pair_records")?, u("wall_records")?];
    let [n, m, k] = totals.map(|t| t as usize);
    let h = u("history_len")? as usize;
    let dataset = |name: &str| {
        format!("the dataset /checkpoint/{name} (missing, of the wrong shape, or damaged)")
    };
    let rows = rows(n);
    let ints = |name: &str, total: usize, at: Range<usize>| -> IoResult<Vec<u64>> {
        collective::read_rows(&g, name, total, at).at(path, dataset(name))
    };
    let vectors = |name: &str| -> IoResult<Vec<DVec3>> {
        let rows = collective::read_vectors(&g, name, n, rows.clone()).at(path, dataset(name))?;
        Ok(rows.into_iter().map(DVec3::from_array).collect())
    };
    let floats = |name: &str, total: usize, at: Range<usize>| -> IoResult<Vec<f64>> {
        collective::read_rows(&g, name, total, at).at(path, dataset(name))
    };
    let id = ints("id", n, rows.clone())?;
    let (x, v, omega) = (
        vectors("position")?,
        vectors("velocity")?,
        vectors("omega")?,
    );
    let radius = floats("radius", n, rows.clone())?;
    let mass = floats("mass", n, rows.clone())?;
    let material: Vec<u32> =
        collective::read_rows(&g, "material", n, rows.clone()).at(path, dataset("material"))?;
    let frozen: Vec<u8> =
        collective::read_rows(&g, "frozen", n, rows.clone()).at(path, dataset("frozen"))?;
    // The records of these rows: from the first row's start to the next
    // slice's first row's start (or the end).
    let records_of = |name: &str, total: usize| -> IoResult<Range<usize>> {
        if records == Records::Without {
            return Ok(0..0);
        }
        let start = |i: usize| -> IoResult<usize> {
            Ok(if i < n {
                ints(name, n, i..i + 1)?[0] as usize
            } else {
                total
            })
        };
        let (a, b) = (start(rows.start)?, start(rows.end)?);
        if a > b || b > total {
            return Err(IoError::invalid(
                path,
                format!("damaged checkpoint: /checkpoint/{name} gives records {a}..{b} of {total}"),
            ));
        }
        Ok(a..b)
    };
    let pairs = records_of("pair_start", m)?;
    let walls = records_of("wall_start", k)?;
    let pair_ids: Vec<u64> = collective::read_matrix(&g, "pair_ids", m, 2, pairs.clone())
        .at(path, dataset("pair_ids"))?;
    let times = |r: &Range<usize>| r.start * h..r.end * h;
    let wall_ids = ints("wall_ids", k, walls.clone())?;
    let wall_index: Vec<u32> = collective::read_rows(&g, "wall_index", k, walls.clone())
        .at(path, dataset("wall_index"))?;
    let pours = g
        .dataset("pour_inserted")
        .at(path, "opening /checkpoint/pour_inserted")?
        .size();
    let pour_waiting = match g.dataset("pour_waiting") {
        Err(_) => Vec::new(),
        Ok(ds) => {
            let w = ds.shape().first().copied().unwrap_or(0);
            let flat: Vec<u64> = collective::read_matrix(&g, "pour_waiting", w, 3, 0..w)
                .at(path, dataset("pour_waiting"))?;
            flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
        }
    };
    // Absent from a file written before 2026-12-05: no flow fitted.
    let (rebuilt_at, flow) = match g.attr("flow_gradient") {
        Err(_) => (0, [0.0; 9]),
        Ok(a) => {
            let v: Vec<f64> =
                (a.read_raw()).at(path, "reading the attribute /checkpoint@flow_gradient")?;
            let flow: [f64; 9] = v.try_into().map_err(|v: Vec<f64>| {
                IoError::invalid(
                    path,
                    format!(
                        "damaged checkpoint: /checkpoint@flow_gradient has {} values, not 9",
                        v.len()
                    ),
                )
            })?;
            (u("rebuilt_at")?, flow)
        }
    };
    let compat_group = g.group("compat").at(path, "opening /checkpoint/compat")?;
    let mut compat = Compat::default();
    for key in Compat::KEYS {
        let value = compat_group
            .attr(key)
            .and_then(|a| a.read_scalar::<u64>())
            .at(path, format_args!("reading /checkpoint/compat@{key}"))?;
        compat.entries.push((key.to_string(), value));
    }
    let particles = (0..rows.len())
        .map(|i| ParticleRecord {
            id: id[i],
            x: x[i],
            v: v[i],
            omega: omega[i],
            radius: radius[i],
            mass: mass[i],
            material: material[i],
            frozen: frozen[i] != 0,
        })
        .collect();
    let snap = Snapshot {
        step: u("step")?,
        time: f("time")?,
        seed: u("seed")?,
        dt: f("dt")?,
        next_id: u("next_id")?,
        history_len: h,
        walls: u("walls")? as usize,
        particles,
        x_ref: vectors("x_ref")?,
        force: vectors("force")?,
        torque: vectors("torque")?,
        pair_keys: pair_ids.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
        pair_values: floats("pair_history", m * h, times(&pairs))?,
        wall_keys: wall_ids.into_iter().zip(wall_index).collect(),
        wall_values: floats("wall_history", k * h, times(&walls))?,
        pour_inserted: ints("pour_inserted", pours, 0..pours)?,
        pour_waiting,
        rebuilt_at,
        flow,
        deleted: u("deleted")?,
        deleted_mass: f("deleted_mass")?,
        config_text,
        compat,
    };
    Ok(PartRead {
        snap,
        totals,
        stored: u("checksum")?,
    })
}

/// A summary of the checkpoint at `path` for `gravel info`.
///
/// # Errors
/// As [`read()`].
pub fn summarize(path: &Path) -> IoResult<String> {
    let s = read(path)?;
    let version = super::open_read(path)
        .and_then(|f| f.attr("version"))
        .and_then(|a| a.read_scalar::<VarLenUnicode>())
        .map_or_else(|_| "unknown".to_owned(), |v| v.as_str().to_owned());
    let mut out = format!("{}\n", path.display());
    let frozen = s.particles.iter().filter(|p| p.frozen).count();
    let _ = writeln!(
        out,
        "checkpoint (format version {FORMAT_VERSION}) written by gravel {version}"
    );
    let _ = writeln!(out, "step: {}", s.step);
    let _ = writeln!(out, "time: {} s (dt {} s)", s.time, s.dt);
    let _ = writeln!(out, "seed: {}", s.seed);
    let _ = writeln!(
        out,
        "particles: {} ({frozen} frozen); next id {}",
        s.particles.len(),
        s.next_id
    );
    let _ = writeln!(out, "walls: {}", s.walls);
    let _ = writeln!(
        out,
        "deleted so far: {} particles, {} kg",
        s.deleted, s.deleted_mass
    );
    let _ = writeln!(
        out,
        "contact history: {} values per record; {} pair records, {} wall records",
        s.history_len,
        s.pair_keys.len(),
        s.wall_keys.len()
    );
    if s.pour_inserted.is_empty() {
        out.push_str("pouring sources: none\n");
    } else {
        let done: Vec<String> = s.pour_inserted.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "pouring sources: inserted so far [{}]",
            done.join(", ")
        );
    }
    if !s.pour_waiting.is_empty() {
        let waiting: u64 = s.pour_waiting.iter().map(|w| w[2] - w[1]).sum();
        let _ = writeln!(
            out,
            "pouring sources: {waiting} drawn particles wait for room"
        );
    }
    let _ = writeln!(out, "checksum: {:#018x} (verified)", checksum(&s));
    let lines: Vec<&str> = s.config_text.lines().collect();
    let shown = lines.len().min(8);
    let _ = writeln!(out, "config: {} lines, the first {shown}:", lines.len());
    for line in &lines[..shown] {
        let _ = writeln!(out, "    {line}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        let particles: Vec<ParticleRecord> = (0..5)
            .map(|i| ParticleRecord {
                id: 10 + i,
                x: DVec3::new(i as f64 * 0.1, 0.3, -0.0),
                v: DVec3::new(1e-300, -2.5, f64::MIN_POSITIVE),
                omega: DVec3::splat(i as f64),
                radius: 0.01,
                mass: 1.5,
                material: (i % 2) as u32,
                frozen: i == 3,
            })
            .collect();
        let n = particles.len();
        let mut s = Snapshot {
            step: 1234,
            time: 0.01234,
            seed: 99,
            dt: 1e-5,
            next_id: 15,
            history_len: 3,
            walls: 2,
            x_ref: particles.iter().map(|p| p.x + DVec3::X * 1e-9).collect(),
            force: vec![DVec3::new(0.1, 0.2, 0.3); n],
            torque: vec![DVec3::new(-0.0, 1.0, 2.0); n],
            particles,
            pair_keys: vec![(10, 11), (11, 10), (12, 14)],
            pair_values: (0..9).map(|k| k as f64 * 0.37 - 1.0).collect(),
            wall_keys: vec![(10, 1), (13, 0)],
            wall_values: vec![1.0, -0.0, 3.0, 4.0, 5.0, 6.0],
            pour_inserted: vec![7, 0],
            deleted: 3,
            deleted_mass: 0.1 + 0.2,
            config_text: "[run]\nname = \"x\"\n".into(),
            ..Default::default()
        };
        s.compat.entries = Compat::KEYS
            .iter()
            .enumerate()
            .map(|(k, name)| (name.to_string(), k as u64 * 7919))
            .collect();
        s
    }

    fn bits(s: &Snapshot) -> String {
        // Debug prints every f64 exactly (and -0.0 as such), so equal text is equal bits.
        format!("{s:?}")
    }

    #[test]
    fn round_trip_is_exact_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = checkpoint_path(dir.path(), "run");
        let s = sample();
        write(&path, &s, "test").unwrap();
        assert!(!temporary_path(&path).exists());
        let back = read(&path).unwrap();
        assert_eq!(bits(&back), bits(&s));
        // Writing again replaces the file.
        let mut s2 = s.clone();
        s2.step = 2000;
        write(&path, &s2, "test").unwrap();
        assert_eq!(read(&path).unwrap().step, 2000);
        let text = summarize(&path).unwrap();
        for want in [
            "step: 2000",
            "5 (1 frozen)",
            "3 pair records, 2 wall records",
            "[7, 0]",
        ] {
            assert!(text.contains(want), "{want} not in {text}");
        }
    }

    #[test]
    fn damaged_files_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = checkpoint_path(dir.path(), "run");
        write(&path, &sample(), "test").unwrap();
        let good = std::fs::read(&path).unwrap();
        // Truncated.
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        // A flipped bit in the pair history, found by the checksum.
        let s = sample();
        let needle: Vec<u8> = s.pair_values[4].to_le_bytes().to_vec();
        let at = good
            .windows(8)
            .position(|w| w == needle.as_slice())
            .expect("the value is stored raw");
        let mut bad = good.clone();
        bad[at] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        // An inconsistent snapshot (a record of an unknown particle) with a valid checksum.
        let mut s = sample();
        s.pair_keys[2] = (12, 99);
        write(&path, &s, "test").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("99"), "{e}");
        // Not a checkpoint.
        std::fs::write(&path, b"hello").unwrap();
        assert!(read(&path).is_err());
        assert!(!is_checkpoint(&path));
    }
}
