//! Contact lists in the output file (`[[diagnostics]] kind = "contacts"`):
//! a group `/diagnostics/<name>/` whose table (`step`, `time`, `start`,
//! `count`) indexes the lists, one list per row, stored one after the other
//! in the subgroup `list/`: `id` (contacts × 2, i64), `wall` (i64),
//! `point`, `normal`, `force_tangential` (contacts × 3), `overlap` and
//! `force_normal`. Row `r`'s contacts are `start[r] .. start[r] + count[r]`.
//! A list is written before its row, so a crash leaves at most a dangling
//! tail of the list, which [`trim`] cuts off when the file is reopened.

use hdf5::{Dataset, Extent, Group, H5Type, SliceOrIndex};
use ndarray::{ArrayView, IxDyn};

use super::layout::{create_ordered_group, write_str_attr, UNITS};
use super::table::{read_row, Column};
use crate::diagnostics::contact_list::ListedContact;

/// The subgroup holding the contacts.
pub const LIST: &str = "list";
/// Contacts per chunk of a list dataset.
const CHUNK: usize = 4096;

/// The index table's columns.
pub fn index_columns() -> Vec<Column> {
    vec![
        Column::number("step", None),
        Column::number("time", Some("s")),
        Column::number("start", None),
        Column::number("count", None),
    ]
}

/// The list datasets: name, values per contact, unit; `id` and `wall` are
/// i64, the rest f64.
const FIELDS: [(&str, usize, Option<&str>); 7] = [
    ("id", 2, None),
    ("wall", 1, None),
    ("point", 3, Some("m")),
    ("normal", 3, None),
    ("overlap", 1, Some("m")),
    ("force_normal", 1, Some("N")),
    ("force_tangential", 3, Some("N")),
];

/// The shape of `n` contacts of a field of `width` values each.
fn shape(n: usize, width: usize) -> Vec<usize> {
    if width == 1 {
        vec![n]
    } else {
        vec![n, width]
    }
}

/// Create the empty `list/` subgroup of `group`.
pub fn create(group: &Group) -> hdf5::Result<()> {
    let list = create_ordered_group(group, LIST)?;
    for (name, width, units) in FIELDS {
        let extents: Vec<Extent> = std::iter::once(Extent::resizable(0))
            .chain((width > 1).then(|| Extent::fixed(width)))
            .collect();
        let builder = if matches!(name, "id" | "wall") {
            list.new_dataset::<i64>()
        } else {
            list.new_dataset::<f64>()
        };
        let ds = builder
            .chunk(shape(CHUNK, width))
            .fletcher32()
            .shape(extents)
            .create(name)?;
        if let Some(units) = units {
            write_str_attr(&ds, UNITS, units)?;
        }
    }
    Ok(())
}

/// Write `values` (`width` per contact) at contacts `start..` of `ds`.
fn put<T: H5Type>(ds: &Dataset, start: usize, width: usize, values: &[T]) -> hdf5::Result<()> {
    let n = values.len() / width;
    ds.resize(shape(start + n, width))?;
    if n == 0 {
        return Ok(());
    }
    let view = ArrayView::from_shape(IxDyn(&shape(n, width)), values)
        .map_err(|e| hdf5::Error::from(e.to_string()))?;
    let selection: Vec<SliceOrIndex> = std::iter::once(SliceOrIndex::from(start..start + n))
        .chain((width > 1).then(|| SliceOrIndex::from(..)))
        .collect();
    ds.write_slice(view, hdf5::Hyperslab::from(selection))
}

/// Append `contacts` to the list of `group`; returns where they start.
pub fn append(group: &Group, contacts: &[ListedContact]) -> hdf5::Result<usize> {
    let list = group.group(LIST)?;
    let start = list.dataset("id")?.shape()[0];
    let ids: Vec<i64> = contacts.iter().flat_map(|c| c.id).collect();
    let walls: Vec<i64> = contacts.iter().map(|c| c.wall).collect();
    let vector = |f: fn(&ListedContact) -> glam::DVec3| -> Vec<f64> {
        contacts.iter().flat_map(|c| f(c).to_array()).collect()
    };
    let scalar = |f: fn(&ListedContact) -> f64| -> Vec<f64> { contacts.iter().map(f).collect() };
    put(&list.dataset("id")?, start, 2, &ids)?;
    put(&list.dataset("wall")?, start, 1, &walls)?;
    put(&list.dataset("point")?, start, 3, &vector(|c| c.point))?;
    put(&list.dataset("normal")?, start, 3, &vector(|c| c.normal))?;
    put(&list.dataset("overlap")?, start, 1, &scalar(|c| c.overlap))?;
    put(
        &list.dataset("force_normal")?,
        start,
        1,
        &scalar(|c| c.force_normal),
    )?;
    put(
        &list.dataset("force_tangential")?,
        start,
        3,
        &vector(|c| c.force_tangential),
    )?;
    Ok(start)
}

/// Cut the list of `group` back to the contacts of its table's first
/// `rows` rows (after the table was cut, or a crash left a tail).
pub fn trim(group: &Group, rows: usize) -> hdf5::Result<()> {
    let Ok(list) = group.group(LIST) else {
        return Ok(());
    };
    let keep = if rows == 0 {
        0
    } else {
        let at = |name: &str| -> hdf5::Result<usize> {
            Ok(read_row(&group.dataset(name)?, rows - 1)?[0] as usize)
        };
        at("start")? + at("count")?
    };
    for (name, width, _) in FIELDS {
        let ds = list.dataset(name)?;
        if ds.shape()[0] > keep {
            ds.resize(shape(keep, width))?;
        }
    }
    Ok(())
}
