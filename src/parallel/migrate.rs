//! Migration: at a rebuild, every owned particle that left this rank's
//! subdomain goes to its new owner with its contact history (its wall
//! records and its pair records, keyed by partner id), so that no record is
//! ever lost between ranks.

use crate::error::{GravelError, Result};
use crate::neighbor::carry::HistoryRows;
use crate::parallel::comm::Comm;
use crate::parallel::grid::Decomposition;
use crate::state::history::WallHistory;
use crate::state::pack::{Pack, Unpack};
use crate::state::particles::{pack_record, unpack_record, Particles};

/// Send every owned particle of `p` outside this rank's subdomain to its
/// owner among `peers` (the adjacent subdomains, [`Decomposition::peers`],
/// or the ranks a move of the cuts exchanges with,
/// [`crate::parallel::balance::transfer_peers`]), with its wall records (`walls`) and pair records (`rows`), and
/// take in the ones arriving; `step` names the step in errors. Returns the
/// pair records of the particles now owned, in their new order (the kept
/// ones first, in their order, then the arrivals, rank by rank).
/// Collective.
///
/// # Errors
/// When a particle's new owner is not among `peers` (it travelled farther
/// than one subdomain since the last rebuild): the lowest such id
/// anywhere is named, on every rank.
pub fn migrate(
    p: &mut Particles,
    walls: &mut WallHistory,
    rows: HistoryRows,
    decomp: &Decomposition,
    peers: &[usize],
    comm: &dyn Comm,
    step: u64,
) -> Result<HistoryRows> {
    let me = decomp.rank;
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); peers.len()];
    let mut keep = Vec::with_capacity(p.n_owned);
    let mut stray: Option<(usize, usize)> = None;
    for k in 0..p.n_owned {
        let owner = decomp.owner(p.x[k]);
        if owner == me {
            keep.push(k);
            continue;
        }
        let Ok(q) = peers.binary_search(&owner) else {
            if stray.is_none_or(|(j, _)| p.id[k] < p.id[j]) {
                stray = Some((k, owner));
            }
            continue;
        };
        let b = &mut bufs[q];
        pack_record(&p.record(k), b);
        b.put_f64s(walls.row(k));
        rows.pack_row(k, b);
    }
    let first_stray = comm.min_u64(stray.map_or(u64::MAX, |(k, _)| p.id[k]));
    if first_stray != u64::MAX {
        return Err(match stray {
            Some((k, owner)) if p.id[k] == first_stray => GravelError::Run(format!(
                "particle id {} at position {:?} on step {step} moved from rank {me} to rank {owner}, which is not adjacent: it travelled farther than one subdomain between neighbour-list rebuilds",
                p.id[k],
                p.x[k].to_array(),
            )),
            _ => GravelError::Elsewhere(format!(
                "particle id {first_stray} on another rank left the neighbourhood of its subdomain on step {step}"
            )),
        });
    }
    let recv = comm.exchange(peers, &bufs);
    let mut out = rows;
    out.retain_rows(&keep);
    // The particles that stay, in place (no array copied whole), then the
    // arrivals; every force is recomputed before its next use.
    p.retain_owned(&keep);
    walls.reorder(&keep);
    for b in &recv {
        let mut u = Unpack::new(b);
        while !u.is_empty() {
            p.push_owned(&unpack_record(&mut u));
            walls.push_row(&u.f64s());
            out.unpack_row(&mut u);
        }
    }
    Ok(out)
}
