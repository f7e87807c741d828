//! `gravel-undo`: an HDF5 virtual file driver that writes through an
//! [`UndoFile`], so that every file gravel writes in place can be rolled back
//! to its last flush ([`super::journal`]).
//!
//! It is HDF5's POSIX driver (`sec2`) in behaviour: one file, the canonical
//! format, any HDF5 tool reads what it writes. Two things differ: a write
//! first saves the committed bytes it overwrites, and the driver's `flush`
//! callback, which HDF5 calls once a flush has written everything (metadata,
//! superblock), commits. Opening for writing rolls a journal back first.
//!
//! The driver is registered once per process ([`use_driver`]). Its class
//! table follows the layout of HDF5 1.10's `H5FD_class_t` (and 1.12's, which
//! is the same); with another HDF5 version [`use_driver`] declines and the
//! files are written with `sec2`, without the journal.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use hdf5_sys::h5::{haddr_t, herr_t, hsize_t};
use hdf5_sys::h5e::{H5E_READERROR, H5E_WRITEERROR};
use hdf5_sys::h5i::hid_t;

use super::journal::{Mode, UndoFile};

/// `H5FD_mem_t`: the kind of data a request is for (an `int` enum).
type MemType = c_int;
const MEM_SUPER: MemType = 1;
const MEM_DRAW: MemType = 3;
const MEM_NTYPES: usize = 7;

/// `H5F_close_degree_t` `H5F_CLOSE_WEAK`.
const CLOSE_WEAK: c_int = 1;

const ACC_RDWR: c_uint = 0x01;
const ACC_TRUNC: c_uint = 0x02;
const ACC_EXCL: c_uint = 0x04;
const ACC_CREAT: c_uint = 0x10;

/// The feature flags of `sec2` in HDF5 1.10.
const FEATURES: c_ulong = 0x0001 // aggregate metadata
    | 0x0002 | 0x0004 // accumulate metadata (write, read)
    | 0x0008 // data sieve
    | 0x0010 // aggregate small raw data
    | 0x0080 // POSIX-compatible handle
    | 0x1000 // supports SWMR I/O (H5Fincrement_filesize asks for it)
    | 0x8000; // a file the default driver can open

/// The largest address: as `sec2`'s, the largest `off_t`.
const MAXADDR: haddr_t = (1 << 63) - 1;
const UNDEF: haddr_t = haddr_t::MAX;

/// The public part of HDF5 1.10's `H5FD_t`; HDF5 fills it after `open`.
#[repr(C)]
struct Public {
    driver_id: hid_t,
    cls: *const Class,
    fileno: c_ulong,
    access_flags: c_uint,
    feature_flags: c_ulong,
    maxaddr: haddr_t,
    base_addr: haddr_t,
    threshold: hsize_t,
    alignment: hsize_t,
    paged_aggr: bool,
}

/// A file open through this driver: HDF5's public part first, as HDF5 expects.
#[repr(C)]
struct Open {
    public: Public,
    file: UndoFile,
    eoa: haddr_t,
    /// The descriptor `get_handle` points to.
    fd: c_int,
}

type FilePtr = *mut Open;

/// HDF5 1.10's `H5FD_class_t`.
#[repr(C)]
struct Class {
    name: *const c_char,
    maxaddr: haddr_t,
    fc_degree: c_int,
    terminate: Option<unsafe extern "C" fn() -> herr_t>,
    sb_size: Option<unsafe extern "C" fn(FilePtr) -> hsize_t>,
    sb_encode: Option<unsafe extern "C" fn(FilePtr, *mut c_char, *mut u8) -> herr_t>,
    sb_decode: Option<unsafe extern "C" fn(FilePtr, *const c_char, *const u8) -> herr_t>,
    fapl_size: usize,
    fapl_get: Option<unsafe extern "C" fn(FilePtr) -> *mut c_void>,
    fapl_copy: Option<unsafe extern "C" fn(*const c_void) -> *mut c_void>,
    fapl_free: Option<unsafe extern "C" fn(*mut c_void) -> herr_t>,
    dxpl_size: usize,
    dxpl_copy: Option<unsafe extern "C" fn(*const c_void) -> *mut c_void>,
    dxpl_free: Option<unsafe extern "C" fn(*mut c_void) -> herr_t>,
    open: Option<unsafe extern "C" fn(*const c_char, c_uint, hid_t, haddr_t) -> FilePtr>,
    close: Option<unsafe extern "C" fn(FilePtr) -> herr_t>,
    cmp: Option<unsafe extern "C" fn(FilePtr, FilePtr) -> c_int>,
    query: Option<unsafe extern "C" fn(FilePtr, *mut c_ulong) -> herr_t>,
    get_type_map: Option<unsafe extern "C" fn(FilePtr, *mut MemType) -> herr_t>,
    alloc: Option<unsafe extern "C" fn(FilePtr, MemType, hid_t, hsize_t) -> haddr_t>,
    free: Option<unsafe extern "C" fn(FilePtr, MemType, hid_t, haddr_t, hsize_t) -> herr_t>,
    get_eoa: Option<unsafe extern "C" fn(FilePtr, MemType) -> haddr_t>,
    set_eoa: Option<unsafe extern "C" fn(FilePtr, MemType, haddr_t) -> herr_t>,
    get_eof: Option<unsafe extern "C" fn(FilePtr, MemType) -> haddr_t>,
    get_handle: Option<unsafe extern "C" fn(FilePtr, hid_t, *mut *mut c_void) -> herr_t>,
    read: Option<
        unsafe extern "C" fn(FilePtr, MemType, hid_t, haddr_t, usize, *mut c_void) -> herr_t,
    >,
    write: Option<
        unsafe extern "C" fn(FilePtr, MemType, hid_t, haddr_t, usize, *const c_void) -> herr_t,
    >,
    flush: Option<unsafe extern "C" fn(FilePtr, hid_t, bool) -> herr_t>,
    truncate: Option<unsafe extern "C" fn(FilePtr, hid_t, bool) -> herr_t>,
    lock: Option<unsafe extern "C" fn(FilePtr, bool) -> herr_t>,
    unlock: Option<unsafe extern "C" fn(FilePtr) -> herr_t>,
    fl_map: [MemType; MEM_NTYPES],
}

// SAFETY: the class table is immutable after construction; its only pointer is
// to a `'static` C string.
unsafe impl Sync for Class {}
// SAFETY: as above.
unsafe impl Send for Class {}

extern "C" {
    fn H5FDregister(cls: *const Class) -> hid_t;
    fn H5Pset_driver(plist: hid_t, driver_id: hid_t, driver_info: *const c_void) -> herr_t;
}

static NAME: &CStr = c"gravel-undo";

static CLASS: Class = Class {
    name: NAME.as_ptr(),
    maxaddr: MAXADDR,
    fc_degree: CLOSE_WEAK,
    terminate: None,
    sb_size: None,
    sb_encode: None,
    sb_decode: None,
    fapl_size: 0,
    fapl_get: None,
    fapl_copy: None,
    fapl_free: None,
    dxpl_size: 0,
    dxpl_copy: None,
    dxpl_free: None,
    open: Some(open),
    close: Some(close),
    cmp: Some(cmp),
    query: Some(query),
    get_type_map: None,
    alloc: None,
    free: None,
    get_eoa: Some(get_eoa),
    set_eoa: Some(set_eoa),
    get_eof: Some(get_eof),
    get_handle: Some(get_handle),
    read: Some(read),
    write: Some(write),
    flush: Some(flush),
    truncate: Some(truncate),
    lock: Some(lock),
    unlock: Some(unlock),
    // `sec2`'s map (H5FD_FLMAP_DICHOTOMY): raw data and global heap apart
    // from all metadata.
    fl_map: [
        MEM_SUPER, MEM_SUPER, MEM_SUPER, MEM_DRAW, MEM_DRAW, MEM_SUPER, MEM_SUPER,
    ],
};

/// The driver's id, registered on first use; `None` with an HDF5 other than
/// 1.10 or 1.12, whose class table is laid out differently.
fn driver_id() -> Option<hid_t> {
    static ID: OnceLock<Option<hid_t>> = OnceLock::new();
    *ID.get_or_init(|| {
        let (mut major, mut minor, mut micro) = (0, 0, 0);
        hdf5::sync::sync(|| {
            // SAFETY: three valid out-pointers.
            unsafe { hdf5_sys::h5::H5get_libversion(&mut major, &mut minor, &mut micro) }
        });
        if major != 1 || !(10..=12).contains(&minor) {
            return None;
        }
        // SAFETY: `CLASS` is a `'static` table laid out as HDF5 1.10 and 1.12
        // expect, with callbacks of the declared signatures; HDF5's lock is held.
        let id = hdf5::sync::sync(|| unsafe { H5FDregister(&raw const CLASS) });
        (id >= 0).then_some(id)
    })
}

/// Sets the driver on the file-access property list `fapl`. Returns `false`
/// (and leaves `fapl` as it was) when the driver is not available with this
/// HDF5.
pub(super) fn use_driver(fapl: hid_t) -> bool {
    let Some(id) = driver_id() else {
        return false;
    };
    // SAFETY: `fapl` is a valid file-access list owned by the caller; the
    // driver takes no driver info. HDF5's lock is held.
    hdf5::sync::sync(|| unsafe { H5Pset_driver(fapl, id, std::ptr::null()) }) >= 0
}

/// Puts `message` on HDF5's error stack, so that the error the caller sees
/// names the system's reason (a full disk, a permission).
fn report(message: &str, minor: hid_t) {
    use hdf5_sys::h5e::{H5Epush2, H5E_DEFAULT, H5E_ERR_CLS, H5E_VFL};
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the format is a literal "%s" with one C-string argument that
    // lives through the call; the class and message ids are HDF5's own.
    unsafe {
        H5Epush2(
            H5E_DEFAULT,
            c"io/vfd.rs".as_ptr(),
            NAME.as_ptr(),
            0,
            *H5E_ERR_CLS,
            *H5E_VFL,
            minor,
            c"%s".as_ptr(),
            text.as_ptr(),
        );
    }
}

/// Runs `f` on the open file behind `ptr`; an error (or a panic) becomes
/// HDF5's failure value with the reason on its error stack.
///
/// # Safety
/// `ptr` must be a pointer this driver's `open` returned and `close` has not
/// freed.
unsafe fn with_file(
    ptr: FilePtr,
    what: &str,
    minor: hid_t,
    f: impl FnOnce(&mut Open) -> std::io::Result<()>,
) -> herr_t {
    // SAFETY: per this function's contract; HDF5 calls a file's callbacks
    // one at a time (under its global lock).
    let open = unsafe { &mut *ptr };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(open))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            report(&format!("{what}: {e}"), minor);
            -1
        }
        Err(_) => {
            report(&format!("{what}: internal error"), minor);
            -1
        }
    }
}

unsafe extern "C" fn open(
    name: *const c_char,
    flags: c_uint,
    _fapl: hid_t,
    maxaddr: haddr_t,
) -> FilePtr {
    // SAFETY: HDF5 passes a valid NUL-terminated file name.
    let name = unsafe { CStr::from_ptr(name) };
    let path = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    let mode = Mode {
        write: flags & ACC_RDWR != 0,
        create: flags & ACC_CREAT != 0,
        exclusive: flags & ACC_EXCL != 0,
        truncate: flags & ACC_TRUNC != 0,
    };
    if maxaddr == 0 || maxaddr == UNDEF || maxaddr > MAXADDR {
        report("bogus maxaddr", *hdf5_sys::h5e::H5E_BADVALUE);
        return std::ptr::null_mut();
    }
    match UndoFile::open(path, mode) {
        Ok(file) => Box::into_raw(Box::new(Open {
            fd: file.raw_fd(),
            public: Public {
                driver_id: 0,
                cls: std::ptr::null(),
                fileno: 0,
                access_flags: 0,
                feature_flags: 0,
                maxaddr: 0,
                base_addr: 0,
                threshold: 0,
                alignment: 0,
                paged_aggr: false,
            },
            file,
            eoa: 0,
        })),
        Err(e) => {
            report(
                &format!("unable to open {}: {e}", path.display()),
                *hdf5_sys::h5e::H5E_CANTOPENFILE,
            );
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn close(ptr: FilePtr) -> herr_t {
    // SAFETY: HDF5 passes a file `open` returned, and never uses it after.
    let Open { file, .. } = *unsafe { Box::from_raw(ptr) };
    match file.close() {
        Err(e) => {
            report(&format!("closing: {e}"), *hdf5_sys::h5e::H5E_CANTCLOSEFILE);
            -1
        }
        Ok(()) => 0,
    }
}

unsafe extern "C" fn cmp(a: FilePtr, b: FilePtr) -> c_int {
    // SAFETY: both are open files of this driver.
    let id = |p: FilePtr| unsafe { (*p).file.identity() };
    match id(a).cmp(&id(b)) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

unsafe extern "C" fn query(_ptr: FilePtr, flags: *mut c_ulong) -> herr_t {
    if !flags.is_null() {
        // SAFETY: HDF5 passes a valid out-pointer.
        unsafe { *flags = FEATURES };
    }
    0
}

unsafe extern "C" fn get_eoa(ptr: FilePtr, _type: MemType) -> haddr_t {
    // SAFETY: an open file of this driver.
    unsafe { (*ptr).eoa }
}

unsafe extern "C" fn set_eoa(ptr: FilePtr, _type: MemType, addr: haddr_t) -> herr_t {
    // SAFETY: an open file of this driver.
    unsafe { (*ptr).eoa = addr };
    0
}

unsafe extern "C" fn get_eof(ptr: FilePtr, _type: MemType) -> haddr_t {
    // SAFETY: an open file of this driver.
    unsafe { (*ptr).file.len() }
}

unsafe extern "C" fn get_handle(ptr: FilePtr, _fapl: hid_t, handle: *mut *mut c_void) -> herr_t {
    if handle.is_null() {
        return -1;
    }
    // SAFETY: an open file of this driver (it lives until `close`); `handle`
    // a valid out-pointer.
    unsafe { *handle = (&raw mut (*ptr).fd).cast() };
    0
}

unsafe extern "C" fn read(
    ptr: FilePtr,
    _type: MemType,
    _dxpl: hid_t,
    addr: haddr_t,
    size: usize,
    buf: *mut c_void,
) -> herr_t {
    // SAFETY: an open file of this driver; HDF5 passes a buffer of `size` bytes.
    unsafe {
        with_file(ptr, "read", *H5E_READERROR, |open| {
            let buf = std::slice::from_raw_parts_mut(buf.cast::<u8>(), size);
            open.file.read_at(buf, addr)
        })
    }
}

unsafe extern "C" fn write(
    ptr: FilePtr,
    _type: MemType,
    _dxpl: hid_t,
    addr: haddr_t,
    size: usize,
    buf: *const c_void,
) -> herr_t {
    // SAFETY: an open file of this driver; HDF5 passes a buffer of `size` bytes.
    unsafe {
        with_file(ptr, "write", *H5E_WRITEERROR, |open| {
            let buf = std::slice::from_raw_parts(buf.cast::<u8>(), size);
            open.file.write_at(buf, addr)
        })
    }
}

/// HDF5 calls it last in every flush and before closing: the commit.
unsafe extern "C" fn flush(ptr: FilePtr, _dxpl: hid_t, _closing: bool) -> herr_t {
    // SAFETY: an open file of this driver.
    unsafe { with_file(ptr, "commit", *H5E_WRITEERROR, |open| open.file.commit()) }
}

/// As `sec2`: the file's length follows the end of the address space.
unsafe extern "C" fn truncate(ptr: FilePtr, _dxpl: hid_t, _closing: bool) -> herr_t {
    // SAFETY: an open file of this driver.
    unsafe {
        with_file(ptr, "truncate", *H5E_WRITEERROR, |open| {
            if open.file.len() != open.eoa {
                open.file.set_len(open.eoa)?;
            }
            Ok(())
        })
    }
}

/// gravel turns HDF5's file locking off (see `io::unlocked`); a run's own
/// lock file keeps a second writer out.
unsafe extern "C" fn lock(_ptr: FilePtr, _rw: bool) -> herr_t {
    0
}

unsafe extern "C" fn unlock(_ptr: FilePtr) -> herr_t {
    0
}
