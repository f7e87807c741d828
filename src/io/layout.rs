//! The layout of the HDF5 output file `<dir>/<name>.h5`: the names of its groups
//! and datasets, and the small HDF5 helpers that the writer ([`super::frames`]),
//! the readers ([`super::read`], [`super::info`]) and the checkpoint share.
//!
//! Layout (the user interface contract, section "Output"):
//! - root attributes `version` (string), `config` (the TOML text as run, string),
//!   `ranks` (u32) and `threads` (u32);
//! - `/frames/<step as 9 digits>/` with attributes `step` (u64) and `time` (f64, s),
//!   datasets `id` (u64, N), `position` (f64, N×3), `radius` (f64, N), `material`
//!   (u32, N), `frozen` (u8, N) and one f64 N×3 dataset per requested field; rows
//!   come in any order, `id` identifies the particle; datasets with a unit carry it
//!   in a `units` string attribute ([`unit_of`]);
//! - `/materials`: the material names by index (strings);
//! - `/thermo/` with one chunked, resizable 1-D f64 dataset per column;
//! - `/xdmf/vertex_index` (i64, as long as the largest frame rounded up to a power
//!   of two, holding `0, 1, 2, ...`):
//!   the point connectivity the XDMF sidecar refers to (see [`super::xdmf`]).
//!
//! Groups `/frames/<step>` and `/thermo` track link creation order, so fields and
//! thermo columns read back in the order they were written. Every non-empty frame
//! dataset, thermo column and the vertex index is chunked with HDF5's Fletcher32
//! checksum ([`super::verify`] reads them all).

use std::path::Path;
use std::str::FromStr;

use hdf5::plist::group_create::LinkCreationOrder;
use hdf5::types::{VarLenAscii, VarLenUnicode};
use hdf5::{Attribute, File, Group, H5Type, Location, LocationType};

use crate::error::{Context, IoError, IoResult};

/// Name of the root group holding the frames.
pub const FRAMES: &str = "frames";
/// Name of the root group holding the thermo columns.
pub const THERMO: &str = "thermo";
/// Name of the root group holding one group per `[[diagnostics]]` block.
pub const DIAGNOSTICS: &str = "diagnostics";
/// Root dataset: the wall names, by index (variable-length UTF-8 strings).
pub const WALLS: &str = "walls";
/// Group of the mesh walls' triangles at rest: `/wall_meshes/<name>/points`
/// (vertices × 3, m) and `/triangles` (triangles × 3, u32 indices into
/// `points`), for the XDMF sidecar.
pub const WALL_MESHES: &str = "wall_meshes";
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
/// Frame dataset: 1 for a frozen particle, 0 otherwise (u8, N).
pub const FROZEN: &str = "frozen";
/// Root dataset: the material names, by index (variable-length UTF-8 strings).
pub const MATERIALS: &str = "materials";
/// Name of the string attribute that gives a dataset's unit.
pub const UNITS: &str = "units";

/// The datasets every frame has; field names may not take them.
pub(super) const CORE_DATASETS: [&str; 5] = [ID, POSITION, RADIUS, MATERIAL, FROZEN];

/// The unit of a frame dataset or thermo column, as its `units` attribute gives it:
/// SI, the units gravel reads every config value in (`None` for counts, indices
/// and flags, `"1"` for a ratio).
#[must_use]
pub fn unit_of(name: &str) -> Option<&'static str> {
    Some(match name {
        POSITION | RADIUS => "m",
        "velocity" => "m/s",
        "omega" => "rad/s",
        "force" => "N",
        "torque" => "N m",
        "time" => "s",
        "kinetic_energy"
        | "rotational_energy"
        | "potential_energy"
        | "elastic_energy"
        | "temperature"
        | "rotational_temperature" => "J",
        "max_overlap" | "imbalance" => "1",
        "deleted_mass" => "kg",
        "stress" | "stress_kinetic" | "stress_contact" => "Pa",
        "wall_force" => "N",
        "wall_torque" => "N m",
        _ => return None,
    })
}

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

/// Opens `path` as HDF5 (read-write if `write`) and checks that it is a gravel file:
/// one with a group `/frames`, `/thermo` or `/checkpoint`, or with the root attributes
/// `version` and `config`.
pub(super) fn open_gravel(path: &Path, write: bool) -> IoResult<File> {
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

/// `/frames`, if the file has it.
pub(super) fn frames_group(file: &File) -> Option<Group> {
    file.group(FRAMES).ok()
}

/// A scalar attribute.
pub(crate) fn write_attr<T: H5Type>(loc: &Location, name: &str, value: &T) -> hdf5::Result<()> {
    loc.new_attr::<T>().create(name)?.write_scalar(value)
}

/// Creates the group `name` in `parent`, tracking the creation order of its
/// links (so that fields and columns read back in the order written).
pub(super) fn create_ordered_group(parent: &Group, name: &str) -> hdf5::Result<Group> {
    parent
        .create_group_builder()
        .with_gcpl(|gcpl| gcpl.link_creation_order(LinkCreationOrder::Tracked))
        .create(name)
}

/// A UTF-8 string attribute.
pub(crate) fn write_str_attr(loc: &Location, name: &str, value: &str) -> hdf5::Result<()> {
    let value = VarLenUnicode::from_str(value).map_err(|e| format!("attribute `{name}`: {e}"))?;
    write_attr(loc, name, &value)
}

/// A string attribute, UTF-8 or ASCII.
pub(super) fn read_str_attr(attr: &Attribute) -> hdf5::Result<String> {
    attr.read_scalar::<VarLenUnicode>()
        .map(|s| s.as_str().to_owned())
        .or_else(|_| {
            attr.read_scalar::<VarLenAscii>()
                .map(|s| s.as_str().to_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names_are_zero_padded() {
        assert_eq!(frame_name(1000), "000001000");
        assert_eq!(frame_path(7), "/frames/000000007");
        assert_eq!(frame_name(12_345_678_901), "12345678901");
    }
}
