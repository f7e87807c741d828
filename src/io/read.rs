//! Reading the HDF5 output file back, as tests and scripts do: one frame
//! ([`read_frame`]), the steps of the frames ([`list_frames`]) and the thermo columns
//! ([`read_thermo`]); and what [`super::frames`] (reopening a file) and
//! [`super::info`] need to find the frames and thermo columns of a file.

use std::path::Path;

use hdf5::{Dataset, File, Group, H5Type, IndexType, IterationOrder, LocationType};

use super::layout::{
    frame_name, frames_group, open_gravel, CORE_DATASETS, DIAGNOSTICS, FROZEN, ID, MATERIAL,
    POSITION, RADIUS, THERMO,
};
use super::xdmf::XdmfFrame;
use crate::error::{Context, IoError, IoResult};

/// One frame read back from a file, with owned arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameOwned {
    /// Time step number.
    pub step: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Particle ids.
    pub id: Vec<u64>,
    /// Positions (m).
    pub position: Vec<[f64; 3]>,
    /// Radii (m).
    pub radius: Vec<f64>,
    /// Material indices.
    pub material: Vec<u32>,
    /// 1 for a frozen particle, 0 otherwise (empty for a file written before gravel
    /// stored it).
    pub frozen: Vec<u8>,
    /// Vector fields, in the order they were written.
    pub fields: Vec<(String, Vec<[f64; 3]>)>,
}

impl FrameOwned {
    /// Sort the rows by id (a frame written by several ranks holds their
    /// parts one after the other; `id` identifies the rows).
    pub fn sort_by_id(&mut self) {
        let mut order: Vec<usize> = (0..self.id.len()).collect();
        order.sort_unstable_by_key(|&k| self.id[k]);
        fn apply<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            if v.len() == order.len() {
                *v = order.iter().map(|&k| v[k]).collect();
            }
        }
        apply(&mut self.id, &order);
        apply(&mut self.position, &order);
        apply(&mut self.radius, &order);
        apply(&mut self.material, &order);
        apply(&mut self.frozen, &order);
        for (_, f) in &mut self.fields {
            apply(f, &order);
        }
    }
}

/// Reads the frame at `step` back from the output file `path`.
///
/// # Errors
/// If the file cannot be read, is not a gravel file, has no frame at `step`, or the
/// frame's datasets do not have the documented shapes.
pub fn read_frame(path: &Path, step: u64) -> IoResult<FrameOwned> {
    read_frame_rows(path, step, None)
}

/// The number of rows of the frame at `step` of the output file `path`.
///
/// # Errors
/// As [`read_frame`].
pub fn frame_len(path: &Path, step: u64) -> IoResult<usize> {
    let file = open_gravel(path, false)?;
    let group = frame_group(&file, path, step)?;
    let (_, _, n, _) = frame_info(&group).at(path, format_args!("reading {}", group.name()))?;
    Ok(n)
}

/// Reads rows `rows` (all of them for `None`) of the frame at `step` of the
/// output file `path`: a slice of each dataset (an HDF5 hyperslab), so that a
/// rank or a bounded walk holds only those rows.
///
/// # Errors
/// As [`read_frame`], and a range past the frame's rows.
pub fn read_frame_rows(
    path: &Path,
    step: u64,
    rows: Option<std::ops::Range<usize>>,
) -> IoResult<FrameOwned> {
    let file = open_gravel(path, false)?;
    let group = frame_group(&file, path, step)?;
    read_frame_group(&group, path, rows)
}

/// The group of the frame at `step`, or an error listing the frames.
fn frame_group(file: &File, path: &Path, step: u64) -> IoResult<Group> {
    let name = frame_name(step);
    let frames = frames_group(file);
    if let Some(frames) = frames.as_ref().filter(|g| g.link_exists(&name)) {
        return frames
            .group(&name)
            .at(path, format_args!("opening frame {step}"));
    }
    let known = frames
        .map_or(Ok(Vec::new()), |g| steps_in(&g))
        .at(path, "listing the frames")?;
    let message = format!(
        "no frame at step {step} (frames: {})",
        describe_steps(&known)
    );
    Err(IoError::invalid(path, message))
}

/// The steps of the frames in the output file `path`, sorted (empty for a gravel file
/// without `/frames`, such as a checkpoint).
///
/// # Errors
/// If the file cannot be read or is not a gravel file.
pub fn list_frames(path: &Path) -> IoResult<Vec<u64>> {
    let file = open_gravel(path, false)?;
    match frames_group(&file) {
        Some(group) => steps_in(&group).at(path, "listing the frames"),
        None => Ok(Vec::new()),
    }
}

/// The thermo columns of the output file `path`, in order: name and values
/// (a shaped column's rows one after the other, each in row-major order).
///
/// # Errors
/// If the file cannot be read or is not a gravel file.
pub fn read_thermo(path: &Path) -> IoResult<Vec<(String, Vec<f64>)>> {
    let file = open_gravel(path, false)?;
    let columns = thermo_datasets(&file).at(path, "opening the thermo columns")?;
    columns
        .into_iter()
        .map(|(name, ds)| {
            let values = ds
                .read_raw::<f64>()
                .at(path, format_args!("reading thermo column `{name}`"))?;
            Ok((name, values))
        })
        .collect()
}

/// One column of a table read back: its name, its dataset's shape (rows
/// first) and its values, row-major.
pub type TableColumn = (String, Vec<usize>, Vec<f64>);

/// The columns of the table `/diagnostics/<name>` of the output file `path`
/// (see [`super::table`]), in order.
///
/// # Errors
/// If the file cannot be read, is not a gravel file or has no such diagnostic.
pub fn read_diagnostic(path: &Path, name: &str) -> IoResult<Vec<TableColumn>> {
    let file = open_gravel(path, false)?;
    let where_ = format!("/{DIAGNOSTICS}/{name}");
    let group = file
        .group(&where_)
        .at(path, format_args!("opening {where_}"))?;
    let columns = table_datasets(&group).at(path, format_args!("listing {where_}"))?;
    columns
        .into_iter()
        .map(|(column, ds)| {
            let values = ds
                .read_raw::<f64>()
                .at(path, format_args!("reading {where_}/{column}"))?;
            Ok((column, ds.shape(), values))
        })
        .collect()
}

/// Every list of the contact list `/diagnostics/<name>` of the output file
/// `path` (see [`super::contact_list`]): each row's step and contacts.
///
/// # Errors
/// If the file cannot be read, is not a gravel file or has no such list.
pub fn read_contacts(
    path: &Path,
    name: &str,
) -> IoResult<Vec<(u64, Vec<crate::diagnostics::contact_list::ListedContact>)>> {
    use crate::diagnostics::contact_list::ListedContact;
    use glam::DVec3;
    let file = open_gravel(path, false)?;
    let where_ = format!("/{DIAGNOSTICS}/{name}");
    let read = || -> hdf5::Result<Vec<(u64, Vec<ListedContact>)>> {
        let group = file.group(&where_)?;
        let column = |n: &str| group.dataset(n)?.read_raw::<f64>();
        let (steps, starts, counts) = (column("step")?, column("start")?, column("count")?);
        let list = group.group(super::contact_list::LIST)?;
        let f64s = |n: &str| list.dataset(n)?.read_raw::<f64>();
        let ids = list.dataset("id")?.read_raw::<i64>()?;
        let walls = list.dataset("wall")?.read_raw::<i64>()?;
        let (point, normal, tangential) =
            (f64s("point")?, f64s("normal")?, f64s("force_tangential")?);
        let (overlap, normal_force) = (f64s("overlap")?, f64s("force_normal")?);
        let vec3 = |v: &[f64], c: usize| DVec3::new(v[3 * c], v[3 * c + 1], v[3 * c + 2]);
        let rows = steps.len().min(starts.len()).min(counts.len());
        // The shortest list dataset bounds every row's contacts: a damaged
        // index is an error, not a panic.
        let len = [
            ids.len() / 2,
            walls.len(),
            overlap.len(),
            normal_force.len(),
        ]
        .into_iter()
        .chain([&point, &normal, &tangential].map(|v| v.len() / 3))
        .min()
        .unwrap_or(0);
        if let Some(r) = (0..rows).find(|&r| {
            !(starts[r] >= 0.0 && counts[r] >= 0.0 && starts[r] + counts[r] <= len as f64)
        }) {
            return Err(hdf5::Error::from(format!(
                "row {r} indexes contacts {} .. {} of a list of {len}",
                starts[r],
                starts[r] + counts[r]
            )));
        }
        Ok((0..rows)
            .map(|r| {
                let (start, count) = (starts[r] as usize, counts[r] as usize);
                let contacts = (start..start + count)
                    .map(|c| ListedContact {
                        id: [ids[2 * c], ids[2 * c + 1]],
                        wall: walls[c],
                        point: vec3(&point, c),
                        normal: vec3(&normal, c),
                        overlap: overlap[c],
                        force_normal: normal_force[c],
                        force_tangential: vec3(&tangential, c),
                    })
                    .collect();
                (steps[r] as u64, contacts)
            })
            .collect())
    };
    read().at(path, format_args!("reading {where_}"))
}

/// Datasets with their names.
pub(super) type Named = Vec<(String, Dataset)>;

/// The frames (sorted by step), the thermo columns and the diagnostics'
/// table columns (by diagnostic) of an existing file.
pub(super) type Layout = (Vec<XdmfFrame>, Named, Vec<(String, Named)>);

/// Reads what [`OutputFile`](super::frames::OutputFile) keeps in memory from an existing file.
/// The sidecar's list of a frame's datasets beyond `id`, `position`, `radius` and
/// `material` holds `frozen` too, where the frame has it (files written before
/// gravel stored it do not).
pub(super) fn read_layout(file: &File) -> hdf5::Result<Layout> {
    let frames = match frames_group(file) {
        Some(group) => steps_in(&group)?
            .into_iter()
            .map(|step| {
                let frame = group.group(&frame_name(step))?;
                let mut info = frame_info(&frame)?;
                if frame.link_exists(FROZEN) {
                    info.3.insert(0, FROZEN.to_owned());
                }
                Ok(info)
            })
            .collect::<hdf5::Result<_>>()?,
        None => Vec::new(),
    };
    let (thermo, diagnostics) = read_tables(file)?;
    Ok((frames, thermo, diagnostics))
}

/// The thermo columns and the diagnostics' table columns (by diagnostic)
/// of an existing file.
pub(super) fn read_tables(file: &File) -> hdf5::Result<(Named, Vec<(String, Named)>)> {
    Ok((thermo_datasets(file)?, diagnostic_tables(file)?))
}

/// The diagnostics' groups in `/diagnostics`, each with its table's columns.
pub(super) fn diagnostic_tables(file: &File) -> hdf5::Result<Vec<(String, Named)>> {
    let Ok(group) = file.group(DIAGNOSTICS) else {
        return Ok(Vec::new());
    };
    ordered_members(&group)?
        .into_iter()
        .map(|name| {
            let columns = table_datasets(&group.group(&name)?)?;
            Ok((name, columns))
        })
        .collect()
}

/// The columns of a table group: its resizable datasets, in creation order
/// (a diagnostic's group also holds fixed datasets, such as bin centres,
/// written once and not resizable).
fn table_datasets(group: &Group) -> hdf5::Result<Vec<(String, Dataset)>> {
    let all: Vec<(String, Dataset)> = ordered_members(group)?
        .into_iter()
        .filter(|name| matches!(group.loc_type_by_name(name), Ok(LocationType::Dataset)))
        .map(|name| {
            let ds = group.dataset(&name)?;
            Ok((name, ds))
        })
        .collect::<hdf5::Result<_>>()?;
    // A table's columns are chunked and resizable; fixed datasets are neither.
    Ok(all
        .into_iter()
        .filter(|(_, ds)| ds.is_resizable())
        .collect())
}

/// The steps of the frame groups in `/frames`, sorted.
pub(super) fn steps_in(frames: &Group) -> hdf5::Result<Vec<u64>> {
    let mut steps: Vec<u64> = frames
        .member_names()?
        .iter()
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|name| name.parse().ok())
        .collect();
    steps.sort_unstable();
    Ok(steps)
}

/// `none`, or the count with the first and last step.
fn describe_steps(steps: &[u64]) -> String {
    match steps {
        [] => "none".to_owned(),
        [only] => format!("only {only}"),
        [first, .., last] => format!("{} from {first} to {last}", steps.len()),
    }
}

/// Step, time, particle count and field names of a frame group.
pub(super) fn frame_info(group: &Group) -> hdf5::Result<XdmfFrame> {
    let step = group.attr("step")?.read_scalar::<u64>()?;
    let time = group.attr("time")?.read_scalar::<f64>()?;
    let n = group.dataset(ID)?.size();
    Ok((step, time, n, field_names(group)?))
}

/// The names of the field datasets of a frame group, in creation order.
fn field_names(group: &Group) -> hdf5::Result<Vec<String>> {
    Ok(ordered_members(group)?
        .into_iter()
        .filter(|name| !CORE_DATASETS.contains(&name.as_str()))
        .filter(|name| matches!(group.loc_type_by_name(name), Ok(LocationType::Dataset)))
        .collect())
}

/// The link names of `group` in creation order where it is tracked, by name otherwise
/// (files written by other tools).
fn ordered_members(group: &Group) -> hdf5::Result<Vec<String>> {
    group
        .member_names_by(IndexType::CreationOrder, IterationOrder::Increasing)
        .or_else(|_| group.member_names())
}

/// The thermo columns, in order (none if the file has no `/thermo`).
pub(super) fn thermo_datasets(file: &File) -> hdf5::Result<Vec<(String, Dataset)>> {
    let Ok(group) = file.group(THERMO) else {
        return Ok(Vec::new());
    };
    ordered_members(&group)?
        .into_iter()
        .map(|name| {
            let ds = group.dataset(&name)?;
            Ok((name, ds))
        })
        .collect()
}

/// Reads a whole frame group, checking the shapes of its datasets.
fn read_frame_group(
    group: &Group,
    path: &Path,
    rows: Option<std::ops::Range<usize>>,
) -> IoResult<FrameOwned> {
    let context = || format!("reading {}", group.name());
    let (step, time, n, fields) = frame_info(group).at(path, context())?;
    let rows = rows.unwrap_or(0..n);
    if rows.end > n || rows.start > rows.end {
        let message = format!("{} has {n} rows, not rows {rows:?}", group.name());
        return Err(IoError::invalid(path, message));
    }
    let fields = fields
        .into_iter()
        .map(|name| {
            let values = read_vectors(group, &name, n, rows.clone(), path)?;
            Ok((name, values))
        })
        .collect::<IoResult<_>>()?;
    Ok(FrameOwned {
        step,
        time,
        id: read_dataset(group, ID, n, rows.clone(), path)?,
        position: read_vectors(group, POSITION, n, rows.clone(), path)?,
        radius: read_dataset(group, RADIUS, n, rows.clone(), path)?,
        material: read_dataset(group, MATERIAL, n, rows.clone(), path)?,
        frozen: if group.link_exists(FROZEN) {
            read_dataset(group, FROZEN, n, rows, path)?
        } else {
            Vec::new()
        },
        fields,
    })
}

/// Reads rows `rows` of the dataset `name` of `group` after checking that
/// its shape is `[n]`.
fn read_dataset<T: H5Type>(
    group: &Group,
    name: &str,
    n: usize,
    rows: std::ops::Range<usize>,
    path: &Path,
) -> IoResult<Vec<T>> {
    super::collective::read_rows(group, name, n, rows)
        .at(path, format_args!("reading {}/{name}", group.name()))
}

/// Reads rows `rows` of an N×3 dataset.
fn read_vectors(
    group: &Group,
    name: &str,
    n: usize,
    rows: std::ops::Range<usize>,
    path: &Path,
) -> IoResult<Vec<[f64; 3]>> {
    super::collective::read_vectors(group, name, n, rows)
        .at(path, format_args!("reading {}/{name}", group.name()))
}
