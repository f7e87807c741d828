//! The XDMF sidecar kept up to date as frames are written, at a cost per
//! frame that does not grow with the frames before it.
//!
//! Rewriting the whole sidecar after every frame ([`super::xdmf::render`],
//! some 1.5 KB a frame) makes a run's output time grow with the square of
//! its frames: 1,000 frames of 1,000 spheres spent 2.8 ms a frame in
//! output, 4,000 frames 10.5 ms (2026-12-06, `docs/performance.md`). So a
//! [`Sidecar`] writes a new frame's grid in place, into the room left at
//! the end of the particles' collection (and, where a wall moves, the
//! walls' placement into the room of theirs), and rewrites the whole
//! file only when that cannot be done:
//!
//! - the first frame a writer adds (a new file, a restart);
//! - a frame that is not after the last one listed (a frame replaced), a
//!   vertex index of another length, walls set anew
//!   ([`Sidecar::forget`]), a file whose length is not the one left;
//! - where a wall moves, a particles' room that is full (the walls'
//!   collection follows it).
//!
//! Where no wall moves, a full particles' room is moved on: the grid, a
//! new room and what follows are written over the old room's place, in
//! one write. Rooms are sized by [`super::xdmf::section_len`] from what
//! they follow alone, so the bytes of a sidecar do not depend on how it
//! grew: one written frame by frame equals one written whole from the same
//! frames.
//!
//! A whole sidecar is written atomically (a temporary file, `fsync`, a
//! rename), so a reader never sees half of it. A grid written in place is
//! one `pwrite` into the page cache: a killed run leaves it whole, and a
//! reader that opens the file at that moment could in principle read a
//! grid half written and should open it again. The HDF5 file is the
//! record; the sidecar is rewritten from it whole on a restart.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::xdmf::{
    after_particles, after_walls, frame_grid, render, room, section_len, walls_grid, Section,
    WallScene, XdmfFrame,
};
use crate::error::{Context, IoResult};

/// The sidecar of one output file.
#[derive(Debug)]
pub struct Sidecar {
    path: PathBuf,
    /// The HDF5 file's name, relative to the sidecar's folder.
    h5_name: String,
    /// What the file holds, as this writer left it (`None`: not written
    /// by this writer yet, or to be rewritten whole).
    written: Option<Written>,
}

/// What a sidecar holds.
#[derive(Debug, Clone)]
struct Written {
    /// Entries of the frame list it was written from (empty frames too).
    frames: usize,
    /// The last entry's step.
    last_step: u64,
    /// The vertex index's length its grids refer to.
    vertex_count: usize,
    /// The particles' section.
    particles: Section,
    /// The moving walls' section, where a wall moves.
    walls: Option<Section>,
    /// The file's length.
    len: usize,
}

impl Sidecar {
    /// The sidecar at `path` of the HDF5 file named `h5_name` (relative to
    /// the sidecar's folder). Nothing is written yet.
    #[must_use]
    pub fn new(path: &Path, h5_name: &str) -> Self {
        Self {
            path: path.to_path_buf(),
            h5_name: h5_name.to_owned(),
            written: None,
        }
    }

    /// The sidecar's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Have the next [`Self::update`] write the whole file (the walls
    /// changed, or the file is gone).
    pub fn forget(&mut self) {
        self.written = None;
    }

    /// Bring the sidecar up to date with `frames` (sorted by step), the
    /// `walls` and a vertex index of `vertex_count` entries: the last
    /// frame's grid written in place when it is the one frame added since
    /// the last update, else the whole file.
    ///
    /// # Errors
    /// If the file cannot be written.
    pub fn update(
        &mut self,
        frames: &[XdmfFrame],
        walls: Option<&WallScene>,
        vertex_count: usize,
    ) -> IoResult<()> {
        let appended = match (&self.written, frames.last()) {
            (Some(w), Some(last))
                if frames.len() == w.frames + 1
                    && last.0 > w.last_step
                    && vertex_count == w.vertex_count =>
            {
                self.append(last, walls)
            }
            _ => Ok(false),
        };
        // A failed write in place leaves the file to be rewritten whole.
        if appended.unwrap_or(false) {
            return Ok(());
        }
        self.rewrite(frames, walls, vertex_count)
    }

    /// Writes the whole sidecar from `frames`.
    fn rewrite(
        &mut self,
        frames: &[XdmfFrame],
        walls: Option<&WallScene>,
        vertex_count: usize,
    ) -> IoResult<()> {
        self.written = None;
        let doc = render(&self.h5_name, frames, walls, vertex_count);
        write_atomically(&self.path, &doc.text)?;
        self.written = Some(Written {
            frames: frames.len(),
            last_step: frames.last().map_or(0, |f| f.0),
            vertex_count,
            particles: doc.particles,
            walls: doc.walls,
            len: doc.text.len(),
        });
        Ok(())
    }

    /// Writes `frame`'s grid (and its walls' placement) in place, if the
    /// file is as left and the rooms allow. `Ok(false)`: the whole file is
    /// to be written instead.
    fn append(&mut self, frame: &XdmfFrame, walls: Option<&WallScene>) -> std::io::Result<bool> {
        let Some(w) = self.written.as_mut() else {
            return Ok(false);
        };
        if frame.2 == 0 {
            // Not listed: nothing to write.
            w.frames += 1;
            w.last_step = frame.0;
            return Ok(true);
        }
        let moving = walls.filter(|s| !s.walls.is_empty() && !s.moving.is_empty());
        if moving.is_some() != w.walls.is_some() {
            return Ok(false);
        }
        let grid = frame_grid(&self.h5_name, frame, w.vertex_count);
        let placed = moving.map(|scene| walls_grid(&self.h5_name, scene, frame.1));
        if !fits(w.particles, grid.len()) && w.walls.is_some() {
            return Ok(false); // the walls' collection follows: rewrite
        }
        let file = fs::OpenOptions::new().write(true).open(&self.path)?;
        if file.metadata()?.len() != w.len as u64 {
            return Ok(false); // not as this writer left it
        }
        let h5 = &self.h5_name;
        let after = || after_particles(h5, walls);
        w.len = write_into(&file, &mut w.particles, &grid, after, w.len)?;
        if let (Some(placed), Some(section)) = (placed, w.walls.as_mut()) {
            w.len = write_into(&file, section, &placed, after_walls, w.len)?;
        }
        w.frames += 1;
        w.last_step = frame.0;
        Ok(true)
    }
}

/// Whether `len` bytes fit in `section`'s room, its closing newline kept.
fn fits(section: Section, len: usize) -> bool {
    section.room + len < section.end
}

/// Writes `grid` into `section`'s room in `file` (of `len` bytes), or, where
/// the room is full, moves the section on with `after` (what follows it to
/// the file's end, made only then) written after its new room; returns
/// the file's length.
fn write_into(
    file: &fs::File,
    section: &mut Section,
    grid: &str,
    after: impl FnOnce() -> String,
    len: usize,
) -> std::io::Result<usize> {
    if fits(*section, grid.len()) {
        file.write_all_at(grid.as_bytes(), section.room as u64)?;
        section.room += grid.len();
        return Ok(len);
    }
    let (text, moved) = moved_on(*section, grid, &after());
    file.write_all_at(text.as_bytes(), section.room as u64)?;
    let len = section.room + text.len();
    file.set_len(len as u64)?;
    *section = moved;
    Ok(len)
}

/// A full `section` moved on to hold `grid`: the text to write at its
/// room's start (the grid, the new room, then `after`, what follows the
/// section to the file's end) and the section it makes.
fn moved_on(section: Section, grid: &str, after: &str) -> (String, Section) {
    let used = section.room - section.start + grid.len();
    let end = section.start + section_len(used);
    let room_at = section.room + grid.len();
    let text = format!("{grid}{}{after}", room(end - room_at));
    (
        text,
        Section {
            start: section.start,
            room: room_at,
            end,
        },
    )
}

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`.
fn write_atomically(path: &Path, contents: &str) -> IoResult<()> {
    let tmp = temporary_path(path);
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: the temporary file is useless now, and the error that matters
        // is the one returned below.
        let _ = fs::remove_file(&tmp);
    }
    result.at(path, "writing the XDMF sidecar")
}

/// `<dir>/.<name>.tmp`: hidden, and in the same folder so the rename is atomic.
fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "xdmf".into(), |name| name.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::xdmf::tests::{element_names, frames, scene};

    /// Frames of `n` particles at steps 10, 20, … (every third empty), each
    /// with velocity.
    fn series(count: usize, n: usize) -> Vec<XdmfFrame> {
        (1..=count)
            .map(|k| {
                let size = if k % 3 == 0 { 0 } else { n };
                (
                    10 * k as u64,
                    0.001 * k as f64,
                    size,
                    vec!["velocity".into()],
                )
            })
            .collect()
    }

    /// Adds `frames` one at a time, checking the file after each against
    /// the sidecar written whole from the frames so far.
    fn grow(dir: &Path, frames: &[XdmfFrame], walls: Option<&WallScene>) -> Sidecar {
        let path = dir.join("run.xdmf");
        let mut sidecar = Sidecar::new(&path, "run.h5");
        for k in 1..=frames.len() {
            sidecar.update(&frames[..k], walls, 64).unwrap();
            let text = fs::read_to_string(&path).unwrap();
            let whole = render("run.h5", &frames[..k], walls, 64).text;
            assert!(text == whole, "frame {k}: grown and whole sidecars differ");
        }
        element_names(&fs::read_to_string(&path).unwrap());
        sidecar
    }

    #[test]
    fn a_sidecar_grown_frame_by_frame_is_the_one_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        // 120 frames of ~1.3 KB: the particles' room of 64 KiB fills and
        // is moved on (to 128 KiB) where no wall moves.
        let frames = series(120, 7);
        for walls in [None, Some(scene(false))] {
            let s = grow(dir.path(), &frames, walls.as_ref());
            let w = s.written.as_ref().unwrap();
            assert_eq!(w.particles.end - w.particles.start, 128 << 10);
        }
        // Moving walls: both rooms fill (the particles' one by a rewrite).
        let s = grow(dir.path(), &frames[..90], Some(&scene(true)));
        assert!(s.written.as_ref().unwrap().walls.is_some());
    }

    #[test]
    fn frames_are_written_in_place_not_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.xdmf");
        let frames = series(4, 5);
        let mut sidecar = Sidecar::new(&path, "run.h5");
        sidecar.update(&frames[..1], None, 8).unwrap();
        // The same inode: the file was written into, not replaced by a rename.
        use std::os::unix::fs::MetadataExt;
        let inode = fs::metadata(&path).unwrap().ino();
        for k in 2..=4 {
            sidecar.update(&frames[..k], None, 8).unwrap();
            assert_eq!(fs::metadata(&path).unwrap().ino(), inode, "frame {k}");
        }
        assert_eq!(sidecar.written.as_ref().unwrap().frames, 4);
        // A frame replaced, a longer vertex index, walls set anew or a file
        // changed by someone else: written whole (a new inode).
        let mut replaced = frames.clone();
        replaced[3].1 = 9.0;
        let check = |sidecar: &mut Sidecar, frames: &[XdmfFrame], count: usize, what: &str| {
            let before = fs::metadata(&path).unwrap().ino();
            sidecar.update(frames, None, count).unwrap();
            assert_ne!(fs::metadata(&path).unwrap().ino(), before, "{what}");
            let text = fs::read_to_string(&path).unwrap();
            assert!(text == render("run.h5", frames, None, count).text, "{what}");
        };
        check(&mut sidecar, &replaced, 8, "a frame replaced");
        let more = series(5, 5);
        check(&mut sidecar, &more, 16, "the vertex index grown");
        sidecar.forget();
        let more = series(6, 5);
        check(&mut sidecar, &more, 16, "forgotten");
        fs::write(&path, "damaged").unwrap();
        let more = series(7, 5);
        check(&mut sidecar, &more, 16, "changed behind its back");
    }

    #[test]
    fn the_sample_frames_grow_into_the_whole_document() {
        let dir = tempfile::tempdir().unwrap();
        let mut sorted = frames();
        sorted.sort_by_key(|f| f.0);
        for walls in [None, Some(scene(false)), Some(scene(true))] {
            grow(dir.path(), &sorted, walls.as_ref());
        }
    }

    #[test]
    fn write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.xdmf");
        write_atomically(&path, "one").unwrap();
        write_atomically(&path, "two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let entries: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "temporary file left behind");
    }

    #[test]
    fn write_into_missing_folder_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("run.xdmf");
        let mut sidecar = Sidecar::new(&path, "run.h5");
        let err = sidecar.update(&frames(), None, 5).unwrap_err();
        assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    }
}
