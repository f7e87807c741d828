//! [`Comm`] over MPI (feature `mpi`, crate `mpi`/rsmpi), for runs under
//! `mpirun -np N gravel run ...`.
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: the step loop runs inside
//! a rayon pool, so the thread that talks to MPI is a pool thread rather
//! than the process's first thread, but only one thread calls MPI at a time
//! (rayon workers never touch the transport).

use super::comm::Comm;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

/// The MPI world communicator.
pub struct MpiComm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
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
        let comm = Self {
            rank: world.rank() as usize,
            size: world.size() as usize,
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
