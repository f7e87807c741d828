//! A `file` block's particles, read where they are needed, never held
//! whole.
//!
//! [`ParticleFile`] names a particle CSV file, a frame of a gravel output
//! file, or a gravel checkpoint, checked once when the config is read. A
//! walk over it ([`ParticleFile::try_for_each`]) reads it in bounded
//! pieces: a CSV file line by line, an HDF5 file [`WALK_ROWS`] rows at a
//! time (hyperslabs). A rank's share ([`ParticleFile::read_part`]) is an
//! even slice: of a CSV file's bytes, each line going to the slice its
//! first byte lies in, and of an HDF5 file's rows; each rank reads its
//! slice and sends every particle to its owner.
//!
//! A particle CSV file has the header [`CSV_COLUMNS`] and one particle a
//! line. Cells are separated by commas and trimmed; a cell may be quoted
//! (`"1.5"`), but no cell holds a line break, so every line is a row or
//! blank. `id` is a decimal integer ≥ 0,
//! `frozen` is `0` or `1`, every other cell a finite number, radius and
//! density > 0.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use glam::DVec3;

use crate::geometry::domain::Domain;
use crate::parallel::comm::RowSpan;
use crate::state::particles::{pack_record, unpack_record, ParticleRecord};
use crate::state::snapshot::Fnv;

/// The columns a particle CSV file must have, in this order.
pub const CSV_COLUMNS: [&str; 13] = [
    "id", "frozen", "x", "y", "z", "radius", "density", "vx", "vy", "vz", "wx", "wy", "wz",
];

/// The rows of an HDF5 file a walk reads at a time (about 7 MB of
/// records).
pub const WALK_ROWS: usize = 65_536;

/// The particles of a `file` block, read on demand.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticleFile {
    path: PathBuf,
    kind: Kind,
    /// The block's material, given to every particle.
    material: u32,
    rows: u64,
    /// The file's size and modification time when it was checked: a file
    /// changed since is refused, not read.
    stamp: Stamp,
    /// What the walk that checked the file found of it ([`Found`]).
    found: Found,
}

/// What the walk that checks a file finds of its particles, so that no
/// later check reads it again.
#[derive(Debug, Clone, PartialEq, Default)]
struct Found {
    /// The first particle of the smallest radius and the first of the
    /// largest, in the file's order.
    extremes: Option<[ParticleRecord; 2]>,
    /// The wrapping sum of every particle's FNV-1a hash ([`hash_record`]):
    /// a sum, so that slices of the file walked apart add up to it.
    digest: u64,
}

/// What a walk over a file, or over one slice of it, found: its rows, the
/// first particle of the smallest radius and the first of the largest,
/// and the sum of the particles' hashes. The findings of slices walked
/// apart combine, in the file's order, into the whole file's
/// ([`ParticleFile::set_found`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Finding {
    extremes: Option<[ParticleRecord; 2]>,
    digest: u64,
    rows: u64,
}

impl Finding {
    fn new() -> Self {
        Finding::default()
    }

    /// The particles the walk met.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn add(&mut self, r: &ParticleRecord) {
        self.rows += 1;
        let mut h = Fnv::default();
        hash_record(&mut h, r);
        self.digest = self.digest.wrapping_add(h.finish());
        self.meet(r, r);
    }

    /// Take the finding of the slice after this one.
    fn then(&mut self, next: &Finding) {
        self.rows += next.rows;
        self.digest = self.digest.wrapping_add(next.digest);
        if let Some([small, large]) = &next.extremes {
            self.meet(small, large);
        }
    }

    /// Meet, after those met so far, particles as small as `small` and as
    /// large as `large`: each extreme is the first of its size.
    fn meet(&mut self, small: &ParticleRecord, large: &ParticleRecord) {
        match &mut self.extremes {
            None => self.extremes = Some([small.clone(), large.clone()]),
            Some([s, l]) => {
                if small.radius < s.radius {
                    *s = small.clone();
                }
                if large.radius > l.radius {
                    *l = large.clone();
                }
            }
        }
    }

    fn found(self) -> Found {
        Found {
            extremes: self.extremes,
            digest: self.digest,
        }
    }

    /// Serialise (to send to the other ranks).
    pub fn pack(&self, buf: &mut Vec<u8>) {
        use crate::state::pack::Pack;
        buf.put_u64(self.rows);
        buf.put_u64(self.digest);
        match &self.extremes {
            None => buf.put_u64(0),
            Some([s, l]) => {
                buf.put_u64(1);
                pack_record(s, buf);
                pack_record(l, buf);
            }
        }
    }

    /// From [`Self::pack`].
    pub fn unpack(u: &mut crate::state::pack::Unpack) -> Self {
        let rows = u.u64();
        let digest = u.u64();
        let extremes = (u.u64() == 1).then(|| [unpack_record(u), unpack_record(u)]);
        Finding {
            extremes,
            digest,
            rows,
        }
    }
}

/// Mix a particle's id, position, velocity, angular velocity, radius, mass,
/// material and frozen flag into `h` (the initial particles' fingerprint,
/// which a restart checks: see `Setup::compat`).
pub fn hash_record(h: &mut Fnv, r: &ParticleRecord) {
    h.u64(r.id);
    for v in [r.x, r.v, r.omega] {
        v.to_array().iter().for_each(|&c| h.f64(c));
    }
    h.f64(r.radius);
    h.f64(r.mass);
    h.u64(u64::from(r.material));
    h.u64(u64::from(r.frozen));
}

/// What the file is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A particle CSV file whose rows start at byte `data` (after the
    /// header), which is on line `header_line`.
    Csv { data: u64, header_line: u64 },
    /// The frame at `step` of a gravel output file; masses from `density`.
    Frame { step: u64, density: f64 },
    /// A gravel checkpoint; positions wrapped into `domain`.
    Checkpoint { domain: Domain },
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

/// The error of a walk that cannot read `path`.
fn cannot_read<E>(path: &Path, e: &std::io::Error) -> FileWalk<E> {
    FileWalk::Unread(format!("cannot read `{}`: {e}", path.display()))
}

impl Stamp {
    /// [`Self::of`], an error a walk reports.
    fn checked<E>(path: &Path) -> Result<Self, FileWalk<E>> {
        Self::of(path).map_err(|e| cannot_read(path, &e))
    }

    fn of(path: &Path) -> std::io::Result<Self> {
        let meta = std::fs::metadata(path)?;
        Ok(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// Why a walk over a file ended early.
#[derive(Debug)]
pub enum FileWalk<E> {
    /// The file could not be read (or changed since it was checked).
    Unread(String),
    /// The callback's error.
    Stopped(E),
}

impl ParticleFile {
    /// A particle CSV file, checked whole line by line (every row parsed
    /// and handed to `f`, which may check it further; nothing is kept but
    /// the count).
    ///
    /// # Errors
    /// [`FileWalk::Unread`] if the file cannot be read or a line breaks
    /// the format (the message begins with the file and names the line
    /// and column); [`FileWalk::Stopped`] with the first error `f` returns.
    pub fn csv<E>(
        path: &Path,
        material: u32,
        f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<Self, FileWalk<E>> {
        Self::open_csv(path, material)?.checked(f)
    }

    /// A particle CSV file, its header checked but not its rows: a file
    /// to be checked by slices ([`Self::walk_part`], [`Self::set_found`]).
    ///
    /// # Errors
    /// [`FileWalk::Unread`] if the file cannot be read or its header is
    /// not [`CSV_COLUMNS`].
    pub fn open_csv<E>(path: &Path, material: u32) -> Result<Self, FileWalk<E>> {
        let shown = path.display();
        let cannot = |e: std::io::Error| cannot_read(path, &e);
        let stamp = Stamp::checked(path)?;
        let mut reader = BufReader::new(File::open(path).map_err(cannot)?);
        let mut line = Vec::new();
        let mut at = 0u64;
        let mut number = 0u64;
        let header_line = loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line).map_err(cannot)?;
            if read == 0 {
                return Err(FileWalk::Unread(format!(
                    "`{shown}` line 1: empty file, expected a header"
                )));
            }
            number += 1;
            at += read as u64;
            if !is_blank(&line) {
                break number;
            }
        };
        let header_text = text_of(&line);
        let header: Vec<&str> = cells(&header_text).collect();
        if !header.iter().eq(CSV_COLUMNS.iter()) {
            return Err(FileWalk::Unread(format!(
                "`{shown}` line {header_line}: header must be `{}`, got `{}`",
                CSV_COLUMNS.join(","),
                header.join(",")
            )));
        }
        let kind = Kind::Csv {
            data: at,
            header_line,
        };
        Ok(Self::unchecked(path, kind, material, 0, stamp))
    }

    /// The frame at `step` of the gravel output file `path`, its masses
    /// from `density`, checked whole ([`WALK_ROWS`] rows at a time, each
    /// particle handed to `f`).
    ///
    /// # Errors
    /// [`FileWalk::Unread`] if the file cannot be read, has no such frame,
    /// or its datasets are not of the frame layout; [`FileWalk::Stopped`]
    /// with the first error `f` returns.
    pub fn frame<E>(
        path: &Path,
        step: u64,
        material: u32,
        density: f64,
        f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<Self, FileWalk<E>> {
        Self::open_frame(path, step, material, density)?.checked(f)
    }

    /// The frame at `step` of `path`, not yet checked: a file to be
    /// checked by slices ([`Self::walk_part`], [`Self::set_found`]).
    ///
    /// # Errors
    /// The file cannot be read or has no such frame.
    pub fn open_frame<E>(
        path: &Path,
        step: u64,
        material: u32,
        density: f64,
    ) -> Result<Self, FileWalk<E>> {
        let stamp = Stamp::checked(path)?;
        let rows =
            crate::io::read::frame_len(path, step).map_err(|e| FileWalk::Unread(e.to_string()))?;
        let kind = Kind::Frame { step, density };
        Ok(Self::unchecked(path, kind, material, rows as u64, stamp))
    }

    /// The checkpoint `path`, its size read but neither its checksum nor
    /// its particles checked: a file to be checked by slices
    /// ([`crate::io::checkpoint::check_part`], [`Self::walk_part`],
    /// [`Self::set_found`]).
    ///
    /// # Errors
    /// The file cannot be read or is not a checkpoint.
    pub fn open_checkpoint<E>(
        path: &Path,
        material: u32,
        domain: Domain,
    ) -> Result<Self, FileWalk<E>> {
        let stamp = Stamp::checked(path)?;
        let n = crate::io::checkpoint::particle_count(path)
            .map_err(|e| FileWalk::Unread(e.to_string()))?;
        Ok(Self::unchecked(
            path,
            Kind::Checkpoint { domain },
            material,
            n,
            stamp,
        ))
    }

    /// Walk slice `part` of `parts` ([`Self::read_part`]'s slice, in
    /// bounded pieces), handing each particle to `f`; what the walk found.
    /// A CSV slice's errors name the byte its line starts at.
    ///
    /// # Errors
    /// As [`Self::try_for_each`].
    pub fn walk_part<E>(
        &self,
        part: usize,
        parts: usize,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<Finding, FileWalk<E>> {
        self.unchanged()?;
        let mut finding = Finding::new();
        let mut take = |r: &ParticleRecord| {
            finding.add(r);
            f(r)
        };
        match self.kind {
            Kind::Csv { data, header_line } => {
                let span = RowSpan::even_share(self.stamp.len - data, part, parts);
                let from = data + span.offset;
                let line = (span.offset == 0).then_some(header_line + 1);
                self.csv_lines(from, from + span.local, line, &mut take)?;
            }
            Kind::Frame { .. } | Kind::Checkpoint { .. } => {
                let slice = RowSpan::even_share(self.rows, part, parts).range();
                for start in slice.clone().step_by(WALK_ROWS) {
                    let rows = start..(start + WALK_ROWS).min(slice.end);
                    for r in &self.hdf5_rows(rows).map_err(FileWalk::Unread)? {
                        take(r).map_err(FileWalk::Stopped)?;
                    }
                }
            }
        }
        Ok(finding)
    }

    /// Take what the walks over the slices found, in slice order: the
    /// file's rows, extremes and digest, as one walk over it finds them.
    pub fn set_found(&mut self, slices: &[Finding]) {
        let mut whole = Finding::new();
        slices.iter().for_each(|s| whole.then(s));
        self.rows = whole.rows;
        self.found = whole.found();
    }

    /// The gravel checkpoint `path`, checked as a restart checks it (read
    /// in slices of [`WALK_ROWS`] rows), its positions wrapped into
    /// `domain`, each particle handed to `f`.
    ///
    /// # Errors
    /// [`FileWalk::Unread`] if the file cannot be read, is not a
    /// checkpoint, or is damaged; [`FileWalk::Stopped`] with the first
    /// error `f` returns.
    pub fn checkpoint<E>(
        path: &Path,
        material: u32,
        domain: Domain,
        f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<Self, FileWalk<E>> {
        let file = Self::open_checkpoint(path, material, domain)?;
        let parts = usize::try_from(file.rows.div_ceil(WALK_ROWS as u64)).unwrap_or(usize::MAX);
        crate::io::checkpoint::verify_by_parts(path, parts)
            .map_err(|e| FileWalk::Unread(e.to_string()))?;
        file.checked(f)
    }

    /// The file before the walk that checks it.
    fn unchecked(path: &Path, kind: Kind, material: u32, rows: u64, stamp: Stamp) -> Self {
        ParticleFile {
            path: path.to_path_buf(),
            kind,
            material,
            rows,
            stamp,
            found: Found::default(),
        }
    }

    /// This file after the walk that checks it: each particle handed to
    /// `f`, and what the walk finds kept.
    fn checked<E>(
        mut self,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<Self, FileWalk<E>> {
        let mut finding = Finding::new();
        self.try_for_each(|r| {
            finding.add(r);
            f(r)
        })?;
        self.set_found(std::slice::from_ref(&finding));
        Ok(self)
    }

    /// The number of particles.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first particle of the smallest radius and the first of the
    /// largest (`None` for an empty file), found when the file was checked.
    #[must_use]
    pub fn extremes(&self) -> Option<&[ParticleRecord; 2]> {
        self.found.extremes.as_ref()
    }

    /// The wrapping sum of every particle's hash ([`hash_record`]), found
    /// when the file was checked.
    #[must_use]
    pub fn digest(&self) -> u64 {
        self.found.digest
    }

    /// Call `f` with every particle, in the file's order, reading the file
    /// in bounded pieces.
    ///
    /// # Errors
    /// [`FileWalk::Unread`] if the file cannot be read or changed since it
    /// was checked; [`FileWalk::Stopped`] with the first error `f` returns.
    pub fn try_for_each<E>(
        &self,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), FileWalk<E>> {
        self.unchanged()?;
        match self.kind {
            Kind::Csv { data, header_line } => {
                self.csv_lines(data, u64::MAX, Some(header_line + 1), &mut f)
            }
            Kind::Frame { .. } | Kind::Checkpoint { .. } => {
                let n = usize::try_from(self.rows).unwrap_or(usize::MAX);
                for start in (0..n).step_by(WALK_ROWS) {
                    let rows = start..(start + WALK_ROWS).min(n);
                    for r in &self.hdf5_rows(rows).map_err(FileWalk::Unread)? {
                        f(r).map_err(FileWalk::Stopped)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Slice `part` of `parts` of the particles: an even share of a CSV
    /// file's bytes (each line in the slice its first byte lies in) or of
    /// an HDF5 file's rows. The slices of `0..parts` together hold every
    /// particle once.
    ///
    /// # Errors
    /// The file cannot be read or changed since it was checked.
    pub fn read_part(&self, part: usize, parts: usize) -> Result<Vec<ParticleRecord>, String> {
        let unread = |w: FileWalk<()>| match w {
            FileWalk::Unread(e) => e,
            FileWalk::Stopped(()) => unreachable!("the callback does not fail"),
        };
        self.unchanged().map_err(unread)?;
        match self.kind {
            Kind::Csv { data, .. } => {
                let span = RowSpan::even_share(self.stamp.len - data, part, parts);
                let from = data + span.offset;
                let mut out = Vec::new();
                self.csv_lines(from, from + span.local, None, &mut |r| {
                    out.push(r.clone());
                    Ok::<(), ()>(())
                })
                .map_err(unread)?;
                Ok(out)
            }
            Kind::Frame { .. } | Kind::Checkpoint { .. } => {
                self.hdf5_rows(RowSpan::even_share(self.rows, part, parts).range())
            }
        }
    }

    /// Refuse a file whose size or modification time changed since it was
    /// checked.
    fn unchanged<E>(&self) -> Result<(), FileWalk<E>> {
        match Stamp::of(&self.path) {
            Ok(s) if s == self.stamp => Ok(()),
            Ok(_) => Err(FileWalk::Unread(format!(
                "`{}` changed after it was checked (its size or modification time); run again",
                self.path.display()
            ))),
            Err(e) => Err(cannot_read(&self.path, &e)),
        }
    }

    /// Call `f` with the particle of every row of the CSV file that starts
    /// in bytes `from..to` (`from` is the first data byte or any byte
    /// after it), in order. `line` is the number of the line at `from`
    /// where known (a whole walk); errors name it, or the byte otherwise.
    fn csv_lines<E>(
        &self,
        from: u64,
        to: u64,
        mut line: Option<u64>,
        f: &mut impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), FileWalk<E>> {
        let shown = self.path.display();
        let cannot = |e: std::io::Error| cannot_read(&self.path, &e);
        let mut reader = BufReader::with_capacity(1 << 16, File::open(&self.path).map_err(cannot)?);
        let Kind::Csv { data, .. } = self.kind else {
            unreachable!("a CSV file")
        };
        let mut text = Vec::new();
        let mut at = from;
        if from > data {
            // Skip the rest of the line that began before `from`: reading
            // from the byte before, up to its line break, leaves the reader
            // at the first line that starts at or after `from`.
            reader.seek(SeekFrom::Start(from - 1)).map_err(cannot)?;
            at = from - 1 + reader.read_until(b'\n', &mut text).map_err(cannot)? as u64;
        } else {
            reader.seek(SeekFrom::Start(from)).map_err(cannot)?;
        }
        while at < to {
            text.clear();
            let read = reader.read_until(b'\n', &mut text).map_err(cannot)?;
            if read == 0 {
                break;
            }
            let where_ = || match line {
                Some(n) => format!("`{shown}` line {n}"),
                None => format!("`{shown}` the line at byte {at}"),
            };
            if let Some(record) =
                parse_row(&text, self.material, where_).map_err(FileWalk::Unread)?
            {
                f(&record).map_err(FileWalk::Stopped)?;
            }
            at += read as u64;
            line = line.map(|n| n + 1);
        }
        Ok(())
    }

    /// The particles of rows `rows` of the HDF5 file.
    fn hdf5_rows(&self, rows: std::ops::Range<usize>) -> Result<Vec<ParticleRecord>, String> {
        let m = self.material;
        match self.kind {
            Kind::Csv { .. } => unreachable!("an HDF5 file"),
            Kind::Checkpoint { domain } => {
                let part = crate::io::checkpoint::read_particles_rows(&self.path, rows)
                    .map_err(|e| e.to_string())?;
                Ok(part
                    .into_iter()
                    .map(|p| ParticleRecord {
                        x: domain.wrap(p.x),
                        material: m,
                        ..p
                    })
                    .collect())
            }
            Kind::Frame { step, density } => {
                let frame = crate::io::read::read_frame_rows(&self.path, step, Some(rows))
                    .map_err(|e| e.to_string())?;
                let field =
                    |name: &str| frame.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
                let (velocity, omega) = (field("velocity"), field("omega"));
                let vector = |v: Option<&Vec<[f64; 3]>>, i: usize| {
                    v.map_or(DVec3::ZERO, |v| DVec3::from_array(v[i]))
                };
                Ok((0..frame.id.len())
                    .map(|i| ParticleRecord {
                        id: frame.id[i],
                        x: DVec3::from_array(frame.position[i]),
                        v: vector(velocity, i),
                        omega: vector(omega, i),
                        radius: frame.radius[i],
                        mass: ParticleRecord::sphere_mass(frame.radius[i], density),
                        material: m,
                        frozen: frame.frozen.get(i).is_some_and(|&f| f != 0),
                    })
                    .collect())
            }
        }
    }
}

/// Whether a line holds nothing but blanks.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The cells of a line: split at commas, trimmed, and a quoted cell's
/// quotes taken off (a number never holds a quote, so `""` inside one is
/// left to fail as a number).
fn cells(line: &str) -> impl Iterator<Item = &str> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.split(',').map(|cell| {
        let cell = cell.trim_ascii();
        (cell.strip_prefix('"'))
            .and_then(|c| c.strip_suffix('"'))
            .unwrap_or(cell)
    })
}

/// The text of a line (bytes that are not UTF-8 replaced).
fn text_of(line: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(line)
}

/// The particle of one CSV line (`None` for a blank line), of material
/// `material`; `where_` names the line in errors. Reads the cells in place.
fn parse_row(
    line: &[u8],
    material: u32,
    where_: impl Fn() -> String,
) -> Result<Option<ParticleRecord>, String> {
    if is_blank(line) {
        return Ok(None);
    }
    let line = text_of(line);
    let mut cell: [&str; 13] = [""; 13];
    let mut n = 0;
    for c in cells(&line) {
        if let Some(slot) = cell.get_mut(n) {
            *slot = c;
        }
        n += 1;
    }
    if n != CSV_COLUMNS.len() {
        return Err(format!(
            "{}: expected {} columns, got {n}",
            where_(),
            CSV_COLUMNS.len(),
        ));
    }
    let cell_error = |c: usize| {
        let allowed = match c {
            0 => "is not a non-negative integer",
            1 => "must be 0 or 1",
            _ => "is not a finite number",
        };
        format!(
            "{}, column `{}`: `{}` {allowed}",
            where_(),
            CSV_COLUMNS[c],
            cell[c]
        )
    };
    // Decimal only: `+` and `0x` are refused.
    let id = Some(cell[0])
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(|| cell_error(0))?;
    let mut number = [0.0f64; 11];
    for (c, v) in number.iter_mut().enumerate() {
        *v = cell[c + 2].parse::<f64>().map_err(|_| cell_error(c + 2))?;
    }
    let frozen = match cell[1] {
        "0" => false,
        "1" => true,
        _ => return Err(cell_error(1)),
    };
    if let Some(c) = number.iter().position(|v| !v.is_finite()) {
        return Err(cell_error(c + 2));
    }
    let [x, y, z, radius, density, vx, vy, vz, wx, wy, wz] = number;
    if radius <= 0.0 || density <= 0.0 {
        return Err(format!(
            "{}: radius and density must be > 0, got {radius} and {density}",
            where_()
        ));
    }
    Ok(Some(ParticleRecord {
        id,
        x: DVec3::new(x, y, z),
        v: DVec3::new(vx, vy, vz),
        omega: DVec3::new(wx, wy, wz),
        radius,
        mass: ParticleRecord::sphere_mass(radius, density),
        material,
        frozen,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records of the CSV `text` (written to a file), or the error
    /// without the file's name.
    fn parse_csv(text: &str, material: u32) -> Result<Vec<ParticleRecord>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.csv");
        std::fs::write(&path, text).unwrap();
        let strip = |e: String| e.replacen(&format!("`{}` ", path.display()), "", 1);
        let unread = |w: FileWalk<()>| match w {
            FileWalk::Unread(e) => strip(e),
            FileWalk::Stopped(()) => unreachable!(),
        };
        let mut first = Vec::new();
        let file = ParticleFile::csv(&path, material, |r| {
            first.push(r.clone());
            Ok::<(), ()>(())
        })
        .map_err(unread)?;
        let mut out = Vec::new();
        file.try_for_each(|r| {
            out.push(r.clone());
            Ok::<(), ()>(())
        })
        .map_err(unread)?;
        assert_eq!(out, first);
        assert_eq!(out.len() as u64, file.rows());
        Ok(out)
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        let head = CSV_COLUMNS.join(",");
        let e = parse_csv(&format!("{head}\n1,0,1,2,3,0.5,1,0,0,0,0,0\n"), 0).unwrap_err();
        assert!(e.contains("line 2") && e.contains("13 columns"), "{e}");
        let e = parse_csv(&format!("{head}\n1,0,1,2,x,0.5,1,0,0,0,0,0,0\n"), 0).unwrap_err();
        assert!(e.contains("line 2") && e.contains("`z`"), "{e}");
        let ok = parse_csv(&format!("{head}\n7,1,1,2,3,0.5,1,0,0,0,0,0,0\n"), 2).unwrap();
        assert!(ok[0].frozen && ok[0].id == 7 && ok[0].material == 2);
    }

    #[test]
    fn csv_reads_every_column_exactly() {
        let text = "id, frozen, x, y, z, radius, density, vx, vy, vz, wx, wy, wz\n\
                    3, 0, 0.1, -0.2, 3e-3, \"0.5\", 2500, 1, 2, 3, -4, -5, -6";
        let p = parse_csv(text, 1).unwrap();
        assert_eq!(p.len(), 1);
        let r = &p[0];
        assert_eq!((r.id, r.frozen, r.material), (3, false, 1));
        assert_eq!(r.x, DVec3::new(0.1, -0.2, 3e-3));
        assert_eq!(r.v, DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(r.omega, DVec3::new(-4.0, -5.0, -6.0));
        assert_eq!(r.radius, 0.5);
        assert_eq!(r.mass, ParticleRecord::sphere_mass(0.5, 2500.0));
    }

    #[test]
    fn csv_blank_lines_are_skipped_and_counted() {
        let head = CSV_COLUMNS.join(",");
        let row = "1,0,1,2,3,0.5,1,0,0,0,0,0,0";
        let p = parse_csv(&format!("{head}\n\n{row}\n   \n{row}\n"), 0).unwrap();
        assert_eq!(p.len(), 2);
        let e = parse_csv(&format!("{head}\n\n{row}\n\n1,0,1\n"), 0).unwrap_err();
        assert_eq!(e, "line 5: expected 13 columns, got 3");
        let e = parse_csv(&format!("{head}\n{row}\n\n\n\r\n1,x,1\n"), 0).unwrap_err();
        assert_eq!(e, "line 6: expected 13 columns, got 3");
        let e = parse_csv(&format!("{head}\n{row}\n  \n1,x,1\n"), 0).unwrap_err();
        assert_eq!(e, "line 4: expected 13 columns, got 3");
        let e = parse_csv(
            &format!("{head}\r\n{row}\r\n2,0,1,2,3,0.5,1,0,0,0,0,0,nan\r\n"),
            0,
        )
        .unwrap_err();
        assert_eq!(e, "line 3, column `wz`: `nan` is not a finite number");
        // A header after blank lines is named by its own line.
        let e = parse_csv("\n\nid,x\n", 0).unwrap_err();
        assert!(e.starts_with("line 3: header must be"), "{e}");
    }

    #[test]
    fn csv_refuses_what_the_format_does_not_allow() {
        let head = CSV_COLUMNS.join(",");
        let row = |cells: &str| parse_csv(&format!("{head}\n{cells}\n"), 0).unwrap_err();
        for id in ["-1", "0x1f", "+1", "", "1.0"] {
            assert_eq!(
                row(&format!("{id},0,1,2,3,0.5,1,0,0,0,0,0,0")),
                format!("line 2, column `id`: `{id}` is not a non-negative integer")
            );
        }
        for frozen in ["2", "+1", "0x1", "yes", ""] {
            assert_eq!(
                row(&format!("1,{frozen},1,2,3,0.5,1,0,0,0,0,0,0")),
                format!("line 2, column `frozen`: `{frozen}` must be 0 or 1")
            );
        }
        assert_eq!(
            row("1,0,1,2,inf,0.5,1,0,0,0,0,0,0"),
            "line 2, column `z`: `inf` is not a finite number"
        );
        assert_eq!(
            row("1,0,1,2,3,0,1,0,0,0,0,0,0"),
            "line 2: radius and density must be > 0, got 0 and 1"
        );
        assert_eq!(
            row("1,0,1,2,3,0.5,-1,0,0,0,0,0,0"),
            "line 2: radius and density must be > 0, got 0.5 and -1"
        );
        // A quoted cell with a line break leaves two broken lines.
        assert_eq!(
            row("1,0,1,2,\"3\n\",0.5,1,0,0,0,0,0,0"),
            "line 2: expected 13 columns, got 5"
        );
        assert_eq!(
            parse_csv("id,x\n", 0).unwrap_err(),
            format!("line 1: header must be `{head}`, got `id,x`")
        );
        assert_eq!(
            parse_csv("", 0).unwrap_err(),
            "line 1: empty file, expected a header"
        );
        assert!(parse_csv(&format!("{head}\n"), 0).unwrap().is_empty());
    }

    #[test]
    fn the_parts_of_a_csv_file_hold_every_row_once_in_order() {
        // Rows of varied length, blank lines and CRLF endings, so that
        // slice boundaries fall everywhere in a line.
        let mut text = CSV_COLUMNS.join(",") + "\r\n";
        for i in 0..200u64 {
            let pad = " ".repeat((i % 7) as usize);
            text += &format!(
                "{i},{},{pad}{}.5,2,3,0.25,1000,0,0,0,0,0,0\r\n",
                i % 2,
                i * 31
            );
            if i % 13 == 0 {
                text += "\n  \n";
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.csv");
        std::fs::write(&path, &text).unwrap();
        let file = ParticleFile::csv(&path, 0, |_| Ok::<(), ()>(())).unwrap();
        assert_eq!(file.rows(), 200);
        let mut whole = Vec::new();
        let _ = file.try_for_each(|r| {
            whole.push(r.clone());
            Ok::<(), ()>(())
        });
        for parts in [1, 2, 3, 4, 7, 64, 500] {
            let joined: Vec<ParticleRecord> = (0..parts)
                .flat_map(|p| file.read_part(p, parts).unwrap())
                .collect();
            assert_eq!(joined, whole, "{parts} parts");
        }
        // A file changed after it was checked is refused.
        std::fs::write(&path, text + "200,0,1,2,3,0.25,1000,0,0,0,0,0,0\n").unwrap();
        let e = file.read_part(0, 1).unwrap_err();
        assert!(e.contains("changed after it was checked"), "{e}");
    }
}
