//! The ghost halo. It holds, behind the owned particles, copies ("ghosts") of every
//! particle that a particle of this rank's subdomain can reach before the
//! next rebuild (within its own radius plus `R_max + pad + skin`): periodic
//! images of its own particles and particles of the adjacent ranks (and
//! their periodic images). Both kinds go through the same code: a ghost is a
//! particle record plus an integer image shift `s·L`, sent to whichever rank
//! (this one included) needs it. Ghosts are created when the neighbour list
//! is rebuilt ([`Halo::build`]) and their positions, velocities and angular
//! velocities refreshed every step ([`Halo::update`]), which refreshes the
//! ghosts' packed images ([`Particles::packed`]) that the copy changes.
//! A peer on this rank's node reads that state where this rank stages it,
//! in pages they share ([`NodePages`]); a peer elsewhere gets it by message.

use crate::geometry::domain::Domain;
use crate::parallel::comm::Comm;
use crate::parallel::grid::Decomposition;
use crate::parallel::node_pages::NodePages;
use crate::state::pack::{read_f64s, write_f64s, Pack, Unpack};
use crate::state::particles::{pack_record, unpack_record, Particles, RECORD_BYTES};
use glam::DVec3;
use rayon::prelude::*;

/// The bytes of one ghost in a halo message: its record and its image shift.
const GHOST_BYTES: usize = RECORD_BYTES + 24;
/// Bytes of a ghost's state in a halo update: position, velocity and
/// angular velocity, nine `f64`.
const STATE_BYTES: usize = 72;
/// Write the states of owned particles `list`, [`STATE_BYTES`] each, into `out`.
fn write_states(p: &Particles, list: &[u32], out: &mut [u8]) {
    for (out, &k) in out.chunks_exact_mut(STATE_BYTES).zip(list) {
        let k = k as usize;
        let values = [p.x[k], p.v[k], p.omega[k]].map(|d| d.to_array());
        write_f64s(out, values.as_flattened());
    }
}

/// Write the states each peer on this node gets (`send[q]`, to `at[q]`
/// where it is on the node) into the half of this rank's pages `own` that
/// starts at `half_start`.
fn write_staged(
    p: &Particles,
    send: &[Vec<u32>],
    at: &[Option<usize>],
    half_start: usize,
    own: &mut [u8],
) {
    for (list, at) in send.iter().zip(at) {
        if let Some(at) = at {
            let start = half_start + at;
            write_states(p, list, &mut own[start..start + list.len() * STATE_BYTES]);
        }
    }
}

/// Read the states of ghosts `first..` from `states`, as [`write_states`]
/// wrote them, and write their packed images.
fn read_states(p: &mut Particles, first: usize, states: &[u8]) {
    let n = p.n_owned;
    for (g, state) in (first..).zip(states.chunks_exact(STATE_BYTES)) {
        let [x0, x1, x2, v0, v1, v2, w0, w1, w2] = read_f64s::<9>(state);
        let x = DVec3::new(x0, x1, x2);
        p.x[g] = x;
        p.v[g] = DVec3::new(v0, v1, v2);
        p.omega[g] = DVec3::new(w0, w1, w2);
        p.packed[g] = (x + p.shift[g - n]).extend(p.radius[g]);
    }
}

/// Periodic images per piece of the halo update's parallel copy.
const IMAGE_CHUNK: usize = 2048;
/// Owned particles per block of the halo build's parallel scan (the
/// force stage's block: a test bed of a thousand spheres has several).
const SCAN_BLOCK: usize = crate::neighbor::BLOCK;

/// What a block of owned particles gives the halo: the periodic images
/// made on this rank (owned index and image shift) and, per peer, the
/// ghost messages and the owned indices they copy.
struct Outgoing {
    local: Vec<(u32, DVec3)>,
    bufs: Vec<Vec<u8>>,
    send: Vec<Vec<u32>>,
}

impl Outgoing {
    /// Nothing yet, for `peers` peers.
    fn new(peers: usize) -> Self {
        Self {
            local: Vec::new(),
            bufs: vec![Vec::new(); peers],
            send: vec![Vec::new(); peers],
        }
    }

    /// The blocks' parts one after another, in block order.
    fn joined(parts: Vec<Self>, peers: usize) -> Self {
        let mut all = Self::new(peers);
        all.local
            .reserve_exact(parts.iter().map(|b| b.local.len()).sum());
        for q in 0..peers {
            all.bufs[q].reserve_exact(parts.iter().map(|b| b.bufs[q].len()).sum());
            all.send[q].reserve_exact(parts.iter().map(|b| b.send[q].len()).sum());
        }
        for part in parts {
            all.local.extend_from_slice(&part.local);
            for q in 0..peers {
                all.bufs[q].extend_from_slice(&part.bufs[q]);
                all.send[q].extend_from_slice(&part.send[q]);
            }
        }
        all
    }
}

/// Where the halo update stages the ghost states this rank owes the peers
/// on its node, and where they stage the ones they owe it: each rank's
/// pages hold two halves, written by turns (an update writes one, the next
/// the other), each half a segment per peer on the node, in peer order.
#[derive(Default)]
struct Staging {
    /// The pages, once a build made them (every rank together); `None`
    /// where the transport has none.
    pages: Option<Box<dyn NodePages>>,
    /// Whether a build asked the transport for pages (and, if it gave none,
    /// no later one asks again).
    asked: bool,
    /// Per peer: where its segment starts in a half of this rank's pages,
    /// if it is on this node.
    mine: Vec<Option<usize>>,
    /// Per peer on this node: where this rank's segment starts in a half of
    /// the peer's pages, and the bytes of that half.
    theirs: Vec<Option<(usize, usize)>>,
    /// The bytes of a half of this rank's pages.
    half: usize,
    /// The half the next update writes and reads (0 after a build).
    parity: usize,
    /// Whether [`Halo::stage`] wrote that half since the last update or
    /// build, and fenced it: the update then reads without a barrier.
    staged: bool,
}

impl std::fmt::Debug for Staging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staging")
            .field("pages", &self.pages.as_ref().map(|p| p.len()))
            .field("mine", &self.mine)
            .field("theirs", &self.theirs)
            .field("half", &self.half)
            .field("parity", &self.parity)
            .field("staged", &self.staged)
            .finish()
    }
}

/// Ghost copies of particles, with where each one comes from.
#[derive(Debug, Default)]
pub struct Halo {
    /// Owned index copied by each ghost made on this rank (periodic images
    /// of its own particles); these ghosts come first.
    local_source: Vec<u32>,
    /// Ranks exchanged with.
    peers: Vec<usize>,
    /// Per peer: the owned indices sent to it, in order.
    send: Vec<Vec<u32>>,
    /// Per peer: the number of ghosts received from it (they follow the local ones, peer by peer).
    received: Vec<usize>,
    /// The peers the halo update reaches by message (indices into
    /// `peers`): those not on this node.
    by_message: Vec<usize>,
    /// Their ranks.
    message_ranks: Vec<usize>,
    /// Per peer reached by message: the halo update's message to it and
    /// from it, kept from step to step (as long as the ghosts sent and
    /// received: this rank's share, not the whole), so that an update
    /// allocates nothing.
    update_bufs: (Vec<Vec<u8>>, Vec<Vec<u8>>),
    /// The peers on this node, reached through shared pages.
    staging: Staging,
}

impl Halo {
    /// Drop the old ghosts and create the new ones: every owned particle
    /// within its radius plus `reach` of a face of another subdomain (or
    /// of its own, across a periodic boundary) is copied there with its
    /// image shift ([`crate::parallel::grid::halo_reach`]: no pair across
    /// the face reaches one farther). With `width` the largest radius plus
    /// `reach`, requires every subdomain to be at least `width` thick and
    /// every periodic length to exceed `2 · width`. The new ghosts have no packed
    /// images yet ([`Particles::packed`] covers at most the owned
    /// particles): the caller refreshes them, or updates the halo. Collective.
    pub fn build(
        &mut self,
        p: &mut Particles,
        domain: &Domain,
        decomp: &Decomposition,
        comm: &dyn Comm,
        reach: f64,
    ) {
        p.truncate_ghosts();
        self.local_source.clear();
        self.peers = decomp.peers();
        let peers = &self.peers;
        let l = domain.length();
        let ghosts_of = |k: usize, part: &mut Outgoing| {
            let (x, width) = (p.x[k], p.radius[k] + reach);
            // Per axis: (slab, image multiple) choices, the particle's own slab first.
            let mut options = [[(0usize, 0i32); 3]; 3];
            let mut counts = [1usize; 3];
            for a in 0..3 {
                let c = decomp.slab(a, x[a]);
                let cuts = &decomp.cuts[a];
                let last = decomp.dims[a] - 1;
                options[a][0] = (c, 0);
                if x[a] - cuts[c] < width {
                    if c > 0 {
                        options[a][counts[a]] = (c - 1, 0);
                        counts[a] += 1;
                    } else if domain.periodic[a] {
                        options[a][counts[a]] = (last, 1);
                        counts[a] += 1;
                    }
                }
                if cuts[c + 1] - x[a] < width {
                    if c < last {
                        options[a][counts[a]] = (c + 1, 0);
                        counts[a] += 1;
                    } else if domain.periodic[a] {
                        options[a][counts[a]] = (0, -1);
                        counts[a] += 1;
                    }
                }
            }
            if counts == [1, 1, 1] {
                return;
            }
            for ix in 0..counts[0] {
                for iy in 0..counts[1] {
                    for iz in 0..counts[2] {
                        if ix == 0 && iy == 0 && iz == 0 {
                            continue;
                        }
                        let o = [options[0][ix], options[1][iy], options[2][iz]];
                        let dest = decomp.rank_of([o[0].0, o[1].0, o[2].0]);
                        let s = [o[0].1, o[1].1, o[2].1];
                        if dest == decomp.rank && s == [0, 0, 0] {
                            continue;
                        }
                        let shift =
                            DVec3::new(s[0] as f64 * l.x, s[1] as f64 * l.y, s[2] as f64 * l.z);
                        if dest == decomp.rank {
                            part.local.push((k as u32, shift));
                        } else {
                            let q = peers
                                .binary_search(&dest)
                                .expect("ghosts go to adjacent ranks");
                            pack_record(&p.record(k), &mut part.bufs[q]);
                            part.bufs[q].put_vec3(shift);
                            part.send[q].push(k as u32);
                        }
                    }
                }
            }
        };
        // Blocks of owned particles scanned in parallel and joined in block
        // order: the ghosts come out in the order of a walk over the owned.
        let parts: Vec<Outgoing> = (0..p.n_owned.div_ceil(SCAN_BLOCK))
            .into_par_iter()
            .map(|b| {
                let mut part = Outgoing::new(peers.len());
                for k in b * SCAN_BLOCK..((b + 1) * SCAN_BLOCK).min(p.n_owned) {
                    ghosts_of(k, &mut part);
                }
                part
            })
            .collect();
        let Outgoing { local, bufs, send } = Outgoing::joined(parts, peers.len());
        self.send = send;
        let recv = comm.exchange(&self.peers, &bufs);
        let arriving: usize = recv.iter().map(|b| b.len() / GHOST_BYTES).sum();
        p.room_for(p.len() + local.len() + arriving, p.n_owned);
        p.push_images(&local);
        self.local_source.extend(local.iter().map(|&(k, _)| k));
        self.received = recv
            .iter()
            .map(|b| {
                let mut u = Unpack::new(b);
                let mut n = 0;
                while !u.is_empty() {
                    let r = unpack_record(&mut u);
                    let shift = u.vec3();
                    p.push_ghost(&r, shift);
                    n += 1;
                }
                n
            })
            .collect();
        self.stage_for_peers(comm);
    }

    /// Lay out the staging of the halo update for the peers on this node
    /// (collective): this rank's segments, the pages grown where a rank's
    /// no longer hold two halves (every rank makes new ones together, a
    /// quarter larger than asked, so that a bed that grows a little keeps
    /// them), and where each peer stages this rank's ghosts, told by the
    /// peer in a message. The peers elsewhere stay on messages. The parity
    /// starts again at 0: a peer's first write after this build follows
    /// this exchange, which this rank enters after its last read.
    fn stage_for_peers(&mut self, comm: &dyn Comm) {
        let peers = self.peers.len();
        let s = &mut self.staging;
        s.mine = vec![None; peers];
        s.theirs = vec![None; peers];
        s.half = 0;
        s.parity = 0;
        s.staged = false;
        if comm.size() > 1 && !(s.asked && s.pages.is_none()) {
            for (q, &rank) in self.peers.iter().enumerate() {
                if comm.shares_node_with(rank) {
                    s.mine[q] = Some(s.half);
                    s.half += self.send[q].len() * STATE_BYTES;
                }
            }
            let need = 2 * s.half;
            let mut grow = [u64::from(s.pages.as_ref().is_none_or(|p| p.len() < need))];
            comm.max_u64s(&mut grow);
            if grow[0] != 0 {
                s.pages = None;
                s.pages = comm.node_pages(need + need / 4);
                s.asked = true;
            }
            if s.pages.is_none() {
                s.mine.fill(None);
                s.half = 0;
            } else {
                let told: Vec<Vec<u8>> = s
                    .mine
                    .iter()
                    .map(|at| {
                        let mut b = Vec::new();
                        b.put_u64(at.map_or(u64::MAX, |a| a as u64));
                        b.put_u64(s.half as u64);
                        b
                    })
                    .collect();
                for (q, b) in comm.exchange(&self.peers, &told).iter().enumerate() {
                    let mut u = Unpack::new(b);
                    let (at, half) = (u.u64(), u.u64());
                    s.theirs[q] = (at != u64::MAX).then_some((at as usize, half as usize));
                }
            }
        }
        self.by_message = (0..peers).filter(|&q| s.mine[q].is_none()).collect();
        self.message_ranks = self.by_message.iter().map(|&q| self.peers[q]).collect();
    }

    /// Copy positions, velocities and angular velocities from the owners,
    /// and refresh the ghosts' packed images ([`Particles::packed`]), which
    /// the copy invalidates (a collective call when there are peers). The
    /// periodic images made on this rank are copied here unless
    /// `images_copied`: the first half step copied them already, as it
    /// moved their sources ([`crate::integrate::kick_drift`]).
    pub fn update(&mut self, p: &mut Particles, comm: &dyn Comm, images_copied: bool) {
        if !images_copied {
            self.copy_images(p);
        }
        // A rank with pages takes part in every update, peers on its node
        // or not: the node's ranks meet there (or at the collective call
        // after the stage, [`Self::stage`]).
        if !self.peers.is_empty() || self.staging.pages.is_some() {
            self.copy_from_peers(p, comm);
        }
    }

    /// Write now, for the next [`Self::update`], the states this rank owes
    /// the peers on its node (where pages are shared; else nothing), and
    /// fence them ([`NodePages::fence`]). Every rank of the node must then
    /// pass a collective call that meets them all (the step's reduction)
    /// and change no owned state the peers copy before that update, which
    /// then reads in place without a barrier of its own: the step's one
    /// meeting serves both. A rebuild between drops what was staged.
    pub fn stage(&mut self, p: &Particles) {
        let s = &mut self.staging;
        let Some(pages) = s.pages.as_mut() else {
            return;
        };
        write_staged(p, &self.send, &s.mine, s.parity * s.half, pages.own());
        pages.fence();
        s.staged = true;
    }

    /// The owned particle each periodic image made on this rank copies
    /// (ascending: [`Self::build`] makes the images in a walk over the
    /// owned particles); they are the first ghosts.
    pub fn local_sources(&self) -> &[u32] {
        &self.local_source
    }

    /// The periodic images made on this rank: each copies its source's
    /// state and writes its packed image on the way, in pieces of
    /// [`IMAGE_CHUNK`] in parallel
    /// ([`crate::state::images::Images::copy_from`]).
    fn copy_images(&self, p: &mut Particles) {
        let (from, images) = p.sources_and_images(&self.local_source);
        (images.chunks(IMAGE_CHUNK).into_par_iter()).for_each(|mut piece| piece.copy_from(from));
    }

    /// The ghosts received from the peers: their owners' current state
    /// (a collective call), and their packed images, written as each is
    /// read (the same bits as [`Particles::refresh_packed_of`]). Each
    /// ghost's state travels as nine `f64` (position, velocity, angular
    /// velocity), little-endian, written and read in place at fixed offsets
    /// of its [`STATE_BYTES`] ([`write_f64s`], [`read_f64s`]: no length
    /// bookkeeping per value): for a peer on this node, staged in this
    /// rank's pages and read in place from the peer's after they are
    /// published; for a peer elsewhere, in messages whose buffers are kept
    /// from the last update. What [`Self::stage`] wrote is not written
    /// again, and the meeting that followed it stands for the barrier.
    fn copy_from_peers(&mut self, p: &mut Particles, comm: &dyn Comm) {
        let s = &mut self.staging;
        let parity = s.parity;
        s.parity ^= 1;
        let staged = std::mem::take(&mut s.staged);
        let (sends, recvs) = &mut self.update_bufs;
        sends.resize_with(self.by_message.len(), Vec::new);
        recvs.resize_with(self.by_message.len(), Vec::new);
        for (b, &q) in sends.iter_mut().zip(&self.by_message) {
            b.resize(self.send[q].len() * STATE_BYTES, 0);
            write_states(p, &self.send[q], b);
        }
        if let Some(pages) = s.pages.as_mut() {
            if !staged {
                write_staged(p, &self.send, &s.mine, parity * s.half, pages.own());
            } else if cfg!(debug_assertions) {
                // What was staged must still be the owners' state.
                let mut fresh = vec![0; s.half];
                write_staged(p, &self.send, &s.mine, 0, &mut fresh);
                let own = &pages.own()[parity * s.half..(parity + 1) * s.half];
                assert!(
                    own == &fresh[..],
                    "owned state changed between the halo's stage and its update"
                );
            }
        }
        for (b, &q) in recvs.iter_mut().zip(&self.by_message) {
            b.resize(self.received[q] * STATE_BYTES, 0);
        }
        if !self.by_message.is_empty() {
            comm.exchange_into(&self.message_ranks, sends, recvs);
        }
        match &s.pages {
            Some(pages) if staged => pages.fence(),
            Some(pages) => pages.publish(),
            None => {}
        }
        let mut first = p.n_owned + self.local_source.len();
        let mut messages = recvs.iter();
        for (q, &count) in self.received.iter().enumerate() {
            let states = match (&s.pages, s.theirs[q]) {
                (Some(pages), Some((at, half))) => {
                    let start = parity * half + at;
                    // SAFETY: the peer wrote this range before the meeting
                    // just passed (the publish, or the collective call that
                    // followed its stage), and writes it next two updates
                    // on (the halves alternate), after the meeting of the
                    // update between, which this rank reaches once done
                    // reading; after a rebuild, only past the build's
                    // exchange with this rank ([`Self::stage_for_peers`]).
                    unsafe { pages.part_of(self.peers[q], start..start + count * STATE_BYTES) }
                }
                _ => messages.next().expect("a message per peer elsewhere"),
            };
            read_states(p, first, states);
            first += count;
        }
    }

    /// The owned particle each ghost copies, when every ghost is a
    /// periodic image made on this rank (none received from another).
    pub fn image_sources(&self) -> Option<&[u32]> {
        self.peers.is_empty().then_some(&self.local_source[..])
    }

    /// Number of ghosts.
    pub fn len(&self) -> usize {
        self.local_source.len() + self.received.iter().sum::<usize>()
    }

    /// Whether there are no ghosts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ranks this rank exchanges ghosts with.
    pub fn peers(&self) -> &[usize] {
        &self.peers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::comm::SerialComm;
    use crate::state::particles::ParticleRecord;
    use std::collections::HashSet;

    /// On one rank with two periodic axes: every pair within `R_p + R_q +
    /// pad + skin` across a periodic face finds each partner's image on the
    /// other's side (pairs placed at the edge of that reach among them),
    /// no image's source lies farther than its radius plus the reach from
    /// the face it crosses, and particles within the full
    /// halo width of a face but beyond their own reach make none.
    #[test]
    fn images_reach_every_partner_across_a_periodic_face_and_no_farther() {
        let domain = Domain {
            lo: DVec3::ZERO,
            hi: DVec3::new(4.0, 3.0, 5.0),
            periodic: [true, true, false],
        };
        let l = domain.length();
        let (r_max, pad, skin) = (0.3, 0.01, 0.06);
        let reach = r_max + pad + skin;
        let mut state = 7u64;
        let mut unit = move || {
            state = (state.wrapping_mul(6_364_136_223_846_793_005))
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut p = Particles::default();
        for id in 0..800 {
            let x = DVec3::new(unit(), unit(), unit()) * l;
            p.push_owned(&ParticleRecord::resting(id, x, 0.1 + 0.2 * unit()));
        }
        // And pairs at the edge: a sphere of the largest radius at x = 0,
        // a partner of another size whose image across x reaches it with
        // 1e-4 to spare, so that it lies 2e-4 inside its own reach.
        for m in 0..20u32 {
            let (r, at) = (0.1 + 0.01 * f64::from(m), 0.1 + 0.14 * f64::from(m));
            let inside = r + reach - 2e-4;
            let x = DVec3::new(1e-4, at, 2.5);
            p.push_owned(&ParticleRecord::resting(900 + 2 * u64::from(m), x, r_max));
            let x = DVec3::new(l.x - inside, at, 2.5);
            p.push_owned(&ParticleRecord::resting(901 + 2 * u64::from(m), x, r));
        }
        let mut halo = Halo::default();
        let decomp = Decomposition::single(&domain);
        halo.build(&mut p, &domain, &decomp, &SerialComm, reach);
        let n = p.n_owned;
        let shift_of = |g: usize| (p.shift_of(g) / l).round().as_ivec3().to_array();
        let images: HashSet<(usize, [i32; 3])> = (n..p.len())
            .map(|g| (halo.local_sources()[g - n] as usize, shift_of(g)))
            .collect();
        assert_eq!(images.len(), p.len() - n, "an image made twice");
        for &(k, s) in &images {
            let (x, r) = (p.x[k], p.radius[k]);
            for a in 0..3 {
                let from_face = match s[a] {
                    1 => x[a],
                    -1 => l[a] - x[a],
                    _ => continue,
                };
                assert!(from_face < r + reach, "{k} imaged by {s:?} from {x}");
            }
        }
        let mut pairs = 0;
        for i in 0..n {
            for j in 0..n {
                for (sx, sy) in [
                    (-1, -1),
                    (-1, 0),
                    (-1, 1),
                    (0, -1),
                    (0, 1),
                    (1, -1),
                    (1, 0),
                    (1, 1),
                ] {
                    let s = [sx, sy, 0];
                    let image = p.x[j] + DVec3::new(f64::from(sx), f64::from(sy), 0.0) * l;
                    if (p.x[i] - image).length() < p.radius[i] + p.radius[j] + pad + skin {
                        pairs += 1;
                        assert!(images.contains(&(j, s)), "{j} imaged by {s:?} for {i}");
                    }
                }
            }
        }
        assert!(pairs > 50, "{pairs} pairs across the faces");
        // Imaged: exactly the particles within their own reach of a
        // periodic face, fewer than within the halo width.
        let near_a_face = |k: usize, width: f64| {
            let x = p.x[k];
            (0..2).any(|a| x[a] < width || l[a] - x[a] < width)
        };
        let sources: HashSet<usize> = images.iter().map(|&(k, _)| k).collect();
        let within_reach: HashSet<usize> = (0..n)
            .filter(|&k| near_a_face(k, p.radius[k] + reach))
            .collect();
        assert_eq!(sources, within_reach);
        let width = 2.0 * r_max + pad + skin;
        let within_width = (0..n).filter(|&k| near_a_face(k, width)).count();
        assert!(
            within_reach.len() + 40 < within_width,
            "{} of {within_width} imaged",
            within_reach.len()
        );
    }
}
