//! Checkpoint files `<dir>/<name>.checkpoint.h5`: a [`Snapshot`] in HDF5.
//!
//! Layout:
//! - root attributes `version` (gravel's, string), `config` (the TOML text the run
//!   was started with, string), `format` (`"gravel checkpoint"`) and
//!   `format_version` (u32, [`FORMAT_VERSION`]);
//! - `/checkpoint` with attributes `step`, `next_id`, `seed`, `history_len`, `walls`,
//!   `particles`, `pair_records`, `wall_records`, `deleted` (u64), `time`, `dt`,
//!   `deleted_mass` (f64) and
//!   `checksum` (u64, FNV-1a of the whole payload, see [`checksum`]);
//! - datasets, one row per particle, sorted by id: `id` (u64), `position`,
//!   `velocity`, `omega`, `x_ref`, `force`, `torque` (f64, N×3), `radius`, `mass`
//!   (f64), `material` (u32), `frozen` (u8);
//! - contact history keyed by global ids: `pair_ids` (u64, M×2: particle, partner),
//!   `pair_history` (f64, M·h), `wall_ids` (u64, K), `wall_index` (u32, K),
//!   `wall_history` (f64, K·h); only records with a non-zero bit are stored;
//! - `pour_inserted` (u64, one per pouring source);
//! - `/checkpoint/compat` with one u64 attribute per [`Compat`] entry.
//!
//! [`write()`] is atomic: the file is written as `<path>.tmp`, closed and fsynced,
//! renamed over `path`, and the directory fsynced, so a crash at any moment leaves
//! either the old checkpoint or the new one. [`read()`] checks the format, the shapes,
//! the checksum and the internal consistency, so a truncated or damaged file is
//! refused with a message naming the file and what is wrong.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::DVec3;
use hdf5::types::{VarLenAscii, VarLenUnicode};
use hdf5::{File, Group, H5Type};
use ndarray::ArrayView2;

use super::layout::{write_attr, write_str_attr};
use crate::error::{Context, IoError, IoResult};
use crate::state::particles::ParticleRecord;
use crate::state::snapshot::{Compat, Fnv, Snapshot};

/// The checkpoint layout version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;
/// The value of the root attribute `format`.
pub const FORMAT: &str = "gravel checkpoint";
/// The group holding the state.
pub const GROUP: &str = "checkpoint";
/// Test hook: when this environment variable holds a step number, the process kills
/// itself with SIGKILL half way through writing the checkpoint of that step (after
/// the temporary file is partly written), to test that a crash during a write
/// leaves the previous checkpoint intact.
pub const ABORT_HOOK: &str = "GRAVEL_TEST_ABORT_IN_CHECKPOINT";

/// The checkpoint path of run `name` in `dir`: `<dir>/<name>.checkpoint.h5`.
#[must_use]
pub fn checkpoint_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.checkpoint.h5"))
}

/// The temporary file a checkpoint is written to before the rename: `<path>.tmp`.
#[must_use]
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// FNV-1a over every scalar, array and text of `snap`, in a fixed order.
#[must_use]
pub fn checksum(snap: &Snapshot) -> u64 {
    let mut h = Fnv::default();
    for v in [
        snap.step,
        snap.seed,
        snap.next_id,
        snap.history_len as u64,
        snap.walls as u64,
        snap.particles.len() as u64,
        snap.pair_keys.len() as u64,
        snap.wall_keys.len() as u64,
        snap.deleted,
    ] {
        h.u64(v);
    }
    h.f64(snap.time);
    h.f64(snap.dt);
    h.f64(snap.deleted_mass);
    let vec = |h: &mut Fnv, v: DVec3| v.to_array().iter().for_each(|&c| h.f64(c));
    for (k, r) in snap.particles.iter().enumerate() {
        h.u64(r.id);
        for v in [
            r.x,
            r.v,
            r.omega,
            snap.x_ref[k],
            snap.force[k],
            snap.torque[k],
        ] {
            vec(&mut h, v);
        }
        h.f64(r.radius);
        h.f64(r.mass);
        h.u64(u64::from(r.material));
        h.u64(u64::from(r.frozen));
    }
    for &(a, b) in &snap.pair_keys {
        h.u64(a);
        h.u64(b);
    }
    snap.pair_values.iter().for_each(|&v| h.f64(v));
    for &(a, w) in &snap.wall_keys {
        h.u64(a);
        h.u64(u64::from(w));
    }
    snap.wall_values.iter().for_each(|&v| h.f64(v));
    snap.pour_inserted.iter().for_each(|&v| h.u64(v));
    h.str(&snap.config_text);
    for (k, v) in &snap.compat.entries {
        h.str(k);
        h.u64(*v);
    }
    h.finish()
}

/// Write `snap` to `path` atomically (see the module documentation). `version` is
/// gravel's version, stored as the root attribute `version`.
///
/// # Errors
/// If the temporary file cannot be written, synced or renamed; `path` is then untouched.
pub fn write(path: &Path, snap: &Snapshot, version: &str) -> IoResult<()> {
    let tmp = temporary_path(path);
    let abort_at = std::env::var(ABORT_HOOK)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    let file = super::create(&tmp).at(&tmp, "creating the checkpoint")?;
    write_contents(&file, snap, version, abort_at == Some(snap.step))
        .at(&tmp, "writing the checkpoint")?;
    file.close().at(&tmp, "closing the checkpoint")?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .at(&tmp, "syncing the checkpoint to disk")?;
    std::fs::rename(&tmp, path).at(path, "renaming the new checkpoint into place")?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .at(dir, "syncing the checkpoint directory")?;
    Ok(())
}

fn write_contents(file: &File, snap: &Snapshot, version: &str, abort: bool) -> hdf5::Result<()> {
    write_str_attr(file, "version", version)?;
    write_str_attr(file, "config", &snap.config_text)?;
    write_str_attr(file, "format", FORMAT)?;
    write_attr(file, "format_version", &FORMAT_VERSION)?;
    let g = file.create_group(GROUP)?;
    for (name, v) in [
        ("step", snap.step),
        ("next_id", snap.next_id),
        ("seed", snap.seed),
        ("history_len", snap.history_len as u64),
        ("walls", snap.walls as u64),
        ("particles", snap.particles.len() as u64),
        ("pair_records", snap.pair_keys.len() as u64),
        ("wall_records", snap.wall_keys.len() as u64),
        ("deleted", snap.deleted),
    ] {
        write_attr(&g, name, &v)?;
    }
    write_attr(&g, "time", &snap.time)?;
    write_attr(&g, "dt", &snap.dt)?;
    write_attr(&g, "deleted_mass", &snap.deleted_mass)?;
    let p = &snap.particles;
    write_rows(&g, "id", &p.iter().map(|r| r.id).collect::<Vec<_>>())?;
    write_vectors(&g, "position", &p.iter().map(|r| r.x).collect::<Vec<_>>())?;
    write_vectors(&g, "velocity", &p.iter().map(|r| r.v).collect::<Vec<_>>())?;
    write_vectors(&g, "omega", &p.iter().map(|r| r.omega).collect::<Vec<_>>())?;
    if abort {
        // The test hook: leave a partly written temporary file behind, as a crash would.
        file.flush()?;
        kill_self();
    }
    write_vectors(&g, "x_ref", &snap.x_ref)?;
    write_vectors(&g, "force", &snap.force)?;
    write_vectors(&g, "torque", &snap.torque)?;
    write_rows(
        &g,
        "radius",
        &p.iter().map(|r| r.radius).collect::<Vec<_>>(),
    )?;
    write_rows(&g, "mass", &p.iter().map(|r| r.mass).collect::<Vec<_>>())?;
    write_rows(
        &g,
        "material",
        &p.iter().map(|r| r.material).collect::<Vec<_>>(),
    )?;
    write_rows(
        &g,
        "frozen",
        &p.iter().map(|r| u8::from(r.frozen)).collect::<Vec<_>>(),
    )?;
    let pair_ids: Vec<u64> = snap.pair_keys.iter().flat_map(|&(a, b)| [a, b]).collect();
    let view = ArrayView2::from_shape((snap.pair_keys.len(), 2), &pair_ids)?;
    g.new_dataset_builder().with_data(view).create("pair_ids")?;
    write_rows(&g, "pair_history", &snap.pair_values)?;
    write_rows(
        &g,
        "wall_ids",
        &snap.wall_keys.iter().map(|k| k.0).collect::<Vec<_>>(),
    )?;
    write_rows(
        &g,
        "wall_index",
        &snap.wall_keys.iter().map(|k| k.1).collect::<Vec<_>>(),
    )?;
    write_rows(&g, "wall_history", &snap.wall_values)?;
    write_rows(&g, "pour_inserted", &snap.pour_inserted)?;
    let compat = g.create_group("compat")?;
    for (k, v) in &snap.compat.entries {
        write_attr(&compat, k, v)?;
    }
    write_attr(&g, "checksum", &checksum(snap))?;
    Ok(())
}

/// Sends SIGKILL to this process (the test hook); aborts if that fails.
fn kill_self() -> ! {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    std::thread::sleep(std::time::Duration::from_secs(5));
    std::process::abort()
}

/// Whether `path` is an HDF5 file with a `/checkpoint` group.
#[must_use]
pub fn is_checkpoint(path: &Path) -> bool {
    super::open_read(path).is_ok_and(|f| f.link_exists(GROUP))
}

/// Read and validate the checkpoint at `path`.
///
/// # Errors
/// If the file is missing, not HDF5, not a checkpoint, of another format version,
/// truncated or damaged (a dataset missing or of the wrong shape, a checksum that
/// does not match, inconsistent records). The message names the file and the problem.
pub fn read(path: &Path) -> IoResult<Snapshot> {
    std::fs::metadata(path).at(path, "opening the checkpoint")?;
    let file =
        super::open_read(path).at(path, "cannot open as an HDF5 file (truncated or damaged?)")?;
    let attr_str = |name: &str| -> Option<String> {
        let a = file.attr(name).ok()?;
        a.read_scalar::<VarLenUnicode>()
            .map(|s| s.as_str().to_owned())
            .or_else(|_| {
                a.read_scalar::<VarLenAscii>()
                    .map(|s| s.as_str().to_owned())
            })
            .ok()
    };
    if attr_str("format").as_deref() != Some(FORMAT) || !file.link_exists(GROUP) {
        return Err(IoError::invalid(
            path,
            "not a gravel checkpoint (no `format` attribute \"gravel checkpoint\" or no /checkpoint group)",
        ));
    }
    let fv = file
        .attr("format_version")
        .and_then(|a| a.read_scalar::<u32>())
        .at(path, "reading the attribute `format_version`")?;
    if fv != FORMAT_VERSION {
        return Err(IoError::invalid(
            path,
            format!("checkpoint format version {fv}; this gravel reads version {FORMAT_VERSION}"),
        ));
    }
    let config_text = attr_str("config")
        .ok_or_else(|| IoError::invalid(path, "the attribute `config` is missing"))?;
    let g = file.group(GROUP).at(path, "opening /checkpoint")?;
    let u = |name: &str| -> IoResult<u64> {
        g.attr(name).and_then(|a| a.read_scalar::<u64>()).at(
            path,
            format_args!("reading the attribute /checkpoint@{name}"),
        )
    };
    let f = |name: &str| -> IoResult<f64> {
        g.attr(name).and_then(|a| a.read_scalar::<f64>()).at(
            path,
            format_args!("reading the attribute /checkpoint@{name}"),
        )
    };
    let n = u("particles")? as usize;
    let m = u("pair_records")? as usize;
    let k = u("wall_records")? as usize;
    let h = u("history_len")? as usize;
    let stored_sum = u("checksum")?;
    let id: Vec<u64> = read_rows(&g, "id", &[n], path)?;
    let vectors = |name: &str| -> IoResult<Vec<DVec3>> {
        let flat: Vec<f64> = read_rows(&g, name, &[n, 3], path)?;
        Ok(flat
            .chunks_exact(3)
            .map(|c| DVec3::new(c[0], c[1], c[2]))
            .collect())
    };
    let (x, v, omega) = (
        vectors("position")?,
        vectors("velocity")?,
        vectors("omega")?,
    );
    let radius: Vec<f64> = read_rows(&g, "radius", &[n], path)?;
    let mass: Vec<f64> = read_rows(&g, "mass", &[n], path)?;
    let material: Vec<u32> = read_rows(&g, "material", &[n], path)?;
    let frozen: Vec<u8> = read_rows(&g, "frozen", &[n], path)?;
    let particles = (0..n)
        .map(|i| ParticleRecord {
            id: id[i],
            x: x[i],
            v: v[i],
            omega: omega[i],
            radius: radius[i],
            mass: mass[i],
            material: material[i],
            frozen: frozen[i] != 0,
        })
        .collect();
    let pair_ids: Vec<u64> = read_rows(&g, "pair_ids", &[m, 2], path)?;
    let wall_ids: Vec<u64> = read_rows(&g, "wall_ids", &[k], path)?;
    let wall_index: Vec<u32> = read_rows(&g, "wall_index", &[k], path)?;
    let pours = g
        .dataset("pour_inserted")
        .at(path, "opening /checkpoint/pour_inserted")?
        .size();
    let compat_group = g.group("compat").at(path, "opening /checkpoint/compat")?;
    let mut compat = Compat::default();
    for key in Compat::KEYS {
        let value = compat_group
            .attr(key)
            .and_then(|a| a.read_scalar::<u64>())
            .at(path, format_args!("reading /checkpoint/compat@{key}"))?;
        compat.entries.push((key.to_string(), value));
    }
    let snap = Snapshot {
        step: u("step")?,
        time: f("time")?,
        seed: u("seed")?,
        dt: f("dt")?,
        next_id: u("next_id")?,
        history_len: h,
        walls: u("walls")? as usize,
        particles,
        x_ref: vectors("x_ref")?,
        force: vectors("force")?,
        torque: vectors("torque")?,
        pair_keys: pair_ids.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
        pair_values: read_rows(&g, "pair_history", &[m * h], path)?,
        wall_keys: wall_ids.into_iter().zip(wall_index).collect(),
        wall_values: read_rows(&g, "wall_history", &[k * h], path)?,
        pour_inserted: read_rows(&g, "pour_inserted", &[pours], path)?,
        deleted: u("deleted")?,
        deleted_mass: f("deleted_mass")?,
        config_text,
        compat,
    };
    let sum = checksum(&snap);
    if sum != stored_sum {
        return Err(IoError::invalid(
            path,
            format!("damaged checkpoint: the checksum of the contents is {sum:#018x}, the file says {stored_sum:#018x}"),
        ));
    }
    snap.check()
        .map_err(|e| IoError::invalid(path, format!("inconsistent checkpoint: {e}")))?;
    Ok(snap)
}

/// A summary of the checkpoint at `path` for `gravel info`.
///
/// # Errors
/// As [`read()`].
pub fn summarize(path: &Path) -> IoResult<String> {
    let s = read(path)?;
    let version = super::open_read(path)
        .and_then(|f| f.attr("version"))
        .and_then(|a| a.read_scalar::<VarLenUnicode>())
        .map_or_else(|_| "unknown".to_owned(), |v| v.as_str().to_owned());
    let mut out = format!("{}\n", path.display());
    let frozen = s.particles.iter().filter(|p| p.frozen).count();
    let _ = writeln!(
        out,
        "checkpoint (format version {FORMAT_VERSION}) written by gravel {version}"
    );
    let _ = writeln!(out, "step: {}", s.step);
    let _ = writeln!(out, "time: {} s (dt {} s)", s.time, s.dt);
    let _ = writeln!(out, "seed: {}", s.seed);
    let _ = writeln!(
        out,
        "particles: {} ({frozen} frozen); next id {}",
        s.particles.len(),
        s.next_id
    );
    let _ = writeln!(out, "walls: {}", s.walls);
    let _ = writeln!(
        out,
        "deleted so far: {} particles, {} kg",
        s.deleted, s.deleted_mass
    );
    let _ = writeln!(
        out,
        "contact history: {} values per record; {} pair records, {} wall records",
        s.history_len,
        s.pair_keys.len(),
        s.wall_keys.len()
    );
    if s.pour_inserted.is_empty() {
        out.push_str("pouring sources: none\n");
    } else {
        let done: Vec<String> = s.pour_inserted.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "pouring sources: inserted so far [{}]",
            done.join(", ")
        );
    }
    let _ = writeln!(out, "checksum: {:#018x} (verified)", checksum(&s));
    let lines: Vec<&str> = s.config_text.lines().collect();
    let shown = lines.len().min(8);
    let _ = writeln!(out, "config: {} lines, the first {shown}:", lines.len());
    for line in &lines[..shown] {
        let _ = writeln!(out, "    {line}");
    }
    Ok(out)
}

fn read_rows<T: H5Type>(g: &Group, name: &str, shape: &[usize], path: &Path) -> IoResult<Vec<T>> {
    let ds = g.dataset(name).at(
        path,
        format_args!("the dataset /checkpoint/{name} is missing or unreadable"),
    )?;
    let found = ds.shape();
    if found != shape {
        return Err(IoError::invalid(
            path,
            format!("/checkpoint/{name} has shape {found:?}, expected {shape:?}"),
        ));
    }
    ds.read_raw()
        .at(path, format_args!("reading /checkpoint/{name}"))
}

fn write_rows<T: H5Type>(g: &Group, name: &str, rows: &[T]) -> hdf5::Result<()> {
    g.new_dataset_builder().with_data(rows).create(name)?;
    Ok(())
}

fn write_vectors(g: &Group, name: &str, rows: &[DVec3]) -> hdf5::Result<()> {
    let flat: Vec<f64> = rows.iter().flat_map(|v| v.to_array()).collect();
    let view = ArrayView2::from_shape((rows.len(), 3), &flat)?;
    g.new_dataset_builder().with_data(view).create(name)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        let particles: Vec<ParticleRecord> = (0..5)
            .map(|i| ParticleRecord {
                id: 10 + i,
                x: DVec3::new(i as f64 * 0.1, 0.3, -0.0),
                v: DVec3::new(1e-300, -2.5, f64::MIN_POSITIVE),
                omega: DVec3::splat(i as f64),
                radius: 0.01,
                mass: 1.5,
                material: (i % 2) as u32,
                frozen: i == 3,
            })
            .collect();
        let n = particles.len();
        let mut s = Snapshot {
            step: 1234,
            time: 0.01234,
            seed: 99,
            dt: 1e-5,
            next_id: 15,
            history_len: 3,
            walls: 2,
            x_ref: particles.iter().map(|p| p.x + DVec3::X * 1e-9).collect(),
            force: vec![DVec3::new(0.1, 0.2, 0.3); n],
            torque: vec![DVec3::new(-0.0, 1.0, 2.0); n],
            particles,
            pair_keys: vec![(10, 11), (11, 10), (12, 14)],
            pair_values: (0..9).map(|k| k as f64 * 0.37 - 1.0).collect(),
            wall_keys: vec![(10, 1), (13, 0)],
            wall_values: vec![1.0, -0.0, 3.0, 4.0, 5.0, 6.0],
            pour_inserted: vec![7, 0],
            deleted: 3,
            deleted_mass: 0.1 + 0.2,
            config_text: "[run]\nname = \"x\"\n".into(),
            ..Default::default()
        };
        s.compat.entries = Compat::KEYS
            .iter()
            .enumerate()
            .map(|(k, name)| (name.to_string(), k as u64 * 7919))
            .collect();
        s
    }

    fn bits(s: &Snapshot) -> String {
        // Debug prints every f64 exactly (and -0.0 as such), so equal text is equal bits.
        format!("{s:?}")
    }

    #[test]
    fn round_trip_is_exact_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = checkpoint_path(dir.path(), "run");
        let s = sample();
        write(&path, &s, "test").unwrap();
        assert!(!temporary_path(&path).exists());
        let back = read(&path).unwrap();
        assert_eq!(bits(&back), bits(&s));
        // Writing again replaces the file.
        let mut s2 = s.clone();
        s2.step = 2000;
        write(&path, &s2, "test").unwrap();
        assert_eq!(read(&path).unwrap().step, 2000);
        let text = summarize(&path).unwrap();
        for want in [
            "step: 2000",
            "5 (1 frozen)",
            "3 pair records, 2 wall records",
            "[7, 0]",
        ] {
            assert!(text.contains(want), "{want} not in {text}");
        }
    }

    #[test]
    fn damaged_files_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = checkpoint_path(dir.path(), "run");
        write(&path, &sample(), "test").unwrap();
        let good = std::fs::read(&path).unwrap();
        // Truncated.
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        // A flipped bit in the pair history, found by the checksum.
        let s = sample();
        let needle: Vec<u8> = s.pair_values[4].to_le_bytes().to_vec();
        let at = good
            .windows(8)
            .position(|w| w == needle.as_slice())
            .expect("the value is stored raw");
        let mut bad = good.clone();
        bad[at] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        // An inconsistent snapshot (a record of an unknown particle) with a valid checksum.
        let mut s = sample();
        s.pair_keys[2] = (12, 99);
        write(&path, &s, "test").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("99"), "{e}");
        // Not a checkpoint.
        std::fs::write(&path, b"hello").unwrap();
        assert!(read(&path).is_err());
        assert!(!is_checkpoint(&path));
    }
}
