//! A table of rows appended one at a time to an HDF5 group: one resizable,
//! chunked f64 dataset per column, of shape `(rows, ...)` where `...` is the
//! column's shape per row (none for a number, `[6]` for a stress tensor,
//! `[walls, 3]` for the wall forces). The thermo table `/thermo` and each
//! diagnostic's group `/diagnostics/<name>` are tables; every table has a
//! `step` column, by which a restart cuts it back ([`Table::cut_after`]).

use hdf5::{Dataset, Extent, Group, SliceOrIndex};
use ndarray::{ArrayView, IxDyn};

use super::layout::{create_ordered_group, write_str_attr, UNITS};

/// Rows per chunk of a column (fewer for wide columns, see [`chunk_rows`]).
const CHUNK_ROWS: usize = 1024;
/// The most values a chunk of a column holds (256 KiB of f64).
const CHUNK_VALUES: usize = 32 * 1024;

/// One column of a table: its name, its shape per row and its unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The dataset's name in the table's group.
    pub name: String,
    /// The shape of one row's value (empty for a number).
    pub shape: Vec<usize>,
    /// The `units` attribute, if the column has a unit.
    pub units: Option<&'static str>,
}

impl Column {
    /// A column of one number per row.
    pub fn number(name: &str, units: Option<&'static str>) -> Self {
        Self::shaped(name, &[], units)
    }

    /// A column of `shape` numbers per row.
    pub fn shaped(name: &str, shape: &[usize], units: Option<&'static str>) -> Self {
        Self {
            name: name.to_owned(),
            shape: shape.to_vec(),
            units,
        }
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Rows per chunk for a column of `width` values per row: [`CHUNK_ROWS`],
/// fewer where that would pass [`CHUNK_VALUES`].
fn chunk_rows(width: usize) -> usize {
    (CHUNK_VALUES / width.max(1)).clamp(1, CHUNK_ROWS)
}

/// A table open for appending: its columns' datasets and how many values per
/// row each takes.
#[derive(Debug)]
pub struct Table {
    columns: Vec<(String, Dataset, Vec<usize>)>,
    rows: usize,
}

impl Table {
    /// Create the group `name` in `parent` (tracking link creation order, so
    /// the columns read back in order) with one empty column per entry.
    pub fn create(parent: &Group, name: &str, columns: &[Column]) -> hdf5::Result<Self> {
        let group = create_ordered_group(parent, name)?;
        let columns = columns
            .iter()
            .map(|c| {
                let extents: Vec<Extent> = std::iter::once(Extent::resizable(0))
                    .chain(c.shape.iter().map(|&n| Extent::fixed(n)))
                    .collect();
                let chunk: Vec<usize> = std::iter::once(chunk_rows(c.width()))
                    .chain(c.shape.iter().map(|&n| n.max(1)))
                    .collect();
                let ds = group
                    .new_dataset::<f64>()
                    .chunk(chunk)
                    .fletcher32()
                    .shape(extents)
                    .create(c.name.as_str())?;
                if let Some(units) = c.units {
                    write_str_attr(&ds, UNITS, units)?;
                }
                Ok((c.name.clone(), ds, c.shape.clone()))
            })
            .collect::<hdf5::Result<_>>()?;
        Ok(Self { columns, rows: 0 })
    }

    /// Open the table of an existing file's group (its datasets in creation
    /// order): where a crash left the columns with different lengths, every
    /// column is cut back to the shortest, so that each row is whole.
    pub fn open(columns: Vec<(String, Dataset)>) -> hdf5::Result<Self> {
        let columns: Vec<(String, Dataset, Vec<usize>)> = columns
            .into_iter()
            .map(|(name, ds)| {
                let shape = ds.shape().get(1..).unwrap_or_default().to_vec();
                (name, ds, shape)
            })
            .collect();
        let rows = columns
            .iter()
            .map(|(_, ds, _)| ds.shape().first().copied().unwrap_or(0))
            .min()
            .unwrap_or(0);
        let mut table = Self { columns, rows };
        table.resize_all(rows)?;
        Ok(table)
    }

    /// Number of whole rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The column names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _, _)| n.as_str()).collect()
    }

    /// Values per row over all columns.
    pub fn width(&self) -> usize {
        self.columns
            .iter()
            .map(|(_, _, s)| s.iter().product::<usize>())
            .sum()
    }

    /// Append one row: `row` holds every column's values in column order,
    /// each column's in row-major order of its shape.
    ///
    /// # Errors
    /// `Err(message)` if `row` is not [`Self::width`] long; HDF5's error if
    /// writing fails (the message names the column).
    pub fn append(&mut self, row: &[f64]) -> Result<(), String> {
        if row.len() != self.width() {
            return Err(format!(
                "a row of {} values for a table of {} ({})",
                row.len(),
                self.width(),
                self.names().join(", ")
            ));
        }
        let (start, end) = (self.rows, self.rows + 1);
        let mut rest = row;
        for (name, ds, shape) in &self.columns {
            let width: usize = shape.iter().product();
            let (values, tail) = rest.split_at(width);
            rest = tail;
            let dims: Vec<usize> = std::iter::once(end).chain(shape.iter().copied()).collect();
            let view_shape: Vec<usize> = std::iter::once(1).chain(shape.iter().copied()).collect();
            let selection: Vec<SliceOrIndex> = std::iter::once(SliceOrIndex::from(start..end))
                .chain(shape.iter().map(|_| SliceOrIndex::from(..)))
                .collect();
            let write = || -> hdf5::Result<()> {
                ds.resize(dims)?;
                let view = ArrayView::from_shape(IxDyn(&view_shape), values)
                    .map_err(|e| hdf5::Error::from(e.to_string()))?;
                ds.write_slice(view, hdf5::Hyperslab::from(selection))
            };
            write().map_err(|e| format!("appending to column `{name}`: {e}"))?;
        }
        self.rows = end;
        Ok(())
    }

    /// Cut the table back to the rows whose `step` column is at most `step`
    /// (rows run in step order).
    ///
    /// # Errors
    /// `Err(message)` if the table has rows and no `step` column, or HDF5 fails.
    pub fn cut_after(&mut self, step: u64) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        let Some((_, ds, _)) = self.columns.iter().find(|(name, _, _)| name == "step") else {
            return Err(
                "the table has no `step` column, so rows after the checkpoint cannot be found"
                    .to_owned(),
            );
        };
        let steps: Vec<f64> = ds
            .read_raw()
            .map_err(|e| format!("reading column `step`: {e}"))?;
        let keep = steps
            .iter()
            .position(|&s| s > step as f64)
            .unwrap_or(steps.len())
            .min(self.rows);
        if keep != self.rows {
            self.resize_all(keep)
                .map_err(|e| format!("cutting the table to {keep} rows: {e}"))?;
        }
        Ok(())
    }

    /// Resize every column to `rows` rows.
    fn resize_all(&mut self, rows: usize) -> hdf5::Result<()> {
        for (_, ds, shape) in &self.columns {
            if ds.shape().first().copied() != Some(rows) {
                let dims: Vec<usize> = std::iter::once(rows).chain(shape.iter().copied()).collect();
                ds.resize(dims)?;
            }
        }
        self.rows = rows;
        Ok(())
    }
}

/// The values of row `row` of a table column (row-major over its shape).
pub fn read_row(ds: &Dataset, row: usize) -> hdf5::Result<Vec<f64>> {
    let shape = ds.shape();
    let selection: Vec<SliceOrIndex> = std::iter::once(SliceOrIndex::from(row..row + 1))
        .chain(shape.iter().skip(1).map(|_| SliceOrIndex::from(..)))
        .collect();
    let values = ds.read_slice::<f64, _, IxDyn>(hdf5::Hyperslab::from(selection))?;
    Ok(values.iter().copied().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_shaped_columns_append_read_back_and_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.h5");
        let file = hdf5::File::create(&path).unwrap();
        let columns = [
            Column::number("step", None),
            Column::shaped("stress", &[6], Some("Pa")),
            Column::shaped("wall_force", &[2, 3], Some("N")),
        ];
        let mut t = Table::create(&file, "thermo", &columns).unwrap();
        assert_eq!(t.width(), 1 + 6 + 6);
        for step in 0..3u64 {
            let s = step as f64;
            let row: Vec<f64> = std::iter::once(s * 10.0)
                .chain((0..12).map(|v| s * 100.0 + f64::from(v)))
                .collect();
            t.append(&row).unwrap();
        }
        assert!(t.append(&[1.0]).unwrap_err().contains("a row of 1 values"));
        let ds = file.dataset("thermo/wall_force").unwrap();
        assert_eq!(ds.shape(), vec![3, 2, 3]);
        let v: Vec<f64> = ds.read_raw().unwrap();
        assert_eq!(
            v[6..12],
            [206.0, 207.0, 208.0, 209.0, 210.0, 211.0].map(|x| x - 100.0)
        );
        assert_eq!(
            file.dataset("thermo/stress")
                .unwrap()
                .attr("units")
                .unwrap()
                .read_scalar::<hdf5::types::VarLenUnicode>()
                .unwrap()
                .as_str(),
            "Pa"
        );
        assert_eq!(
            read_row(&ds, 2).unwrap(),
            (0..6).map(|v| 206.0 + f64::from(v)).collect::<Vec<_>>()
        );
        t.cut_after(10).unwrap();
        assert_eq!(t.rows(), 2);
        assert_eq!(file.dataset("thermo/stress").unwrap().shape(), vec![2, 6]);
        // Reopened, a table whose columns a crash left uneven is cut to the shortest.
        file.dataset("thermo/step").unwrap().resize(1).unwrap();
        let group = file.group("thermo").unwrap();
        let named = group
            .member_names()
            .unwrap()
            .into_iter()
            .map(|n| {
                let ds = group.dataset(&n).unwrap();
                (n, ds)
            })
            .collect();
        let t = Table::open(named).unwrap();
        assert_eq!(t.rows(), 1);
        assert_eq!(
            file.dataset("thermo/wall_force").unwrap().shape(),
            vec![1, 2, 3]
        );
    }
}
