//! Memory the ranks of one node share: each rank writes a part of its own,
//! and the ranks on its node read it in place, with no message between
//! them. The halo update ([`crate::parallel::halo::Halo::update`]) stages
//! the ghost states it owes a peer on its node there, so that the peer
//! copies them straight into its ghosts: one copy through the cache
//! instead of a message's two and its handshakes (on two ranks of the
//! chute, 265 KB each way a step: about 8 µs to read in place against 57 µs
//! for the exchange of the same bytes through Open MPI's shared-memory
//! transport, measured by a C loop of either).
//!
//! Where ranks cannot share memory (one process, ranks on different
//! nodes, or `GRAVEL_HALO=messages`), the transport gives none and every
//! byte goes by message.

/// The environment variable that chooses how the halo update reaches the
/// ranks of the same node: `shared` (or nothing) through [`NodePages`],
/// `messages` by message, as it reaches the ranks of other nodes.
pub const HALO_VAR: &str = "GRAVEL_HALO";

/// Whether the halo may share pages with the ranks of its node, as
/// [`HALO_VAR`] asks: `Ok(true)` for `shared` or nothing, `Ok(false)` for
/// `messages`, an error naming the value and what is allowed otherwise.
pub fn sharing_requested(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("") | Some("shared") => Ok(true),
        Some("messages") => Ok(false),
        Some(other) => Err(format!(
            "{HALO_VAR}={other:?}: must be \"shared\" (the default: the ranks of a node read each other's ghost states in place) or \"messages\""
        )),
    }
}

/// Refuse an unknown [`HALO_VAR`] before anything runs.
pub fn check_request() -> Result<(), String> {
    sharing_requested(std::env::var(HALO_VAR).ok().as_deref()).map(|_| ())
}

/// Pages this rank shares with the other ranks of its node: a part of its
/// own, which it writes, and theirs, which it reads. Made and dropped by
/// every rank of the node together (dropping is collective).
pub trait NodePages: Send + Sync {
    /// The bytes of this rank's part.
    fn len(&self) -> usize;
    /// Whether this rank's part is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// This rank's part, to write. The other ranks see what it holds once
    /// every rank of the node has passed [`Self::publish`].
    fn own(&mut self) -> &mut [u8];
    /// Bytes `range` of the part of `rank`, a rank on this node.
    ///
    /// # Safety
    ///
    /// `rank` writes no byte of `range` while the slice lives: the caller's
    /// protocol (a [`Self::publish`], or fences around a meeting of the
    /// node's ranks ([`Self::fence`]), between that rank's writes and these
    /// reads, and none of its writes to `range` until this rank has passed
    /// the next one) must make sure of it, as no lock does.
    ///
    /// # Panics
    ///
    /// If `rank` is not on this node or `range` runs past its part.
    unsafe fn part_of(&self, rank: usize, range: std::ops::Range<usize>) -> &[u8];
    /// Make this rank's writes visible to the node and wait until every
    /// rank of the node has done the same: after it, each reads what the
    /// others wrote before it. Collective over the node.
    fn publish(&self);
    /// Half of [`Self::publish`] without its wait: order this rank's
    /// writes before, and its reads after, a meeting of the node's ranks
    /// that the caller makes itself (a collective call over a communicator
    /// that holds them all, such as the step's reduction). Writes, fence,
    /// the meeting, fence on the readers' side, reads: the same as a
    /// publish. Not collective.
    fn fence(&self);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_chooses_shared_pages_or_messages() {
        assert_eq!(sharing_requested(None), Ok(true));
        assert_eq!(sharing_requested(Some("")), Ok(true));
        assert_eq!(sharing_requested(Some("shared")), Ok(true));
        assert_eq!(sharing_requested(Some(" messages ")), Ok(false));
        for bad in ["message", "SHARED", "mpi"] {
            let err = sharing_requested(Some(bad)).unwrap_err();
            assert!(err.contains(&format!("GRAVEL_HALO={bad:?}")), "{err}");
            assert!(
                err.contains("\"shared\"") && err.contains("\"messages\""),
                "{err}"
            );
        }
    }
}
