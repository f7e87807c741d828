//! Ranks that each checked a part of the set-up agreeing on one error.

use super::context::Ctx;
use crate::error::{GravelError, Result};
use crate::parallel::comm::Comm;

/// `local`, this process's outcome of checking its part; on several ranks
/// (`comm`) the lowest rank's error, the same on every rank. Where the
/// parts are in order by rank (a lattice's parts, a file's slices), that
/// is the first error in the whole's order. Collective on several ranks.
///
/// # Errors
/// The lowest rank's error.
pub(super) fn lowest_rank_error(
    cx: &Ctx,
    comm: Option<&dyn Comm>,
    local: Result<()>,
) -> Result<()> {
    let Some(comm) = comm.filter(|c| c.size() > 1) else {
        return local;
    };
    let message = match local {
        Ok(()) => String::new(),
        Err(GravelError::Config { message, .. }) => message,
        Err(other) => other.to_string(),
    };
    match comm
        .all_gather(message.as_bytes())
        .iter()
        .find(|m| !m.is_empty())
    {
        Some(m) => Err(GravelError::config(
            cx.file,
            String::from_utf8_lossy(m).into_owned(),
        )),
        None => Ok(()),
    }
}
