//! An undo journal that lets a file written in place go back to its last
//! commit ([`UndoFile`], [`recover`]).
//!
//! HDF5 updates an output file in place: a frame added to `/frames` rewrites
//! the group's heap and index, a thermo row the columns' headers and chunk
//! indices, and a flush writes these pieces one after the other, the
//! superblock last. A process killed in the middle of a flush (a `kill -9`,
//! a batch system's time limit, an out-of-memory kill) leaves a file whose
//! pieces disagree, and HDF5 cannot list the frames of such a file any more,
//! including the ones written long before.
//!
//! The journal follows the rule of a database's rollback journal (SQLite's
//! `-journal` file works the same way): before a byte the file held at its
//! last commit is overwritten, or cut off, its old value is appended to
//! `FILE.journal`; a commit (after every HDF5 flush, see
//! `io/vfd.rs`) empties the journal. Opening the file for writing with a
//! journal beside it first writes the old bytes back and cuts the file to its
//! committed length ([`recover`]), which is exactly the file as the last flush
//! left it. A reader that finds a journal shows the committed bytes without
//! changing the file.
//!
//! Layout of `FILE.journal`: a 32-byte header (`GRVLUND2`, then the device and
//! inode of `FILE` and its committed length, little-endian u64), then records
//! `offset, length, checksum` (u64 each; the checksum is FNV-1a's step over
//! the offset, the length and the bytes as little-endian 64-bit words, the
//! last padded with zeros) followed by `length` bytes. A record is appended
//! with one write before the file is touched, so a record torn by a kill
//! (cut short, or its checksum fails) belongs to a write that never happened
//! and is ignored. A journal that starts `GRVLUNDO` was written by an earlier
//! gravel, whose checksums went byte by byte (FNV-1a over the same bytes);
//! it is rolled back the same way.
//!
//! The journal protects against a killed process, whose writes the kernel
//! keeps; it does not `fsync`, so it does not claim to survive a power cut or
//! an operating-system crash.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::remove_if_there;
use crate::state::snapshot::Fnv;

const MAGIC: &[u8; 8] = b"GRVLUND2";
/// The header of a journal whose records are summed byte by byte.
const MAGIC_BYTEWISE: &[u8; 8] = b"GRVLUNDO";
const HEADER_LEN: usize = 32;
const RECORD_HEAD_LEN: usize = 24;

/// The journal of the file at `path`: `path` with `.journal` appended.
#[must_use]
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// A journal read back: the committed length of its file and the old bytes.
struct Saved {
    committed: u64,
    records: Vec<(u64, Vec<u8>)>,
}

/// The FNV-1a step over a record's offset, length and bytes taken as
/// little-endian 64-bit words, the last padded with zeros ([`Fnv::word`]):
/// one multiply per 8 bytes (a flush of a run writing thermo rows often
/// saves half a megabyte). Two records of the same length that differ in
/// one word never share a sum.
fn checksum(offset: u64, bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.word(offset);
    h.word(bytes.len() as u64);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h.word(word(w, 0));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w[..tail.len()].copy_from_slice(tail);
        h.word(u64::from_le_bytes(w));
    }
    h.finish()
}

/// FNV-1a byte by byte ([`Fnv`]) over a record's offset, length and
/// bytes: the checksum of journals headed `GRVLUNDO`.
fn checksum_bytewise(offset: u64, bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.u64(offset);
    h.u64(bytes.len() as u64);
    h.bytes(bytes);
    h.finish()
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The device and inode that name `file`.
fn identity(file: &File) -> io::Result<(u64, u64)> {
    let m = file.metadata()?;
    Ok((m.dev(), m.ino()))
}

/// Reads the journal of `file` (named `journal` in messages). `None` when there
/// is none, or when it holds no complete record (the kill came before the file
/// was first touched).
///
/// # Errors
/// If it cannot be read, or it was written for another file.
fn read_journal(journal: &Path, file: &File) -> io::Result<Option<Saved>> {
    let mut bytes = Vec::new();
    match File::open(journal) {
        Ok(mut j) => j.read_to_end(&mut bytes)?,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if bytes.len() < HEADER_LEN {
        return Ok(None);
    }
    let sum_of: fn(u64, &[u8]) -> u64 = match &bytes[..8] {
        m if m == MAGIC => checksum,
        m if m == MAGIC_BYTEWISE => checksum_bytewise,
        _ => return Ok(None),
    };
    let (dev, ino) = identity(file)?;
    if (word(&bytes, 8), word(&bytes, 16)) != (dev, ino) {
        return Err(io::Error::other(format!(
            "the undo journal {} was written for another file (device and inode differ); move it away",
            journal.display()
        )));
    }
    let committed = word(&bytes, 24);
    let mut records = Vec::new();
    let mut at = HEADER_LEN;
    while at + RECORD_HEAD_LEN <= bytes.len() {
        let offset = word(&bytes, at);
        let Ok(len) = usize::try_from(word(&bytes, at + 8)) else {
            break;
        };
        let sum = word(&bytes, at + 16);
        let start = at + RECORD_HEAD_LEN;
        let Some(data) = start.checked_add(len).and_then(|end| bytes.get(start..end)) else {
            break;
        };
        if sum_of(offset, data) != sum {
            break;
        }
        records.push((offset, data.to_vec()));
        at = start + len;
    }
    if records.is_empty() {
        return Ok(None);
    }
    Ok(Some(Saved { committed, records }))
}

/// Rolls the file at `path` back to its last commit if a journal lies beside
/// it: writes the saved bytes back, cuts the file to its committed length,
/// syncs it and removes the journal. Returns the number of bytes written
/// back (0 without a journal). Running it again after a kill part way
/// through does the same again.
///
/// # Errors
/// If the file or the journal cannot be read or written, or the journal
/// belongs to another file.
pub fn recover(path: &Path) -> io::Result<u64> {
    let journal = journal_path(path);
    if !journal.exists() {
        return Ok(0);
    }
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    roll_back(&file, &journal)
}

/// [`recover`] on an open `file`.
fn roll_back(file: &File, journal: &Path) -> io::Result<u64> {
    let mut restored = 0;
    if let Some(saved) = read_journal(journal, file)? {
        for (offset, bytes) in &saved.records {
            file.write_all_at(bytes, *offset)?;
            restored += bytes.len() as u64;
        }
        file.set_len(saved.committed)?;
        file.sync_all()?;
    }
    remove_if_there(journal)?;
    Ok(restored)
}

/// The files this process has open for writing through an [`UndoFile`], by
/// device and inode: a second handle on one of them (HDF5 opens a file
/// tentatively before it finds it already open) leaves its journal alone.
static WRITERS: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

fn writers() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    WRITERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How [`UndoFile::open`] opens its file (HDF5's `H5F_ACC_*` flags).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mode {
    /// Read and write (otherwise read only).
    pub write: bool,
    /// Create the file if it does not exist.
    pub create: bool,
    /// Fail if it exists.
    pub exclusive: bool,
    /// Cut an existing file to nothing.
    pub truncate: bool,
}

/// A file whose bytes, as of its last [`commit`](Self::commit), can always be
/// restored from its journal (see the module documentation).
#[derive(Debug)]
pub struct UndoFile {
    file: File,
    journal_path: PathBuf,
    /// The journal, open while it holds records since the last commit.
    journal: Option<File>,
    /// Device and inode of `file`, written into the journal's header.
    identity: (u64, u64),
    /// The file's length at the last commit: bytes past it are new.
    committed: u64,
    /// The file's length now.
    len: u64,
    /// Sorted, disjoint ranges below `committed` already saved since the
    /// last commit (their old bytes are in the journal).
    saved: Vec<(u64, u64)>,
    /// Read-only over a file with a journal: the committed bytes to show.
    overlay: Vec<(u64, Vec<u8>)>,
    /// This handle writes the file and owns its journal (not a second
    /// handle on a file this process already writes).
    owner: bool,
}

impl UndoFile {
    /// Opens (or creates) the file at `path`. For writing, a journal left
    /// beside it is rolled back first ([`recover`]), and a new or truncated
    /// file starts without one; read only, a journal's old bytes are shown in
    /// place of the file's.
    ///
    /// # Errors
    /// If the file cannot be opened as asked, or its journal cannot be
    /// applied.
    pub fn open(path: &Path, mode: Mode) -> io::Result<Self> {
        let journal_path = journal_path(path);
        let file = OpenOptions::new()
            .read(true)
            .write(mode.write)
            .create(mode.write && mode.create && !mode.exclusive)
            .create_new(mode.write && mode.exclusive)
            .open(path)?;
        let identity = identity(&file)?;
        let mut writers = writers();
        let owner = mode.write && !writers.contains(&identity);
        let mut overlay = Vec::new();
        let mut committed = None;
        if owner {
            if mode.truncate {
                remove_if_there(&journal_path)?;
                file.set_len(0)?;
            } else {
                roll_back(&file, &journal_path)?;
            }
            writers.push(identity);
        } else if !mode.write && !writers.contains(&identity) {
            if let Some(saved) = read_journal(&journal_path, &file)? {
                committed = Some(saved.committed);
                overlay = saved.records;
            }
        }
        drop(writers);
        let len = match committed {
            Some(len) => len,
            None => file.metadata()?.len(),
        };
        Ok(Self {
            file,
            journal_path,
            journal: None,
            identity,
            committed: len,
            len,
            saved: Vec::new(),
            overlay,
            owner,
        })
    }

    /// The file's length (read only over a journal: its committed length).
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device and inode: two handles on the same file compare equal.
    #[must_use]
    pub fn identity(&self) -> (u64, u64) {
        self.identity
    }

    /// The raw descriptor (for HDF5's `H5Fget_vfd_handle`).
    #[must_use]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.file.as_raw_fd()
    }

    /// Fills `buf` from `offset`; bytes past the end read as zeros.
    ///
    /// # Errors
    /// If the read fails.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf[done..].fill(0);
        for (at, bytes) in &self.overlay {
            let (lo, hi) = (offset.max(*at), end.min(*at + bytes.len() as u64));
            if lo < hi {
                let (b, s) = ((lo - offset) as usize, (lo - at) as usize);
                let n = (hi - lo) as usize;
                buf[b..b + n].copy_from_slice(&bytes[s..s + n]);
            }
        }
        Ok(())
    }

    /// Writes `buf` at `offset`, first saving the committed bytes it
    /// overwrites.
    ///
    /// # Errors
    /// If the journal or the file cannot be written.
    pub fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        self.save(offset, end)?;
        self.file.write_all_at(buf, offset)?;
        self.len = self.len.max(end);
        Ok(())
    }

    /// Cuts or extends the file to `len` bytes, first saving the committed
    /// bytes a cut removes.
    ///
    /// # Errors
    /// If the journal or the file cannot be written.
    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        if len < self.len {
            self.save(len, self.len)?;
        }
        self.file.set_len(len)?;
        self.len = len;
        Ok(())
    }

    /// Makes the file as it is now the state a rollback returns to: empties
    /// the journal.
    ///
    /// # Errors
    /// If the journal cannot be emptied.
    pub fn commit(&mut self) -> io::Result<()> {
        if let Some(journal) = self.journal.take() {
            journal.set_len(0)?;
        }
        self.saved.clear();
        self.committed = self.len;
        Ok(())
    }

    /// Closes the file, its last state committed: the journal is removed.
    /// (HDF5 calls its driver's close only once it has written everything:
    /// after the close's last flush it may still shrink the file and rewrite
    /// the superblock.) A handle dropped without `close`, as by a kill,
    /// leaves the journal for the next open to roll back.
    ///
    /// # Errors
    /// If the journal cannot be removed.
    pub fn close(mut self) -> io::Result<()> {
        if self.owner {
            self.commit()?;
            remove_if_there(&self.journal_path)?;
        }
        Ok(())
    }

    /// Saves the committed bytes in `[start, end)` not saved yet (a second
    /// handle on a file this process writes saves nothing: it is closed
    /// before it writes).
    fn save(&mut self, start: u64, end: u64) -> io::Result<()> {
        if !self.owner {
            return Ok(());
        }
        let end = end.min(self.committed);
        let mut at = start;
        while at < end {
            // The first saved range that ends after `at`.
            let k = self.saved.partition_point(|r| r.1 <= at);
            let gap_end = match self.saved.get(k) {
                Some(&(lo, hi)) if lo <= at => {
                    at = hi;
                    continue;
                }
                Some(&(lo, _)) => lo.min(end),
                None => end,
            };
            self.save_range(at, gap_end)?;
            self.saved.insert(k, (at, gap_end));
            at = gap_end;
        }
        Ok(())
    }

    /// Appends the current bytes of `[start, end)` to the journal.
    fn save_range(&mut self, start: u64, end: u64) -> io::Result<()> {
        let n = usize::try_from(end - start).map_err(io::Error::other)?;
        let mut record = Vec::with_capacity(HEADER_LEN + RECORD_HEAD_LEN + n);
        if self.journal.is_none() {
            let journal = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.journal_path)?;
            record.extend_from_slice(MAGIC);
            record.extend_from_slice(&self.identity.0.to_le_bytes());
            record.extend_from_slice(&self.identity.1.to_le_bytes());
            record.extend_from_slice(&self.committed.to_le_bytes());
            self.journal = Some(journal);
        }
        let head = record.len();
        record.resize(head + RECORD_HEAD_LEN + n, 0);
        self.file
            .read_exact_at(&mut record[head + RECORD_HEAD_LEN..], start)?;
        let sum = checksum(start, &record[head + RECORD_HEAD_LEN..]);
        record[head..head + 8].copy_from_slice(&start.to_le_bytes());
        record[head + 8..head + 16].copy_from_slice(&(n as u64).to_le_bytes());
        record[head + 16..head + 24].copy_from_slice(&sum.to_le_bytes());
        let journal = self.journal.as_mut().expect("opened above");
        std::io::Write::write_all(journal, &record)
    }
}

impl Drop for UndoFile {
    fn drop(&mut self) {
        if self.owner {
            writers().retain(|w| *w != self.identity);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_mode() -> Mode {
        Mode {
            write: true,
            ..Mode::default()
        }
    }

    /// A file of 100 bytes of 1 in a fresh directory (removed when the
    /// returned guard drops), open for writing through its journal.
    fn hundred_ones() -> (tempfile::TempDir, PathBuf, UndoFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.h5");
        std::fs::write(&path, [1u8; 100]).unwrap();
        let f = UndoFile::open(&path, write_mode()).unwrap();
        (dir, path, f)
    }

    /// A pseudo-random sequence of writes and cuts; after a commit, more of
    /// them, then a "kill" (the handle dropped without commit): the file read
    /// back, and the file after [`recover`], equal the committed bytes.
    #[test]
    fn a_file_killed_between_commits_rolls_back_to_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.h5");
        let state = std::cell::Cell::new(12345u64);
        let next = |m: u64| {
            let s = state
                .get()
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state.set(s);
            (s >> 33) % m
        };
        for round in 0..20 {
            let mut f = UndoFile::open(
                &path,
                Mode {
                    write: true,
                    create: true,
                    truncate: round == 0,
                    ..Mode::default()
                },
            )
            .unwrap();
            let ops = |f: &mut UndoFile, count: u64| {
                for _ in 0..count {
                    if next(8) == 0 {
                        f.set_len(next(f.len() + 2000)).unwrap();
                    } else {
                        let at = next(f.len() + 500);
                        let bytes: Vec<u8> = (0..next(700) + 1).map(|_| next(256) as u8).collect();
                        f.write_at(&bytes, at).unwrap();
                    }
                }
            };
            ops(&mut f, next(6));
            f.commit().unwrap();
            let committed = std::fs::read(&path).unwrap();
            ops(&mut f, next(30) + 1);
            // Killed: no commit, no close.
            drop(f);
            let damaged = std::fs::read(&path).unwrap();
            let reader = UndoFile::open(&path, Mode::default()).unwrap();
            let mut seen = vec![0; reader.len() as usize];
            reader.read_at(&mut seen, 0).unwrap();
            assert!(
                seen == committed,
                "round {round}: the reader sees the commit"
            );
            assert!(
                std::fs::read(&path).unwrap() == damaged,
                "round {round}: the reader changed nothing"
            );
            recover(&path).unwrap();
            assert!(
                std::fs::read(&path).unwrap() == committed,
                "round {round}: rolled back"
            );
            assert!(!journal_path(&path).exists());
        }
    }

    #[test]
    fn a_closed_file_leaves_no_journal_and_a_torn_record_is_ignored() {
        let (_dir, path, mut f) = hundred_ones();
        f.write_at(&[2; 10], 5).unwrap();
        f.commit().unwrap();
        f.close().unwrap();
        assert!(!journal_path(&path).exists());
        let mut f = UndoFile::open(&path, write_mode()).unwrap();
        f.write_at(&[3; 10], 50).unwrap();
        drop(f);
        // A second record cut short by the kill: its write never happened.
        let mut j = std::fs::read(journal_path(&path)).unwrap();
        j.extend_from_slice(&[7; 30]);
        std::fs::write(journal_path(&path), j).unwrap();
        assert_eq!(recover(&path).unwrap(), 10);
        let mut want = vec![1u8; 100];
        want[5..15].fill(2);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    /// A journal headed `GRVLUNDO`, its records summed byte by byte (as
    /// gravel wrote them before), is rolled back as well; one record
    /// summed the new way in such a journal is not trusted.
    #[test]
    fn a_journal_summed_byte_by_byte_is_rolled_back() {
        let (_dir, path, mut f) = hundred_ones();
        f.write_at(&[3; 13], 50).unwrap();
        f.write_at(&[4; 3], 90).unwrap();
        drop(f);
        let new = std::fs::read(journal_path(&path)).unwrap();
        assert_eq!(&new[..8], MAGIC);
        // The same journal summed byte by byte.
        let mut old = new.clone();
        old[..8].copy_from_slice(MAGIC_BYTEWISE);
        let mut at = HEADER_LEN;
        while at < old.len() {
            let (offset, len) = (word(&old, at), word(&old, at + 8) as usize);
            let data = &old[at + RECORD_HEAD_LEN..at + RECORD_HEAD_LEN + len];
            assert_eq!(word(&old, at + 16), checksum(offset, data));
            let sum = checksum_bytewise(offset, data);
            assert_ne!(sum, checksum(offset, data));
            old[at + 16..at + 24].copy_from_slice(&sum.to_le_bytes());
            at += RECORD_HEAD_LEN + len;
        }
        std::fs::write(journal_path(&path), &old).unwrap();
        assert_eq!(recover(&path).unwrap(), 16);
        assert_eq!(std::fs::read(&path).unwrap(), [1u8; 100]);
        // New sums under the old header: no record is trusted.
        let mut f = UndoFile::open(&path, write_mode()).unwrap();
        f.write_at(&[3; 13], 50).unwrap();
        drop(f);
        let mut mixed = std::fs::read(journal_path(&path)).unwrap();
        mixed[..8].copy_from_slice(MAGIC_BYTEWISE);
        std::fs::write(journal_path(&path), &mixed).unwrap();
        assert_eq!(recover(&path).unwrap(), 0);
    }

    /// The word-wise sum of a record with a tail shorter than a word: the
    /// FNV-1a step over the offset, the length and the tail padded with
    /// zeros, which the length keeps apart from the padded record; and a
    /// change of one byte anywhere changes the sum.
    #[test]
    fn the_word_wise_checksum_pads_the_tail_and_sees_every_byte() {
        let bytes = [0xabu8, 0xcd, 0xef];
        let mut h = Fnv::default();
        [7, 3, 0x00ef_cdab].into_iter().for_each(|w| h.word(w));
        assert_eq!(checksum(7, &bytes), h.finish());
        assert_ne!(checksum(7, &bytes), checksum(7, &[0xab, 0xcd, 0xef, 0]));
        let record: Vec<u8> = (0..37u8).map(|b| b.wrapping_mul(91)).collect();
        for i in 0..record.len() {
            let mut torn = record.clone();
            torn[i] ^= 0x10;
            assert_ne!(checksum(5, &torn), checksum(5, &record), "byte {i}");
        }
        assert_ne!(checksum(5, &record), checksum(6, &record));
    }

    #[test]
    fn a_journal_of_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
        std::fs::write(&a, [1u8; 64]).unwrap();
        std::fs::write(&b, [1u8; 64]).unwrap();
        let mut f = UndoFile::open(&a, write_mode()).unwrap();
        f.write_at(&[9; 8], 0).unwrap();
        drop(f);
        std::fs::rename(journal_path(&a), journal_path(&b)).unwrap();
        let err = recover(&b).unwrap_err().to_string();
        assert!(err.contains("another file"), "{err}");
        assert_eq!(std::fs::read(&b).unwrap(), [1u8; 64], "untouched");
    }
}
