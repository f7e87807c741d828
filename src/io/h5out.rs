//! The HDF5 output file `<dir>/<name>.h5`: particle frames, thermo rows, and the
//! readers used by tests and `gravel info`.
//!
//! Layout (the user interface contract, section "Output"):
//! - root attributes `version` (string), `config` (the TOML text as run, string),
//!   `ranks` (u32) and `threads` (u32);
//! - `/frames/<step as 9 digits>/` with attributes `step` (u64) and `time` (f64, s),
//!   datasets `id` (u64, N), `position` (f64, N×3), `radius` (f64, N), `material`
//!   (u32, N) and one f64 N×3 dataset per requested field; rows come in any order,
//!   `id` identifies the particle;
//! - `/thermo/` with one chunked, resizable 1-D f64 dataset per column;
//! - `/xdmf/vertex_index` (i64, as long as the largest frame, holding `0, 1, 2, ...`):
//!   the point connectivity the XDMF sidecar refers to (see [`super::xdmf`]).
//!
//! Groups `/frames/<step>` and `/thermo` track link creation order, so fields and
//! thermo columns read back in the order they were written.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use hdf5::plist::group_create::LinkCreationOrder;
use hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{
    Attribute, Dataset, File, Group, H5Type, IndexType, IterationOrder, Location, LocationType,
};
use ndarray::ArrayView2;

use super::xdmf::{write_xdmf, XdmfFrame};
use crate::error::{Context, IoError, IoResult};

/// Name of the root group holding the frames.
pub const FRAMES: &str = "frames";
/// Name of the root group holding the thermo columns.
pub const THERMO: &str = "thermo";
/// Name of the root group a checkpoint file keeps its state in.
pub const CHECKPOINT: &str = "checkpoint";
/// Path (from the root) of the vertex index the XDMF sidecar uses as connectivity.
pub const VERTEX_INDEX: &str = "xdmf/vertex_index";
/// Frame dataset: particle ids (u64, N).
pub const ID: &str = "id";
/// Frame dataset: positions (f64, N×3).
pub const POSITION: &str = "position";
/// Frame dataset: radii (f64, N).
pub const RADIUS: &str = "radius";
/// Frame dataset: material indices (u32, N).
pub const MATERIAL: &str = "material";

/// The datasets every frame has; field names may not take them.
const CORE_DATASETS: [&str; 4] = [ID, POSITION, RADIUS, MATERIAL];
/// Rows per chunk of a thermo column.
const THERMO_CHUNK: usize = 1024;
/// Entries per chunk of the vertex index.
const VERTEX_INDEX_CHUNK: usize = 8192;
/// Lines of the config shown by [`summarize`].
const CONFIG_LINES_SHOWN: usize = 8;
/// How deep [`summarize`] descends into `/checkpoint`.
const CHECKPOINT_DEPTH: usize = 6;

/// The name of the group of the frame at `step` inside `/frames`: the step as at least
/// 9 digits, zero padded (`1000` → `000001000`).
#[must_use]
pub fn frame_name(step: u64) -> String {
    format!("{step:09}")
}

/// The absolute path of the group of the frame at `step` (`/frames/000001000`).
#[must_use]
pub fn frame_path(step: u64) -> String {
    format!("/{FRAMES}/{}", frame_name(step))
}

/// One output frame, borrowed from the engine's arrays (rows in any order; `id`
/// identifies).
#[derive(Clone, Debug)]
pub struct Frame<'a> {
    /// Time step number.
    pub step: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Particle ids, one per row.
    pub id: &'a [u64],
    /// Positions (m).
    pub position: &'a [[f64; 3]],
    /// Radii (m).
    pub radius: &'a [f64],
    /// Material indices.
    pub material: &'a [u32],
    /// Requested vector fields (`velocity`, `omega`, ...), each one row per particle.
    pub fields: Vec<(&'a str, &'a [[f64; 3]])>,
}

impl Frame<'_> {
    /// The particle count, after checking that every array has one row per particle
    /// and that the field names are usable and distinct.
    fn check(&self, path: &Path) -> IoResult<usize> {
        let n = self.id.len();
        let lengths = [
            (POSITION, self.position.len()),
            (RADIUS, self.radius.len()),
            (MATERIAL, self.material.len()),
        ]
        .into_iter()
        .chain(self.fields.iter().map(|(name, rows)| (*name, rows.len())));
        for (name, len) in lengths {
            if len != n {
                return Err(IoError::invalid(
                    path,
                    format!(
                        "frame at step {}: `{name}` has {len} rows but `id` has {n}",
                        self.step
                    ),
                ));
            }
        }
        check_names(
            path,
            "field",
            self.fields.iter().map(|(name, _)| *name),
            &CORE_DATASETS,
        )?;
        Ok(n)
    }
}

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
    /// Vector fields, in the order they were written.
    pub fields: Vec<(String, Vec<[f64; 3]>)>,
}

/// An output file open for writing frames and thermo rows. Every frame written also
/// rewrites the XDMF sidecar (same stem, `.xdmf`) next to it.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    file: File,
    /// Frames in the file, sorted by step.
    frames: Vec<XdmfFrame>,
    /// Thermo columns in order: name and dataset.
    thermo: Vec<(String, Dataset)>,
    thermo_rows: usize,
}

impl OutputFile {
    /// Creates (truncates) `path` and writes the root attributes `version`, `config`
    /// (the TOML text), `ranks` and `threads`, an empty `/frames` group and one empty
    /// `/thermo` column per name in `thermo_columns`, in that order. A stale XDMF
    /// sidecar from an earlier run is removed; the first frame writes a new one.
    ///
    /// # Errors
    /// If a name is empty, has a `/` or appears twice, or the file cannot be written.
    pub fn create(
        path: &Path,
        version: &str,
        config_text: &str,
        ranks: u32,
        threads: u32,
        thermo_columns: &[&str],
    ) -> IoResult<Self> {
        check_names(path, "thermo column", thermo_columns.iter().copied(), &[])?;
        let file = super::create(path).at(path, "creating the output file")?;
        write_header(&file, version, config_text, ranks, threads)
            .at(path, "writing the root attributes")?;
        let thermo = create_layout(&file, thermo_columns).at(path, "creating the groups")?;
        let thermo = thermo_columns
            .iter()
            .map(ToString::to_string)
            .zip(thermo)
            .collect();
        let out = Self {
            path: path.to_path_buf(),
            file,
            frames: Vec::new(),
            thermo,
            thermo_rows: 0,
        };
        match std::fs::remove_file(out.xdmf_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).at(&out.xdmf_path(), "removing the stale XDMF sidecar")
            }
            _ => Ok(out),
        }
    }

    /// Opens an existing output file for appending (used by restarts): finds the
    /// frames and thermo columns already there. If a crash left the thermo columns
    /// with different lengths, they are cut back to the shortest, so that every row
    /// is complete.
    ///
    /// # Errors
    /// If the file is missing, unreadable or not a gravel file.
    pub fn open_append(path: &Path) -> IoResult<Self> {
        let file = open_gravel(path, true)?;
        let (frames, thermo) = read_layout(&file).at(path, "reading the existing layout")?;
        let thermo_rows = thermo.iter().map(|(_, ds)| ds.size()).min().unwrap_or(0);
        for (name, ds) in &thermo {
            if ds.size() != thermo_rows {
                ds.resize(thermo_rows).at(
                    path,
                    format_args!("cutting thermo column `{name}` to {thermo_rows} rows"),
                )?;
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            frames,
            thermo,
            thermo_rows,
        })
    }

    /// Drops what a run wrote after `step` (used by a restart from a checkpoint of that
    /// step, when the earlier run went further): the frames of later steps and the
    /// thermo rows whose `step` column is larger, then rewrites the XDMF sidecar.
    /// Rows are cut at the first one past `step`, so the file ends exactly as it was
    /// when the checkpoint was written.
    ///
    /// # Errors
    /// If the file has no `step` thermo column while it has rows, or writing fails.
    pub fn cut_after(&mut self, step: u64) -> IoResult<()> {
        let late: Vec<u64> = self
            .frames
            .iter()
            .map(|f| f.0)
            .filter(|&s| s > step)
            .collect();
        if !late.is_empty() {
            let frames = self.file.group(FRAMES).at(&self.path, "opening /frames")?;
            for s in &late {
                frames
                    .unlink(&frame_name(*s))
                    .at(&self.path, format_args!("removing frame {s}"))?;
            }
            self.frames.retain(|f| f.0 <= step);
            let largest = self.frames.iter().map(|f| f.2).max().unwrap_or(0);
            set_vertex_index_len(&self.file, largest)
                .at(&self.path, "resizing the vertex index")?;
        }
        if self.thermo_rows > 0 {
            let Some((_, ds)) = self.thermo.iter().find(|(name, _)| name == "step") else {
                return Err(IoError::invalid(
                    &self.path,
                    "the thermo table has no `step` column, so rows after the checkpoint cannot be found",
                ));
            };
            let steps: Vec<f64> = ds
                .read_raw()
                .at(&self.path, "reading thermo column `step`")?;
            let keep = steps
                .iter()
                .position(|&s| s > step as f64)
                .unwrap_or(steps.len())
                .min(self.thermo_rows);
            if keep != self.thermo_rows {
                for (name, ds) in &self.thermo {
                    ds.resize(keep).at(
                        &self.path,
                        format_args!("cutting thermo column `{name}` to {keep} rows"),
                    )?;
                }
                self.thermo_rows = keep;
            }
        }
        self.flush()?;
        if self.frames.is_empty() {
            match std::fs::remove_file(self.xdmf_path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).at(&self.xdmf_path(), "removing the XDMF sidecar")
                }
                _ => Ok(()),
            }
        } else {
            self.write_sidecar()
        }
    }

    /// Writes `/frames/<step as 9 digits>/` with attributes `step` and `time` and the
    /// datasets `id`, `position`, `radius`, `material` and one per field, flushes the
    /// file, then rewrites the XDMF sidecar listing every frame written so far. A frame
    /// already in the file at the same step (as after a restart from an earlier
    /// checkpoint) is replaced.
    ///
    /// # Errors
    /// If the arrays do not all have one row per particle, a field name is unusable
    /// (empty, with a `/`, repeated, or one of the core dataset names), or writing fails.
    pub fn write_frame(&mut self, frame: &Frame) -> IoResult<()> {
        let n = frame.check(&self.path)?;
        let context = || format!("writing frame {}", frame.step);
        // Forget the old frame first: if writing fails half way, it is gone anyway.
        self.frames.retain(|f| f.0 != frame.step);
        write_frame_group(&self.file, frame).at(&self.path, context())?;
        let field_names = frame
            .fields
            .iter()
            .map(|(name, _)| name.to_string())
            .collect();
        let at = self.frames.partition_point(|f| f.0 < frame.step);
        self.frames
            .insert(at, (frame.step, frame.time, n, field_names));
        let largest = self.frames.iter().map(|f| f.2).max().unwrap_or(0);
        set_vertex_index_len(&self.file, largest).at(&self.path, context())?;
        self.flush()?;
        self.write_sidecar()
    }

    /// Appends one row to `/thermo/`: `row[i]` goes to the i-th column given at
    /// [`create`](Self::create).
    ///
    /// # Errors
    /// If `row` does not have one value per column, or writing fails.
    pub fn append_thermo(&mut self, row: &[f64]) -> IoResult<()> {
        if row.len() != self.thermo.len() {
            let message = format!(
                "thermo row has {} values but the file has {} columns ({})",
                row.len(),
                self.thermo.len(),
                self.thermo_columns().join(", ")
            );
            return Err(IoError::invalid(&self.path, message));
        }
        let (start, end) = (self.thermo_rows, self.thermo_rows + 1);
        for ((name, ds), value) in self.thermo.iter().zip(row) {
            ds.resize(end)
                .and_then(|()| ds.write_slice(&[*value][..], start..end))
                .at(
                    &self.path,
                    format_args!("appending to thermo column `{name}`"),
                )?;
        }
        self.thermo_rows = end;
        Ok(())
    }

    /// Flushes everything written so far to disk.
    ///
    /// # Errors
    /// If HDF5 cannot write the buffered data.
    pub fn flush(&mut self) -> IoResult<()> {
        self.file.flush().at(&self.path, "flushing")
    }

    /// The path of the HDF5 file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the XDMF sidecar: the HDF5 path with extension `.xdmf`.
    #[must_use]
    pub fn xdmf_path(&self) -> PathBuf {
        self.path.with_extension("xdmf")
    }

    /// Steps of the frames in the file, sorted.
    #[must_use]
    pub fn frame_steps(&self) -> Vec<u64> {
        self.frames.iter().map(|f| f.0).collect()
    }

    /// Names of the thermo columns, in order.
    #[must_use]
    pub fn thermo_columns(&self) -> Vec<&str> {
        self.thermo.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// Number of complete thermo rows in the file.
    #[must_use]
    pub fn thermo_rows(&self) -> usize {
        self.thermo_rows
    }

    /// Rewrites the XDMF sidecar from the frame list.
    fn write_sidecar(&self) -> IoResult<()> {
        let h5_name = self
            .path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        write_xdmf(&self.xdmf_path(), &h5_name, &self.frames)
    }
}

/// Reads the frame at `step` back from the output file `path`.
///
/// # Errors
/// If the file cannot be read, is not a gravel file, has no frame at `step`, or the
/// frame's datasets do not have the documented shapes.
pub fn read_frame(path: &Path, step: u64) -> IoResult<FrameOwned> {
    let file = open_gravel(path, false)?;
    let name = frame_name(step);
    let frames = frames_group(&file);
    if let Some(frames) = frames.as_ref().filter(|g| g.link_exists(&name)) {
        let group = frames
            .group(&name)
            .at(path, format_args!("opening frame {step}"))?;
        return read_frame_group(&group, path);
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

/// The thermo columns of the output file `path`, in order: name and values.
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

/// A human-readable summary of an output or checkpoint file for `gravel info`: root
/// attributes (with the first lines of the config), the frames (count, first and last
/// step and time, particle count and fields of the last), the thermo columns (row count
/// and last row), and a generic listing of `/checkpoint` (attributes, datasets with
/// shapes and types) where there is one. A file that is not a gravel file is an error.
///
/// # Errors
/// If the file is missing, not HDF5, not a gravel file, or cannot be read.
pub fn summarize(path: &Path) -> IoResult<String> {
    let file = open_gravel(path, false)?;
    let mut out = format!("{}\n", path.display());
    summarize_root(&mut out, &file).at(path, "reading the root attributes")?;
    summarize_frames(&mut out, &file).at(path, "reading the frames")?;
    summarize_thermo(&mut out, &file).at(path, "reading the thermo columns")?;
    if let Ok(group) = file.group(CHECKPOINT) {
        out.push_str("checkpoint:\n");
        describe_group(&mut out, &group, 1).at(path, "reading /checkpoint")?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------
// Names and opening

/// Checks that each of `names` (of a `what`) is non-empty, has no `/`, is not `.`,
/// is none of `reserved` and appears once.
fn check_names<'n>(
    path: &Path,
    what: &str,
    names: impl IntoIterator<Item = &'n str>,
    reserved: &[&str],
) -> IoResult<()> {
    let mut seen = HashSet::new();
    for name in names {
        let problem = if name.is_empty() || name == "." || name.contains('/') {
            "is not a valid HDF5 name"
        } else if reserved.contains(&name) {
            "is reserved"
        } else if !seen.insert(name) {
            "appears twice"
        } else {
            continue;
        };
        return Err(IoError::invalid(
            path,
            format!("{what} name `{name}` {problem}"),
        ));
    }
    Ok(())
}

/// Opens `path` as HDF5 (read-write if `write`) and checks that it is a gravel file:
/// one with a group `/frames`, `/thermo` or `/checkpoint`, or with the root attributes
/// `version` and `config`.
fn open_gravel(path: &Path, write: bool) -> IoResult<File> {
    // Ask the file system first: its "No such file or directory" is clearer than HDF5's.
    std::fs::metadata(path).at(path, "opening")?;
    let file = if write {
        super::open_rw(path)
    } else {
        super::open_read(path)
    };
    let file = file.at(path, "cannot open as an HDF5 file")?;
    let has_group = |name: &str| {
        file.link_exists(name) && matches!(file.loc_type_by_name(name), Ok(LocationType::Group))
    };
    let attrs = file.attr_names().unwrap_or_default();
    let has_attr = |name: &str| attrs.iter().any(|a| a == name);
    if [FRAMES, THERMO, CHECKPOINT].into_iter().any(has_group)
        || (has_attr("version") && has_attr("config"))
    {
        Ok(file)
    } else {
        Err(IoError::invalid(
            path,
            "an HDF5 file but not a gravel output or checkpoint file \
             (no /frames, /thermo or /checkpoint group, no version and config attributes)",
        ))
    }
}

// ---------------------------------------------------------------------------------
// Writing

/// Writes the root attributes.
fn write_header(
    file: &File,
    version: &str,
    config_text: &str,
    ranks: u32,
    threads: u32,
) -> hdf5::Result<()> {
    write_str_attr(file, "version", version)?;
    write_str_attr(file, "config", config_text)?;
    write_attr(file, "ranks", &ranks)?;
    write_attr(file, "threads", &threads)
}

/// Creates `/frames` and `/thermo` with one empty column per name; returns the columns.
fn create_layout(file: &File, thermo_columns: &[&str]) -> hdf5::Result<Vec<Dataset>> {
    file.create_group(FRAMES)?;
    let thermo = create_ordered_group(file, THERMO)?;
    thermo_columns
        .iter()
        .map(|name| {
            thermo
                .new_dataset::<f64>()
                .chunk(THERMO_CHUNK)
                .shape(0..)
                .create(*name)
        })
        .collect()
}

/// Creates the group `name` in `parent`, tracking the creation order of its links.
fn create_ordered_group(parent: &Group, name: &str) -> hdf5::Result<Group> {
    parent
        .create_group_builder()
        .with_gcpl(|gcpl| gcpl.link_creation_order(LinkCreationOrder::Tracked))
        .create(name)
}

/// The group `name` in `parent`, created if missing.
fn group_or_create(parent: &Group, name: &str) -> hdf5::Result<Group> {
    parent.group(name).or_else(|_| parent.create_group(name))
}

/// Writes (or replaces) the group of one frame.
fn write_frame_group(file: &File, frame: &Frame) -> hdf5::Result<()> {
    let frames = group_or_create(file, FRAMES)?;
    let name = frame_name(frame.step);
    if frames.link_exists(&name) {
        frames.unlink(&name)?;
    }
    let group = create_ordered_group(&frames, &name)?;
    write_attr(&group, "step", &frame.step)?;
    write_attr(&group, "time", &frame.time)?;
    write_rows(&group, ID, frame.id)?;
    write_vectors(&group, POSITION, frame.position)?;
    write_rows(&group, RADIUS, frame.radius)?;
    write_rows(&group, MATERIAL, frame.material)?;
    frame
        .fields
        .iter()
        .try_for_each(|(name, rows)| write_vectors(&group, name, rows))
}

/// A 1-D dataset with one element per particle.
fn write_rows<T: H5Type>(group: &Group, name: &str, rows: &[T]) -> hdf5::Result<()> {
    group.new_dataset_builder().with_data(rows).create(name)?;
    Ok(())
}

/// An N×3 f64 dataset.
fn write_vectors(group: &Group, name: &str, rows: &[[f64; 3]]) -> hdf5::Result<()> {
    let view = ArrayView2::from_shape((rows.len(), 3), rows.as_flattened())?;
    group.new_dataset_builder().with_data(view).create(name)?;
    Ok(())
}

/// Makes the vertex index `0, 1, ..., len - 1`, creating, growing or shrinking it.
fn set_vertex_index_len(file: &File, len: usize) -> hdf5::Result<()> {
    let index = file.dataset(VERTEX_INDEX).or_else(|_| {
        let (group, name) = VERTEX_INDEX.split_once('/').expect("group/name");
        group_or_create(file, group)?
            .new_dataset::<i64>()
            .chunk(VERTEX_INDEX_CHUNK)
            .shape(0..)
            .create(name)
    })?;
    let old = index.size();
    if old != len {
        index.resize(len)?;
    }
    if len > old {
        let values: Vec<i64> = (old as i64..len as i64).collect();
        index.write_slice(&values[..], old..len)?;
    }
    Ok(())
}

/// A scalar attribute.
pub(crate) fn write_attr<T: H5Type>(loc: &Location, name: &str, value: &T) -> hdf5::Result<()> {
    loc.new_attr::<T>().create(name)?.write_scalar(value)
}

/// A UTF-8 string attribute.
pub(crate) fn write_str_attr(loc: &Location, name: &str, value: &str) -> hdf5::Result<()> {
    let value = VarLenUnicode::from_str(value).map_err(|e| format!("attribute `{name}`: {e}"))?;
    write_attr(loc, name, &value)
}

// ---------------------------------------------------------------------------------
// Reading

/// `/frames`, if the file has it.
fn frames_group(file: &File) -> Option<Group> {
    file.group(FRAMES).ok()
}

/// The frames (sorted by step) and thermo columns of an existing file.
type Layout = (Vec<XdmfFrame>, Vec<(String, Dataset)>);

/// Reads what [`OutputFile`] keeps in memory from an existing file.
fn read_layout(file: &File) -> hdf5::Result<Layout> {
    let frames = match frames_group(file) {
        Some(group) => steps_in(&group)?
            .into_iter()
            .map(|step| frame_info(&group.group(&frame_name(step))?))
            .collect::<hdf5::Result<_>>()?,
        None => Vec::new(),
    };
    Ok((frames, thermo_datasets(file)?))
}

/// The steps of the frame groups in `/frames`, sorted.
fn steps_in(frames: &Group) -> hdf5::Result<Vec<u64>> {
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
fn frame_info(group: &Group) -> hdf5::Result<XdmfFrame> {
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
fn thermo_datasets(file: &File) -> hdf5::Result<Vec<(String, Dataset)>> {
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
fn read_frame_group(group: &Group, path: &Path) -> IoResult<FrameOwned> {
    let context = || format!("reading {}", group.name());
    let (step, time, n, fields) = frame_info(group).at(path, context())?;
    let fields = fields
        .into_iter()
        .map(|name| {
            let rows = read_vectors(group, &name, n, path)?;
            Ok((name, rows))
        })
        .collect::<IoResult<_>>()?;
    Ok(FrameOwned {
        step,
        time,
        id: read_dataset(group, ID, &[n], path)?,
        position: read_vectors(group, POSITION, n, path)?,
        radius: read_dataset(group, RADIUS, &[n], path)?,
        material: read_dataset(group, MATERIAL, &[n], path)?,
        fields,
    })
}

/// Reads the dataset `name` of `group` after checking that its shape is `shape`.
fn read_dataset<T: H5Type>(
    group: &Group,
    name: &str,
    shape: &[usize],
    path: &Path,
) -> IoResult<Vec<T>> {
    let where_ = || format!("{}/{name}", group.name());
    let ds = group
        .dataset(name)
        .at(path, format_args!("opening {}", where_()))?;
    let found = ds.shape();
    if found != shape {
        let message = format!("{} has shape {found:?}, expected {shape:?}", where_());
        return Err(IoError::invalid(path, message));
    }
    ds.read_raw().at(path, format_args!("reading {}", where_()))
}

/// Reads an N×3 dataset as rows.
fn read_vectors(group: &Group, name: &str, n: usize, path: &Path) -> IoResult<Vec<[f64; 3]>> {
    let flat: Vec<f64> = read_dataset(group, name, &[n, 3], path)?;
    Ok(flat
        .chunks_exact(3)
        .map(|row| [row[0], row[1], row[2]])
        .collect())
}

// ---------------------------------------------------------------------------------
// Summary

/// The root attributes: `version`, `ranks` and `threads` first, then any others, and
/// the first lines of `config` last.
fn summarize_root(out: &mut String, file: &File) -> hdf5::Result<()> {
    let mut names = file.attr_names()?;
    let first = ["version", "ranks", "threads"];
    names.sort_by_key(|name| first.iter().position(|f| f == name).unwrap_or(first.len()));
    for name in names.iter().filter(|name| *name != "config") {
        let _ = writeln!(out, "{name}: {}", attr_text(&file.attr(name)?));
    }
    if names.iter().any(|name| name == "config") {
        let config = read_str_attr(&file.attr("config")?)?;
        let lines: Vec<&str> = config.lines().collect();
        let shown = lines.len().min(CONFIG_LINES_SHOWN);
        let _ = writeln!(out, "config: {} lines, the first {shown}:", lines.len());
        for line in &lines[..shown] {
            let _ = writeln!(out, "    {line}");
        }
    }
    Ok(())
}

/// Frame count, first and last step and time, particle count and fields of the last.
fn summarize_frames(out: &mut String, file: &File) -> hdf5::Result<()> {
    let Some(frames) = frames_group(file) else {
        return Ok(());
    };
    let steps = steps_in(&frames)?;
    let (Some(&first), Some(&last)) = (steps.first(), steps.last()) else {
        out.push_str("frames: 0\n");
        return Ok(());
    };
    let (_, first_time, ..) = frame_info(&frames.group(&frame_name(first))?)?;
    let (_, last_time, n, fields) = frame_info(&frames.group(&frame_name(last))?)?;
    let _ = writeln!(
        out,
        "frames: {} (steps {first} to {last}, time {first_time} s to {last_time} s)",
        steps.len()
    );
    let fields = if fields.is_empty() {
        "none".to_owned()
    } else {
        fields.join(", ")
    };
    let _ = writeln!(out, "last frame: {n} particles; fields: {fields}");
    Ok(())
}

/// Column names, row count and the last row's values.
fn summarize_thermo(out: &mut String, file: &File) -> hdf5::Result<()> {
    let columns = thermo_datasets(file)?;
    if columns.is_empty() {
        return Ok(());
    }
    let rows = columns.iter().map(|(_, ds)| ds.size()).min().unwrap_or(0);
    let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
    let _ = writeln!(
        out,
        "thermo: {} columns, {rows} rows: {}",
        columns.len(),
        names.join(", ")
    );
    if rows > 0 {
        out.push_str("last thermo row:\n");
        for (name, ds) in &columns {
            let value = ds.read_slice_1d::<f64, _>(rows - 1..rows)?[0];
            let _ = writeln!(out, "    {name} = {value}");
        }
    }
    Ok(())
}

/// Lists the attributes, datasets (shape and type) and subgroups of `group`, indented
/// by `depth` levels.
fn describe_group(out: &mut String, group: &Group, depth: usize) -> hdf5::Result<()> {
    let indent = "    ".repeat(depth);
    for name in group.attr_names()? {
        let _ = writeln!(out, "{indent}@{name} = {}", attr_text(&group.attr(&name)?));
    }
    for name in group.member_names()? {
        match group.loc_type_by_name(&name)? {
            LocationType::Dataset => {
                let ds = group.dataset(&name)?;
                let _ = writeln!(out, "{indent}{name}: {:?} {}", ds.shape(), type_name(&ds));
            }
            LocationType::Group if depth < CHECKPOINT_DEPTH => {
                let _ = writeln!(out, "{indent}{name}/");
                describe_group(out, &group.group(&name)?, depth + 1)?;
            }
            _ => {
                let _ = writeln!(out, "{indent}{name} (not shown)");
            }
        }
    }
    Ok(())
}

/// The element type of a dataset or attribute, as HDF5 types are usually spelled.
fn type_name(container: &hdf5::Container) -> String {
    container
        .dtype()
        .and_then(|dtype| dtype.to_descriptor())
        .map_or_else(|_| "(unknown type)".to_owned(), |desc| desc.to_string())
}

/// A short text for an attribute's value: numbers and strings in full (strings up to
/// the first line), small numeric arrays as lists, anything else as type and shape.
fn attr_text(attr: &Attribute) -> String {
    let value = match attr.dtype().and_then(|dtype| dtype.to_descriptor()) {
        Ok(TypeDescriptor::Unsigned(_)) => numbers_text::<u64>(attr),
        Ok(TypeDescriptor::Integer(_)) => numbers_text::<i64>(attr),
        Ok(TypeDescriptor::Float(_)) => numbers_text::<f64>(attr),
        Ok(TypeDescriptor::Boolean) => numbers_text::<bool>(attr),
        Ok(TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii) if attr.is_scalar() => {
            read_str_attr(attr).map(|text| first_line(&text))
        }
        _ => Err("not shown".into()),
    };
    value.unwrap_or_else(|_| format!("({} {:?})", type_name(attr), attr.shape()))
}

/// A scalar as text, or an array of at most 8 elements as `[a, b, ...]`.
fn numbers_text<T: H5Type + std::fmt::Display>(attr: &Attribute) -> hdf5::Result<String> {
    if attr.is_scalar() {
        return attr.read_scalar::<T>().map(|v| v.to_string());
    }
    if attr.size() > 8 {
        return Err("too long to show".into());
    }
    let values: Vec<String> = attr.read_raw::<T>()?.iter().map(T::to_string).collect();
    Ok(format!("[{}]", values.join(", ")))
}

/// A string attribute, UTF-8 or ASCII.
fn read_str_attr(attr: &Attribute) -> hdf5::Result<String> {
    attr.read_scalar::<VarLenUnicode>()
        .map(|s| s.as_str().to_owned())
        .or_else(|_| {
            attr.read_scalar::<VarLenAscii>()
                .map(|s| s.as_str().to_owned())
        })
}

/// The first line of `text`, with `...` if there is more.
fn first_line(text: &str) -> String {
    match text.split_once('\n') {
        Some((first, _)) => format!("{first} ..."),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: [&str; 3] = ["step", "time", "kinetic_energy"];

    /// Owned arrays for a frame of `n` particles at `step`, with values that are not
    /// exactly representable in decimal, rows deliberately not sorted by id.
    fn sample(step: u64, n: usize) -> FrameOwned {
        let x = |i: usize, k: usize| (i as f64 + 0.1 * k as f64) / 3.0 + step as f64 * 1e-7;
        let rows = |k: usize| {
            (0..n)
                .map(|i| [x(i, k), -x(i, k + 1), x(i, k + 2) * 1e-9])
                .collect()
        };
        FrameOwned {
            step,
            time: step as f64 * 1e-5 / 3.0,
            id: (0..n as u64).rev().map(|i| i * 7 + step).collect(),
            position: rows(0),
            radius: (0..n).map(|i| 1e-3 + i as f64 * 1e-7 / 3.0).collect(),
            material: (0..n as u32).map(|i| i % 3).collect(),
            fields: vec![("velocity".into(), rows(1)), ("omega".into(), rows(2))],
        }
    }

    fn borrow(frame: &FrameOwned) -> Frame<'_> {
        Frame {
            step: frame.step,
            time: frame.time,
            id: &frame.id,
            position: &frame.position,
            radius: &frame.radius,
            material: &frame.material,
            fields: frame
                .fields
                .iter()
                .map(|(n, v)| (n.as_str(), &v[..]))
                .collect(),
        }
    }

    fn thermo_row(i: usize) -> [f64; 3] {
        [
            i as f64 * 100.0,
            i as f64 * 1e-3 / 3.0,
            (i as f64).sqrt() / 7.0,
        ]
    }

    /// A file with frames at steps 0, 1000, 2000 (5, 6, 7 particles) and 5 thermo rows.
    fn write_sample(dir: &Path) -> (PathBuf, Vec<FrameOwned>) {
        let path = dir.join("run.h5");
        let mut out =
            OutputFile::create(&path, "0.1.0", "[run]\nname = \"run\"\n", 2, 4, &COLUMNS).unwrap();
        let frames: Vec<FrameOwned> = (0..3).map(|i| sample(i * 1000, 5 + i as usize)).collect();
        for (i, frame) in frames.iter().enumerate() {
            out.write_frame(&borrow(frame)).unwrap();
            if i == 0 {
                for row in 0..5 {
                    out.append_thermo(&thermo_row(row)).unwrap();
                }
            }
        }
        out.flush().unwrap();
        (path, frames)
    }

    fn assert_bitwise_eq(a: &FrameOwned, b: &FrameOwned) {
        let bits =
            |v: &[[f64; 3]]| -> Vec<u64> { v.iter().flatten().map(|x| x.to_bits()).collect() };
        assert_eq!(a.step, b.step);
        assert_eq!(a.time.to_bits(), b.time.to_bits());
        assert_eq!(a.id, b.id);
        assert_eq!(bits(&a.position), bits(&b.position));
        let radius_bits =
            |f: &FrameOwned| -> Vec<u64> { f.radius.iter().map(|x| x.to_bits()).collect() };
        assert_eq!(radius_bits(a), radius_bits(b));
        assert_eq!(a.material, b.material);
        assert_eq!(a.fields.len(), b.fields.len());
        for ((na, va), (nb, vb)) in a.fields.iter().zip(&b.fields) {
            assert_eq!(na, nb);
            assert_eq!(bits(va), bits(vb));
        }
    }

    #[test]
    fn frames_and_thermo_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let (path, frames) = write_sample(dir.path());
        assert_eq!(list_frames(&path).unwrap(), vec![0, 1000, 2000]);
        for frame in &frames {
            assert_bitwise_eq(&read_frame(&path, frame.step).unwrap(), frame);
        }
        let thermo = read_thermo(&path).unwrap();
        let names: Vec<&str> = thermo.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, COLUMNS);
        for (col, (_, values)) in thermo.iter().enumerate() {
            let expected: Vec<u64> = (0..5).map(|row| thermo_row(row)[col].to_bits()).collect();
            assert_eq!(
                values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                expected
            );
        }
    }

    #[test]
    fn xdmf_sidecar_lists_every_frame() {
        let dir = tempfile::tempdir().unwrap();
        let (path, frames) = write_sample(dir.path());
        let xml = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
        let names = crate::io::xdmf::tests::element_names(&xml);
        assert_eq!(
            names.iter().filter(|n| *n == "Grid").count(),
            1 + frames.len()
        );
        for frame in &frames {
            assert!(xml.contains(&format!("run.h5:{}/position", frame_path(frame.step))));
        }
        // The connectivity index is as long as the largest frame.
        let file = crate::io::open_read(&path).unwrap();
        let index = file
            .dataset(VERTEX_INDEX)
            .unwrap()
            .read_raw::<i64>()
            .unwrap();
        assert_eq!(index, (0..7).collect::<Vec<i64>>());
    }

    #[test]
    fn root_attributes_follow_the_documented_layout() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        let file = crate::io::open_read(&path).unwrap();
        assert_eq!(
            read_str_attr(&file.attr("version").unwrap()).unwrap(),
            "0.1.0"
        );
        assert!(read_str_attr(&file.attr("config").unwrap())
            .unwrap()
            .starts_with("[run]"));
        assert_eq!(file.attr("ranks").unwrap().read_scalar::<u32>().unwrap(), 2);
        assert_eq!(
            file.attr("threads").unwrap().read_scalar::<u32>().unwrap(),
            4
        );
        let group = file.group("frames/000001000").unwrap();
        assert_eq!(
            group.attr("step").unwrap().read_scalar::<u64>().unwrap(),
            1000
        );
        assert_eq!(group.dataset(POSITION).unwrap().shape(), vec![6, 3]);
        assert_eq!(type_name(&group.dataset(ID).unwrap()), "uint64");
        assert_eq!(type_name(&group.dataset(MATERIAL).unwrap()), "uint32");
        let column = file.dataset("thermo/time").unwrap();
        assert!(column.is_chunked() && column.is_resizable());
    }

    #[test]
    fn summary_mentions_the_counts() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        let text = summarize(&path).unwrap();
        for needle in [
            "version: 0.1.0",
            "ranks: 2",
            "threads: 4",
            "name = \"run\"",
            "frames: 3 (steps 0 to 2000",
            "last frame: 7 particles; fields: velocity, omega",
            "thermo: 3 columns, 5 rows: step, time, kinetic_energy",
            "    step = 400",
        ] {
            assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
        }
        assert!(!text.contains("checkpoint"));
    }

    #[test]
    fn summary_lists_a_checkpoint_group_generically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.checkpoint.h5");
        {
            let file = crate::io::create(&path).unwrap();
            let group = file.create_group(CHECKPOINT).unwrap();
            write_attr(&group, "step", &5000u64).unwrap();
            write_str_attr(&group, "rng", "philox").unwrap();
            let grid = group.new_attr::<i32>().shape(3).create("grid").unwrap();
            grid.write_raw(&[2, 1, 1]).unwrap();
            write_vectors(&group, "velocity", &[[1.0, 2.0, 3.0]; 4]).unwrap();
            let contacts = group.create_group("contacts").unwrap();
            write_rows(&contacts, "pairs", &[1u64, 2, 3]).unwrap();
        }
        let text = summarize(&path).unwrap();
        for needle in [
            "checkpoint:",
            "@step = 5000",
            "@grid = [2, 1, 1]",
            "@rng = philox",
            "velocity: [4, 3] float64",
            "contacts/",
            "pairs: [3] uint64",
        ] {
            assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
        }
        assert!(list_frames(&path).unwrap().is_empty());
        assert!(read_thermo(&path).unwrap().is_empty());
    }

    #[test]
    fn open_append_keeps_old_frames_and_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (path, frames) = write_sample(dir.path());
        let mut out = OutputFile::open_append(&path).unwrap();
        assert_eq!(out.frame_steps(), vec![0, 1000, 2000]);
        assert_eq!(out.thermo_columns(), COLUMNS);
        assert_eq!(out.thermo_rows(), 5);
        let new = sample(3000, 4);
        out.write_frame(&borrow(&new)).unwrap();
        out.append_thermo(&thermo_row(5)).unwrap();
        drop(out);

        assert_eq!(list_frames(&path).unwrap(), vec![0, 1000, 2000, 3000]);
        for frame in frames.iter().chain([&new]) {
            assert_bitwise_eq(&read_frame(&path, frame.step).unwrap(), frame);
        }
        assert!(read_thermo(&path)
            .unwrap()
            .iter()
            .all(|(_, v)| v.len() == 6));
        let xml = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
        for step in [0, 1000, 2000, 3000] {
            assert!(xml.contains(&frame_path(step)));
        }
    }

    #[test]
    fn cut_after_drops_later_frames_and_thermo_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (path, frames) = write_sample(dir.path());
        let mut out = OutputFile::open_append(&path).unwrap();
        out.cut_after(1000).unwrap();
        assert_eq!(out.frame_steps(), vec![0, 1000]);
        assert_eq!(out.thermo_rows(), 5);
        out.cut_after(250).unwrap();
        assert_eq!(out.frame_steps(), vec![0]);
        assert_eq!(out.thermo_rows(), 3);
        drop(out);
        assert_eq!(list_frames(&path).unwrap(), vec![0]);
        assert_bitwise_eq(&read_frame(&path, 0).unwrap(), &frames[0]);
        let thermo = read_thermo(&path).unwrap();
        assert_eq!(thermo[0].1, vec![0.0, 100.0, 200.0]);
        assert!(thermo.iter().all(|(_, v)| v.len() == 3));
        let xml = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
        assert!(xml.contains(&frame_path(0)) && !xml.contains(&frame_path(1000)));
        // Reopened, the file continues from there.
        let mut out = OutputFile::open_append(&path).unwrap();
        assert_eq!((out.frame_steps(), out.thermo_rows()), (vec![0], 3));
        out.append_thermo(&thermo_row(3)).unwrap();
        assert_eq!(out.thermo_rows(), 4);
    }

    #[test]
    fn rewriting_a_step_replaces_the_frame() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        let mut out = OutputFile::open_append(&path).unwrap();
        let mut again = sample(1000, 2);
        again.fields.truncate(1);
        out.write_frame(&borrow(&again)).unwrap();
        assert_eq!(out.frame_steps(), vec![0, 1000, 2000]);
        drop(out);
        assert_bitwise_eq(&read_frame(&path, 1000).unwrap(), &again);
    }

    #[test]
    fn open_append_cuts_ragged_thermo_columns() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        {
            let file = crate::io::open_rw(&path).unwrap();
            file.dataset("thermo/step").unwrap().resize(7).unwrap();
        }
        let out = OutputFile::open_append(&path).unwrap();
        assert_eq!(out.thermo_rows(), 5);
        drop(out);
        assert!(read_thermo(&path)
            .unwrap()
            .iter()
            .all(|(_, v)| v.len() == 5));
    }

    #[test]
    fn create_removes_a_stale_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        assert!(path.with_extension("xdmf").exists());
        let out = OutputFile::create(&path, "0.1.0", "", 1, 1, &COLUMNS).unwrap();
        assert!(!out.xdmf_path().exists());
        assert!(list_frames(&path).unwrap().is_empty());
    }

    #[test]
    fn empty_frame_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.h5");
        let mut out = OutputFile::create(&path, "0.1.0", "", 1, 1, &[]).unwrap();
        let empty = sample(0, 0);
        out.write_frame(&borrow(&empty)).unwrap();
        drop(out);
        assert_bitwise_eq(&read_frame(&path, 0).unwrap(), &empty);
        assert!(summarize(&path)
            .unwrap()
            .contains("last frame: 0 particles"));
    }

    #[test]
    fn bad_input_is_rejected_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.h5");
        let err = OutputFile::create(&path, "v", "", 1, 1, &["a", "a"]).unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");

        let mut out = OutputFile::create(&path, "v", "", 1, 1, &COLUMNS).unwrap();
        let err = out.append_thermo(&[1.0]).unwrap_err();
        assert!(
            err.to_string()
                .contains("1 values but the file has 3 columns"),
            "{err}"
        );

        let frame = sample(10, 3);
        let mut short = borrow(&frame);
        short.radius = &frame.radius[..2];
        let err = out.write_frame(&short).unwrap_err();
        assert!(
            err.to_string()
                .contains("`radius` has 2 rows but `id` has 3"),
            "{err}"
        );

        let mut clash = borrow(&frame);
        clash.fields.push((ID, &frame.position));
        let err = out.write_frame(&clash).unwrap_err();
        assert!(
            err.to_string().contains("field name `id` is reserved"),
            "{err}"
        );

        for err in [
            read_frame(&path, 99).unwrap_err(),
            OutputFile::create(&dir.path().join("no/such/dir.h5"), "v", "", 1, 1, &[]).unwrap_err(),
        ] {
            assert!(
                err.to_string().starts_with(&*err.path().to_string_lossy()),
                "{err}"
            );
        }
        assert!(read_frame(&path, 99)
            .unwrap_err()
            .to_string()
            .contains("no frame at step 99"));
    }

    #[test]
    fn foreign_and_missing_files_give_errors_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not HDF5 at all").unwrap();
        let foreign = dir.path().join("foreign.h5");
        crate::io::create(&foreign)
            .unwrap()
            .create_group("data")
            .unwrap();
        let missing = dir.path().join("missing.h5");

        for path in [&text, &foreign, &missing] {
            let shown = path.to_string_lossy();
            let errors = [
                summarize(path).unwrap_err(),
                list_frames(path).unwrap_err(),
                read_frame(path, 0).unwrap_err(),
                read_thermo(path).unwrap_err(),
                OutputFile::open_append(path).unwrap_err(),
            ];
            for err in errors {
                assert!(err.to_string().contains(&*shown), "{err}");
            }
        }
        assert!(summarize(&foreign)
            .unwrap_err()
            .to_string()
            .contains("not a gravel"));
        assert!(summarize(&text).unwrap_err().to_string().contains("HDF5"));
    }

    #[test]
    fn frame_names_are_zero_padded() {
        assert_eq!(frame_name(1000), "000001000");
        assert_eq!(frame_path(7), "/frames/000000007");
        assert_eq!(frame_name(12_345_678_901), "12345678901");
    }
}
