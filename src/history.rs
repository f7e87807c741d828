//! Contact history in transit: the non-zero pair records of each owned
//! particle, keyed by partner global id, detached from the neighbour list.
//!
//! At a neighbour-list rebuild the records are lifted out of the old list
//! ([`HistoryRows::from_list`]), travel with their particle through
//! migration between ranks and the spatial re-sort, and are put back into
//! the new list by partner id ([`HistoryRows::fill_list`]). A record whose
//! values are all zero is the same as no record (a fresh contact), so only
//! non-zero records are kept. The same rows are what checkpoints store.

use crate::comm::{Pack, Unpack};
use crate::neighbor::NeighborList;

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

    /// The non-zero records of the first `n_owned` rows of `nl`; particles
    /// `nl` does not cover (inserted since it was built) get empty rows.
    pub fn from_list(nl: &NeighborList, n_owned: usize) -> Self {
        let h = nl.history_len;
        let mut out = Self::empty(0, h);
        let rows = nl.offsets.len().saturating_sub(1);
        // A job marked inactive holds zeros: skip reading its record.
        let known = nl.active.len() == nl.jobs.len();
        for p in 0..n_owned {
            if p < rows && h > 0 {
                for e in nl.offsets[p]..nl.offsets[p + 1] {
                    if known && !nl.active[nl.job_of_entry[e] as usize] {
                        continue;
                    }
                    let rec = nl.record(e);
                    if rec.iter().any(|&v| v != 0.0) {
                        out.partner.push(nl.partner_id[e]);
                        out.values.extend_from_slice(rec);
                    }
                }
            }
            out.offsets.push(out.partner.len());
        }
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
        let mut out = Self::empty(0, self.len);
        for &p in order {
            out.push_row(self.row(p));
        }
        out
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
    /// its record would have been reset anyway.
    pub fn fill_list(&self, nl: &mut NeighborList) {
        let h = nl.history_len;
        if h == 0 || self.len != h {
            return;
        }
        let (offsets, ids, job_of_entry) = (&nl.offsets, &nl.partner_id, &nl.job_of_entry);
        let job_offsets = &nl.job_offsets;
        crate::neighbor::for_each_row_mut(&mut nl.history, job_offsets, h, |p, row| {
            let (s, e) = (self.offsets[p], self.offsets[p + 1]);
            if s == e {
                return;
            }
            let mut k = s;
            for entry in offsets[p]..offsets[p + 1] {
                let job = job_of_entry[entry] as usize;
                if !(job_offsets[p]..job_offsets[p + 1]).contains(&job) {
                    continue; // evaluated by the partner
                }
                let id = ids[entry];
                while k < e && self.partner[k] < id {
                    k += 1;
                }
                if k == e {
                    break;
                }
                if self.partner[k] == id {
                    let slot = job - job_offsets[p];
                    row[slot * h..(slot + 1) * h].copy_from_slice(&self.values[k * h..(k + 1) * h]);
                }
            }
        });
        // The list is freshly built: its share slots are zero.
        nl.mark_active_from_history();
    }
}
