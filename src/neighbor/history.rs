//! Pair-contact history: one record per pair job, with the flags that let
//! the force stage skip the many pairs that are not in contact.

use crate::state::room::refill;

/// The contact-history records of a neighbour list's jobs
/// ([`super::PairJobs`]): `record_len` values per job, in job order, and
/// per job an *active* flag.
///
/// Invariants:
/// - there is one record and one flag per job of the list;
/// - a job that is not active holds a record of zeros, and its share slot
///   ([`super::Shares`]) holds zero. A job may be active with a record of
///   zeros (the force stage clears the flag when it finds the pair apart).
///
/// The type keeps the second invariant for every write outside the force
/// stage: [`Self::record_mut`] marks its job active, and nothing outside
/// the neighbour list clears a flag. The force stage, which writes the
/// records in place, clears a job's record and share slot whenever it
/// clears its flag.
///
/// A record whose values are all zero is the same as no record (a fresh
/// contact).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairHistory {
    values: Vec<f64>,
    len: usize,
    active: Vec<bool>,
}

impl PairHistory {
    /// No records, `len` values per record.
    pub(super) fn empty(len: usize) -> Self {
        Self {
            len,
            ..Self::default()
        }
    }

    /// Zeroed, inactive records for `jobs` jobs, `len` values each (the
    /// caller zeroes the share slots: see the type's invariants).
    pub(super) fn reset(&mut self, jobs: usize, len: usize) {
        self.len = len;
        refill(&mut self.values, jobs * len, 0.0);
        refill(&mut self.active, jobs, false);
    }

    /// Zero the record of every active job and mark it inactive, calling
    /// `cleared(j)` for each such job `j` (for the caller to zero its share
    /// slot: see the type's invariants).
    pub(super) fn clear_active(&mut self, mut cleared: impl FnMut(usize)) {
        let h = self.len;
        for (j, active) in self.active.iter_mut().enumerate() {
            if std::mem::take(active) {
                self.values[j * h..(j + 1) * h].fill(0.0);
                cleared(j);
            }
        }
    }

    /// Values per record.
    #[inline(always)]
    pub fn record_len(&self) -> usize {
        self.len
    }

    /// Number of records (one per job).
    pub fn jobs(&self) -> usize {
        self.active.len()
    }

    /// The record of job `j`.
    pub fn record(&self, j: usize) -> &[f64] {
        let h = self.len;
        &self.values[j * h..(j + 1) * h]
    }

    /// The record of job `j`, to write. The job is marked active, so the
    /// force stage reads what is written.
    pub fn record_mut(&mut self, j: usize) -> &mut [f64] {
        self.active[j] = true;
        let h = self.len;
        &mut self.values[j * h..(j + 1) * h]
    }

    /// The record of job `j` if it holds anything: skipped unread when the
    /// job is not active (it holds zeros), else returned when any value is
    /// non-zero (an all-zero record is the same as none).
    pub fn held(&self, j: usize) -> Option<&[f64]> {
        if self.len == 0 || !self.active[j] {
            return None;
        }
        let rec = self.record(j);
        rec.iter().any(|&v| v != 0.0).then_some(rec)
    }

    /// Whether job `j` is active (may hold a non-zero record or share).
    pub fn is_active(&self, j: usize) -> bool {
        self.active[j]
    }

    /// The active flags, one per job.
    pub fn active(&self) -> &[bool] {
        &self.active
    }

    /// Every record, in job order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Run `f(p, records)` in parallel for every owned particle `p`, with
    /// the records of the jobs it evaluates (`job_offsets`, see
    /// [`super::PairJobs::offsets`]) to write; then mark active every job
    /// whose record holds a non-zero value.
    pub(super) fn fill_rows(
        &mut self,
        job_offsets: &[usize],
        f: impl Fn(usize, &mut [f64]) + Sync,
    ) {
        let h = self.len;
        if h == 0 {
            return;
        }
        super::for_each_row_mut(&mut self.values, job_offsets, h, f);
        for (active, rec) in self.active.iter_mut().zip(self.values.chunks_exact(h)) {
            *active |= rec.iter().any(|&v| v != 0.0);
        }
    }

    /// The records and the active flags, to write in place: for the force
    /// stage only, which keeps the type's invariants (it zeroes a job's
    /// record and share slot whenever it clears the job's flag).
    #[inline(always)]
    pub(crate) fn records_and_flags_mut(&mut self) -> (&mut [f64], &mut [bool]) {
        (&mut self.values, &mut self.active)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_written_outside_the_force_stage_is_active() {
        let mut h = PairHistory::empty(3);
        h.reset(4, 3);
        assert_eq!((h.jobs(), h.record_len()), (4, 3));
        assert_eq!(h.active(), [false; 4]);
        assert_eq!(h.held(2), None);
        h.record_mut(2).copy_from_slice(&[1.0, 0.0, -2.0]);
        assert!(h.is_active(2));
        assert_eq!(h.held(2), Some(&[1.0, 0.0, -2.0][..]));
        // Active but all zero: the same as no record.
        h.record_mut(1);
        assert_eq!(h.active(), [false, true, true, false]);
        assert_eq!(h.held(1), None);
        assert_eq!(h.values()[6..9], [1.0, 0.0, -2.0]);
        // A reset forgets every record.
        h.reset(2, 3);
        assert_eq!((h.active(), h.values()), (&[false; 2][..], &[0.0; 6][..]));
    }

    #[test]
    fn records_filled_by_rows_mark_their_jobs_active() {
        let mut h = PairHistory::empty(2);
        h.reset(5, 2);
        // Particle 0 evaluates jobs 0..2, particle 1 none, particle 2 jobs 2..5.
        let offsets = [0, 2, 2, 5];
        h.fill_rows(&offsets, |p, row| {
            assert_eq!(row.len(), 2 * (offsets[p + 1] - offsets[p]));
            if p == 2 {
                row[2..4].copy_from_slice(&[0.5, 0.0]);
                row[4..6].copy_from_slice(&[0.0, 0.0]);
            }
        });
        assert_eq!(h.active(), [false, false, false, true, false]);
        assert_eq!(h.held(3), Some(&[0.5, 0.0][..]));
        // Filling never clears a flag.
        h.record_mut(0);
        h.fill_rows(&offsets, |_, _| {});
        assert_eq!(h.active(), [true, false, false, true, false]);
    }

    #[test]
    fn records_without_values_are_never_held() {
        let mut h = PairHistory::empty(0);
        h.reset(3, 0);
        assert!(h.record_mut(1).is_empty());
        assert_eq!(h.held(1), None);
        h.fill_rows(&[0, 3], |_, _| unreachable!("no values to fill"));
    }
}
