//! `[[outlet]]`: the regions that delete particles, with their output
//! names, and the refusal of a particle that starts inside one.

use super::context::Ctx;
use super::region::shaped_region;
use super::schema::OutletConfig;
use crate::error::Result;
use crate::geometry::domain::Domain;
use crate::geometry::outlet::Outlet;
use crate::insert::initial::Initial;
use crate::parallel::comm::Comm;

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
/// order) and the outlet.
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
    super::file_slices::try_for_each_initial(cx, initial, comm, |_, r| {
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
    })
}
