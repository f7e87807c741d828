//! HDF5 tables that every rank writes a part of, at once.
//!
//! A frame or a checkpoint holds one row per particle, and each rank owns a
//! share of the particles. Each rank writes its rows at the offset that an
//! exclusive scan of the counts gives it ([`RowSpan`]), so no rank ever
//! holds more than its own rows:
//!
//! - one process ([`Transfer::Serial`]): the file is opened with HDF5's
//!   serial driver and the rows are written as they are;
//! - several (feature `mpi`, [`Transfer::Collective`]): the file is opened
//!   by every rank through MPI-IO (`H5Pset_fapl_mpio`), every rank creates
//!   the same groups, datasets and attributes (HDF5 requires these metadata
//!   calls to be collective, with the same arguments on every rank), and
//!   the rows go in one collective write per dataset
//!   (`H5FD_MPIO_COLLECTIVE`, which HDF5 needs for chunked datasets with a
//!   filter such as the Fletcher32 checksum).
//!
//! Every dataset is chunked (at most [`CHUNK_ROWS`] rows a chunk) with the
//! Fletcher32 checksum on every chunk; an empty one holds no data and is
//! left plain.

use std::path::Path;

use hdf5::{Dataset, File, Group, H5Type};

use crate::parallel::comm::{Comm, RowSpan};

/// Rows per chunk: 8,192 rows (192 KiB of vectors), each chunk with its
/// checksum. HDF5 holds a chunk (and the filter's copy of it) while it
/// writes: at a million rows a chunk, a frame of 250,000 spheres held 12 MB
/// more at its peak than at 65,536; at 65,536 the chute's final frame
/// (32,000 rows) held 2.4 MB, at 8,192 0.35 MB, in the same time per frame
/// (2026-11-28, `docs/performance.md`).
pub const CHUNK_ROWS: usize = 1 << 13;

/// How the rows reach the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// One process, HDF5's serial driver.
    Serial,
    /// Every rank at once through MPI-IO.
    Collective,
}

/// Create (truncate) `path` for every rank to write. Collective.
///
/// # Errors
/// If HDF5 cannot create the file.
pub fn create(path: &Path, comm: &dyn Comm) -> hdf5::Result<(File, Transfer)> {
    match driver(comm) {
        Some(b) => Ok((b.create(path)?, Transfer::Collective)),
        None => Ok((super::create(path)?, Transfer::Serial)),
    }
}

/// Open the existing `path` for every rank to write. Collective.
///
/// # Errors
/// If HDF5 cannot open the file.
pub fn open_rw(path: &Path, comm: &dyn Comm) -> hdf5::Result<(File, Transfer)> {
    match driver(comm) {
        Some(b) => Ok((b.open_rw(path)?, Transfer::Collective)),
        None => Ok((super::open_rw(path)?, Transfer::Serial)),
    }
}

/// The MPI-IO file builder when there are several ranks.
#[cfg(feature = "mpi")]
fn driver(comm: &dyn Comm) -> Option<hdf5::FileBuilder> {
    let raw = comm.mpi_raw()?;
    let mut b = hdf5::File::with_options();
    // Without HDF5's file lock, as every gravel file (see `io::unlocked`).
    b.with_fapl(|p| p.mpio(raw, None).file_locking(false));
    Some(b)
}

/// One process: no MPI-IO.
#[cfg(not(feature = "mpi"))]
fn driver(_comm: &dyn Comm) -> Option<hdf5::FileBuilder> {
    None
}

/// This rank's part of a table, and how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// This rank's rows.
    pub span: RowSpan,
    /// Serial or collective.
    pub transfer: Transfer,
    /// Chunked with the Fletcher32 checksum on every chunk (frames), or
    /// contiguous (checkpoints, which carry a checksum of their own).
    pub checksummed: bool,
}

impl Part {
    /// The same part of a table with `k` values per row, as a flat table.
    #[must_use]
    pub fn times(self, k: usize) -> Part {
        let k = k as u64;
        Part {
            span: RowSpan {
                offset: self.span.offset * k,
                local: self.span.local * k,
                total: self.span.total * k,
            },
            ..self
        }
    }
}

/// Create the 1-D dataset `name` of `part.span.total` rows and write this
/// rank's `rows` at `part.span.offset`. Collective.
///
/// # Errors
/// If `rows` is not `part.span.local` long, or HDF5 fails.
pub fn write_rows<T: H5Type>(
    group: &Group,
    name: &str,
    rows: &[T],
    part: Part,
) -> hdf5::Result<Dataset> {
    let ds = create_dataset::<T>(group, name, None, part)?;
    write_part(&ds, rows, 1, part)?;
    Ok(ds)
}

/// The dataset `name` of `part.span.total` rows, 1-D (`width` `None`) or
/// of `width` columns: chunked with the Fletcher32 checksum where `part`
/// is checksummed and not empty, else plain. Collective.
fn create_dataset<T: H5Type>(
    group: &Group,
    name: &str,
    width: Option<usize>,
    part: Part,
) -> hdf5::Result<Dataset> {
    let total = part.span.total as usize;
    let builder = match width {
        None => group.new_dataset::<T>().shape(total),
        Some(w) => group.new_dataset::<T>().shape((total, w)),
    };
    if total == 0 || !part.checksummed {
        return builder.create(name);
    }
    match width {
        None => builder.chunk(total.min(CHUNK_ROWS)),
        Some(w) => builder.chunk((total.min(CHUNK_ROWS), w)),
    }
    .fletcher32()
    .create(name)
}

/// As [`write_rows`], for an N×3 f64 dataset of vectors.
///
/// # Errors
/// As [`write_rows`].
pub fn write_vectors(
    group: &Group,
    name: &str,
    rows: &[[f64; 3]],
    part: Part,
) -> hdf5::Result<Dataset> {
    write_matrix(group, name, rows.as_flattened(), 3, part)
}

/// As [`write_rows`], for an N×`width` dataset (`values` row-major).
///
/// # Errors
/// As [`write_rows`].
pub fn write_matrix<T: H5Type>(
    group: &Group,
    name: &str,
    values: &[T],
    width: usize,
    part: Part,
) -> hdf5::Result<Dataset> {
    let ds = create_dataset::<T>(group, name, Some(width), part)?;
    write_part(&ds, values, width, part)?;
    Ok(ds)
}

/// Values per piece of a [`Pieces`] table: 131,072 (1 MiB of `f64`).
pub const PIECE_VALUES: usize = 1 << 17;

/// The test hook: an environment variable that sets the values per piece
/// of every [`Pieces`] table (so that a small run writes many pieces, and
/// ranks different numbers of them).
pub const PIECE_HOOK: &str = "GRAVEL_TEST_PIECE_VALUES";

/// Values per piece: [`PIECE_VALUES`], or what [`PIECE_HOOK`] says.
fn piece_values() -> usize {
    std::env::var(PIECE_HOOK)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(PIECE_VALUES)
}

/// A table written as its rows are produced, in pieces of at most
/// [`PIECE_VALUES`] values (or a whole row where a row is longer), so that
/// a rank never holds its whole part of it: a checkpoint's pair history is
/// 56 B a contact with rolling and spinning, which a copy would hold all
/// at once. With a collective transfer every rank makes the same number of
/// writes (the most pieces any rank has; a rank out of rows writes an
/// empty selection). Fill one table at a time: collective writes to two
/// tables filled together would come in a different order on ranks whose
/// pieces fill at different moments.
pub struct Pieces<T: H5Type> {
    ds: Dataset,
    part: Part,
    width: usize,
    /// Rows per piece.
    rows: usize,
    buf: Vec<T>,
    /// Rows of this rank written so far.
    written: u64,
    /// Writes still to make, the same on every rank.
    writes_left: u64,
    error: Option<hdf5::Error>,
}

impl<T: H5Type + Copy> Pieces<T> {
    /// Create the dataset `name` of `part.span.total` rows, 1-D (`width`
    /// `None`) or of `width` columns, to be filled by [`Self::push`]
    /// with this rank's rows in order. Collective.
    ///
    /// # Errors
    /// If HDF5 cannot create the dataset.
    pub fn create(
        group: &Group,
        name: &str,
        width: Option<usize>,
        part: Part,
        comm: &dyn Comm,
    ) -> hdf5::Result<Self> {
        Self::create_in(group, name, width, part, comm, piece_values())
    }

    /// [`Self::create`] with pieces of `values` values.
    fn create_in(
        group: &Group,
        name: &str,
        width: Option<usize>,
        part: Part,
        comm: &dyn Comm,
        values: usize,
    ) -> hdf5::Result<Self> {
        let ds = create_dataset::<T>(group, name, width, part)?;
        let width = width.unwrap_or(1);
        let rows = (values / width).max(1);
        let mut most = [part.span.local.div_ceil(rows as u64)];
        if part.transfer == Transfer::Collective {
            comm.max_u64s(&mut most);
        }
        Ok(Self {
            ds,
            part,
            width,
            rows,
            buf: Vec::with_capacity(rows.min(part.span.local as usize) * width),
            written: 0,
            writes_left: most[0],
            error: None,
        })
    }

    /// Append values to this rank's rows (any number; the rows are
    /// `width` values each), writing each piece as it fills.
    pub fn push(&mut self, mut values: &[T]) {
        while !values.is_empty() {
            let room = self.rows * self.width - self.buf.len();
            let (now, rest) = values.split_at(room.min(values.len()));
            self.buf.extend_from_slice(now);
            values = rest;
            if self.buf.len() == self.rows * self.width {
                self.write_piece();
            }
        }
    }

    /// Write the rows held as the next piece (collective where the
    /// transfer is; an empty piece where none are held). After a failed
    /// write the others are still made, so that every rank makes as many,
    /// and the first error is kept.
    fn write_piece(&mut self) {
        let rows = (self.buf.len() / self.width) as u64;
        let span = RowSpan {
            offset: self.part.span.offset + self.written,
            local: rows,
            total: self.part.span.total,
        };
        let part = Part { span, ..self.part };
        if let Err(e) = write_part(&self.ds, &self.buf, self.width, part) {
            self.error.get_or_insert(e);
        }
        self.written += rows;
        self.writes_left = self.writes_left.saturating_sub(1);
        self.buf.clear();
    }

    /// Write what is held, and the empty pieces that match the other
    /// ranks' writes. Collective.
    ///
    /// # Errors
    /// If a write failed, or the rows pushed were not this rank's count.
    pub fn finish(mut self) -> hdf5::Result<Dataset> {
        let partial = !self.buf.len().is_multiple_of(self.width);
        if !self.buf.is_empty() {
            self.write_piece();
        }
        while self.writes_left > 0 && self.part.transfer == Transfer::Collective {
            self.write_piece();
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.written != self.part.span.local || partial {
            return Err(
                format!("{} rows written of {}", self.written, self.part.span.local).into(),
            );
        }
        Ok(self.ds)
    }
}

/// Write `values` (`width` per row) at rows `part.span.range()` of `ds`
/// (collective where `part.transfer` is).
pub(crate) fn write_part<T: H5Type>(
    ds: &Dataset,
    values: &[T],
    width: usize,
    part: Part,
) -> hdf5::Result<()> {
    let rows = part.span.range();
    if values.len() != rows.len() * width {
        return Err(format!("{} values for {} rows of {width}", values.len(), rows.len()).into());
    }
    match part.transfer {
        Transfer::Serial if rows.is_empty() => Ok(()),
        Transfer::Serial if width == 1 => ds.write_slice(values, rows),
        Transfer::Serial => {
            let view = ndarray::ArrayView2::from_shape((rows.len(), width), values)?;
            ds.write_slice(view, ndarray::s![rows, ..])
        }
        Transfer::Collective => mpio::write(ds, values, width, rows),
    }
}

#[cfg(feature = "mpi")]
mod mpio {
    use hdf5::{Dataset, Dataspace, Datatype, H5Type};
    use hdf5_sys::h5d::H5Dwrite;
    use hdf5_sys::h5p::{
        H5FD_mpio_xfer_t, H5Pclose, H5Pcreate, H5Pset_dxpl_mpio, H5P_CLS_DATASET_XFER,
    };
    use hdf5_sys::h5s::H5Sselect_none;
    use std::ops::Range;

    /// One collective `H5Dwrite` of `values` into `rows` (every rank calls
    /// it, a rank without rows with an empty selection).
    pub(super) fn write<T: H5Type>(
        ds: &Dataset,
        values: &[T],
        width: usize,
        rows: Range<usize>,
    ) -> hdf5::Result<()> {
        let n = rows.len();
        let file_space = match (n, width) {
            (0, _) => {
                let space = ds.space()?;
                // SAFETY: `space` is a valid dataspace id owned by `space`.
                if unsafe { H5Sselect_none(space.id()) } < 0 {
                    return Err("selecting no rows".into());
                }
                space
            }
            (_, 1) => ds.space()?.select(rows)?,
            _ => ds
                .space()?
                .select(hdf5::Selection::try_from(ndarray::s![rows, ..])?)?,
        };
        let memory = if width == 1 {
            Dataspace::try_new(n)?
        } else {
            Dataspace::try_new((n, width))?
        };
        let memory_type = Datatype::from_type::<T>()?;
        let status = hdf5::sync::sync(|| {
            // SAFETY: every id is valid for this call (the dataset, the
            // type and the two dataspaces are owned by live handles; the
            // transfer list is created and closed here); `values` holds
            // exactly the `n · width` elements of type `T` that the memory
            // space describes, and outlives the call.
            unsafe {
                let xfer = H5Pcreate(*H5P_CLS_DATASET_XFER);
                if xfer < 0 {
                    return -1;
                }
                let mut status = H5Pset_dxpl_mpio(xfer, H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE);
                if status >= 0 {
                    status = H5Dwrite(
                        ds.id(),
                        memory_type.id(),
                        memory.id(),
                        file_space.id(),
                        xfer,
                        values.as_ptr().cast(),
                    );
                }
                H5Pclose(xfer);
                status
            }
        });
        if status < 0 {
            return Err("the collective write failed (see HDF5's message above)".into());
        }
        Ok(())
    }
}

#[cfg(not(feature = "mpi"))]
mod mpio {
    use hdf5::{Dataset, H5Type};
    use std::ops::Range;

    /// Without MPI there is no collective transfer ([`super::create`] and
    /// [`super::open_rw`] never ask for one).
    pub(super) fn write<T: H5Type>(
        _ds: &Dataset,
        _values: &[T],
        _width: usize,
        _rows: Range<usize>,
    ) -> hdf5::Result<()> {
        Err("a collective write needs the MPI build".into())
    }
}

/// Read rows `rows` of the 1-D dataset `name` of `group`, checking that it
/// has `total` rows.
///
/// # Errors
/// If the dataset is missing, of another shape or type, or damaged.
pub fn read_rows<T: H5Type>(
    group: &Group,
    name: &str,
    total: usize,
    rows: std::ops::Range<usize>,
) -> hdf5::Result<Vec<T>> {
    let ds = group.dataset(name)?;
    if ds.shape() != [total] {
        return Err(format!("shape {:?}, expected [{total}]", ds.shape()).into());
    }
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    Ok(ds.read_slice_1d::<T, _>(rows)?.into_raw_vec_and_offset().0)
}

/// Read rows `rows` of the N×3 dataset `name` of `group`, checking that it
/// has `total` rows.
///
/// # Errors
/// As [`read_rows`].
pub fn read_vectors(
    group: &Group,
    name: &str,
    total: usize,
    rows: std::ops::Range<usize>,
) -> hdf5::Result<Vec<[f64; 3]>> {
    let flat = read_matrix::<f64>(group, name, total, 3, rows)?;
    Ok(flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

/// Read rows `rows` of the N×`width` dataset `name` of `group` (row-major),
/// checking that it has `total` rows.
///
/// # Errors
/// As [`read_rows`].
pub fn read_matrix<T: H5Type>(
    group: &Group,
    name: &str,
    total: usize,
    width: usize,
    rows: std::ops::Range<usize>,
) -> hdf5::Result<Vec<T>> {
    let ds = group.dataset(name)?;
    if ds.shape() != [total, width] {
        return Err(format!("shape {:?}, expected [{total}, {width}]", ds.shape()).into());
    }
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let part = ds.read_slice_2d::<T, _>(ndarray::s![rows, ..])?;
    Ok(part.into_raw_vec_and_offset().0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::comm::SerialComm;

    fn part(rows: usize) -> Part {
        Part {
            span: RowSpan::whole(rows),
            transfer: Transfer::Serial,
            checksummed: false,
        }
    }

    /// Rows pushed in uneven slices come back whole, in order, from a
    /// table written in many pieces (1-D and of two columns); a table
    /// given a partial row or too few rows is refused.
    #[test]
    fn a_table_written_in_pieces_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = create(&dir.path().join("t.h5"), &SerialComm).unwrap();
        let g = file.create_group("g").unwrap();
        let flat: Vec<u64> = (0..23).map(|k| 1000 + k * k).collect();
        let mut t = Pieces::<u64>::create_in(&g, "flat", None, part(23), &SerialComm, 5).unwrap();
        for chunk in [&flat[..3], &flat[3..4], &flat[4..17], &flat[17..]] {
            t.push(chunk);
        }
        t.finish().unwrap();
        let pairs: Vec<f64> = (0..22).map(|k| k as f64 * 0.5 - 3.0).collect();
        let mut t =
            Pieces::<f64>::create_in(&g, "pairs", Some(2), part(11), &SerialComm, 4).unwrap();
        pairs.chunks(2).for_each(|row| t.push(row));
        t.finish().unwrap();
        assert_eq!(read_rows::<u64>(&g, "flat", 23, 0..23).unwrap(), flat);
        assert_eq!(
            read_matrix::<f64>(&g, "pairs", 11, 2, 0..11).unwrap(),
            pairs
        );
        let mut t =
            Pieces::<f64>::create_in(&g, "partial", Some(2), part(2), &SerialComm, 4).unwrap();
        t.push(&[1.0, 2.0, 3.0]);
        assert!(t.finish().is_err(), "a partial row");
        let mut t = Pieces::<u64>::create_in(&g, "short", None, part(9), &SerialComm, 4).unwrap();
        t.push(&[1, 2, 3, 4, 5]);
        assert!(t.finish().is_err(), "5 rows of 9");
    }
}
