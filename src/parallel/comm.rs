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

use super::node_pages::NodePages;

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
    /// [`Self::exchange`] into buffers the caller keeps: `recvs[k]` is
    /// exactly as long as what `peers[k]` sends (another length is a fault
    /// of the caller's bookkeeping, and panics).
    fn exchange_into(&self, peers: &[usize], sends: &[Vec<u8>], recvs: &mut [Vec<u8>]);
    /// Every rank's buffer, in rank order, on rank 0 (`None` elsewhere).
    fn gather(&self, local: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Every rank's buffer, in rank order, on every rank.
    fn all_gather(&self, local: &[u8]) -> Vec<Vec<u8>>;
    /// Wait until every rank has arrived.
    fn barrier(&self);
    /// Pages this rank shares with the other ranks of its node, `bytes` of
    /// them its own (collective: every rank calls it, each with its own
    /// size). `None` where there is nothing to share: one process, or a
    /// run that asked for messages ([`HALO_VAR`](super::node_pages::HALO_VAR)).
    fn node_pages(&self, bytes: usize) -> Option<Box<dyn NodePages>> {
        let _ = bytes;
        None
    }
    /// Whether `rank` is on this rank's node and [`Self::node_pages`]
    /// shares pages with it.
    fn shares_node_with(&self, rank: usize) -> bool {
        let _ = rank;
        false
    }
    /// The MPI communicator, for MPI-IO (parallel HDF5); `None` for one
    /// process, whose files are written by the serial HDF5 driver.
    #[cfg(feature = "mpi")]
    fn mpi_raw(&self) -> Option<mpi::ffi::MPI_Comm> {
        None
    }
}

/// Where this rank's rows go in a table that every rank writes a part of:
/// rows `offset..offset + local` of `total`, in rank order (an exclusive
/// scan of the counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowSpan {
    /// This rank's first row.
    pub offset: u64,
    /// This rank's rows.
    pub local: u64,
    /// Rows over all ranks.
    pub total: u64,
}

impl RowSpan {
    /// The row spans of several tables at once, one entry of `local` per
    /// table (one collective exchange of `8 · ranks · tables` bytes).
    /// Collective.
    pub fn of(comm: &dyn Comm, local: &[u64]) -> Vec<RowSpan> {
        let mut bytes = Vec::with_capacity(8 * local.len());
        local.iter().for_each(|v| bytes.extend(v.to_le_bytes()));
        let all = comm.all_gather(&bytes);
        let count = |rank: usize, table: usize| -> u64 {
            let b = &all[rank][8 * table..8 * table + 8];
            u64::from_le_bytes(b.try_into().expect("8 bytes"))
        };
        (0..local.len())
            .map(|t| RowSpan {
                offset: (0..comm.rank()).map(|r| count(r, t)).sum(),
                local: local[t],
                total: (0..comm.size()).map(|r| count(r, t)).sum(),
            })
            .collect()
    }

    /// All `rows` of a table written by one process.
    #[must_use]
    pub fn whole(rows: usize) -> RowSpan {
        RowSpan {
            offset: 0,
            local: rows as u64,
            total: rows as u64,
        }
    }

    /// The rows of this rank's part when `total` rows are shared out as
    /// evenly as possible between the ranks, in rank order (for reading a
    /// table by slices).
    #[must_use]
    pub fn even_share(total: u64, rank: usize, ranks: usize) -> RowSpan {
        let (r, n) = (rank as u128, ranks as u128);
        let at = |k: u128| (u128::from(total) * k / n) as u64;
        RowSpan {
            offset: at(r),
            local: at(r + 1) - at(r),
            total,
        }
    }

    /// The row range in the whole table.
    #[must_use]
    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset as usize..(self.offset + self.local) as usize
    }
}

/// A checksum summed over the ranks, modulo 2^64: the halves travel as
/// separate sums so that no rank's transport overflows.
pub fn sum_wrapping(comm: &dyn Comm, local: u64) -> u64 {
    let low = comm.sum_u64(local & 0xffff_ffff);
    let high = comm.sum_u64(local >> 32);
    (high << 32).wrapping_add(low)
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
    fn exchange_into(&self, peers: &[usize], _sends: &[Vec<u8>], _recvs: &mut [Vec<u8>]) {
        assert!(peers.is_empty(), "a single process has no peers");
    }
    fn gather(&self, local: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![local.to_vec()])
    }
    fn all_gather(&self, local: &[u8]) -> Vec<Vec<u8>> {
        vec![local.to_vec()]
    }
    fn barrier(&self) {}
}
