//! The transport between ranks, as a small trait.
//!
//! Everything above this layer talks to [`Comm`]; [`SerialComm`] is the
//! single-process implementation and `MpiComm` (feature `mpi`, in
//! `parallel::mpi_comm`) the one over MPI. Reductions used for decisions that affect
//! the trajectory (the neighbour-list rebuild trigger, the first bad
//! particle) are exact (max, min, or), so they give the same answer whatever
//! the number of ranks.
//!
//! Point-to-point traffic is byte buffers: the halo and migration code
//! serialises its records with [`Pack`](crate::state::pack::Pack) and
//! [`Unpack`](crate::state::pack::Unpack), so the transport
//! needs no knowledge of particle layouts.

/// Collective operations over all ranks.
pub trait Comm: Send + Sync {
    /// This rank's index.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Global maximum.
    fn max_f64(&self, local: f64) -> f64;
    /// Global minimum.
    fn min_u64(&self, local: u64) -> u64;
    /// Element-wise global maximum, in place (one reduction for several
    /// decisions: a non-negative `f64` can travel as its bits, whose integer
    /// order is its numeric order).
    fn max_u64s(&self, values: &mut [u64]);
    /// Element-wise global sum, in place (diagnostics only: order may vary).
    fn sum_f64(&self, values: &mut [f64]);
    /// Global sum of counts.
    fn sum_u64(&self, local: u64) -> u64;
    /// Sparse exchange with a symmetric set of peers: `sends[k]` goes to
    /// `peers[k]`, and the result's `k`-th buffer is what `peers[k]` sent to
    /// this rank. Every rank listed must list this rank in turn. `peers`
    /// never contains this rank.
    fn exchange(&self, peers: &[usize], sends: &[Vec<u8>]) -> Vec<Vec<u8>>;
    /// Every rank's buffer, in rank order, on rank 0 (`None` elsewhere).
    fn gather(&self, local: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Every rank's buffer, in rank order, on every rank.
    fn all_gather(&self, local: &[u8]) -> Vec<Vec<u8>>;
    /// Wait until every rank has arrived.
    fn barrier(&self);
}

/// One process, no communication.
#[derive(Debug, Default, Clone, Copy)]
pub struct SerialComm;

impl Comm for SerialComm {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn max_f64(&self, local: f64) -> f64 {
        local
    }
    fn min_u64(&self, local: u64) -> u64 {
        local
    }
    fn max_u64s(&self, _values: &mut [u64]) {}
    fn sum_f64(&self, _values: &mut [f64]) {}
    fn sum_u64(&self, local: u64) -> u64 {
        local
    }
    fn exchange(&self, peers: &[usize], _sends: &[Vec<u8>]) -> Vec<Vec<u8>> {
        assert!(peers.is_empty(), "a single process has no peers");
        Vec::new()
    }
    fn gather(&self, local: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![local.to_vec()])
    }
    fn all_gather(&self, local: &[u8]) -> Vec<Vec<u8>> {
        vec![local.to_vec()]
    }
    fn barrier(&self) {}
}
