//! What a `random` block avoids: the blocks before it.
//!
//! A fill's spheres keep clear of every sphere the earlier blocks put
//! down. How a placing finds those spheres near the cells it visits
//! depends on the block:
//!
//! - a `lattice` is asked by index arithmetic (it holds nothing);
//! - `list` blocks and relaxed fills are held whole on every rank (their
//!   records are the config's, or one process's relaxation);
//! - an earlier `random` count is placed again where it is needed (its
//!   cells near the box);
//! - a `file` is held by one process whole, but on several ranks each rank
//!   holds only the spheres of its own slice of the file. Before a placing
//!   the ranks say which boxes they need ([`Earlier::requests`]; the boxes
//!   follow from the cells alone, never from where spheres fell) and send
//!   each other the spheres of their slices that lie in them
//!   ([`NearFiles::fetch`]), in the file's order. So no rank holds a
//!   file's spheres beyond its slice and the neighbourhoods it places.
//!
//! A placing's result depends only on whether a candidate overlaps some
//! earlier sphere, so any set of earlier spheres that holds every one
//! within reach of the visited cells gives the same spheres, bit for bit.

use std::sync::Arc;

use glam::DVec3;

use super::cells::{RandomFill, Unplaced};
use super::initial::Lattice;
use super::Placer;
use crate::geometry::domain::Domain;
use crate::parallel::comm::Comm;
use crate::state::pack::{Pack, Unpack};

/// A `file` block's spheres, as far as a later fill needs them.
#[derive(Debug, Clone)]
pub struct EarlierFile {
    /// The config block index.
    pub block: usize,
    /// The rows of the whole file.
    pub rows: u64,
    /// Its largest radius.
    pub r_max: f64,
    /// Centre and radius of the spheres this process holds: the whole
    /// file's (`whole`), or those of its rank's slice.
    pub spheres: Arc<Vec<(DVec3, f64)>>,
    /// Whether `spheres` is the whole file.
    pub whole: bool,
}

/// What an earlier block leaves for a fill to avoid.
#[derive(Debug, Clone, Default)]
pub struct Earlier {
    lattices: Vec<Lattice>,
    /// Held records (`list` blocks, relaxed fills): centre and radius, a
    /// shared list per block (each fill after them shares it).
    held: Vec<Arc<Vec<(DVec3, f64)>>>,
    files: Vec<EarlierFile>,
    fills: Vec<RandomFill>,
    /// The largest radius of any of them.
    r_max: f64,
}

/// A box of a file's spheres that a placing needs: `(file block, lo, hi)`,
/// the box possibly running past the domain along periodic axes.
pub type Request = (usize, DVec3, DVec3);

/// The spheres of earlier files near what this process places: for each
/// file block, those in the boxes asked for (perhaps more), in the file's
/// order.
#[derive(Debug, Clone, Default)]
pub struct NearFiles {
    by_block: Vec<(usize, Vec<(DVec3, f64)>)>,
}

impl Earlier {
    /// Add a lattice.
    pub fn push_lattice(&mut self, lattice: Lattice) {
        self.r_max = self.r_max.max(lattice.radius());
        self.lattices.push(lattice);
    }

    /// Add a held block's spheres.
    pub fn push_held(&mut self, spheres: Arc<Vec<(DVec3, f64)>>) {
        let r = spheres.iter().map(|s| s.1).fold(0.0, f64::max);
        self.r_max = self.r_max.max(r);
        self.held.push(spheres);
    }

    /// Add a file.
    pub fn push_file(&mut self, file: EarlierFile) {
        self.r_max = self.r_max.max(file.r_max);
        self.files.push(file);
    }

    /// Add a random count.
    pub fn push_fill(&mut self, fill: RandomFill) {
        self.r_max = self.r_max.max(fill.dist().max());
        self.fills.push(fill);
    }

    /// The random counts.
    pub fn fills(&self) -> &[RandomFill] {
        &self.fills
    }

    /// The files.
    pub fn files(&self) -> &[EarlierFile] {
        &self.files
    }

    /// Append to `out` every file these blocks avoid, directly or through
    /// an earlier fill, that `out` lacks.
    fn collect_files(&self, out: &mut Vec<EarlierFile>) {
        for f in &self.files {
            if !out.iter().any(|o| o.block == f.block) {
                out.push(f.clone());
            }
        }
        for e in &self.fills {
            e.earlier().collect_files(out);
        }
    }

    /// The largest radius of any earlier sphere.
    #[must_use]
    pub fn r_max(&self) -> f64 {
        self.r_max
    }

    /// How many blocks and spheres there are, for a fill's fingerprint:
    /// lattices, spheres of the held blocks and files, random counts.
    #[must_use]
    pub fn counts(&self) -> (usize, u64, usize) {
        let held: u64 = self.held.iter().map(|b| b.len() as u64).sum();
        let files: u64 = self.files.iter().map(|f| f.rows).sum();
        (self.lattices.len(), held + files, self.fills.len())
    }

    /// The boxes of file spheres that placing the cells which visit
    /// `lo..=hi` needs (`lo..=hi` already widened by the reach of the
    /// placing's candidates and of these spheres), appended to `out`;
    /// an earlier fill's own earlier files are asked for where it is
    /// placed.
    pub fn requests(&self, lo: DVec3, hi: DVec3, out: &mut Vec<Request>) {
        out.extend(self.files.iter().map(|f| (f.block, lo, hi)));
        for f in &self.fills {
            f.requests_near(lo, hi, out);
        }
    }

    /// Record in `placer` every earlier sphere that may lie within the
    /// box `lo..=hi` (lattices by their rule, held blocks whole, files
    /// from `near` or, without it, whole, earlier fills placed near the
    /// box).
    ///
    /// # Errors
    /// An earlier fill's sphere that found no room.
    pub fn record_near(
        &self,
        lo: DVec3,
        hi: DVec3,
        domain: &Domain,
        near: Option<&NearFiles>,
        placer: &mut Placer,
    ) -> Result<(), Unplaced> {
        for l in &self.lattices {
            placer.add_lattice(l);
        }
        for &(x, r) in self.held.iter().flat_map(|b| b.iter()) {
            placer.add(x, r);
        }
        for f in &self.files {
            for (x, r) in file_spheres(f, lo, hi, domain, near) {
                placer.add(x, r);
            }
        }
        for f in &self.fills {
            for (_, x, r) in f.place_near(lo, hi, near)? {
                placer.add(x, r);
            }
        }
        Ok(())
    }
}

/// The spheres of `file` in the box `lo..=hi` (or a periodic image of
/// it): from `near` where given, else from the spheres held whole.
///
/// # Panics
/// Without `near`, if the file is held by slices (several ranks must
/// fetch what they need: [`NearFiles::fetch`]).
#[must_use]
pub fn file_spheres(
    file: &EarlierFile,
    lo: DVec3,
    hi: DVec3,
    domain: &Domain,
    near: Option<&NearFiles>,
) -> Vec<(DVec3, f64)> {
    let from: &[(DVec3, f64)] = match near {
        Some(n) => n.of(file.block),
        None => {
            assert!(
                file.whole,
                "file block {} is held by slices: fetch its spheres near the box first",
                file.block
            );
            &file.spheres
        }
    };
    (from.iter().copied())
        .filter(|&(x, _)| domain.in_box_periodic(x, lo, hi))
        .collect()
}

impl NearFiles {
    /// The spheres of file block `block` (none if it was not asked for).
    #[must_use]
    pub fn of(&self, block: usize) -> &[(DVec3, f64)] {
        (self.by_block.iter())
            .find(|(b, _)| *b == block)
            .map_or(&[], |(_, s)| s.as_slice())
    }

    /// Every rank's `requests` answered from the slices the ranks hold
    /// (`files`: every file a fill avoids, each rank's own slice of it),
    /// in the file's order (the slices in rank order). Collective: every
    /// rank calls it at the same point, with its own requests. Without
    /// `comm`, or on one rank, the files are whole and the requests are
    /// answered from them.
    #[must_use]
    pub fn fetch(
        comm: Option<&dyn Comm>,
        files: &[EarlierFile],
        requests: &[Request],
        domain: &Domain,
    ) -> NearFiles {
        let in_any = |reqs: &[Request], block: usize, x: DVec3| {
            (reqs.iter()).any(|&(b, lo, hi)| b == block && domain.in_box_periodic(x, lo, hi))
        };
        let pick = |reqs: &[Request], file: &EarlierFile| -> Vec<(DVec3, f64)> {
            (file.spheres.iter().copied())
                .filter(|&(x, _)| in_any(reqs, file.block, x))
                .collect()
        };
        let Some(comm) = comm.filter(|c| c.size() > 1) else {
            let by_block = files.iter().map(|f| (f.block, pick(requests, f))).collect();
            return NearFiles { by_block };
        };
        let mut mine = Vec::with_capacity(56 * requests.len());
        for &(b, lo, hi) in requests {
            mine.put_u64(b as u64);
            mine.put_vec3(lo);
            mine.put_vec3(hi);
        }
        let asked: Vec<Vec<Request>> = (comm.all_gather(&mine).iter())
            .map(|buf| {
                let mut u = Unpack::new(buf);
                let mut reqs = Vec::new();
                while !u.is_empty() {
                    let b = u.u64() as usize;
                    let lo = u.vec3();
                    reqs.push((b, lo, u.vec3()));
                }
                reqs
            })
            .collect();
        let me = comm.rank();
        let peers: Vec<usize> = (0..comm.size()).filter(|&r| r != me).collect();
        let sends: Vec<Vec<u8>> = (peers.iter())
            .map(|&r| {
                let mut buf = Vec::new();
                for f in files {
                    let spheres = pick(&asked[r], f);
                    buf.put_u64(spheres.len() as u64);
                    for (x, s) in spheres {
                        buf.put_vec3(x);
                        buf.put_f64(s);
                    }
                }
                buf
            })
            .collect();
        let got = comm.exchange(&peers, &sends);
        let mut by_block: Vec<(usize, Vec<(DVec3, f64)>)> =
            files.iter().map(|f| (f.block, Vec::new())).collect();
        let mut readers: Vec<Unpack> = got.iter().map(|b| Unpack::new(b)).collect();
        for (k, f) in files.iter().enumerate() {
            // The slices in rank order: the file's order.
            for r in 0..comm.size() {
                if r == me {
                    by_block[k].1.extend(pick(requests, f));
                    continue;
                }
                let u = &mut readers[if r < me { r } else { r - 1 }];
                for _ in 0..u.u64() {
                    let x = u.vec3();
                    by_block[k].1.push((x, u.f64()));
                }
            }
        }
        NearFiles { by_block }
    }
}

/// Every file that the fills of `fills` avoid, directly or through an
/// earlier fill, once each, in block order.
#[must_use]
pub fn files_avoided<'a>(fills: impl IntoIterator<Item = &'a RandomFill>) -> Vec<EarlierFile> {
    let mut out = Vec::new();
    for f in fills {
        f.earlier().collect_files(&mut out);
    }
    out.sort_by_key(|f| f.block);
    out
}
