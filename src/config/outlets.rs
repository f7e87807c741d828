//! `[[outlet]]`: the regions that delete particles, with their output
//! names, and the refusal of a particle that starts inside one.

use super::agree::lowest_rank_error;
use super::context::Ctx;
use super::file_slices::walk_checking;
use super::region::shaped_region;
use super::schema::OutletConfig;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::outlet::Outlet;
use crate::insert::cells::unplaced_message;
use crate::insert::initial::{Initial, InitialBlock};
use crate::parallel::comm::Comm;
use crate::state::particles::ParticleRecord;

/// The outlets of `[[outlet]]`, in config order: each region of any kind
/// (`shaped_region`: inside the domain), each name as given or
/// `outlet<k>`, under the output name rule ([`Ctx::names`]).
pub(super) fn outlets(cx: &Ctx, cfg: &[OutletConfig], domain: &Domain) -> Result<Vec<Outlet>> {
    let names: Vec<String> = cfg
        .iter()
        .enumerate()
        .map(|(k, o)| o.name.clone().unwrap_or_else(|| format!("outlet{k}")))
        .collect();
    cx.names(
        "outlet",
        names
            .iter()
            .enumerate()
            .map(|(k, n)| (format!("outlet[{k}].name"), n.as_str())),
    )?;
    cfg.iter()
        .zip(names)
        .enumerate()
        .map(|(k, (o, name))| {
            let region = shaped_region(cx, &format!("outlet[{k}]"), &o.region, domain)?;
            Ok(Outlet::new(name, region))
        })
        .collect()
}

/// Refuse a particle present at step 0 whose centre (wrapped into the box)
/// lies in an outlet, frozen or not: the first step would delete it, so the
/// set-up is not what it says. Names the first such particle (in config
/// order) and the outlet. Each block is walked by its own rule: a listed
/// block whole, a lattice by parts and a file by slices on several ranks
/// (the ranks agree on the first fault), a random count only where its
/// cells meet an outlet. Collective on several ranks.
pub(super) fn check_initial(
    cx: &Ctx,
    outlets: &[Outlet],
    initial: &Initial,
    domain: &Domain,
    comm: Option<&dyn Comm>,
) -> Result<()> {
    if outlets.is_empty() {
        return Ok(());
    }
    let inside = |r: &ParticleRecord| -> Result<()> {
        let at = domain.wrap(r.x);
        match outlets.iter().position(|o| o.contains(at)) {
            Some(k) => Err(cx.err(format!(
                "outlet[{k}] (`{}`): particle id {} at {:?} starts inside this {} region; particles present at step 0 may not lie in an outlet (the first step would delete them): move the outlet or the particles",
                outlets[k].name,
                r.id,
                r.x.to_array(),
                outlets[k].region.kind()
            ))),
            None => Ok(()),
        }
    };
    let comm = comm.filter(|c| c.size() > 1);
    for (k, b) in initial.blocks() {
        match b {
            InitialBlock::Records(records) => records.iter().try_for_each(inside)?,
            InitialBlock::Lattice(l) => lowest_rank_error(cx, comm, l.try_for_each_part(inside))?,
            InitialBlock::File(file) => {
                walk_checking(cx, &format!("particles[{k}]"), file, comm, inside)?;
            }
            InitialBlock::Random(fill) => {
                // The spheres of the cells near each outlet (every rank
                // places the same); the first inside one, in id order.
                let mut first: Option<ParticleRecord> = None;
                for o in outlets {
                    let (lo, hi) = o.region.bounds();
                    let placed = (fill.place_near_fetching(lo, hi, comm))
                        .map_err(|u| cx.err(unplaced_message(k, &u)))?;
                    for (i, x, r) in placed {
                        let p = fill.record(i, x, r);
                        if inside(&p).is_err() && first.as_ref().is_none_or(|f| p.id < f.id) {
                            first = Some(p);
                        }
                    }
                }
                if let Some(p) = first {
                    inside(&p)?;
                }
            }
        }
    }
    Ok(())
}
