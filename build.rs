//! Build script: links HDF5's static archive when `GRAVEL_HDF5_LINK=static`
//! (`scripts/serial-env` and `scripts/mpi-env` set it; unset or `dynamic` keeps
//! the shared library that `hdf5-sys` links by default).
//!
//! Why: Debian's shared `libhdf5` needs libcurl, and through it the TLS,
//! Kerberos, LDAP and IDN libraries (35 shared objects in all), for a read-only
//! S3 driver that gravel never uses. Loading and relocating them costs every
//! process about 6 MB of resident memory, on every rank: a run of one particle
//! peaks at 18.0 MB linked to the shared library and 12.6 MB to the archive
//! (serial build), 30.6 and 24.0 MB (MPI build, one rank). From the archive
//! the linker takes only the objects gravel calls.
//!
//! How: `hdf5-sys` asks for `-lhdf5` and searches `$HDF5_DIR/lib`, where the
//! shared library would win. This script puts a directory holding only the
//! archive ahead of it on the search path, and appends the archive's own
//! dependencies (the "Extra libraries" of `libhdf5.settings`) after it on the
//! link line; `--as-needed` drops those the taken objects never call.
//!
//! A parallel HDF5's archive calls MPI, which its settings do not list (its
//! compiler wrapper adds it): it is linked statically only into the `mpi`
//! build, whose `mpi` crate links the MPI library. A build without the
//! feature against a parallel HDF5 (`cargo test` without `--features mpi`
//! after sourcing `scripts/mpi-env`) keeps the shared library, which brings
//! MPI with it.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hdf5_static)");
    println!("cargo::rerun-if-env-changed=GRAVEL_HDF5_LINK");
    println!("cargo::rerun-if-env-changed=HDF5_DIR");
    match env::var("GRAVEL_HDF5_LINK").as_deref() {
        Err(_) | Ok("") | Ok("dynamic") => return,
        Ok("static") => {}
        Ok(other) => panic!("GRAVEL_HDF5_LINK={other:?}: expected \"static\" or \"dynamic\""),
    }
    let Some(root) = env::var_os("HDF5_DIR") else {
        panic!("GRAVEL_HDF5_LINK=static needs HDF5_DIR: the HDF5 whose lib/libhdf5.a to link");
    };
    // hdf5-sys's header check (`H5_HAVE_PARALLEL`), passed on as its metadata.
    if env::var_os("DEP_HDF5_HAVE_PARALLEL").is_some() && env::var_os("CARGO_FEATURE_MPI").is_none()
    {
        return;
    }
    let lib = Path::new(&root).join("lib");
    let archive = lib.join("libhdf5.a");
    if !archive.is_file() {
        panic!(
            "GRAVEL_HDF5_LINK=static: no static archive {} (set GRAVEL_HDF5_LINK=dynamic to link the shared library)",
            archive.display()
        );
    }
    println!("cargo::rerun-if-changed={}", archive.display());

    let only_archive =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("hdf5-static");
    fs::create_dir_all(&only_archive).expect("create OUT_DIR/hdf5-static");
    let link = only_archive.join("libhdf5.a");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(&archive, &link)
        .expect("link the HDF5 archive into OUT_DIR/hdf5-static");
    println!("cargo::rustc-link-search=native={}", only_archive.display());
    println!("cargo::rustc-cfg=hdf5_static");

    for library in extra_libraries(&lib.join("libhdf5.settings")) {
        println!("cargo::rustc-link-arg=-l{library}");
    }
}

/// The `-l` libraries on the "Extra libraries:" line of HDF5's build summary
/// (`libhdf5.settings`, beside the archive): what the archive's objects call.
/// Without the file, zlib and szip (HDF5's usual filters) and the C runtime's.
fn extra_libraries(settings: &Path) -> Vec<String> {
    println!("cargo::rerun-if-changed={}", settings.display());
    let Ok(text) = fs::read_to_string(settings) else {
        return ["sz", "z", "dl", "m"].map(String::from).to_vec();
    };
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("Extra libraries:"))
        .flat_map(|flags| flags.split_whitespace())
        .filter_map(|flag| flag.strip_prefix("-l"))
        .map(String::from)
        .collect()
}
