//! Contact history in transit: the non-zero pair records of each owned
//! particle, keyed by partner global id, detached from the neighbour list.
//!
//! At a neighbour-list rebuild the records are lifted out of the old list
//! ([`HistoryRows::from_list`]), travel with their particle through
//! migration between ranks and the spatial re-sort, and are put back into
//! the new list by partner id ([`HistoryRows::fill_list`]). A record whose
//! values are all zero is the same as no record (a fresh contact), so only
//! non-zero records are kept. The same rows are what checkpoints store.
//!
//! A rebuild on a single rank, where no particle leaves, takes a shorter
//! way ([`PairRecords`]): each pair's record is lifted once, with the pair's
//! two local indices, and put back by looking the pair up in the new list.

use crate::neighbor::{NeighborList, ShareRoom, BLOCK};
use crate::state::pack::{Pack, Unpack};
use crate::state::room::{refill, split_chunks};
use rayon::prelude::*;

/// Per-particle history records in compressed-row form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryRows {
    /// Row starts: particle `p`'s records are `offsets[p]..offsets[p+1]`.
    pub offsets: Vec<usize>,
    /// Partner global id of each record (ascending within a row).
    pub partner: Vec<u64>,
    /// `len` values per record.
    pub values: Vec<f64>,
    /// Values per record.
    pub len: usize,
}

impl HistoryRows {
    /// Empty rows for `n` particles.
    pub fn empty(n: usize, len: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            len,
            ..Default::default()
        }
    }

    /// The non-zero records of the first `n_owned` rows of `nl`, built for
    /// particles with global ids `ids`; particles `nl` does not cover
    /// (inserted since it was built) get empty rows.
    pub fn from_list(nl: &NeighborList, ids: &[u64], n_owned: usize) -> Self {
        let (rows, jobs, history) = (nl.rows(), nl.jobs(), nl.history());
        assert!(
            rows.entries() == 0 || ids.len() == rows.particles(),
            "history lifted from a list of other particles"
        );
        let covered = n_owned.min(rows.owned());
        let held = |e: usize| history.held(jobs.job_of(e));
        // Room for two records per active job (one in each row of its
        // pair at most): a bound found without a walk over the entries.
        let records = 2 * history.active_jobs();
        let mut out = Self::with_room(n_owned, records, history.record_len());
        for p in 0..n_owned {
            if p < covered {
                for e in rows.row(p) {
                    if let Some(rec) = held(e) {
                        out.partner.push(rows.partner_id(e, ids));
                        out.values.extend_from_slice(rec);
                    }
                }
            }
            out.offsets.push(out.partner.len());
        }
        out
    }

    /// No rows yet, with room reserved exactly for `rows` rows of
    /// `records` records in all, `len` values each: the rows are rebuilt
    /// at every rebuild, and storage grown by doubling would leave its
    /// smaller blocks free in the allocator's heap each time.
    fn with_room(rows: usize, records: usize, len: usize) -> Self {
        let mut out = Self::empty(0, len);
        out.offsets.reserve_exact(rows);
        out.partner.reserve_exact(records);
        out.values.reserve_exact(records * len);
        out
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of records.
    pub fn records(&self) -> usize {
        self.partner.len()
    }

    /// The records of row `p` as `(partner id, values)`.
    pub fn row(&self, p: usize) -> impl Iterator<Item = (u64, &[f64])> + '_ {
        (self.offsets[p]..self.offsets[p + 1]).map(move |e| {
            (
                self.partner[e],
                &self.values[e * self.len..(e + 1) * self.len],
            )
        })
    }

    /// Append a row.
    pub fn push_row<'a>(&mut self, records: impl IntoIterator<Item = (u64, &'a [f64])>) {
        for (id, v) in records {
            debug_assert_eq!(v.len(), self.len);
            self.partner.push(id);
            self.values.extend_from_slice(v);
        }
        self.offsets.push(self.partner.len());
    }

    /// The rows `order[0], order[1], …` (a permutation or a subset).
    pub fn select(&self, order: &[usize]) -> Self {
        let records = order
            .iter()
            .map(|&p| self.offsets[p + 1] - self.offsets[p])
            .sum();
        let mut out = Self::with_room(order.len(), records, self.len);
        for &p in order {
            out.push_row(self.row(p));
        }
        out
    }

    /// Keep only rows `keep` (ascending), in place: each run of
    /// consecutive kept rows moves down in one copy, and the arrays keep
    /// their storage. The same rows as [`Self::select`] of `keep`.
    pub fn retain_rows(&mut self, keep: &[usize]) {
        debug_assert!(keep.windows(2).all(|w| w[0] < w[1]));
        let len = self.len;
        let mut written = 0;
        let mut i = 0;
        while i < keep.len() {
            // A run of consecutive rows, keep[i..j]. Kept row `k` moves to
            // row `k ≤ keep[k]`, so the offsets this run writes (`i + 1 ..=
            // j`) are at or below those it and later runs read, and differ
            // from them only where the read came first.
            let mut j = i + 1;
            while j < keep.len() && keep[j] == keep[j - 1] + 1 {
                j += 1;
            }
            let start = self.offsets[keep[i]];
            let records = self.offsets[keep[j - 1] + 1] - start;
            for (k, &old) in (i..j).zip(&keep[i..j]) {
                self.offsets[k + 1] = written + self.offsets[old + 1] - start;
            }
            self.partner.copy_within(start..start + records, written);
            self.values
                .copy_within(start * len..(start + records) * len, written * len);
            written += records;
            i = j;
        }
        self.offsets.truncate(keep.len() + 1);
        self.partner.truncate(written);
        self.values.truncate(written * len);
    }

    /// Serialise row `p`.
    pub fn pack_row(&self, p: usize, buf: &mut Vec<u8>) {
        buf.put_u64((self.offsets[p + 1] - self.offsets[p]) as u64);
        for (id, v) in self.row(p) {
            buf.put_u64(id);
            for &x in v {
                buf.put_f64(x);
            }
        }
    }

    /// Read a row written by [`Self::pack_row`] and append it.
    pub fn unpack_row(&mut self, r: &mut Unpack) {
        let n = r.u64() as usize;
        for _ in 0..n {
            self.partner.push(r.u64());
            for _ in 0..self.len {
                self.values.push(r.f64());
            }
        }
        self.offsets.push(self.partner.len());
    }

    /// Write the records into a freshly built list whose row `p` belongs to
    /// the same particle as row `p` here. Each pair's record is taken from
    /// the row of the particle that evaluates it (both particles of a pair
    /// carry the same record). A record whose partner is not in the new list
    /// is dropped: the two were out of reach, so the contact had opened and
    /// its record would have been reset anyway. `ids` are the global ids
    /// of the particles the new list was built for.
    pub fn fill_list(&self, nl: &mut NeighborList, ids: &[u64]) {
        self.fill_list_in_order(nl, ids, |p| p);
    }

    /// [`Self::fill_list`] into a list whose row `p` belongs to the
    /// particle of row `row_of(p)` here: the rows put back in a new order
    /// (the rebuild's spatial sort) without a reordered copy of them.
    pub fn fill_list_in_order(
        &self,
        nl: &mut NeighborList,
        ids: &[u64],
        row_of: impl Fn(usize) -> usize + Sync,
    ) {
        let h = nl.history_len();
        if h == 0 || self.len != h {
            return;
        }
        assert!(
            nl.rows.entries() == 0 || ids.len() == nl.rows.particles(),
            "ids of other particles"
        );
        let jobs = &nl.jobs;
        let job_offsets = jobs.offsets();
        // Each record written is marked active; the list is freshly built,
        // so every other job is inactive with a zero share slot already.
        // The particle's own jobs are its row's entries that evaluate, in
        // row order, so by partner id, as the records are: one merge.
        nl.history.fill_rows(job_offsets, |p, row| {
            let r = row_of(p);
            let (s, e) = (self.offsets[r], self.offsets[r + 1]);
            if s == e {
                return false;
            }
            let (mut k, mut wrote) = (s, false);
            for (slot, job) in jobs.evaluated_by(p).enumerate() {
                let id = ids[jobs.partner(job)];
                while k < e && self.partner[k] < id {
                    k += 1;
                }
                if k == e {
                    break;
                }
                if self.partner[k] == id {
                    row[slot * h..(slot + 1) * h].copy_from_slice(&self.values[k * h..(k + 1) * h]);
                    wrote = true;
                }
            }
            wrote
        });
    }
}

/// The non-zero pair records of a neighbour list on a single rank, one per
/// job, keyed by the pair's two owned particles (local indices; a periodic
/// image stands for the particle it copies). The way through a rebuild
/// without migration: lifting once per job and looking each record's pair
/// up in the new list reads far less than the per-particle rows of
/// [`HistoryRows`] (the chute: about 16,000 records against 230,000 row
/// entries read and written twice).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairRecords {
    /// The two particles of each record.
    pairs: Vec<[u32; 2]>,
    /// `len` values per record.
    values: Vec<f64>,
    len: usize,
}

impl PairRecords {
    /// The non-zero records of `nl`, whose ghost `g` (local index
    /// `rows + g`, `rows` the list's row count) is an image of owned
    /// particle `image_source[g]`.
    pub fn from_list(nl: &NeighborList, image_source: &[u32]) -> Self {
        Self::from_list_in(nl, image_source, ShareRoom::default())
    }

    /// [`Self::from_list`], the values held in `room` where it has room
    /// for them (a rebuild lends the list's share-slot storage:
    /// [`NeighborList::lend_share_room`]); [`Self::into_room`] gives it
    /// back.
    pub fn from_list_in(nl: &NeighborList, image_source: &[u32], room: ShareRoom) -> Self {
        let (jobs, history) = (nl.jobs(), nl.history());
        let len = history.record_len();
        let rows = nl.rows().owned();
        let blocks = rows.div_ceil(BLOCK);
        let block_rows = |b: usize| b * BLOCK..((b + 1) * BLOCK).min(rows);
        // Blocks of rows in parallel, twice: their record counts, then
        // their records, each block's at its place: the records come out
        // in the order of a walk over the rows, held once.
        let counts: Vec<usize> = (0..blocks)
            .into_par_iter()
            .map(|b| {
                let ks = block_rows(b);
                (jobs.offsets()[ks.start]..jobs.offsets()[ks.end])
                    .filter(|&j| history.held(j).is_some())
                    .count()
            })
            .collect();
        let total: usize = counts.iter().sum();
        let mut values = room.0;
        if values.capacity() < total * len {
            // Too small to help: the records get storage of their own.
            values = Vec::new();
        }
        refill(&mut values, total * len, 0.0);
        let mut out = Self {
            pairs: vec![[0; 2]; total],
            values,
            len,
        };
        let pairs = split_chunks(&mut out.pairs, counts.iter().copied());
        let values = split_chunks(&mut out.values, counts.iter().map(|c| c * len));
        (pairs.into_par_iter().zip(values).enumerate()).for_each(|(b, (pairs, values))| {
            let mut r = 0;
            for k in block_rows(b) {
                for j in jobs.evaluated_by(k) {
                    if let Some(rec) = history.held(j) {
                        let q = jobs.partner(j);
                        let partner = if q < rows {
                            q as u32
                        } else {
                            image_source[q - rows]
                        };
                        pairs[r] = [k as u32, partner];
                        values[r * len..(r + 1) * len].copy_from_slice(rec);
                        r += 1;
                    }
                }
            }
        });
        out
    }

    /// Number of records.
    pub fn records(&self) -> usize {
        self.pairs.len()
    }

    /// The storage of the values, emptied (the room [`Self::from_list_in`]
    /// was given, where the values fitted in it).
    pub fn into_room(self) -> ShareRoom {
        let mut values = self.values;
        values.clear();
        ShareRoom(values)
    }

    /// Drop the records of every pair with a particle not in `keep` (the
    /// deleted particles) and renumber the others: old index `keep[k]`
    /// (ascending) becomes `k`, as [`Particles::retain_owned`] renumbers
    /// the particles; `old_len` is the particle count before.
    ///
    /// [`Particles::retain_owned`]: crate::state::particles::Particles::retain_owned
    pub fn retain_particles(&mut self, keep: &[usize], old_len: usize) {
        let mut new_of_old = vec![u32::MAX; old_len];
        for (new, &old) in keep.iter().enumerate() {
            new_of_old[old] = new as u32;
        }
        let h = self.len;
        let mut kept = 0;
        for r in 0..self.pairs.len() {
            let pair = self.pairs[r].map(|old| new_of_old[old as usize]);
            if pair.contains(&u32::MAX) {
                continue;
            }
            self.pairs[kept] = pair;
            self.values.copy_within(r * h..(r + 1) * h, kept * h);
            kept += 1;
        }
        self.pairs.truncate(kept);
        self.values.truncate(kept * h);
    }

    /// Write the records into a freshly built list of the same particles,
    /// permuted: new local index `k` is old index `perm[k]` (particles
    /// inserted since the old list have indices it did not cover); `ids`
    /// are the global ids in the new order. Every job of a pair (one, or
    /// one on each side when the pair meets through periodic images) gets
    /// the record, as [`HistoryRows::fill_list`] gives it; a record whose
    /// pair is no longer in the list is dropped (its contact had opened).
    pub fn fill_list(&self, nl: &mut NeighborList, perm: &[usize], ids: &[u64]) {
        self.fill_list_in_pieces(nl, perm, ids, 1 << 15);
    }

    /// [`Self::fill_list`], looking up `piece` records at a time.
    pub(crate) fn fill_list_in_pieces(
        &self,
        nl: &mut NeighborList,
        perm: &[usize],
        ids: &[u64],
        piece: usize,
    ) {
        let h = nl.history_len();
        if h == 0 || self.len != h {
            return;
        }
        let mut new_of_old = vec![u32::MAX; perm.len()];
        for (new, &old) in perm.iter().enumerate() {
            new_of_old[old] = new as u32;
        }
        // The entries are looked up in parallel, a piece of the records at
        // a time, and written in record order: a pair that meets through
        // periodic images on both sides has a record from each side, both
        // for the same two entries, and the later one wins, as in a walk
        // over the records.
        let mut entries: Vec<[u32; 2]> = Vec::with_capacity(piece.min(self.pairs.len()));
        for (pairs, values) in self.pairs.chunks(piece).zip(self.values.chunks(piece * h)) {
            entries.clear();
            entries.par_extend(pairs.par_iter().with_min_len(1024).map(|pair| {
                let [a, b] = pair.map(|old| new_of_old[old as usize] as usize);
                let entry = |x: usize, y: usize| {
                    // The list's entries are fewer than `u32::MAX` (asserted
                    // at its build), which stands for none.
                    nl.entry_of(x, ids[y], ids).map_or(u32::MAX, |e| e as u32)
                };
                [entry(a, b), entry(b, a)]
            }));
            for (rec, found) in values.chunks_exact(h).zip(&entries) {
                for &e in found.iter().filter(|&&e| e != u32::MAX) {
                    // Marked active (the fresh list's other jobs are
                    // inactive, with zero shares).
                    nl.record_mut(e as usize).copy_from_slice(rec);
                }
            }
        }
    }
}
