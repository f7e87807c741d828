//! Contact lists in the output file (`[[diagnostics]] kind = "contacts"`):
//! a group `/diagnostics/<name>/` whose table (`step`, `time`, `start`,
//! `count`) indexes the lists, one list per row, stored one after the other
//! in the subgroup `list/`: `id` (contacts × 2, i64), `wall` (i64),
//! `point`, `normal`, `force_tangential` (contacts × 3), `overlap` and
//! `force_normal`. Row `r`'s contacts are `start[r] .. start[r] + count[r]`.
//! A list is written before its row, so a crash leaves at most a dangling
//! tail of the list, which [`trim`] cuts off when the file is reopened.

use hdf5::plist::dataset_create::AllocTime;
use hdf5::{Dataset, Extent, Group, H5Type};

use super::collective::{write_part, Part, Transfer};
use super::layout::{create_ordered_group, write_str_attr, UNITS};
use super::table::{read_row, Column};
use crate::diagnostics::contact_list::ListedContact;
use crate::parallel::comm::RowSpan;

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
        // Chunks allocated when the dataset grows: every rank writes its
        // contacts into the new chunks at once (a filtered collective
        // write into a chunk not yet allocated fails in HDF5 1.10).
        let ds = builder
            .chunk(shape(CHUNK, width))
            .fletcher32()
            .alloc_time(Some(AllocTime::Early))
            .shape(extents)
            .create(name)?;
        if let Some(units) = units {
            write_str_attr(&ds, UNITS, units)?;
        }
    }
    Ok(())
}

/// Append `contacts` to the list of `group`; returns where they start.
pub fn append(group: &Group, contacts: &[ListedContact]) -> hdf5::Result<usize> {
    let whole = RowSpan::whole(contacts.len());
    append_part(group, contacts, whole, Transfer::Serial)
}

/// Append to the list of `group` the contacts of every rank, this rank's
/// `contacts` at `span` of them (collective when `transfer` is: every rank
/// grows the datasets alike, then writes its rows); returns where they
/// start.
pub fn append_part(
    group: &Group,
    contacts: &[ListedContact],
    span: RowSpan,
    transfer: Transfer,
) -> hdf5::Result<usize> {
    let list = group.group(LIST)?;
    let start = list.dataset("id")?.shape()[0];
    let part = Part {
        span: RowSpan {
            offset: start as u64 + span.offset,
            local: span.local,
            total: start as u64 + span.total,
        },
        transfer,
        checksummed: true,
    };
    let end = start + span.total as usize;
    let field = |name: &str| -> hdf5::Result<(Dataset, usize)> {
        let width = FIELDS.iter().find(|f| f.0 == name).map_or(1, |f| f.1);
        let ds = list.dataset(name)?;
        ds.resize(shape(end, width))?;
        Ok((ds, width))
    };
    put(field("id")?, part, contacts, |c, v| v.extend(c.id))?;
    put(field("wall")?, part, contacts, |c, v| v.push(c.wall))?;
    put(field("point")?, part, contacts, |c, v| {
        v.extend(c.point.to_array());
    })?;
    put(field("normal")?, part, contacts, |c, v| {
        v.extend(c.normal.to_array());
    })?;
    put(field("overlap")?, part, contacts, |c, v| v.push(c.overlap))?;
    put(field("force_normal")?, part, contacts, |c, v| {
        v.push(c.force_normal);
    })?;
    put(field("force_tangential")?, part, contacts, |c, v| {
        v.extend(c.force_tangential.to_array());
    })?;
    Ok(start)
}

/// Write each contact's `values` (the dataset's width of them) at `part`
/// of the dataset.
fn put<T: H5Type>(
    (ds, width): (Dataset, usize),
    part: Part,
    contacts: &[ListedContact],
    values: impl Fn(&ListedContact, &mut Vec<T>),
) -> hdf5::Result<()> {
    let mut flat = Vec::with_capacity(contacts.len() * width);
    contacts.iter().for_each(|c| values(c, &mut flat));
    write_part(&ds, &flat, width, part)
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
