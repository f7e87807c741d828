//! Tests of the output file that span the writer and the readers, and the sample
//! files the tests of [`super::frames`] and [`super::info`] share.

use std::path::{Path, PathBuf};

use super::frames::{Frame, OutputFile};
use super::info::summarize;
use super::layout::ID;
use super::read::{list_frames, read_frame, read_thermo, FrameOwned};

pub(super) const COLUMNS: [&str; 3] = ["step", "time", "kinetic_energy"];

/// Thermo columns of one number per row, named `names`.
pub(super) fn numbers(names: &[&str]) -> Vec<super::table::Column> {
    names
        .iter()
        .map(|n| super::table::Column::number(n, super::layout::unit_of(n)))
        .collect()
}

/// Owned arrays for a frame of `n` particles at `step`, with values that are not
/// exactly representable in decimal, rows deliberately not sorted by id.
pub(super) fn sample(step: u64, n: usize) -> FrameOwned {
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
        frozen: (0..n as u8).map(|i| u8::from(i % 4 == 1)).collect(),
        fields: vec![("velocity".into(), rows(1)), ("omega".into(), rows(2))],
    }
}

pub(super) fn borrow(frame: &FrameOwned) -> Frame<'_> {
    Frame {
        step: frame.step,
        time: frame.time,
        id: &frame.id,
        position: &frame.position,
        radius: &frame.radius,
        material: &frame.material,
        frozen: &frame.frozen,
        fields: frame
            .fields
            .iter()
            .map(|(n, v)| (n.as_str(), &v[..]))
            .collect(),
    }
}

pub(super) fn thermo_row(i: usize) -> [f64; 3] {
    [
        i as f64 * 100.0,
        i as f64 * 1e-3 / 3.0,
        (i as f64).sqrt() / 7.0,
    ]
}

/// A file with frames at steps 0, 1000, 2000 (5, 6, 7 particles) and 5 thermo rows.
pub(super) fn write_sample(dir: &Path) -> (PathBuf, Vec<FrameOwned>) {
    let path = dir.join("run.h5");
    let mut out = OutputFile::create(
        &path,
        "0.1.0",
        "[run]\nname = \"run\"\n",
        2,
        4,
        &numbers(&COLUMNS),
    )
    .unwrap();
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

pub(super) fn assert_bitwise_eq(a: &FrameOwned, b: &FrameOwned) {
    let bits = |v: &[[f64; 3]]| -> Vec<u64> { v.iter().flatten().map(|x| x.to_bits()).collect() };
    assert_eq!(a.step, b.step);
    assert_eq!(a.time.to_bits(), b.time.to_bits());
    assert_eq!(a.id, b.id);
    assert_eq!(bits(&a.position), bits(&b.position));
    let radius_bits =
        |f: &FrameOwned| -> Vec<u64> { f.radius.iter().map(|x| x.to_bits()).collect() };
    assert_eq!(radius_bits(a), radius_bits(b));
    assert_eq!(a.material, b.material);
    assert_eq!(a.frozen, b.frozen);
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
    let err = OutputFile::create(&path, "v", "", 1, 1, &numbers(&["a", "a"])).unwrap_err();
    assert!(err.to_string().contains("appears twice"), "{err}");

    let mut out = OutputFile::create(&path, "v", "", 1, 1, &numbers(&COLUMNS)).unwrap();
    let err = out.append_thermo(&[1.0]).unwrap_err();
    assert!(
        err.to_string()
            .contains("a row of 1 values for a table of 3 (step, time, kinetic_energy)"),
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

/// A contact list of `n` contacts whose fields tell them apart.
fn listed(n: usize, tag: f64) -> Vec<crate::diagnostics::contact_list::ListedContact> {
    (0..n)
        .map(|c| crate::diagnostics::contact_list::ListedContact {
            id: [c as i64, if c % 3 == 0 { -1 } else { c as i64 + 7 }],
            wall: if c % 3 == 0 { 1 } else { -1 },
            point: glam::DVec3::new(tag, c as f64, 0.5),
            normal: glam::DVec3::Z,
            overlap: 1e-6 * c as f64,
            force_normal: tag + c as f64,
            force_tangential: glam::DVec3::new(0.0, tag, -1.0),
        })
        .collect()
}

#[test]
fn contact_lists_read_back_and_a_restart_cuts_them_with_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.h5");
    let mut out = OutputFile::create(&path, "0.1.0", "", 1, 1, &[]).unwrap();
    out.add_contact_list("chains").unwrap();
    for (step, n) in [(0, 4), (10, 0), (20, 5)] {
        out.append_contacts("chains", step, step as f64 * 0.1, &listed(n, step as f64))
            .unwrap();
    }
    drop(out);
    let lists = crate::io::read::read_contacts(&path, "chains").unwrap();
    let steps: Vec<u64> = lists.iter().map(|(s, _)| *s).collect();
    assert_eq!(steps, [0, 10, 20]);
    assert_eq!(lists[0].1, listed(4, 0.0));
    assert!(lists[1].1.is_empty());
    assert_eq!(lists[2].1, listed(5, 20.0));
    // A restart from step 10 drops the list of step 20, rows and contacts.
    let mut out = OutputFile::open_append(&path).unwrap();
    out.cut_after(10).unwrap();
    out.add_contact_list("chains").unwrap();
    out.append_contacts("chains", 20, 2.0, &listed(2, 99.0))
        .unwrap();
    drop(out);
    let lists = crate::io::read::read_contacts(&path, "chains").unwrap();
    assert_eq!(lists.len(), 3);
    assert_eq!(lists[0].1, listed(4, 0.0));
    assert_eq!(lists[2].1, listed(2, 99.0));
    // A crash between a list and its row leaves a tail, cut on reopening.
    let file = crate::io::open_rw(&path).unwrap();
    let group = file.group("diagnostics/chains").unwrap();
    crate::io::contact_list::append(&group, &listed(3, 5.0)).unwrap();
    drop(file);
    let out = OutputFile::open_append(&path).unwrap();
    drop(out);
    let file = crate::io::open_read(&path).unwrap();
    let ids = file.dataset("diagnostics/chains/list/id").unwrap();
    assert_eq!(ids.shape(), [4 + 2, 2]);
    drop(file);
    // A list cut short under its index is refused with a message, not a panic.
    let file = crate::io::open_rw(&path).unwrap();
    let ids = file.dataset("diagnostics/chains/list/id").unwrap();
    ids.resize([3, 2]).unwrap();
    drop(file);
    let err = crate::io::read::read_contacts(&path, "chains").unwrap_err();
    assert!(
        err.to_string()
            .contains("row 0 indexes contacts 0 .. 4 of a list of 3"),
        "{err}"
    );
}

/// `build.rs` with `GRAVEL_HDF5_LINK=static` (the scripts' setting) links
/// HDF5 from its archive: then no shared `libhdf5`, and none of the
/// libcurl chain the shared one loads, is mapped into the process, and
/// the library still writes and reads a file. Fails if the linker took the
/// shared library after all (the archive's directory no longer searched
/// first), which would cost every rank about 6 MB.
#[cfg(hdf5_static)]
#[test]
fn hdf5_is_linked_from_its_archive() {
    let dir = tempfile::tempdir().unwrap();
    let (path, frames) = write_sample(dir.path());
    assert_bitwise_eq(&read_frame(&path, frames[0].step).unwrap(), &frames[0]);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for shared in ["libhdf5", "libcurl", "libssl", "libcrypto"] {
        assert!(
            !maps.contains(shared),
            "{shared} is mapped: HDF5 was linked as a shared library"
        );
    }
}
