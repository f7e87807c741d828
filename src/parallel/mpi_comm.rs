//! [`Comm`] over MPI (feature `mpi`, crate `mpi`/rsmpi), for runs under
//! `mpirun -np N gravel run ...`.
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: the step loop runs inside
//! a rayon pool, so the thread that talks to MPI is a pool thread rather
//! than the process's first thread, but only one thread calls MPI at a time
//! (rayon workers never touch the transport).

use super::comm::Comm;
use super::node_pages::{sharing_requested, NodePages, HALO_VAR};
use crate::config::limits::describe_bytes;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::ffi::{c_int, c_void};

/// The MPI world communicator, and the ranks on this rank's node.
pub struct MpiComm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// The ranks of this node (`MPI_Comm_split_type`, shared memory).
    node: SimpleCommunicator,
    /// The world rank of each rank of `node`, in its order.
    node_ranks: Vec<usize>,
    /// Whether the halo shares pages with the node's ranks: every rank
    /// asked for it ([`HALO_VAR`]), and there are several.
    share_node: bool,
}

/// MPI itself, initialised for as long as this lives (finalised when it is
/// dropped): held by `main`, so that the ranks can still meet after the
/// transport has gone (see [`MpiSession::barrier`]).
pub struct MpiSession {
    universe: Universe,
}

impl MpiSession {
    /// Wait for every rank: before exiting on an error that one rank
    /// reports for all, the silent ranks wait for its message, so that
    /// `mpirun`, seeing them exit with an error, does not stop it first.
    pub fn barrier(&self) {
        self.universe.world().barrier();
    }
}

// SAFETY: MPI runs at MPI_THREAD_SERIALIZED (checked in `init`) and gravel
// calls the transport from one thread at a time: the driver loop.
unsafe impl Send for MpiComm {}
// SAFETY: as above; `&MpiComm` is never used from two threads at once.
unsafe impl Sync for MpiComm {}

impl MpiComm {
    /// Initialise MPI (once per process): the transport, and the session
    /// that keeps MPI initialised. `None` if MPI was already initialised or
    /// cannot give serialised thread support.
    pub fn init() -> Option<(Self, MpiSession)> {
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)?;
        if level < mpi::Threading::Serialized {
            return None;
        }
        let world = universe.world();
        let rank = world.rank();
        let node = world.split_shared(rank);
        let mut node_ranks = vec![0 as c_int; node.size() as usize];
        node.all_gather_into(&rank, &mut node_ranks[..]);
        // An unknown value counts as declined here (`main` refuses it before
        // the run starts); every rank must agree, or a peer would wait for a
        // message never sent.
        let asked = sharing_requested(std::env::var(HALO_VAR).ok().as_deref()).unwrap_or(false);
        let mut any_declined = 0u64;
        world.all_reduce_into(
            &u64::from(!asked),
            &mut any_declined,
            SystemOperation::max(),
        );
        let comm = Self {
            rank: rank as usize,
            size: world.size() as usize,
            share_node: any_declined == 0 && world.size() > 1,
            node_ranks: node_ranks.iter().map(|&r| r as usize).collect(),
            node,
            world,
        };
        Some((comm, MpiSession { universe }))
    }

    /// Stop every rank now with `code` (for failures only one rank saw).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Send `sends[k]` to `peers[k]` for every peer without waiting, run
    /// `receive` (the receives from the peers), then wait for the sends:
    /// the frame of [`Comm::exchange`] and [`Comm::exchange_into`].
    fn with_sends<R>(&self, peers: &[usize], sends: &[Vec<u8>], receive: impl FnOnce() -> R) -> R {
        assert_eq!(peers.len(), sends.len());
        mpi::request::scope(|scope| {
            let requests: Vec<_> = peers
                .iter()
                .zip(sends)
                .map(|(&p, buf)| {
                    self.world
                        .process_at_rank(p as i32)
                        .immediate_send(scope, &buf[..])
                })
                .collect();
            let received = receive();
            for r in requests {
                r.wait();
            }
            received
        })
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn max_f64(&self, local: f64) -> f64 {
        let mut out = 0.0;
        self.world
            .all_reduce_into(&local, &mut out, SystemOperation::max());
        out
    }
    fn min_u64(&self, local: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&local, &mut out, SystemOperation::min());
        out
    }
    fn max_u64s(&self, values: &mut [u64]) {
        let local = values.to_vec();
        self.world
            .all_reduce_into(&local[..], values, SystemOperation::max());
    }
    fn sum_f64(&self, values: &mut [f64]) {
        let local = values.to_vec();
        self.world
            .all_reduce_into(&local[..], values, SystemOperation::sum());
    }
    fn sum_u64(&self, local: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&local, &mut out, SystemOperation::sum());
        out
    }
    fn exchange(&self, peers: &[usize], sends: &[Vec<u8>]) -> Vec<Vec<u8>> {
        self.with_sends(peers, sends, || {
            peers
                .iter()
                .map(|&p| self.world.process_at_rank(p as i32).receive_vec::<u8>().0)
                .collect()
        })
    }
    fn exchange_into(&self, peers: &[usize], sends: &[Vec<u8>], recvs: &mut [Vec<u8>]) {
        assert_eq!(peers.len(), recvs.len());
        self.with_sends(peers, sends, || {
            for (&p, buf) in peers.iter().zip(recvs.iter_mut()) {
                let status = self
                    .world
                    .process_at_rank(p as i32)
                    .receive_into(&mut buf[..]);
                assert_eq!(
                    status.count(u8::equivalent_datatype()) as usize,
                    buf.len(),
                    "a message from rank {p} of another length than expected"
                );
            }
        })
    }
    fn gather(&self, local: &[u8]) -> Option<Vec<Vec<u8>>> {
        // One trailing byte per rank keeps every buffer non-empty (Open MPI
        // refuses a gather whose buffers are all empty).
        let padded = [local, &[0u8]].concat();
        let local = &padded[..];
        let root = self.world.process_at_rank(0);
        let count = local.len() as Count;
        if self.rank == 0 {
            let mut counts = vec![0 as Count; self.size];
            root.gather_into_root(&count, &mut counts[..]);
            let displs = displacements(&counts);
            let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
            {
                let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(local, &mut part);
            }
            Some(split(&buf, &counts))
        } else {
            root.gather_into(&count);
            root.gather_varcount_into(local);
            None
        }
    }
    fn all_gather(&self, local: &[u8]) -> Vec<Vec<u8>> {
        let padded = [local, &[0u8]].concat();
        let local = &padded[..];
        let count = local.len() as Count;
        let mut counts = vec![0 as Count; self.size];
        self.world.all_gather_into(&count, &mut counts[..]);
        let displs = displacements(&counts);
        let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(local, &mut part);
        }
        split(&buf, &counts)
    }
    fn barrier(&self) {
        self.world.barrier();
    }
    fn mpi_raw(&self) -> Option<mpi::ffi::MPI_Comm> {
        (self.size > 1).then(|| self.world.as_raw())
    }
    fn shares_node_with(&self, rank: usize) -> bool {
        self.share_node && rank != self.rank && self.node_ranks.contains(&rank)
    }
    fn node_pages(&self, bytes: usize) -> Option<Box<dyn NodePages>> {
        if !self.share_node {
            return None;
        }
        // The node's pages together, against the room in the file system
        // that holds them: a full tmpfs kills a process that touches a
        // page of it (SIGBUS), so a node short of room takes messages.
        let bytes = bytes.max(MIN_PART);
        let mut node_total = 0u64;
        self.node
            .all_reduce_into(&(bytes as u64), &mut node_total, SystemOperation::sum());
        let free = rustix::fs::statvfs(SHARED_PAGES_DIR)
            .ok()
            .map(|s| s.f_bavail.saturating_mul(s.f_frsize));
        let short = !pages_fit(node_total, free);
        let mut any_short = 0u64;
        self.world
            .all_reduce_into(&u64::from(short), &mut any_short, SystemOperation::max());
        if any_short != 0 {
            if short && self.node.rank() == 0 {
                eprintln!(
                    "note: the halo update goes by message: {SHARED_PAGES_DIR} on rank {}'s node has {} free, less than twice the {} its ranks would share (give it more room, or set {HALO_VAR}=messages to ask for messages from the start)",
                    self.rank,
                    describe_bytes(free.unwrap_or(0) as f64),
                    describe_bytes(node_total as f64),
                );
            }
            return None;
        }
        Some(Box::new(SharedWindow::new(
            &self.node,
            &self.node_ranks,
            bytes,
        )))
    }
}

/// The smallest part a rank holds in a [`SharedWindow`], so that no part
/// is empty (an empty part may have no address).
const MIN_PART: usize = 64;

/// Where Open MPI and MPICH keep the files behind a shared-memory window.
const SHARED_PAGES_DIR: &str = "/dev/shm";

/// Whether pages of `total` bytes fit in a file system with `free` bytes
/// free: with room for as much again (the MPI library's own segments live
/// there too). Unknown room (`None`) is no reason to refuse.
fn pages_fit(total: u64, free: Option<u64>) -> bool {
    free.is_none_or(|free| total.saturating_mul(2) <= free)
}

/// [`NodePages`] over an MPI-3 shared-memory window
/// (`MPI_Win_allocate_shared`) of the node's communicator, held in one
/// passive-target epoch (`MPI_Win_lock_all`) from creation to drop:
/// [`NodePages::publish`] is `MPI_Win_sync`, a barrier of the node,
/// `MPI_Win_sync`, the memory model's pattern for the unified window.
struct SharedWindow {
    win: mpi::ffi::MPI_Win,
    node: mpi::ffi::MPI_Comm,
    /// Each node rank's world rank, the start of its part in this
    /// process's address space, and its bytes, in node-rank order.
    parts: Vec<(usize, *mut u8, usize)>,
    /// This rank's entry of `parts`.
    own: usize,
}

// SAFETY: the window is used by the thread that calls the transport, one
// call at a time (MPI_THREAD_SERIALIZED, as `MpiComm`); the pointers are
// into the window's mapping, which lives as long as the window.
unsafe impl Send for SharedWindow {}
// SAFETY: as above.
unsafe impl Sync for SharedWindow {}

/// Panic on an MPI error code (the communicator's handler is
/// `MPI_ERRORS_ARE_FATAL`, so this is a second guard).
fn checked(what: &str, code: c_int) {
    assert_eq!(code, mpi::ffi::MPI_SUCCESS as c_int, "{what} failed");
}

impl SharedWindow {
    /// `bytes` of this rank's own (at least [`MIN_PART`]) in a window
    /// shared by the ranks of `node`, whose world ranks are `node_ranks`.
    /// Collective over `node`.
    fn new(node: &SimpleCommunicator, node_ranks: &[usize], bytes: usize) -> Self {
        use mpi::ffi;
        debug_assert!(bytes >= MIN_PART);
        let own = node.rank() as usize;
        let node = node.as_raw();
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: plain MPI calls with valid out-pointers; `node` is a live
        // communicator; the window's parts are queried after it exists.
        let (win, parts) = unsafe {
            checked(
                "MPI_Win_allocate_shared",
                ffi::MPI_Win_allocate_shared(
                    bytes as ffi::MPI_Aint,
                    1,
                    ffi::RSMPI_INFO_NULL,
                    node,
                    (&mut base as *mut *mut u8).cast::<c_void>(),
                    win.as_mut_ptr(),
                ),
            );
            let win = win.assume_init();
            checked("MPI_Win_lock_all", ffi::MPI_Win_lock_all(0, win));
            let parts: Vec<_> = (0..node_ranks.len())
                .map(|i| {
                    let (mut size, mut unit, mut at) = (0, 0, std::ptr::null_mut::<u8>());
                    checked(
                        "MPI_Win_shared_query",
                        ffi::MPI_Win_shared_query(
                            win,
                            i as c_int,
                            &mut size,
                            &mut unit,
                            (&mut at as *mut *mut u8).cast::<c_void>(),
                        ),
                    );
                    (node_ranks[i], at, size as usize)
                })
                .collect();
            (win, parts)
        };
        Self {
            win,
            node,
            parts,
            own,
        }
    }
}

impl NodePages for SharedWindow {
    fn len(&self) -> usize {
        self.parts[self.own].2
    }
    fn own(&mut self) -> &mut [u8] {
        let (_, at, len) = self.parts[self.own];
        // SAFETY: this rank's part, `len` bytes of the live window (at
        // least `MIN_PART`, so `at` is not null); only this rank writes it, and
        // `&mut self` makes this the one slice of it in this process.
        unsafe { std::slice::from_raw_parts_mut(at, len) }
    }
    unsafe fn part_of(&self, rank: usize, range: std::ops::Range<usize>) -> &[u8] {
        let &(_, at, len) = self
            .parts
            .iter()
            .find(|p| p.0 == rank)
            .expect("a rank on this node");
        assert!(
            range.start <= range.end && range.end <= len,
            "{range:?} past a part of {len} bytes"
        );
        // SAFETY: within the part, which the window maps for as long as it
        // lives; the caller promises that no rank writes `range` meanwhile.
        unsafe { std::slice::from_raw_parts(at.add(range.start), range.len()) }
    }
    fn publish(&self) {
        self.fence();
        // SAFETY: a plain MPI call on the live node communicator.
        unsafe { checked("MPI_Barrier", mpi::ffi::MPI_Barrier(self.node)) };
        self.fence();
    }
    fn fence(&self) {
        // SAFETY: a plain MPI call on the live window.
        unsafe { checked("MPI_Win_sync", mpi::ffi::MPI_Win_sync(self.win)) };
    }
}

impl Drop for SharedWindow {
    /// Collective over the node, as the window's creation was.
    fn drop(&mut self) {
        use mpi::ffi;
        // SAFETY: the window is live and locked by this rank since `new`.
        unsafe {
            checked("MPI_Win_unlock_all", ffi::MPI_Win_unlock_all(self.win));
            checked("MPI_Win_free", ffi::MPI_Win_free(&mut self.win));
        }
    }
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

fn split(buf: &[u8], counts: &[Count]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(counts.len());
    let mut at = 0;
    for &c in counts {
        // Drop the padding byte.
        out.push(buf[at..at + c as usize - 1].to_vec());
        at += c as usize;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_fit_where_the_room_is_twice_theirs() {
        assert!(pages_fit(1 << 20, Some(2 << 20)));
        assert!(!pages_fit(1 << 20, Some((2 << 20) - 1)));
        // Twice a part past half the range saturates, and still does not fit.
        assert!(!pages_fit(u64::MAX / 2 + 1, Some(u64::MAX - 1)));
        assert!(pages_fit(u64::MAX, None));
    }
}
