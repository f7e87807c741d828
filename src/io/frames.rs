//! The writer of the HDF5 output file: [`OutputFile`] creates or reopens the file,
//! writes [`Frame`]s and thermo rows, and brings the XDMF sidecar
//! ([`super::sidecar`]) up to date after every frame. The layout is described in
//! [`super::layout`].

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, Group};
use ndarray::ArrayView2;

use super::collective::{self, Part, Transfer};
use super::contact_list;
use super::layout::{
    create_ordered_group, frame_name, open_gravel, unit_of, write_attr, write_str_attr,
    CORE_DATASETS, DIAGNOSTICS, FRAMES, FROZEN, ID, MATERIAL, MATERIALS, POSITION, RADIUS, THERMO,
    UNITS, VERTEX_INDEX, WALLS, WALL_MESHES,
};
use super::read::{read_layout, read_tables, Named};
use super::sidecar::Sidecar;
use super::table::{Column, Table};
use super::xdmf::{WallScene, XdmfFrame};
use crate::error::{Context, IoError, IoResult};
use crate::geometry::mesh::TriMesh;
use crate::parallel::comm::{Comm, RowSpan};
/// Entries per chunk of the vertex index.
const VERTEX_INDEX_CHUNK: usize = 8192;

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
    /// 1 for a frozen particle, 0 otherwise.
    pub frozen: &'a [u8],
    /// Requested vector fields (`velocity`, `omega`, ...), each one row per particle.
    pub fields: Vec<(&'a str, &'a [[f64; 3]])>,
}

/// A frame's columns, asked for one at a time, so that a writer holds one
/// column rather than the whole frame ([`Frame`] lends borrowed columns;
/// the run builds each from the particle arrays when it is asked).
pub trait FrameSource {
    /// Time step number.
    fn step(&self) -> u64;
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// The number of rows, after checking that every column has that many
    /// and that the field names are usable and distinct.
    ///
    /// # Errors
    /// If a column has another length or a name is unusable.
    fn check(&self, path: &Path) -> IoResult<usize>;
    /// The names of the vector fields, in order.
    fn field_names(&self) -> Vec<&str>;
    /// Particle ids.
    fn id(&self) -> Cow<'_, [u64]>;
    /// Positions (m).
    fn position(&self) -> Cow<'_, [[f64; 3]]>;
    /// Radii (m).
    fn radius(&self) -> Cow<'_, [f64]>;
    /// Material indices.
    fn material(&self) -> Cow<'_, [u32]>;
    /// 1 for a frozen particle, 0 otherwise.
    fn frozen(&self) -> Cow<'_, [u8]>;
    /// Vector field `k` (in the order of [`Self::field_names`]).
    fn field(&self, k: usize) -> Cow<'_, [[f64; 3]]>;
}

impl FrameSource for Frame<'_> {
    fn step(&self) -> u64 {
        self.step
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn check(&self, path: &Path) -> IoResult<usize> {
        self.checked(path)
    }
    fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|(name, _)| *name).collect()
    }
    fn id(&self) -> Cow<'_, [u64]> {
        Cow::Borrowed(self.id)
    }
    fn position(&self) -> Cow<'_, [[f64; 3]]> {
        Cow::Borrowed(self.position)
    }
    fn radius(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(self.radius)
    }
    fn material(&self) -> Cow<'_, [u32]> {
        Cow::Borrowed(self.material)
    }
    fn frozen(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.frozen)
    }
    fn field(&self, k: usize) -> Cow<'_, [[f64; 3]]> {
        Cow::Borrowed(self.fields[k].1)
    }
}

impl Frame<'_> {
    /// The particle count, after checking that every array has one row per particle
    /// and that the field names are usable and distinct.
    fn checked(&self, path: &Path) -> IoResult<usize> {
        let n = self.id.len();
        let lengths = [
            (POSITION, self.position.len()),
            (RADIUS, self.radius.len()),
            (MATERIAL, self.material.len()),
            (FROZEN, self.frozen.len()),
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

/// An output file open for writing frames and thermo rows. Every frame written also
/// brings the XDMF sidecar (same stem, `.xdmf`) next to it up to date.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    file: File,
    /// Frames in the file, sorted by step.
    frames: Vec<XdmfFrame>,
    /// The most particles in a frame.
    largest: usize,
    /// The XDMF sidecar.
    sidecar: Sidecar,
    /// The thermo table.
    thermo: Table,
    /// The diagnostics' tables, by name.
    diagnostics: Vec<(String, Table)>,
    /// The walls the sidecar draws, if any.
    walls: Option<WallScene>,
}

impl OutputFile {
    /// Creates (truncates) `path` and writes the root attributes `version`, `config`
    /// (the TOML text), `ranks` and `threads`, an empty `/frames` group and one empty
    /// `/thermo` column per entry of `thermo_columns`, in that order. A stale XDMF
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
        thermo_columns: &[Column],
    ) -> IoResult<Self> {
        check_names(
            path,
            "thermo column",
            thermo_columns.iter().map(|c| c.name.as_str()),
            &[],
        )?;
        let file = super::create(path).at(path, "creating the output file")?;
        write_header(&file, version, config_text, ranks, threads)
            .at(path, "writing the root attributes")?;
        file.create_group(FRAMES).at(path, "creating /frames")?;
        let thermo =
            Table::create(&file, THERMO, thermo_columns).at(path, "creating the thermo table")?;
        let out = Self {
            path: path.to_path_buf(),
            file,
            frames: Vec::new(),
            largest: 0,
            sidecar: sidecar_of(path),
            thermo,
            diagnostics: Vec::new(),
            walls: None,
        };
        super::remove_if_there(&out.xdmf_path())
            .at(&out.xdmf_path(), "removing the stale XDMF sidecar")?;
        Ok(out)
    }

    /// Opens an existing output file for appending (used by restarts): finds the
    /// frames and thermo columns already there. If a crash left the thermo columns
    /// with different lengths, they are cut back to the shortest, so that every row
    /// is complete.
    ///
    /// # Errors
    /// If the file is missing, unreadable or not a gravel file.
    pub fn open_append(path: &Path) -> IoResult<Self> {
        let out = Self::open_as_left(path)?;
        out.trim_contact_lists()?;
        Ok(out)
    }

    /// [`Self::open_append`] without cutting the contact lists back: the
    /// file as a writer left it (a list just written by every rank, its row
    /// still to come).
    fn open_as_left(path: &Path) -> IoResult<Self> {
        let file = open_gravel(path, true)?;
        let (frames, thermo, diagnostics) =
            read_layout(&file).at(path, "reading the existing layout")?;
        let known = Known {
            largest: largest_of(&frames),
            frames,
            sidecar: sidecar_of(path),
            walls: None,
        };
        Self::with_tables(path, file, known, thermo, diagnostics)
    }

    /// The file this process wrote and closed ([`Suspended`]), opened
    /// again: its frames are `known`, so only its tables are read (reading
    /// every frame's group again would cost each frame time in proportion
    /// to the frames before it).
    fn open_known(path: &Path, known: Known) -> IoResult<Self> {
        let file = open_gravel(path, true)?;
        let (thermo, diagnostics) = read_tables(&file).at(path, "reading the existing tables")?;
        Self::with_tables(path, file, known, thermo, diagnostics)
    }

    /// The writer of `file`, its tables opened from their columns.
    fn with_tables(
        path: &Path,
        file: File,
        known: Known,
        thermo: Named,
        diagnostics: Vec<(String, Named)>,
    ) -> IoResult<Self> {
        let thermo = Table::open(thermo).at(path, "opening the thermo table")?;
        let diagnostics = diagnostics
            .into_iter()
            .map(|(name, columns)| {
                let table =
                    Table::open(columns).at(path, format_args!("opening /{DIAGNOSTICS}/{name}"))?;
                Ok((name, table))
            })
            .collect::<IoResult<_>>()?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            frames: known.frames,
            largest: known.largest,
            sidecar: known.sidecar,
            thermo,
            diagnostics,
            walls: known.walls,
        })
    }

    /// Cut every contact list back to the contacts its table's rows index
    /// (see [`contact_list::trim`]).
    fn trim_contact_lists(&self) -> IoResult<()> {
        for (name, table) in &self.diagnostics {
            let trim = || -> hdf5::Result<()> {
                let group = self.file.group(&format!("{DIAGNOSTICS}/{name}"))?;
                contact_list::trim(&group, table.rows())
            };
            trim().at(
                &self.path,
                format_args!("trimming /{DIAGNOSTICS}/{name}/{}", contact_list::LIST),
            )?;
        }
        Ok(())
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
            self.largest = largest_of(&self.frames);
            set_vertex_index_len(&self.file, vertex_capacity(self.largest))
                .at(&self.path, "resizing the vertex index")?;
        }
        let tables = std::iter::once((format!("/{THERMO}"), &mut self.thermo)).chain(
            self.diagnostics
                .iter_mut()
                .map(|(name, t)| (format!("/{DIAGNOSTICS}/{name}"), t)),
        );
        for (group, table) in tables {
            table
                .cut_after(step)
                .map_err(|e| IoError::invalid(&self.path, format!("{group}: {e}")))?;
        }
        self.trim_contact_lists()?;
        self.flush()?;
        self.sidecar.forget();
        if self.frames.is_empty() {
            super::remove_if_there(&self.xdmf_path())
                .at(&self.xdmf_path(), "removing the XDMF sidecar")
        } else {
            self.write_sidecar()
        }
    }

    /// Writes `/frames/<step as 9 digits>/` with attributes `step` and `time` and the
    /// datasets `id`, `position`, `radius`, `material` and one per field, flushes the
    /// file, then brings the XDMF sidecar up to date ([`Sidecar`]: the new frame added
    /// in place). A frame already in the file at the same step (as after a restart from
    /// an earlier checkpoint) is replaced.
    ///
    /// # Errors
    /// If the arrays do not all have one row per particle, a field name is unusable
    /// (empty, with a `/`, repeated, or one of the core dataset names), or writing fails.
    pub fn write_frame(&mut self, frame: &dyn FrameSource) -> IoResult<()> {
        let n = frame.check(&self.path)?;
        let step = frame.step();
        let context = || format!("writing frame {step}");
        // Forget the old frame first: if writing fails half way, it is gone anyway.
        self.forget_frame(step);
        let all = RowSpan::whole(n);
        write_frame_group(&self.file, frame, all, Transfer::Serial).at(&self.path, context())?;
        self.add_frame(frame_entry(frame, n))
    }

    /// Drops the frame at `step` from the list, if there is one.
    fn forget_frame(&mut self, step: u64) {
        if self.frames.last().is_some_and(|f| f.0 >= step) {
            self.frames.retain(|f| f.0 != step);
            self.largest = largest_of(&self.frames);
        }
    }

    /// After a frame is in the file: lists it, grows the vertex index if it
    /// must, flushes, and brings the sidecar up to date. Each costs the
    /// same whatever the frames before (a frame after the last is pushed).
    fn add_frame(&mut self, entry: XdmfFrame) -> IoResult<()> {
        let step = entry.0;
        self.forget_frame(step);
        self.largest = self.largest.max(entry.2);
        let at = self.frames.partition_point(|f| f.0 < step);
        self.frames.insert(at, entry);
        set_vertex_index_len(&self.file, vertex_capacity(self.largest))
            .at(&self.path, format_args!("writing frame {step}"))?;
        self.flush()?;
        self.write_sidecar()
    }

    /// Close the file so that every rank can open it for a frame they all
    /// write ([`write_frame_collective`]); [`Suspended::resume`] opens it
    /// again.
    #[must_use]
    pub fn suspend(self) -> Suspended {
        Suspended {
            path: self.path,
            known: Known {
                frames: self.frames,
                largest: self.largest,
                sidecar: self.sidecar,
                walls: self.walls,
            },
        }
    }

    /// Writes (or replaces) `/materials`: the material names, by the index the
    /// `material` datasets hold.
    ///
    /// # Errors
    /// If a name is not valid UTF-8 for HDF5, or writing fails.
    pub fn write_materials(&mut self, names: &[&str]) -> IoResult<()> {
        write_names(&self.file, MATERIALS, names).at(&self.path, "writing /materials")
    }

    /// Appends one row to `/thermo/`: the values of the columns given at
    /// [`create`](Self::create), in order, each column's in row-major order
    /// of its shape.
    ///
    /// # Errors
    /// If `row` does not have the columns' number of values, or writing fails.
    pub fn append_thermo(&mut self, row: &[f64]) -> IoResult<()> {
        self.thermo
            .append(row)
            .map_err(|e| IoError::invalid(&self.path, format!("/{THERMO}: {e}")))
    }

    /// Writes the wall names, by index, to `/walls`.
    ///
    /// # Errors
    /// If a name is not valid UTF-8 for HDF5 or writing fails.
    pub fn write_walls(&mut self, names: &[&str]) -> IoResult<()> {
        write_names(&self.file, WALLS, names).at(&self.path, "writing /walls")
    }

    /// Writes (or replaces) each mesh wall's triangles at rest under
    /// `/wall_meshes/<name>/`: `points` (vertices × 3, m) and `triangles`
    /// (triangles × 3, u32 indices into `points`), which the XDMF sidecar
    /// draws.
    ///
    /// # Errors
    /// If writing fails.
    pub fn write_wall_meshes(&mut self, meshes: &[(&str, &TriMesh)]) -> IoResult<()> {
        if meshes.is_empty() {
            return Ok(());
        }
        let write = || -> hdf5::Result<()> {
            let top = group_or_create(&self.file, WALL_MESHES)?;
            for (name, mesh) in meshes {
                if top.link_exists(name) {
                    top.unlink(name)?;
                }
                let g = top.create_group(name)?;
                let points: Vec<[f64; 3]> = mesh.vertices().iter().map(|v| v.to_array()).collect();
                write_vectors(&g, "points", &points)?;
                let tris = mesh.triangles();
                let view = ArrayView2::from_shape((tris.len(), 3), tris.as_flattened())?;
                g.new_dataset_builder()
                    .with_data(view)
                    .create("triangles")?;
                set_units(&g.dataset("points")?, POSITION)?;
            }
            Ok(())
        };
        write().at(&self.path, "writing /wall_meshes")
    }

    /// Creates the group `/diagnostics/<name>` holding, besides the table
    /// of `columns`, the fixed datasets `fixed` (name, shape, values, unit:
    /// a profile's bin centres, a grid's coordinates) and the string
    /// attributes `attrs`; a diagnostic of the same name left by an earlier
    /// run in this file (as after a restart) is kept and appended to.
    ///
    /// # Errors
    /// If the name is unusable or a table of that name has other columns,
    /// or writing fails.
    pub fn add_diagnostic(
        &mut self,
        name: &str,
        columns: &[Column],
        fixed: &[Fixed],
        attrs: &[(&str, &str)],
    ) -> IoResult<()> {
        check_names(&self.path, "diagnostic", [name], &[])?;
        let group_path = format!("/{DIAGNOSTICS}/{name}");
        if let Some((_, t)) = self.diagnostics.iter().find(|(n, _)| n == name) {
            let wanted: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            if t.names() != wanted || t.width() != columns.iter().map(Column::width).sum() {
                return Err(IoError::invalid(
                    &self.path,
                    format!(
                        "{group_path} holds the columns {} but this run writes {}; pass --out DIR to write a new output file",
                        t.names().join(", "),
                        wanted.join(", ")
                    ),
                ));
            }
            return Ok(());
        }
        let create = || -> hdf5::Result<Table> {
            let parent = group_or_create(&self.file, DIAGNOSTICS)?;
            let table = Table::create(&parent, name, columns)?;
            let group = parent.group(name)?;
            for (key, value) in attrs {
                write_str_attr(&group, key, value)?;
            }
            for f in fixed {
                let ds = group
                    .new_dataset::<f64>()
                    .shape(f.shape.clone())
                    .create(f.name.as_str())?;
                ds.write_raw(&f.values)?;
                if let Some(units) = f.units {
                    write_str_attr(&ds, UNITS, units)?;
                }
            }
            Ok(table)
        };
        let table = create().at(&self.path, format_args!("creating {group_path}"))?;
        self.diagnostics.push((name.to_owned(), table));
        Ok(())
    }

    /// Appends one row to the table of `/diagnostics/<name>` (see
    /// [`Self::add_diagnostic`]).
    ///
    /// # Errors
    /// If there is no such diagnostic, `row` is not as wide as its table,
    /// or writing fails.
    pub fn append_diagnostic(&mut self, name: &str, row: &[f64]) -> IoResult<()> {
        let Some((_, table)) = self.diagnostics.iter_mut().find(|(n, _)| n == name) else {
            return Err(IoError::invalid(
                &self.path,
                format!("no diagnostic `{name}` in this file"),
            ));
        };
        table
            .append(row)
            .map_err(|e| IoError::invalid(&self.path, format!("/{DIAGNOSTICS}/{name}: {e}")))
    }

    /// Creates `/diagnostics/<name>/` for a contact list (or finds it, as
    /// after a restart): its index table and its `list/` subgroup (see
    /// [`contact_list`]).
    ///
    /// # Errors
    /// As [`Self::add_diagnostic`].
    pub fn add_contact_list(&mut self, name: &str) -> IoResult<()> {
        self.add_diagnostic(
            name,
            &contact_list::index_columns(),
            &[],
            &[("kind", "contacts")],
        )?;
        let create = || -> hdf5::Result<()> {
            let group = self.file.group(&format!("{DIAGNOSTICS}/{name}"))?;
            if group.group(contact_list::LIST).is_err() {
                contact_list::create(&group)?;
            }
            Ok(())
        };
        create().at(
            &self.path,
            format_args!("creating /{DIAGNOSTICS}/{name}/{}", contact_list::LIST),
        )
    }

    /// Appends one list of contacts, of step `step` at time `time`, to the
    /// contact list `name` (created by [`Self::add_contact_list`]).
    ///
    /// # Errors
    /// If there is no such list or writing fails.
    pub fn append_contacts(
        &mut self,
        name: &str,
        step: u64,
        time: f64,
        contacts: &[crate::diagnostics::contact_list::ListedContact],
    ) -> IoResult<()> {
        let write = || -> hdf5::Result<usize> {
            let group = self.file.group(&format!("{DIAGNOSTICS}/{name}"))?;
            contact_list::append(&group, contacts)
        };
        let start = write().at(
            &self.path,
            format_args!("appending to /{DIAGNOSTICS}/{name}/{}", contact_list::LIST),
        )?;
        self.append_contact_row(name, step, time, start as u64, contacts.len() as u64)
    }

    /// Appends the row of a contact list to its index table: the list of
    /// `step` and `time` holds `count` contacts from `start`.
    ///
    /// # Errors
    /// If there is no such list or writing fails.
    pub fn append_contact_row(
        &mut self,
        name: &str,
        step: u64,
        time: f64,
        start: u64,
        count: u64,
    ) -> IoResult<()> {
        self.append_diagnostic(name, &[step as f64, time, start as f64, count as f64])
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
        self.thermo.names()
    }

    /// Number of complete thermo rows in the file.
    #[must_use]
    pub fn thermo_rows(&self) -> usize {
        self.thermo.rows()
    }

    /// Brings the XDMF sidecar up to date with the frame list.
    fn write_sidecar(&mut self) -> IoResult<()> {
        let count = vertex_capacity(self.largest);
        self.sidecar
            .update(&self.frames, self.walls.as_ref(), count)
    }

    /// The walls the XDMF sidecar draws from now on (rewritten with the
    /// next frame).
    pub fn set_walls(&mut self, walls: WallScene) {
        self.walls = Some(walls);
        self.sidecar.forget();
    }
}

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

/// An [`OutputFile`] closed while every rank writes a frame into it.
#[derive(Debug)]
pub struct Suspended {
    path: PathBuf,
    known: Known,
}

/// What an [`OutputFile`] knows of its file besides the file's tables.
#[derive(Debug)]
struct Known {
    frames: Vec<XdmfFrame>,
    largest: usize,
    sidecar: Sidecar,
    walls: Option<WallScene>,
}

/// The sidecar of the output file `path`: `path` with extension `.xdmf`.
fn sidecar_of(path: &Path) -> Sidecar {
    let h5_name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    Sidecar::new(&path.with_extension("xdmf"), &h5_name)
}

/// The most particles in one of `frames`.
fn largest_of(frames: &[XdmfFrame]) -> usize {
    frames.iter().map(|f| f.2).max().unwrap_or(0)
}

/// The vertex index's length for frames of at most `largest` particles:
/// `largest` rounded up to a power of two, so that a growing pour resizes
/// it (and rewrites the whole sidecar, whose grids name its length) a
/// number of times that grows with the logarithm of its particles, not at
/// every frame.
fn vertex_capacity(largest: usize) -> usize {
    if largest == 0 {
        0
    } else {
        largest.next_power_of_two()
    }
}

/// The frame list's entry of `frame`, of `n` particles in all: step, time,
/// particles, and the datasets beyond the core ones, `frozen` first (as
/// the reader of the layout lists them).
#[must_use]
pub fn frame_entry(frame: &dyn FrameSource, n: usize) -> XdmfFrame {
    let fields = std::iter::once(FROZEN)
        .chain(frame.field_names())
        .map(ToString::to_string)
        .collect();
    (frame.step(), frame.time(), n, fields)
}

impl Suspended {
    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Open the file again, as it was suspended (after a contact list that
    /// every rank wrote).
    ///
    /// # Errors
    /// If the file cannot be opened.
    pub fn reopen(self) -> IoResult<OutputFile> {
        OutputFile::open_known(&self.path, self.known)
    }

    /// Open the file again after a frame written by every rank (`entry`,
    /// [`frame_entry`]), with the frame listed, the vertex index and the
    /// XDMF sidecar brought up to date.
    ///
    /// # Errors
    /// If the file cannot be opened or written.
    pub fn resume(self, entry: XdmfFrame) -> IoResult<OutputFile> {
        let mut file = OutputFile::open_known(&self.path, self.known)?;
        file.add_frame(entry)?;
        Ok(file)
    }
}

/// Append this rank's `contacts` to the contact list `name` of the output
/// file at `path`, every rank at once: the contacts of rank `r` follow
/// those of the ranks below it. The file must be closed by every rank's
/// writer ([`OutputFile::suspend`]); the list's row is then appended by
/// the writer ([`OutputFile::append_contact_row`]). Returns where the
/// list starts and its length over all ranks. Collective.
///
/// # Errors
/// If the file has no such list, or writing fails.
pub fn append_contacts_collective(
    path: &Path,
    comm: &dyn Comm,
    name: &str,
    contacts: &[crate::diagnostics::contact_list::ListedContact],
) -> IoResult<(u64, u64)> {
    let span = RowSpan::of(comm, &[contacts.len() as u64])[0];
    let context = || format!("appending to /{DIAGNOSTICS}/{name}/{}", contact_list::LIST);
    let (file, transfer) = collective::open_rw(path, comm).at(path, context())?;
    let start = (file.group(&format!("{DIAGNOSTICS}/{name}")))
        .and_then(|group| contact_list::append_part(&group, contacts, span, transfer))
        .at(path, context())?;
    file.close().at(path, context())?;
    Ok((start as u64, span.total))
}

/// Write `frame`, this rank's rows of it, into the output file at `path`,
/// every rank at once: the rows of rank `r` follow those of ranks below
/// it (so a frame's rows follow the decomposition; `id` identifies them).
/// The file must be closed by every rank's writer ([`OutputFile::suspend`]).
/// Returns the number of rows over all ranks. Collective.
///
/// # Errors
/// If the arrays do not all have one row per particle, or writing fails.
pub fn write_frame_collective(
    path: &Path,
    comm: &dyn Comm,
    frame: &dyn FrameSource,
) -> IoResult<u64> {
    let n = frame.check(path)?;
    let span = RowSpan::of(comm, &[n as u64])[0];
    let context = || format!("writing frame {}", frame.step());
    let (file, transfer) = collective::open_rw(path, comm).at(path, context())?;
    write_frame_group(&file, frame, span, transfer).at(path, context())?;
    file.close().at(path, context())?;
    Ok(span.total)
}

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

/// Writes (or replaces) the root dataset `name` of strings `names`.
fn write_names(file: &File, name: &str, names: &[&str]) -> hdf5::Result<()> {
    let names = names
        .iter()
        .map(|n| n.parse::<VarLenUnicode>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a name: {e}"))?;
    if file.link_exists(name) {
        file.unlink(name)?;
    }
    file.new_dataset_builder()
        .with_data(&names[..])
        .create(name)?;
    Ok(())
}

/// A dataset of a diagnostic's group written once, beside its table.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    /// The dataset's name.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its values, row-major.
    pub values: Vec<f64>,
    /// Its `units` attribute, if it has a unit.
    pub units: Option<&'static str>,
}

/// The group `name` in `parent`, created if missing.
fn group_or_create(parent: &Group, name: &str) -> hdf5::Result<Group> {
    parent.group(name).or_else(|_| parent.create_group(name))
}

/// Writes (or replaces) the group of one frame: this rank's rows at
/// `span` (all of them on one process). Collective.
fn write_frame_group(
    file: &File,
    frame: &dyn FrameSource,
    span: RowSpan,
    transfer: Transfer,
) -> hdf5::Result<()> {
    let frames = group_or_create(file, FRAMES)?;
    let name = frame_name(frame.step());
    if frames.link_exists(&name) {
        frames.unlink(&name)?;
    }
    let group = create_ordered_group(&frames, &name)?;
    write_attr(&group, "step", &frame.step())?;
    write_attr(&group, "time", &frame.time())?;
    let part = Part {
        span,
        transfer,
        checksummed: true,
    };
    // One column at a time: each is dropped before the next is made.
    collective::write_rows(&group, ID, &frame.id(), part)?;
    collective::write_vectors(&group, POSITION, &frame.position(), part)?;
    collective::write_rows(&group, RADIUS, &frame.radius(), part)?;
    collective::write_rows(&group, MATERIAL, &frame.material(), part)?;
    collective::write_rows(&group, FROZEN, &frame.frozen(), part)?;
    for (k, name) in frame.field_names().into_iter().enumerate() {
        collective::write_vectors(&group, name, &frame.field(k), part)?;
    }
    for name in group.member_names()? {
        set_units(&group.dataset(&name)?, &name)?;
    }
    Ok(())
}

/// The `units` attribute of the dataset `name`, where it has a unit ([`unit_of`]).
fn set_units(ds: &Dataset, name: &str) -> hdf5::Result<()> {
    match unit_of(name) {
        Some(unit) => write_str_attr(ds, UNITS, unit),
        None => Ok(()),
    }
}

/// A 1-D dataset written whole by one process (see [`collective::write_rows`]).
#[cfg(test)]
pub(super) fn write_rows<T: hdf5::H5Type>(
    group: &Group,
    name: &str,
    rows: &[T],
) -> hdf5::Result<()> {
    collective::write_rows(group, name, rows, whole(rows.len())).map(drop)
}

/// An N×3 f64 dataset written whole by one process (see [`collective::write_vectors`]).
pub(super) fn write_vectors(group: &Group, name: &str, rows: &[[f64; 3]]) -> hdf5::Result<()> {
    collective::write_vectors(group, name, rows, whole(rows.len())).map(drop)
}

/// All `rows` of a checksummed table, by one process.
fn whole(rows: usize) -> Part {
    Part {
        span: RowSpan::whole(rows),
        transfer: Transfer::Serial,
        checksummed: true,
    }
}

/// Makes the vertex index `0, 1, ..., len - 1`, creating, growing or shrinking it.
fn set_vertex_index_len(file: &File, len: usize) -> hdf5::Result<()> {
    let index = file.dataset(VERTEX_INDEX).or_else(|_| {
        let (group, name) = VERTEX_INDEX.split_once('/').expect("group/name");
        group_or_create(file, group)?
            .new_dataset::<i64>()
            .chunk(VERTEX_INDEX_CHUNK)
            .fletcher32()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::info::type_name;
    use crate::io::layout::{frame_path, read_str_attr};
    use crate::io::read::{list_frames, read_frame, read_thermo};
    use crate::io::tests::{
        assert_bitwise_eq, borrow, numbers, sample, thermo_row, write_sample, COLUMNS,
    };

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
        // The connectivity index is the largest frame (7) rounded up to a
        // power of two, and the sidecar's grids name that length.
        let file = crate::io::open_read(&path).unwrap();
        let index = file
            .dataset(VERTEX_INDEX)
            .unwrap()
            .read_raw::<i64>()
            .unwrap();
        assert_eq!(index, (0..8).collect::<Vec<i64>>());
        assert!(xml.contains("<DataItem Dimensions=\"8\" NumberType=\"Int\""));
    }

    #[test]
    fn the_vertex_index_grows_by_doubling() {
        assert_eq!(vertex_capacity(0), 0);
        assert_eq!(vertex_capacity(1), 1);
        assert_eq!(vertex_capacity(7), 8);
        assert_eq!(vertex_capacity(8), 8);
        assert_eq!(vertex_capacity(1_000_001), 1 << 20);
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
        assert_eq!(type_name(&group.dataset(FROZEN).unwrap()), "uint8");
        let column = file.dataset("thermo/time").unwrap();
        assert!(column.is_chunked() && column.is_resizable());
        // Units where there is one, none on counts and indices.
        let units = |ds: &Dataset| ds.attr(UNITS).ok().map(|a| read_str_attr(&a).unwrap());
        assert_eq!(units(&column).as_deref(), Some("s"));
        let kinetic = file.dataset("thermo/kinetic_energy").unwrap();
        assert_eq!(units(&kinetic).as_deref(), Some("J"));
        for (name, unit) in [
            (POSITION, Some("m")),
            (RADIUS, Some("m")),
            ("velocity", Some("m/s")),
            ("omega", Some("rad/s")),
            (ID, None),
            (MATERIAL, None),
            (FROZEN, None),
        ] {
            assert_eq!(
                units(&group.dataset(name).unwrap()).as_deref(),
                unit,
                "{name}"
            );
        }
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

    /// A frame written before gravel stored `frozen` keeps a sidecar entry without
    /// it when a restart appends to the file; new frames list it.
    #[test]
    fn the_sidecar_lists_frozen_only_where_a_frame_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        {
            let file = crate::io::open_rw(&path).unwrap();
            file.group("frames/000000000")
                .unwrap()
                .unlink(FROZEN)
                .unwrap();
        }
        let mut out = OutputFile::open_append(&path).unwrap();
        out.write_frame(&borrow(&sample(3000, 4))).unwrap();
        drop(out);
        let xml = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
        assert!(!xml.contains(&format!("{}/frozen", frame_path(0))), "{xml}");
        for step in [1000, 2000, 3000] {
            assert!(
                xml.contains(&format!("{}/frozen", frame_path(step))),
                "{xml}"
            );
        }
    }

    #[test]
    fn material_names_are_stored_by_index() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        let mut out = OutputFile::open_append(&path).unwrap();
        out.write_materials(&["glass", "steel"]).unwrap();
        out.write_materials(&["glass", "steel", "ice"]).unwrap();
        drop(out);
        let file = crate::io::open_read(&path).unwrap();
        let names: Vec<String> = file
            .dataset(MATERIALS)
            .unwrap()
            .read_raw::<VarLenUnicode>()
            .unwrap()
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        assert_eq!(names, ["glass", "steel", "ice"]);
    }

    #[test]
    fn create_removes_a_stale_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_sample(dir.path());
        assert!(path.with_extension("xdmf").exists());
        let out = OutputFile::create(&path, "0.1.0", "", 1, 1, &numbers(&COLUMNS)).unwrap();
        assert!(!out.xdmf_path().exists());
        assert!(list_frames(&path).unwrap().is_empty());
    }
}
