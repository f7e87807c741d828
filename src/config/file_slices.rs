//! A `file` block checked by slices on several ranks, so that no rank
//! reads the whole file while the config is read.
//!
//! Each rank walks one slice of the file (the slice it later reads its
//! particles from: an even share of a CSV file's bytes or of an HDF5
//! file's rows) with the same checks a whole walk makes, and the ranks
//! then agree:
//! - on the first error in the file's order (the lowest rank's), which
//!   every rank reports the same;
//! - on what the file holds: rows summed, the extremes of the radii
//!   (first of the smallest and of the largest, in the file's order) and
//!   the digest (a sum of the particles' hashes), as one walk finds them;
//! - on a checkpoint's checksum, the sum of each slice's row hashes;
//! - on the ids, unique over all the files: each rank sends each id to
//!   the rank of its range (the ids up to the largest cut into equal
//!   ranges), which sorts what it gets and looks for a repeat; the
//!   smallest repeated id is reported.
//!
//! What one rank holds is its slice's ids and those of its range, about
//! 16 B per particle over the ranks, never the whole file. Where a
//! `random` block after the file must avoid its spheres, each rank keeps
//! those of its own slice (32 B each), and a placing fetches the others'
//! near its cells ([`crate::insert::earlier`]).

use std::path::Path;

use super::context::Ctx;
use super::particles::{file_kind, FileKind};
use crate::error::{GravelError, Result};
use crate::geometry::domain::Domain;
use crate::insert::file::{FileWalk, Finding, ParticleFile};
use crate::parallel::comm::Comm;
use crate::state::pack::{Pack, Unpack};
use crate::state::particles::ParticleRecord;

/// Open the `file` block `key` (at `path`, of material `m`) and check it
/// by slices: this rank walks its slice, handing each particle to
/// `check`, and the ranks agree on the first error and on what the file
/// holds. Collective.
///
/// # Errors
/// The first error in the file's order, the same on every rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_by_slices(
    cx: &Ctx,
    key: &str,
    path: &Path,
    step: Option<u64>,
    m: u32,
    mats: &[super::setup::Material],
    domain: &Domain,
    comm: &dyn Comm,
    check: impl FnMut(&ParticleRecord) -> Result<()>,
) -> Result<ParticleFile> {
    let (rank, size) = (comm.rank(), comm.size());
    // What the file is and its header, read by every rank alike; the
    // ranks agree all the same, so that a rank that could not read it
    // does not leave the others waiting.
    let opened = match file_kind(cx, key, path, step, m, mats) {
        Err(e) => Err(FileWalk::Stopped(e)),
        Ok(FileKind::Csv) => ParticleFile::open_csv(path, m).map(|f| (f, false)),
        Ok(FileKind::Checkpoint) => {
            ParticleFile::open_checkpoint(path, m, *domain).map(|f| (f, true))
        }
        Ok(FileKind::Frame { step, density }) => {
            ParticleFile::open_frame(path, step, m, density).map(|f| (f, false))
        }
    };
    let (opened, _) = agree(cx, key, comm, opened.map(|f| (f, ())), |_, _| {}, |_| ())?;
    let (mut file, is_checkpoint) = opened.expect("every rank opened the file");
    if is_checkpoint {
        let hash = crate::io::checkpoint::check_part(path, rank, size)
            .map_err(|e| FileWalk::Unread(e.to_string()));
        let (_, hashes) = agree(
            cx,
            key,
            comm,
            hash.map(|h| ((), h)),
            |h, b| b.put_u64(*h),
            |u: &mut Unpack| u.u64(),
        )?;
        let total = hashes.iter().fold(0u64, |a, &h| a.wrapping_add(h));
        crate::io::checkpoint::verify_rows(path, total)
            .map_err(|e| cx.err(format!("{key}.path: {e}")))?;
    }
    let walked = file.walk_part(rank, size, check);
    let (_, findings) = agree(
        cx,
        key,
        comm,
        walked.map(|f| ((), f)),
        Finding::pack,
        Finding::unpack,
    )?;
    file.set_found(&findings);
    Ok(file)
}

/// This rank's outcome and every rank's shared values, or the first
/// rank's error: every rank sends its outcome (`pack` of its value, or
/// its error's message) to all, and all return the lowest rank's error if
/// any rank failed. Collective.
fn agree<K, T>(
    cx: &Ctx,
    key: &str,
    comm: &dyn Comm,
    local: std::result::Result<(K, T), FileWalk<GravelError>>,
    pack: impl Fn(&T, &mut Vec<u8>),
    unpack: impl Fn(&mut Unpack) -> T,
) -> Result<(Option<K>, Vec<T>)> {
    let mut buf = Vec::new();
    let kept = match local {
        Ok((k, v)) => {
            buf.put_u64(0);
            pack(&v, &mut buf);
            Some(k)
        }
        Err(FileWalk::Unread(e)) => {
            buf.put_u64(1);
            buf.extend_from_slice(e.as_bytes());
            None
        }
        Err(FileWalk::Stopped(e)) => {
            buf.put_u64(2);
            let message = match e {
                GravelError::Config { message, .. } => message,
                other => other.to_string(),
            };
            buf.extend_from_slice(message.as_bytes());
            None
        }
    };
    let all = comm.all_gather(&buf);
    let mut values = Vec::with_capacity(all.len());
    for b in &all {
        let (tag, rest) = b.split_at(8);
        let text = || String::from_utf8_lossy(rest).into_owned();
        match u64::from_le_bytes(tag.try_into().expect("8 bytes")) {
            0 => values.push(unpack(&mut Unpack::new(rest))),
            1 => return Err(cx.err(format!("{key}.path: {}", text()))),
            _ => return Err(GravelError::config(cx.file, text())),
        }
    }
    Ok((kept, values))
}

/// Check that the files' ids, this rank's slices' being `ids`, are unique
/// over all the ranks, and return the first free id (one above the
/// largest; 0 without any). Collective.
///
/// # Errors
/// The smallest id that appears twice.
pub(super) fn unique_ids(cx: &Ctx, comm: &dyn Comm, ids: Vec<u64>) -> Result<u64> {
    let mut end = [ids.iter().max().map_or(0, |&i| i + 1)];
    comm.max_u64s(&mut end);
    let end = end[0];
    if end == 0 {
        return Ok(0);
    }
    let (rank, size) = (comm.rank(), comm.size());
    let width = end.div_ceil(size as u64);
    let owner = |id: u64| {
        usize::try_from(id / width)
            .unwrap_or(size - 1)
            .min(size - 1)
    };
    let mut sends = vec![Vec::new(); size];
    let mut mine = Vec::new();
    for id in ids {
        match owner(id) {
            o if o == rank => mine.push(id),
            o => sends[o].put_u64(id),
        }
    }
    let peers: Vec<usize> = (0..size).filter(|&r| r != rank).collect();
    let sends: Vec<Vec<u8>> = peers
        .iter()
        .map(|&r| std::mem::take(&mut sends[r]))
        .collect();
    for b in comm.exchange(&peers, &sends) {
        let mut u = Unpack::new(&b);
        while !u.is_empty() {
            mine.push(u.u64());
        }
    }
    mine.sort_unstable();
    let repeat = mine.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]);
    // The smallest repeat anywhere: the largest of `MAX - id`.
    let mut worst = [repeat.map_or(0, |id| u64::MAX - id)];
    comm.max_u64s(&mut worst);
    if worst[0] != 0 {
        return Err(super::particles::id_twice(cx, u64::MAX - worst[0]));
    }
    Ok(end)
}

/// Walk this rank's slice of `file` (block `key`), handing each particle
/// to `f`; the ranks agree on the first error in the file's order.
/// Collective.
///
/// # Errors
/// The first error, the same on every rank.
pub(super) fn walk_by_slices(
    cx: &Ctx,
    key: &str,
    file: &ParticleFile,
    comm: &dyn Comm,
    f: impl FnMut(&ParticleRecord) -> Result<()>,
) -> Result<()> {
    let walked = file.walk_part(comm.rank(), comm.size(), f);
    agree(cx, key, comm, walked.map(|_| ((), ())), |_, _| {}, |_| ())?;
    Ok(())
}

/// Walk `file` (block `key`) for a check: on the ranks of `comm` each
/// walks its slice and they agree ([`walk_by_slices`]); one process walks
/// it whole. A file that cannot be read is refused as its `path`.
/// Collective with `comm`.
///
/// # Errors
/// `f`'s first error in the file's order, or the file's read error.
pub(super) fn walk_checking(
    cx: &Ctx,
    key: &str,
    file: &ParticleFile,
    comm: Option<&dyn Comm>,
    f: impl FnMut(&ParticleRecord) -> Result<()>,
) -> Result<()> {
    match comm {
        Some(comm) => walk_by_slices(cx, key, file, comm, f),
        None => match file.try_for_each(f) {
            Ok(()) => Ok(()),
            Err(FileWalk::Unread(e)) => Err(cx.err(format!("{key}.path: {e}"))),
            Err(FileWalk::Stopped(e)) => Err(e),
        },
    }
}
