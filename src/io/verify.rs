//! `gravel info --verify`: read every dataset of an output file, so that HDF5
//! checks the Fletcher32 checksum of each chunk, and name the frames and
//! columns that fail ([`verify`]). A restart that appends to an output runs it
//! first.

use std::fmt::Write as _;
use std::path::Path;

use hdf5::filters::Filter;
use hdf5::types::{FloatSize, IntSize, TypeDescriptor};
use hdf5::{Dataset, Group};

use super::layout::{frame_name, frames_group, open_gravel, VERTEX_INDEX};
use super::read::{diagnostic_tables, steps_in, thermo_datasets};
use crate::error::{Context, IoError, IoResult};

/// What [`verify`] found in a file without damage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Frames read.
    pub frames: usize,
    /// Datasets read (frames, thermo columns, the vertex index).
    pub datasets: usize,
    /// Of which without a checksum: empty, or written before gravel kept one.
    pub unprotected: usize,
}

impl std::fmt::Display for Verified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "all {} frames verified ({} datasets read",
            self.frames, self.datasets
        )?;
        match self.unprotected {
            0 => write!(f, ", every one checksummed)"),
            n => write!(
                f,
                "; {n} of them carry no checksum (empty, or written by an older gravel) and were only read)"
            ),
        }
    }
}

/// Reads every frame dataset (and its `step` and `time`), every thermo and
/// diagnostic column and
/// the vertex index of the output file `path`; HDF5 checks each chunk's Fletcher32
/// checksum as it reads it.
///
/// # Errors
/// If the file cannot be opened or is not a gravel file, or if any dataset fails to
/// read: the message lists every damaged frame by step with the datasets at fault,
/// and every damaged thermo column.
pub fn verify(path: &Path) -> IoResult<Verified> {
    let file = open_gravel(path, false)?;
    let mut found = Verified {
        frames: 0,
        datasets: 0,
        unprotected: 0,
    };
    let mut damaged: Vec<String> = Vec::new();
    if let Some(frames) = frames_group(&file) {
        let steps = steps_in(&frames).at(path, "listing the frames")?;
        for step in steps {
            found.frames += 1;
            let faults = frame_faults(&frames, step, &mut found);
            if !faults.is_empty() {
                damaged.push(format!("frame {step} ({})", faults.join("; ")));
            }
        }
    }
    match thermo_datasets(&file) {
        Ok(columns) => {
            for (name, ds) in columns {
                if let Err(e) = read_all(&ds, &mut found) {
                    damaged.push(format!("thermo column `{name}` ({e})"));
                }
            }
        }
        Err(e) => damaged.push(format!("the thermo group ({e})")),
    }
    match diagnostic_tables(&file) {
        Ok(groups) => {
            for (group, columns) in groups {
                for (name, ds) in columns {
                    if let Err(e) = read_all(&ds, &mut found) {
                        damaged.push(format!("diagnostic `{group}` column `{name}` ({e})"));
                    }
                }
            }
        }
        Err(e) => damaged.push(format!("the diagnostics group ({e})")),
    }
    if file.link_exists(VERTEX_INDEX) {
        if let Err(e) = file
            .dataset(VERTEX_INDEX)
            .and_then(|ds| read_all(&ds, &mut found))
        {
            damaged.push(format!("/{VERTEX_INDEX} ({e})"));
        }
    }
    if damaged.is_empty() {
        return Ok(found);
    }
    let mut message = format!("damaged: {} of {} frames read", damaged.len(), found.frames);
    for d in &damaged {
        let _ = write!(message, "\n    {d}");
    }
    Err(IoError::invalid(path, message))
}

/// What is wrong with the frame at `step`: each dataset or attribute that fails to
/// read, with HDF5's reason.
fn frame_faults(frames: &Group, step: u64, found: &mut Verified) -> Vec<String> {
    let group = match frames.group(&frame_name(step)) {
        Ok(g) => g,
        Err(e) => return vec![format!("the group: {e}")],
    };
    let mut faults = Vec::new();
    for attr in ["step", "time"] {
        let read = group.attr(attr).and_then(|a| {
            if attr == "step" {
                a.read_scalar::<u64>().map(drop)
            } else {
                a.read_scalar::<f64>().map(drop)
            }
        });
        if let Err(e) = read {
            faults.push(format!("attribute `{attr}`: {e}"));
        }
    }
    match group.member_names() {
        Ok(names) => {
            for name in names {
                if let Err(e) = group.dataset(&name).and_then(|ds| read_all(&ds, found)) {
                    faults.push(format!("`{name}`: {e}"));
                }
            }
        }
        Err(e) => faults.push(format!("the list of datasets: {e}")),
    }
    faults
}

/// Reads the whole of `ds` in its own type, and counts it.
fn read_all(ds: &Dataset, found: &mut Verified) -> hdf5::Result<()> {
    found.datasets += 1;
    let checked = ds
        .dcpl()
        .is_ok_and(|p| p.filters().contains(&Filter::Fletcher32));
    if !checked {
        found.unprotected += 1;
    }
    match ds.dtype()?.to_descriptor()? {
        TypeDescriptor::Float(FloatSize::U8) => ds.read_raw::<f64>().map(drop),
        TypeDescriptor::Float(FloatSize::U4) => ds.read_raw::<f32>().map(drop),
        TypeDescriptor::Unsigned(IntSize::U8) => ds.read_raw::<u64>().map(drop),
        TypeDescriptor::Unsigned(IntSize::U4) => ds.read_raw::<u32>().map(drop),
        TypeDescriptor::Unsigned(IntSize::U2) => ds.read_raw::<u16>().map(drop),
        TypeDescriptor::Unsigned(IntSize::U1) => ds.read_raw::<u8>().map(drop),
        TypeDescriptor::Integer(IntSize::U8) => ds.read_raw::<i64>().map(drop),
        TypeDescriptor::Integer(IntSize::U4) => ds.read_raw::<i32>().map(drop),
        TypeDescriptor::Integer(IntSize::U2) => ds.read_raw::<i16>().map(drop),
        TypeDescriptor::Integer(IntSize::U1) => ds.read_raw::<i8>().map(drop),
        TypeDescriptor::Boolean => ds.read_raw::<bool>().map(drop),
        other => Err(format!("a dataset of type {other} gravel does not write").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::read::read_frame;
    use crate::io::tests::write_sample;

    /// The bytes of the file at `path` with one bit flipped inside the stored
    /// `position` of the frame at `step` (found by its unique bytes).
    fn flip_in_position(path: &Path, step: u64) {
        let frame = read_frame(path, step).unwrap();
        let needle: Vec<u8> = frame.position[2]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut bytes = std::fs::read(path).unwrap();
        let hits: Vec<usize> = (0..bytes.len() - needle.len())
            .filter(|&k| bytes[k..k + needle.len()] == needle[..])
            .collect();
        assert_eq!(hits.len(), 1, "the row is stored once, raw");
        bytes[hits[0] + 9] ^= 0x04;
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn an_intact_file_verifies_and_a_flipped_bit_names_its_frame() {
        let dir = tempfile::tempdir().unwrap();
        let (path, frames) = write_sample(dir.path());
        let ok = verify(&path).unwrap();
        assert_eq!(ok.frames, frames.len());
        assert_eq!(ok.unprotected, 0, "{ok}");
        assert!(ok.to_string().starts_with("all 3 frames verified"), "{ok}");
        flip_in_position(&path, 1000);
        let err = verify(&path).unwrap_err().to_string();
        assert!(err.contains("damaged: 1 of 3 frames"), "{err}");
        assert!(err.contains("frame 1000 (`position`"), "{err}");
        assert!(
            !err.contains("frame 0 ") && !err.contains("frame 2000"),
            "{err}"
        );
    }
}
