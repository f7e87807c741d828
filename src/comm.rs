//! The transport between ranks, as a small trait.
//!
//! Everything above this layer talks to [`Comm`]; [`SerialComm`] is the
//! single-process implementation. Reductions used for decisions that affect
//! the trajectory (the neighbour-list rebuild trigger) are exact (max, or),
//! so they give the same answer whatever the number of ranks.

/// Collective operations over all ranks.
pub trait Comm: Send + Sync {
    /// This rank's index.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Global maximum.
    fn max_f64(&self, local: f64) -> f64;
    /// Element-wise global sum, in place (diagnostics only: order may vary).
    fn sum_f64(&self, values: &mut [f64]);
    /// Global sum of counts.
    fn sum_u64(&self, local: u64) -> u64;
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
    fn sum_f64(&self, _values: &mut [f64]) {}
    fn sum_u64(&self, local: u64) -> u64 {
        local
    }
}
