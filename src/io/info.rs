//! The human-readable summary of an output or checkpoint file that `gravel info`
//! prints ([`summarize`]).

use std::fmt::Write as _;
use std::path::Path;

use hdf5::types::TypeDescriptor;
use hdf5::{Attribute, File, Group, H5Type, LocationType};

use super::layout::{frame_name, frames_group, open_gravel, read_str_attr, CHECKPOINT};
use super::read::{frame_info, steps_in, thermo_datasets};
use crate::error::{Context, IoResult};

/// Lines of the config shown by [`summarize`].
const CONFIG_LINES_SHOWN: usize = 8;
/// How deep [`summarize`] descends into `/checkpoint`.
const CHECKPOINT_DEPTH: usize = 6;

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
    let journal = super::journal::journal_path(path);
    if journal.exists() {
        let _ = writeln!(
            out,
            "note: {} lies beside it: a run is writing the file, or was killed while it wrote; shown as of its last flush, which a --restart returns it to",
            journal.display()
        );
    }
    summarize_root(&mut out, &file).at(path, "reading the root attributes")?;
    summarize_frames(&mut out, &file).at(path, "reading the frames")?;
    summarize_thermo(&mut out, &file).at(path, "reading the thermo columns")?;
    if let Ok(group) = file.group(CHECKPOINT) {
        out.push_str("checkpoint:\n");
        describe_group(&mut out, &group, 1).at(path, "reading /checkpoint")?;
    }
    Ok(out)
}

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
        "frames: {} (steps {first} to {last}, time {} to {})",
        steps.len(),
        number(first_time),
        number(last_time)
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
    let rows = columns
        .iter()
        .map(|(_, ds)| ds.shape().first().copied().unwrap_or(0))
        .min()
        .unwrap_or(0);
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
            let values = super::table::read_row(ds, rows - 1)?;
            let text: Vec<String> = values.iter().map(|&v| number(v)).collect();
            match text.as_slice() {
                [one] => writeln!(out, "    {name} = {one}"),
                _ => writeln!(out, "    {name} = [{}]", text.join(", ")),
            }
            .expect("writing to a String");
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
pub(super) fn type_name(container: &hdf5::Container) -> String {
    container
        .dtype()
        .and_then(|dtype| dtype.to_descriptor())
        .map_or_else(|_| "(unknown type)".to_owned(), |desc| desc.to_string())
}

/// A short text for an attribute's value: numbers and strings in full (strings up to
/// the first line), small numeric arrays as lists, anything else as type and shape.
fn attr_text(attr: &Attribute) -> String {
    let value = match attr.dtype().and_then(|dtype| dtype.to_descriptor()) {
        Ok(TypeDescriptor::Unsigned(_)) => numbers_text::<u64>(attr, u64::to_string),
        Ok(TypeDescriptor::Integer(_)) => numbers_text::<i64>(attr, i64::to_string),
        Ok(TypeDescriptor::Float(_)) => numbers_text::<f64>(attr, |x| number(*x)),
        Ok(TypeDescriptor::Boolean) => numbers_text::<bool>(attr, bool::to_string),
        Ok(TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii) if attr.is_scalar() => {
            read_str_attr(attr).map(|text| first_line(&text))
        }
        _ => Err("not shown".into()),
    };
    value.unwrap_or_else(|_| format!("({} {:?})", type_name(attr), attr.shape()))
}

/// A scalar as text, or an array of at most 8 elements as `[a, b, ...]`.
fn numbers_text<T: H5Type>(attr: &Attribute, show: fn(&T) -> String) -> hdf5::Result<String> {
    if attr.is_scalar() {
        return attr.read_scalar::<T>().map(|v| show(&v));
    }
    if attr.size() > 8 {
        return Err("too long to show".into());
    }
    let values: Vec<String> = attr.read_raw::<T>()?.iter().map(show).collect();
    Ok(format!("[{}]", values.join(", ")))
}

/// A float for people: a whole number below 2^53 as an integer (a step
/// count in a float column), anything else to 6 significant digits,
/// scientific where small or large (`1.09528e-9`, not
/// `0.0000000010952839974493789`).
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9007199254740992.0 {
        format!("{x:.0}")
    } else {
        crate::math::figures::sig(x, 6)
    }
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
    use crate::io::frames::{write_rows, write_vectors};
    use crate::io::layout::{write_attr, write_str_attr};
    use crate::io::read::{list_frames, read_thermo};
    use crate::io::tests::write_sample;

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
    fn numbers_have_six_figures_and_whole_numbers_none() {
        assert_eq!(number(0.0000000010952839974493789), "1.09528e-9");
        assert_eq!(number(0.123456789), "0.123457");
        assert_eq!(number(45000.0), "45000");
        assert_eq!(number(1e7), "10000000");
        assert_eq!(number(2.5e-5), "2.5e-5");
        assert_eq!(number(-0.0), "-0");
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
}
