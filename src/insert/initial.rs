//! The particles present at step 0, as blocks that are walked, not held.
//!
//! A `lattice` block is a rule, not a list: [`Lattice`] gives its sites one
//! at a time, in the order and with the ids the block assigns, and answers
//! "which sites lie near this point" by index arithmetic. So no rank ever
//! holds a lattice's particles, nor walks them all: on several ranks each
//! rank counts, checks and histograms its part of the sites
//! ([`Lattice::new_in_parts`], [`Share`]), and takes those in its
//! subdomain ([`Initial::place_near`]; a box lattice's by index
//! arithmetic, a curved one's from every rank's part, sent to the
//! owners). A `random` block with a `count` is a rule too
//! ([`RandomFill`]): each rank places only the cells near its subdomain,
//! and fetches the spheres of earlier files it must avoid near those
//! cells from the ranks' slices ([`super::earlier`]). A `file` block is
//! read, not held ([`ParticleFile`]): walks read it in bounded pieces,
//! and each rank reads one slice of it and sends the particles to their
//! owners. Blocks whose particles are listed
//! (`list`, and a `random` block's relaxed `fill`) are held as records
//! ([`InitialBlock::Records`]) on every rank.

use glam::DVec3;

use super::cells::{RandomFill, Unplaced};
use super::earlier::{files_avoided, EarlierFile, NearFiles, Request};
use super::file::{FileWalk, ParticleFile};
use crate::geometry::region::Region;
use crate::parallel::comm::Comm;
use crate::state::particles::ParticleRecord;

/// The particles present at step 0, block by block, in id order.
#[derive(Debug, Clone, Default)]
pub struct Initial {
    /// `(config block index, block)`, in the order their ids were given.
    blocks: Vec<(usize, InitialBlock)>,
    /// This process's share of the set-up walks.
    share: Share,
}

/// A process's share of the set-up's walks over the initial particles:
/// rank `rank` of `size` walks an even share of each listed block's
/// records, of each lattice's sites ([`Lattice::new_in_parts`]) and of
/// each random fill's cells; one process (`0` of `1`) walks them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// This process's rank.
    pub rank: usize,
    /// The number of ranks.
    pub size: usize,
}

impl Default for Share {
    fn default() -> Self {
        Share { rank: 0, size: 1 }
    }
}

impl Share {
    /// This share's part of `n` items, `lo..hi`.
    #[must_use]
    pub fn of(&self, n: usize) -> std::ops::Range<usize> {
        let (lo, hi) = share(n, self.rank, self.size);
        lo..hi
    }
}

/// Whether a walk reads the `file` blocks or leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// Read every file whole (in bounded pieces).
    Read,
    /// Leave the files out: each rank has read its slice of them.
    Skip,
}

/// One block's particles.
#[derive(Debug, Clone)]
pub enum InitialBlock {
    /// Records held whole.
    Records(Vec<ParticleRecord>),
    /// A lattice, generated whenever it is walked.
    Lattice(Box<Lattice>),
    /// A random fill, placed where it is needed.
    Random(Box<RandomFill>),
    /// A file, read where it is needed.
    File(Box<ParticleFile>),
}

impl Initial {
    /// Walk this process's share at set-up ([`Share`]): lattices built
    /// with [`Lattice::new_in_parts`] on the same ranks.
    pub fn set_share(&mut self, share: Share) {
        self.share = share;
    }

    /// Append the block of `[[particles]]` entry `block`.
    pub fn push(&mut self, block: usize, particles: InitialBlock) {
        self.blocks.push((block, particles));
    }

    /// The blocks, with their config block index.
    pub fn blocks(&self) -> impl Iterator<Item = (usize, &InitialBlock)> {
        self.blocks.iter().map(|(k, b)| (*k, b))
    }

    /// The number of particles.
    #[must_use]
    pub fn len(&self) -> usize {
        self.blocks.iter().map(|(_, b)| b.len()).sum()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The particles held as records, rather than generated: what every
    /// rank holds of the set-up (see the module documentation).
    #[must_use]
    pub fn held(&self) -> usize {
        (self.blocks.iter())
            .map(|(_, b)| match b {
                InitialBlock::Records(r) => r.len(),
                InitialBlock::Lattice(_) | InitialBlock::Random(_) | InitialBlock::File(_) => 0,
            })
            .sum()
    }

    /// Call `f(block, record)` for every particle, in id order.
    pub fn for_each(&self, mut f: impl FnMut(usize, &ParticleRecord)) {
        let _ = self.try_for_each(|k, r| {
            f(k, r);
            Ok::<(), ()>(())
        });
    }

    /// [`Self::for_each`], stopping at the first error.
    ///
    /// A random fill is placed slab by slab (bounded memory, but the work
    /// of placing it all): a walk assumes that it places, which
    /// [`Self::check_placed`] or [`Self::place_near`] tells; one that does
    /// not ends its block's walk at the slab that failed. A file is read
    /// in pieces; one that cannot be read (or changed since the config was
    /// checked) ends its block's walk, and [`ParticleFile::read_part`]
    /// tells.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each<E>(
        &self,
        mut f: impl FnMut(usize, &ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        for (k, b) in &self.blocks {
            b.try_for_each(|r| f(*k, r))?;
        }
        Ok(())
    }

    /// Call `f(block, record)` for this process's share ([`Share`]) of the
    /// particles of the blocks that are listed, read or generated at their
    /// sites (the checks a random fill passes by construction need not
    /// place it): its share of each `list` block and relaxed fill, its
    /// part of each lattice, and of each file (with [`Files::Read`]) its
    /// slice. One process walks them all; on several ranks the shares
    /// together are every particle once.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each_share<E>(
        &self,
        files: Files,
        mut f: impl FnMut(usize, &ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        let share = self.share;
        for (k, b) in &self.blocks {
            match b {
                InitialBlock::Records(records) => {
                    records[share.of(records.len())]
                        .iter()
                        .try_for_each(|r| f(*k, r))?;
                }
                InitialBlock::Lattice(lattice) => lattice.try_for_each_part(|r| f(*k, r))?,
                InitialBlock::File(file) if files == Files::Read => {
                    match file.walk_part(share.rank, share.size, |r| f(*k, r)) {
                        Ok(_) | Err(FileWalk::Unread(_)) => {}
                        Err(FileWalk::Stopped(e)) => return Err(e),
                    }
                }
                InitialBlock::File(_) | InitialBlock::Random(_) => {}
            }
        }
        Ok(())
    }

    /// A sample of the bodies (radius, mass, material, frozen flag,
    /// velocity) for extremes: every listed particle, of a lattice its
    /// template (the first site's id, at the origin: every site's body is
    /// the same), of a file its first particle of the smallest radius and
    /// its first of the largest (found when it was checked:
    /// [`ParticleFile::extremes`]), in block order; then of each random
    /// fill its distribution's smallest and largest sphere. Ids are real;
    /// a fill's sample positions are its region's centre.
    pub fn for_each_body(&self, mut f: impl FnMut(usize, &ParticleRecord)) {
        for (k, b) in &self.blocks {
            match b {
                InitialBlock::Records(records) => records.iter().for_each(|r| f(*k, r)),
                // Every site's particle is the template but for its id
                // and position: one stands for all, without a walk.
                InitialBlock::Lattice(lattice) if lattice.count() > 0 => f(*k, lattice.template()),
                InitialBlock::Lattice(_) => {}
                InitialBlock::File(file) => {
                    file.extremes().into_iter().flatten().for_each(|r| f(*k, r))
                }
                InitialBlock::Random(_) => {}
            }
        }
        for (k, b) in &self.blocks {
            if let InitialBlock::Random(fill) = b {
                if fill.count() > 0 {
                    let (lo, hi) = fill.region().bounds();
                    for r in [fill.dist().min(), fill.dist().max()] {
                        f(*k, &fill.record(0, 0.5 * (lo + hi), r));
                    }
                }
            }
        }
    }

    /// Call `f(x, n)` with where this process's share of the particles
    /// are ([`Self::try_for_each_share`]), `n` at a time: each listed,
    /// read or lattice particle at its centre, a random fill's spheres
    /// spread over their cells (for cutting the decomposition; on several
    /// ranks the ranks add their shares up). With [`Files::Skip`], the
    /// files are left out (each rank adds its slice of them).
    pub fn for_each_weighted(&self, files: Files, mut f: impl FnMut(DVec3, u64)) {
        let _ = self.try_for_each_share(files, |_, r| {
            f(r.x, 1);
            Ok::<(), ()>(())
        });
        for (_, b) in &self.blocks {
            if let InitialBlock::Random(fill) = b {
                fill.for_each_cell_point(self.share, &mut f);
            }
        }
    }

    /// The box holding this process's share of the particles whole (a
    /// random fill: its region), or `None` for none; with [`Files::Skip`],
    /// the files left out. On several ranks the union of the ranks' boxes
    /// holds every particle.
    #[must_use]
    pub fn bounds(&self, files: Files) -> Option<(DVec3, DVec3)> {
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        let _ = self.try_for_each_share(files, |_, p| {
            lo = lo.min(p.x - p.radius);
            hi = hi.max(p.x + p.radius);
            Ok::<(), ()>(())
        });
        for (_, b) in &self.blocks {
            if let InitialBlock::Random(fill) = b {
                if fill.count() > 0 {
                    let (a, c) = fill.region().bounds();
                    (lo, hi) = (lo.min(a), hi.max(c));
                }
            }
        }
        lo.cmple(hi).all().then_some((lo, hi))
    }

    /// The random fills, with their config block index.
    pub fn fills(&self) -> impl Iterator<Item = (usize, &RandomFill)> {
        self.blocks.iter().filter_map(|(k, b)| match b {
            InitialBlock::Random(f) => Some((*k, &**f)),
            _ => None,
        })
    }

    /// The files, with their config block index.
    pub fn files(&self) -> impl Iterator<Item = (usize, &ParticleFile)> {
        self.blocks.iter().filter_map(|(k, b)| match b {
            InitialBlock::File(f) => Some((*k, &**f)),
            _ => None,
        })
    }

    /// Place every random fill whole, slab by slab (bounded memory):
    /// whether each places its count.
    ///
    /// # Errors
    /// The block index and the first sphere that found no room.
    pub fn check_placed(&self) -> Result<(), (usize, Unplaced)> {
        for (k, fill) in self.fills() {
            fill.try_for_each(|_, _, _| Ok::<(), Unplaced>(()))
                .map_err(|u| (k, u))?;
        }
        Ok(())
    }

    /// The files that the random fills avoid, once each: what
    /// [`NearFiles::fetch`] answers [`Self::requests_near`] from.
    #[must_use]
    pub fn files_avoided(&self) -> Vec<EarlierFile> {
        files_avoided(self.fills().map(|(_, f)| f))
    }

    /// The boxes of earlier files' spheres that [`Self::place_near`]
    /// (`lo..=hi`) needs.
    #[must_use]
    pub fn requests_near(&self, lo: DVec3, hi: DVec3) -> Vec<Request> {
        let mut out = Vec::new();
        for (_, fill) in self.fills() {
            fill.requests_near(lo, hi, &mut out);
        }
        out
    }

    /// This process's part of each lattice whose sites cannot be found by
    /// index arithmetic (not [`Lattice::is_indexed`]: a curved region),
    /// which [`Self::place_near`] leaves out: each rank walks its part and
    /// sends the particles to their owners.
    pub fn for_each_unindexed_part(&self, mut f: impl FnMut(&ParticleRecord)) {
        for (_, b) in &self.blocks {
            if let InitialBlock::Lattice(lattice) = b {
                if !lattice.is_indexed() {
                    let _ = lattice.try_for_each_part(|r| {
                        f(r);
                        Ok::<(), ()>(())
                    });
                }
            }
        }
    }

    /// Every particle of the listed blocks, those of an indexed lattice's
    /// sites near the box `lo..=hi` ([`Lattice::try_for_each_in`]), and of each
    /// random fill the spheres of the cells that overlap the box, in id
    /// order within each block: a superset of those in the box, for a rank
    /// to keep its own. A box lattice and a fill cost the sites and cells
    /// near the box only. Files are not read here: each rank reads a slice
    /// of each ([`Self::files`]) and sends the particles to their owners.
    /// The spheres of files held by slices that the fills avoid come from
    /// `near` (fetched for [`Self::requests_near`]).
    ///
    /// # Errors
    /// The block index and the first sphere that found no room.
    pub fn place_near(
        &self,
        lo: DVec3,
        hi: DVec3,
        near: Option<&NearFiles>,
        mut f: impl FnMut(usize, &ParticleRecord),
    ) -> Result<(), (usize, Unplaced)> {
        for (k, b) in &self.blocks {
            match b {
                InitialBlock::Records(records) => records.iter().for_each(|r| f(*k, r)),
                InitialBlock::Lattice(lattice) if lattice.is_indexed() => {
                    let _ = lattice.try_for_each_in(lo, hi, |r| {
                        f(*k, r);
                        Ok::<(), ()>(())
                    });
                }
                InitialBlock::Lattice(_) | InitialBlock::File(_) => {}
                InitialBlock::Random(fill) => {
                    let placed = fill.place_near(lo, hi, near).map_err(|u| (*k, u))?;
                    for (i, x, r) in placed {
                        f(*k, &fill.record(i, x, r));
                    }
                }
            }
        }
        Ok(())
    }

    /// Every particle, in id order (for tests and small runs: this holds
    /// them all).
    #[must_use]
    pub fn to_vec(&self) -> Vec<ParticleRecord> {
        let mut out = Vec::with_capacity(self.len());
        self.for_each(|_, r| out.push(r.clone()));
        out
    }

    /// Drop the records held (once every rank has taken its own); the
    /// lattices, which hold nothing, stay.
    pub fn release(&mut self) {
        for (_, b) in &mut self.blocks {
            if let InitialBlock::Records(r) = b {
                *r = Vec::new();
            }
        }
    }
}

impl InitialBlock {
    /// Call `f` with every particle of the block, as
    /// [`Initial::try_for_each`] does, stopping at the first error.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each<E>(
        &self,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            InitialBlock::Records(records) => records.iter().try_for_each(f),
            InitialBlock::Lattice(lattice) => lattice.try_for_each(f),
            InitialBlock::File(file) => walk_file(file, f),
            InitialBlock::Random(fill) => {
                let walked =
                    fill.try_for_each(|i, x, r| f(&fill.record(i, x, r)).map_err(Walk::Stopped));
                match walked {
                    Ok(()) | Err(Walk::Unplaced) => Ok(()),
                    Err(Walk::Stopped(e)) => Err(e),
                }
            }
        }
    }
}

/// Walk `file`, ending quietly where it cannot be read (see
/// [`Initial::try_for_each`]).
fn walk_file<E>(
    file: &ParticleFile,
    f: impl FnMut(&ParticleRecord) -> Result<(), E>,
) -> Result<(), E> {
    match file.try_for_each(f) {
        Ok(()) | Err(FileWalk::Unread(_)) => Ok(()),
        Err(FileWalk::Stopped(e)) => Err(e),
    }
}

/// Why a walk over a random fill ended early.
enum Walk<E> {
    Stopped(E),
    Unplaced,
}

impl<E> From<Unplaced> for Walk<E> {
    fn from(_: Unplaced) -> Self {
        Walk::Unplaced
    }
}

impl InitialBlock {
    /// The number of particles.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            InitialBlock::Records(r) => r.len(),
            InitialBlock::Lattice(l) => l.count,
            InitialBlock::Random(f) => usize::try_from(f.count()).unwrap_or(usize::MAX),
            InitialBlock::File(f) => usize::try_from(f.rows()).unwrap_or(usize::MAX),
        }
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A simple cubic lattice of equal spheres: the sites
/// `lo + R + spacing · (i, j, k)` inside `[lo, hi]` (whole spheres), in
/// x-fastest order, those whose sphere the block's region holds, at most
/// `limit` of them; the `n`-th kept site is particle `first_id + n`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lattice {
    lo: DVec3,
    /// Sites along x, y, z.
    shape: [usize; 3],
    spacing: f64,
    region: Region,
    /// One past the x-fastest index of the last kept site.
    end: usize,
    /// Kept sites.
    count: usize,
    /// The record of every site but its id and position.
    template: ParticleRecord,
    /// The sites this process walks at set-up.
    part: Part,
}

/// The sites one process walks at set-up: the x-fastest site indices
/// `lo..hi`, with `before` kept sites ahead of them. One process walks
/// them all; on several ranks each walks an even share of the indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Part {
    lo: usize,
    hi: usize,
    before: usize,
}

/// Rank `rank`'s even share of `n` indices, of `size` ranks.
fn share(n: usize, rank: usize, size: usize) -> (usize, usize) {
    let at = |r: usize| (n as u128 * r as u128 / size as u128) as usize;
    (at(rank), at(rank + 1))
}

impl Lattice {
    /// The lattice of `region`'s bounds with sites `spacing` apart, keeping
    /// the sites whose sphere of radius `template.radius` `region` holds,
    /// at most `limit`. Walks the sites once to count them (no memory).
    #[must_use]
    pub fn new(region: Region, spacing: f64, limit: Option<u64>, template: ParticleRecord) -> Self {
        Self::new_in_parts(region, spacing, limit, template, None)
    }

    /// [`Self::new`], on several ranks (`comm`) by parts: each rank counts
    /// the kept sites of its even share of the site indices (stopping at
    /// `limit`), and the ranks add the counts up; the rank whose share
    /// holds the last kept site finds it. Each rank keeps its share as the
    /// part it walks at set-up ([`Self::try_for_each_part`]). The lattice
    /// is the same on every rank and on one process. Collective.
    #[must_use]
    pub fn new_in_parts(
        region: Region,
        spacing: f64,
        limit: Option<u64>,
        template: ParticleRecord,
        comm: Option<&dyn Comm>,
    ) -> Self {
        let (lo, hi) = region.bounds();
        let shape = super::lattice_shape(lo, hi, template.radius, spacing).map(|n| n as usize);
        let mut lattice = Lattice {
            lo,
            shape,
            spacing,
            region,
            end: 0,
            count: 0,
            template: ParticleRecord { id: 0, ..template },
            part: Part {
                lo: 0,
                hi: 0,
                before: 0,
            },
        };
        let limit = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
        let sites = shape.iter().product::<usize>();
        let comm = comm.filter(|c| c.size() > 1);
        let (rank, size) = comm.map_or((0, 1), |c| (c.rank(), c.size()));
        let (a, b) = share(sites, rank, size);
        // The kept sites of the share, up to `limit`, and one past the last.
        let walk = |lattice: &Lattice, want: usize| {
            let (mut kept, mut last) = (0, a);
            lattice.walk_range(a, b, |t, x| {
                if kept < want && lattice.keeps(x) {
                    kept += 1;
                    last = t + 1;
                }
                kept < want
            });
            (kept, last)
        };
        let (kept, last) = walk(&lattice, limit);
        let Some(comm) = comm else {
            lattice.count = kept;
            lattice.end = if kept == 0 { 0 } else { last };
            lattice.part = Part {
                lo: 0,
                hi: lattice.end,
                before: 0,
            };
            return lattice;
        };
        let mut counts = Vec::with_capacity(size);
        for buf in comm.all_gather(&(kept as u64).to_le_bytes()) {
            counts.push(u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) as usize);
        }
        let before: Vec<usize> = (counts.iter())
            .scan(0usize, |sum, &c| {
                let b = *sum;
                *sum = sum.saturating_add(c);
                Some(b)
            })
            .collect();
        let total = before[size - 1].saturating_add(counts[size - 1]);
        let count = total.min(limit);
        // The rank whose share holds the `count`-th kept site finds the
        // index after it.
        let mut end = [0u64];
        if count > 0 {
            let holder = (0..size)
                .find(|&r| before[r] + counts[r] >= count)
                .expect("the counts add up to at least `count`");
            if holder == rank {
                let (_, last) = walk(&lattice, count - before[rank]);
                end[0] = last as u64;
            }
        }
        comm.max_u64s(&mut end);
        lattice.count = count;
        lattice.end = end[0] as usize;
        lattice.part = Part {
            lo: a.min(lattice.end),
            hi: b.min(lattice.end),
            before: before[rank].min(count),
        };
        lattice
    }

    /// The particle radius.
    #[must_use]
    pub fn radius(&self) -> f64 {
        self.template.radius
    }

    /// The number of particles.
    #[must_use]
    pub fn count(&self) -> usize {
        self.count
    }

    /// A box holding every site's sphere whole (its region's bounds).
    #[must_use]
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.region.bounds()
    }

    /// The record every site's particle shares, but its id and position.
    #[must_use]
    pub fn template(&self) -> &ParticleRecord {
        &self.template
    }

    /// The id of the first site's particle.
    pub fn set_first_id(&mut self, id: u64) {
        self.template.id = id;
    }

    /// The site `(i, j, k)` (the bits `insert::lattice_positions` gives).
    fn site(&self, i: usize, j: usize, k: usize) -> DVec3 {
        self.lo
            + DVec3::splat(self.template.radius)
            + self.spacing * DVec3::new(i as f64, j as f64, k as f64)
    }

    /// Whether the region holds the sphere at `x`.
    fn keeps(&self, x: DVec3) -> bool {
        self.region.holds_sphere(x, self.template.radius)
    }

    /// Call `f(index, site)` for the sites of x-fastest indices `a..b`, in
    /// order, while it returns true.
    fn walk_range(&self, a: usize, b: usize, mut f: impl FnMut(usize, DVec3) -> bool) {
        let [nx, ny, _] = self.shape;
        let mut t = a;
        while t < b {
            let (i, j, k) = (t % nx, (t / nx) % ny, t / (nx * ny));
            let row_end = (t - i + nx).min(b);
            for ii in i..i + (row_end - t) {
                if !f(t, self.site(ii, j, k)) {
                    return;
                }
                t += 1;
            }
        }
    }

    /// The rule, written out exactly (a fingerprint of the particles: the
    /// same rule gives the same sites and ids).
    #[must_use]
    pub fn rule(&self) -> String {
        format!(
            "{:?}",
            (
                self.lo,
                self.shape,
                self.spacing,
                &self.region,
                self.end,
                self.count,
                &self.template
            )
        )
    }

    /// Whether every site before the last kept one is kept (a box region,
    /// or a count that stops the lattice early): then site `t` in x-fastest
    /// order is particle `first id + t`, and the sites near a box are found
    /// by index arithmetic ([`Self::try_for_each_in`]).
    #[must_use]
    pub fn is_indexed(&self) -> bool {
        self.count == self.end
    }

    /// Call `f(record)` for every particle, in id order.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each<E>(
        &self,
        f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        self.try_for_each_from(0, self.end, 0, f)
    }

    /// [`Self::try_for_each`] over the part of the sites this process walks
    /// at set-up (all of them on one process; an even share of them on
    /// each of several ranks: [`Self::new_in_parts`]), in id order.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each_part<E>(
        &self,
        f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        let p = self.part;
        self.try_for_each_from(p.lo, p.hi, p.before, f)
    }

    /// Call `f(record)` for the kept sites of indices `a..b`, `before` kept
    /// sites ahead of them.
    fn try_for_each_from<E>(
        &self,
        a: usize,
        b: usize,
        before: usize,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut record = self.template.clone();
        record.id += before as u64;
        let mut result = Ok(());
        self.walk_range(a, b, |_, x| {
            if self.keeps(x) {
                record.x = x;
                result = f(&record);
                record.id += 1;
            }
            result.is_ok()
        });
        result
    }

    /// [`Self::try_for_each`] over a superset of the particles in the box
    /// `lo..=hi` (those of the sites within a spacing of it), in id order.
    /// Where every site before the last kept one is kept (a box region, a
    /// count that stops the lattice early), site `t` in x-fastest order is
    /// particle `first id + t`, so only the sites near the box are visited;
    /// otherwise the whole lattice is walked.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_for_each_in<E>(
        &self,
        lo: DVec3,
        hi: DVec3,
        mut f: impl FnMut(&ParticleRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.is_indexed() {
            return self.try_for_each(f);
        }
        let first = self.lo + DVec3::splat(self.template.radius);
        let range = |a: usize| -> Option<(usize, usize)> {
            let n = self.shape[a];
            let from = ((lo[a] - first[a]) / self.spacing).floor() - 1.0;
            let to = ((hi[a] - first[a]) / self.spacing).ceil() + 1.0;
            if n == 0 || from.is_nan() || to.is_nan() || to < 0.0 || from >= n as f64 {
                return None;
            }
            Some((from.max(0.0) as usize, (to as usize).min(n - 1)))
        };
        let (Some(ri), Some(rj), Some(rk)) = (range(0), range(1), range(2)) else {
            return Ok(());
        };
        let [nx, ny, _] = self.shape;
        let mut record = self.template.clone();
        for k in rk.0..=rk.1 {
            for j in rj.0..=rj.1 {
                for i in ri.0..=ri.1 {
                    let t = i + nx * (j + ny * k);
                    if t >= self.end {
                        return Ok(());
                    }
                    record.id = self.template.id + t as u64;
                    record.x = self.site(i, j, k);
                    f(&record)?;
                }
            }
        }
        Ok(())
    }

    /// Call `f(site)` for every particle's centre closer to `x` than
    /// `reach` (index arithmetic: no walk).
    pub fn each_site_near(&self, x: DVec3, reach: f64, mut f: impl FnMut(DVec3)) {
        let first = self.lo + DVec3::splat(self.template.radius);
        let range = |a: usize| -> Option<(usize, usize)> {
            let n = self.shape[a];
            let from = ((x[a] - reach - first[a]) / self.spacing).ceil().max(0.0);
            let to = ((x[a] + reach - first[a]) / self.spacing).floor();
            let nan = from.is_nan() || to.is_nan();
            if n == 0 || nan || from > to || to < 0.0 || from >= n as f64 {
                return None;
            }
            Some((from as usize, (to as usize).min(n - 1)))
        };
        let (Some(ri), Some(rj), Some(rk)) = (range(0), range(1), range(2)) else {
            return;
        };
        let [nx, ny, _] = self.shape;
        for k in rk.0..=rk.1 {
            for j in rj.0..=rj.1 {
                for i in ri.0..=ri.1 {
                    if i + nx * (j + ny * k) >= self.end {
                        continue;
                    }
                    let y = self.site(i, j, k);
                    if (y - x).length_squared() < reach * reach && self.keeps(y) {
                        f(y);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(r: f64) -> ParticleRecord {
        ParticleRecord {
            id: 0,
            x: DVec3::ZERO,
            v: DVec3::X,
            omega: DVec3::ZERO,
            radius: r,
            mass: 1.0,
            material: 0,
            frozen: false,
        }
    }

    /// A ball of radius 0.45 in the unit cube, and the cube.
    fn sphere_and_cube() -> (Region, Region) {
        let sphere = Region::Sphere {
            center: DVec3::splat(0.5),
            radius: 0.45,
        };
        let cube = Region::Box {
            lo: DVec3::ZERO,
            hi: DVec3::ONE,
        };
        (sphere, cube)
    }

    fn sites(l: &Lattice) -> Vec<(u64, DVec3)> {
        let mut out = Vec::new();
        let _ = l.try_for_each(|r| {
            out.push((r.id, r.x));
            Ok::<(), ()>(())
        });
        out
    }

    #[test]
    fn a_lattice_asked_for_a_box_gives_the_walk_s_particles_in_it() {
        let (sphere, cube) = sphere_and_cube();
        let boxes = [
            (DVec3::new(0.2, -1.0, 0.3), DVec3::new(0.5, 2.0, 0.61)),
            (DVec3::splat(f64::MIN), DVec3::new(f64::MAX, 0.4, f64::MAX)),
            (DVec3::splat(0.99), DVec3::splat(f64::MAX)),
            (DVec3::splat(3.0), DVec3::splat(4.0)),
        ];
        for (region, limit) in [(cube, None), (cube, Some(100)), (sphere, None)] {
            let mut l = Lattice::new(region, 0.11, limit, template(0.05));
            l.set_first_id(7);
            let all = sites(&l);
            for (lo, hi) in boxes {
                let mut got = Vec::new();
                let _ = l.try_for_each_in(lo, hi, |r| {
                    got.push((r.id, r.x));
                    Ok::<(), ()>(())
                });
                // Every particle the walk gives in the box, the same bits,
                // ids in order; others only from the sites near the box.
                let inside = |x: DVec3| x.cmpge(lo).all() && x.cmple(hi).all();
                let want: Vec<_> = all.iter().filter(|p| inside(p.1)).copied().collect();
                let got_in: Vec<_> = got.iter().filter(|p| inside(p.1)).copied().collect();
                assert_eq!(got_in, want, "{} {limit:?} {lo} {hi}", region.kind());
                assert!(got.iter().all(|p| all.contains(p)));
                assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
                if region == cube {
                    let near = |x: DVec3| {
                        x.cmpge(lo - DVec3::splat(0.23)).all()
                            && x.cmple(hi + DVec3::splat(0.23)).all()
                    };
                    assert!(got.iter().all(|p| near(p.1)), "only sites near the box");
                }
            }
        }
    }

    #[test]
    fn a_lattice_walks_the_sites_lattice_positions_gives_with_ids_in_order() {
        let (sphere, cube) = sphere_and_cube();
        for (region, limit) in [
            (cube, None),
            (cube, Some(100)),
            (sphere, None),
            (sphere, Some(50)),
        ] {
            let (lo, hi) = region.bounds();
            let want = crate::insert::lattice_positions(lo, hi, 0.05, 0.11, limit, |x| {
                region.holds_sphere(x, 0.05)
            });
            let mut l = Lattice::new(region, 0.11, limit, template(0.05));
            l.set_first_id(7);
            let got = sites(&l);
            assert_eq!(l.count(), want.len());
            assert_eq!(got.len(), want.len());
            for (n, ((id, x), y)) in got.iter().zip(&want).enumerate() {
                assert_eq!(*id, 7 + n as u64);
                assert_eq!(
                    x.to_array().map(f64::to_bits),
                    y.to_array().map(f64::to_bits)
                );
            }
        }
    }

    #[test]
    fn the_sites_near_a_point_are_those_a_walk_finds_there() {
        let region = Region::Sphere {
            center: DVec3::splat(0.5),
            radius: 0.45,
        };
        let l = Lattice::new(region, 0.11, Some(200), template(0.05));
        let all = sites(&l);
        for (x, reach) in [
            (DVec3::splat(0.5), 0.2),
            (DVec3::new(0.1, 0.3, 0.9), 0.15),
            (DVec3::splat(-0.3), 0.5),
            (DVec3::new(0.5, 0.5, 0.2), 0.111),
        ] {
            let mut near = Vec::new();
            l.each_site_near(x, reach, |y| near.push(y));
            let want: Vec<DVec3> = (all.iter())
                .map(|s| s.1)
                .filter(|y| (*y - x).length_squared() < reach * reach)
                .collect();
            assert_eq!(near, want, "near {x} within {reach}");
        }
    }
}
