//! Pair-contact history: a record per pair job in contact, held in a pool,
//! so that the many pairs in reach but apart take 4 B each.

use crate::state::room::{refill, split_chunks, zero_and_release};

/// The contact-history records of a neighbour list's jobs
/// ([`super::PairJobs`]): `record_len` values per record, and per job the
/// number of its record's *entry* in a pool, or 0 for none. A job with an
/// entry is *active*.
///
/// Invariants:
/// - there is one entry number per job of the list; entry 0 is zero and
///   is never written; no two jobs share an entry;
/// - a job that is not active has a record of zeros (entry 0), and its
///   share slot ([`super::Shares`]) holds zero. A job may be active with a
///   record of zeros (the force stage frees its entry when it finds the
///   pair apart).
///
/// The type keeps the second invariant for every write outside the force
/// stage: [`Self::record_mut`] makes its job active, and nothing outside
/// the neighbour list frees an entry. The force stage, which writes the
/// records in place, frees a job's entry and clears its share slot
/// together.
///
/// The pool has two parts. Entries `1..top` are *settled*: each held by
/// one job or free (listed in `free`, for reuse). After them come the
/// *fresh* entries, one per job, zero between force stages: a force stage
/// writes the record of a contact that forms into a fresh entry of its own
/// run of blocks (`FreshRecords`), and settles it afterwards
/// (`settle`). The pool is mapped afresh, zero, at each rebuild, so
/// only the entries written take memory: the chute holds 15,000 records
/// for 122,000 jobs.
///
/// A record whose values are all zero is the same as no record (a fresh
/// contact).
#[derive(Clone, Default)]
pub struct PairHistory {
    /// Per job: its record's entry in `pool`, or 0.
    entry: Vec<u32>,
    /// `len` values per entry: entry 0, the settled entries, the fresh ones.
    pool: Vec<f64>,
    len: usize,
    /// The end of the settled entries.
    top: usize,
    /// Settled entries that no job holds (their values mean nothing), by
    /// the force stage's run that freed them ([`FreshRecords::of`]; the
    /// first list for those freed otherwise).
    free: Vec<Vec<u32>>,
}

impl PairHistory {
    /// No records, `len` values per record.
    pub(super) fn empty(len: usize) -> Self {
        Self {
            len,
            top: 1,
            ..Self::default()
        }
    }

    /// Zeroed, inactive records for `jobs` jobs, `len` values each (the
    /// caller zeroes the share slots: see the type's invariants), in a
    /// pool mapped afresh.
    pub(super) fn reset(&mut self, jobs: usize, len: usize) {
        assert!(
            2 * jobs < u32::MAX as usize,
            "more pair jobs than a u32 numbers twice"
        );
        self.len = len;
        refill(&mut self.entry, jobs, 0);
        self.fresh_pool();
    }

    /// Entry 0, room for a settled entry per job and a fresh entry per job,
    /// all zero, in storage mapped afresh (the old pool is given back first;
    /// `vec!` of zeros asks the allocator for zeroed memory, which a fresh
    /// mapping is without being written, so the pages take memory only
    /// where records are written).
    fn fresh_pool(&mut self) {
        self.pool = Vec::new();
        self.pool = vec![0.0; (2 * self.entry.len() + 1) * self.len];
        self.top = 1;
        self.free = Vec::new();
    }

    /// The first fresh entry (see the type's docs).
    fn fresh_start(&self) -> usize {
        self.entry.len() + 1
    }

    /// A settled entry no job holds: a free one (its values left as they
    /// are), one that run `run` freed first, else the next.
    fn settled_entry(&mut self, run: usize) -> usize {
        let own = self.free.get_mut(run).and_then(Vec::pop);
        if let Some(e) = own.or_else(|| self.free.iter_mut().find_map(Vec::pop)) {
            return e as usize;
        }
        assert!(self.top < self.fresh_start(), "more records than jobs");
        self.top += 1;
        self.top - 1
    }

    /// A settled entry for a new record, zero.
    fn take(&mut self) -> u32 {
        let (h, e) = (self.len, self.settled_entry(0));
        self.pool[e * h..(e + 1) * h].fill(0.0);
        e as u32
    }

    /// Zero the record of every active job and make it inactive, calling
    /// `cleared(j)` for each such job `j` (for the caller to zero its share
    /// slot: see the type's invariants).
    pub(super) fn clear_active(&mut self, mut cleared: impl FnMut(usize)) {
        for (j, e) in self.entry.iter_mut().enumerate() {
            if std::mem::take(e) != 0 {
                cleared(j);
            }
        }
        self.fresh_pool();
    }

    /// Values per record.
    #[inline(always)]
    pub fn record_len(&self) -> usize {
        self.len
    }

    /// Number of jobs.
    pub fn jobs(&self) -> usize {
        self.entry.len()
    }

    /// Number of active jobs.
    pub fn active_jobs(&self) -> usize {
        self.entry.iter().filter(|&&e| e != 0).count()
    }

    /// The record of job `j`.
    pub fn record(&self, j: usize) -> &[f64] {
        let (h, e) = (self.len, self.entry[j] as usize);
        &self.pool[e * h..(e + 1) * h]
    }

    /// The record of job `j`, to write. The job is made active, so the
    /// force stage reads what is written.
    pub fn record_mut(&mut self, j: usize) -> &mut [f64] {
        if self.entry[j] == 0 {
            self.entry[j] = self.take();
        }
        let (h, e) = (self.len, self.entry[j] as usize);
        &mut self.pool[e * h..(e + 1) * h]
    }

    /// The record of job `j` if it holds anything: skipped unread when the
    /// job is not active (it holds zeros), else returned when any value is
    /// non-zero (an all-zero record is the same as none).
    pub fn held(&self, j: usize) -> Option<&[f64]> {
        if self.len == 0 || self.entry[j] == 0 {
            return None;
        }
        let rec = self.record(j);
        rec.iter().any(|&v| v != 0.0).then_some(rec)
    }

    /// Whether job `j` is active (may hold a non-zero record or share).
    pub fn is_active(&self, j: usize) -> bool {
        self.entry[j] != 0
    }

    /// Every job's activity, in job order (for the tests).
    #[cfg(test)]
    pub(crate) fn active_flags(&self) -> Vec<bool> {
        self.entry.iter().map(|&e| e != 0).collect()
    }

    /// Every job's record, in job order, one after the other (for the tests).
    #[cfg(test)]
    pub(crate) fn job_values(&self) -> Vec<f64> {
        (0..self.jobs())
            .flat_map(|j| self.record(j))
            .copied()
            .collect()
    }

    /// Run `f(p, records)` in parallel for every owned particle `p`, with
    /// the records of the jobs it evaluates (`job_offsets`, see
    /// [`super::PairJobs::offsets`]) to write, all zero, where `f` returns
    /// whether it wrote any; then keep, in job order, the records that hold
    /// a non-zero value, their jobs made active. The list must hold no
    /// record yet (a fresh list).
    ///
    /// Each block of rows keeps its records aside while `f` runs (the
    /// records once more, for a moment: a single walk over the rows costs
    /// less than a walk to count them and one to write them), then each
    /// block copies them to its place in the pool, in block order.
    pub(super) fn fill_rows(
        &mut self,
        job_offsets: &[usize],
        f: impl Fn(usize, &mut [f64]) -> bool + Sync,
    ) {
        use rayon::prelude::*;
        let h = self.len;
        if h == 0 {
            return;
        }
        assert!(
            self.top == 1 && self.entry.iter().all(|&e| e == 0),
            "records filled into a list that holds some"
        );
        let n = job_offsets.len().saturating_sub(1);
        let rows_of = |b: usize| b * super::BLOCK..((b + 1) * super::BLOCK).min(n);
        // Each block's kept records and their jobs. The scratch stays zero
        // between rows: a row `f` did not write is skipped, and the
        // records kept are zeroed again.
        let kept: Vec<(Vec<u32>, Vec<f64>)> = (0..n.div_ceil(super::BLOCK))
            .into_par_iter()
            .map(|b| {
                let (mut jobs, mut values, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
                for p in rows_of(b) {
                    let (s, e) = (job_offsets[p], job_offsets[p + 1]);
                    let len = (e - s) * h;
                    if scratch.len() < len {
                        scratch.resize(len, 0.0);
                    }
                    let row = &mut scratch[..len];
                    if !f(p, row) {
                        continue;
                    }
                    for (k, rec) in row.chunks_exact_mut(h).enumerate() {
                        if rec.iter().any(|&v| v != 0.0) {
                            jobs.push((s + k) as u32);
                            values.extend_from_slice(rec);
                            rec.fill(0.0);
                        }
                    }
                }
                (jobs, values)
            })
            .collect();
        // Each block writes its own entries and its own jobs' numbers.
        let counts = kept.iter().map(|(jobs, _)| jobs.len());
        let starts = crate::state::room::starts_from(1, counts.clone());
        let total = starts[starts.len() - 1] - 1;
        let pool = split_chunks(&mut self.pool[h..(1 + total) * h], counts.map(|c| c * h));
        let block_jobs = (0..kept.len()).map(|b| {
            let rows = rows_of(b);
            job_offsets[rows.end] - job_offsets[rows.start]
        });
        let entry = split_chunks(&mut self.entry, block_jobs);
        (kept.into_par_iter().zip(pool).zip(entry).enumerate()).for_each(
            |(b, (((jobs, values), pool), entry))| {
                pool.copy_from_slice(&values);
                let job0 = job_offsets[rows_of(b).start];
                for (k, &job) in jobs.iter().enumerate() {
                    entry[job as usize - job0] = (starts[b] + k) as u32;
                }
            },
        );
        self.top = 1 + total;
    }

    /// The force stage's view of the records, to write in place: for the
    /// force stage only, which keeps the type's invariants (it frees a
    /// job's entry and clears its share slot together) and settles the
    /// records of the contacts that formed ([`Self::settle`]) before the
    /// list is used otherwise.
    #[inline(always)]
    pub(crate) fn stage_parts(&mut self) -> (&mut [u32], RecordPool, usize) {
        let fresh = self.fresh_start();
        assert!(
            self.pool.len() >= (fresh + self.entry.len()) * self.len,
            "a record pool without room for every job"
        );
        let pool = RecordPool {
            values: self.pool.as_mut_ptr(),
            entries: fresh + self.entry.len(),
            len: self.len,
        };
        (&mut self.entry, pool, fresh)
    }

    /// After a force stage: give each contact that formed in a fresh entry
    /// a settled one, move its record there and zero the fresh entry, then
    /// list the entries the stage freed and did not reuse. `runs` are the
    /// force stage's runs of blocks, each with its fresh entries and the
    /// entries it freed.
    ///
    /// A contact that formed takes an entry its own stretch of blocks
    /// freed in this stage first, then one its run freed before, then any
    /// free entry, then the next. The records of a run's blocks, laid out
    /// in job order at a rebuild, so stay among themselves: were a run's
    /// new records put among another's (as when every run's freed entries
    /// went to one list), the two threads writing records of one cache
    /// line in every force stage would pass it between their cores each
    /// time, which on a host whose cores are far apart cost the chute on
    /// two threads a tenth of its force stage.
    pub(crate) fn settle(&mut self, runs: &mut [FreshRecords]) {
        let h = self.len;
        for run in runs.iter_mut() {
            let used = run.start..run.start + run.jobs.len();
            for (fresh, &job) in used.clone().zip(&run.jobs) {
                let settled = match run.freed.pop() {
                    Some(e) => e as usize,
                    None => self.settled_entry(run.run),
                };
                self.pool
                    .copy_within(fresh * h..(fresh + 1) * h, settled * h);
                debug_assert_eq!(self.entry[job as usize] as usize, fresh);
                self.entry[job as usize] = settled as u32;
            }
            // Zero again; a burst (a bed whose contacts all form at its
            // first step) gives its pages back.
            zero_and_release(&mut self.pool[used.start * h..used.end * h]);
        }
        for run in runs.iter_mut() {
            if self.free.len() <= run.run {
                self.free.resize_with(run.run + 1, Vec::new);
            }
            self.free[run.run].append(&mut run.freed);
        }
    }
}

/// Histories compare and print by each job's activity and record, not by
/// where in the pool the records happen to lie (which depends on the
/// threads and on the order the contacts formed in).
impl PartialEq for PairHistory {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self.jobs() == other.jobs()
            && (0..self.jobs()).all(|j| {
                self.is_active(j) == other.is_active(j) && self.record(j) == other.record(j)
            })
    }
}

impl std::fmt::Debug for PairHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.jobs()).map(|j| (self.is_active(j), self.record(j))))
            .finish()
    }
}

/// The record pool of a [`PairHistory`] as the threads of one force stage
/// see it: entry `e` is read and written only by the run of blocks whose
/// job holds it, or whose fresh entries it is among ([`FreshRecords`]);
/// entry 0, zero, is only read.
pub(crate) struct RecordPool {
    values: *mut f64,
    entries: usize,
    len: usize,
}

// SAFETY: threads access disjoint entries (see the type's docs); entry 0
// is only read.
unsafe impl Sync for RecordPool {}

impl RecordPool {
    /// The record of entry `e`.
    ///
    /// # Safety
    /// No other thread writes entry `e` while the slice lives.
    #[inline(always)]
    pub(crate) unsafe fn record(&self, e: u32) -> &[f64] {
        let e = e as usize;
        assert!(e < self.entries);
        // SAFETY: in bounds, and not written meanwhile by the caller's promise.
        unsafe { std::slice::from_raw_parts(self.values.add(e * self.len), self.len) }
    }

    /// The record of entry `e`, to write.
    ///
    /// # Safety
    /// `e` is not 0, and no other thread reads or writes entry `e` while
    /// the slice lives.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn record_mut(&self, e: u32) -> &mut [f64] {
        let e = e as usize;
        assert!(e > 0 && e < self.entries);
        // SAFETY: in bounds, and exclusive by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.values.add(e * self.len), self.len) }
    }

    /// Hint the cache to load entry `e`'s record soon (both its ends).
    #[inline(always)]
    pub(crate) fn prefetch(&self, e: u32) {
        let at = (e as usize).min(self.entries - 1) * self.len;
        crate::simd::prefetch::prefetch_ptr(self.values.wrapping_add(at));
        if self.len > 4 {
            // A record longer than half a cache line straddles two at
            // every other entry: ask for its end too.
            crate::simd::prefetch::prefetch_ptr(self.values.wrapping_add(at + self.len - 1));
        }
    }
}

/// The fresh entries of one run of blocks in one force stage (a stretch a
/// thread did from a run's front, or one block taken from a run's back):
/// one per job of the run, taken in order for the contacts that form
/// (whose jobs it lists), and the settled entries the run freed.
pub(crate) struct FreshRecords {
    /// The force stage's run of blocks it is part of.
    run: usize,
    start: usize,
    end: usize,
    jobs: Vec<u32>,
    freed: Vec<u32>,
}

impl FreshRecords {
    /// The fresh entries of jobs `jobs` of the force stage's run of
    /// blocks `run`, `fresh` being the first fresh entry of the pool
    /// ([`PairHistory::stage_parts`]).
    pub(crate) fn of(run: usize, jobs: std::ops::Range<usize>, fresh: usize) -> Self {
        Self {
            run,
            start: fresh + jobs.start,
            end: fresh + jobs.end,
            jobs: Vec::new(),
            freed: Vec::new(),
        }
    }

    /// A fresh entry (zero) for job `job`'s new record.
    #[inline(always)]
    pub(crate) fn take(&mut self, job: usize) -> u32 {
        let e = self.start + self.jobs.len();
        assert!(e < self.end, "more new records than jobs in a run");
        self.jobs.push(job as u32);
        e as u32
    }

    /// Entry `e` is held by no job any more.
    #[inline(always)]
    pub(crate) fn free(&mut self, e: u32) {
        self.freed.push(e);
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
        assert_eq!(h.active_flags(), [false; 4]);
        assert_eq!(h.held(2), None);
        h.record_mut(2).copy_from_slice(&[1.0, 0.0, -2.0]);
        assert!(h.is_active(2));
        assert_eq!(h.held(2), Some(&[1.0, 0.0, -2.0][..]));
        // Active but all zero: the same as no record.
        h.record_mut(1);
        assert_eq!(h.active_flags(), [false, true, true, false]);
        assert_eq!(h.held(1), None);
        assert_eq!(h.job_values()[6..9], [1.0, 0.0, -2.0]);
        // A reset forgets every record.
        h.reset(2, 3);
        assert_eq!(
            (h.active_flags(), h.job_values()),
            (vec![false; 2], vec![0.0; 6])
        );
    }

    #[test]
    fn records_filled_by_rows_mark_their_jobs_active() {
        let mut h = PairHistory::empty(2);
        h.reset(5, 2);
        // Particle 0 evaluates jobs 0..2, particle 1 none, particle 2 jobs 2..5.
        let offsets = [0, 2, 2, 5];
        h.fill_rows(&offsets, |p, row| {
            assert_eq!(row.len(), 2 * (offsets[p + 1] - offsets[p]));
            assert!(row.iter().all(|&v| v == 0.0), "a row to write is zero");
            match p {
                2 => {
                    row[2..4].copy_from_slice(&[0.5, 0.0]);
                    row[4..6].copy_from_slice(&[0.0, 0.0]);
                    true
                }
                _ => false,
            }
        });
        assert_eq!(h.active_flags(), [false, false, false, true, false]);
        assert_eq!(h.held(3), Some(&[0.5, 0.0][..]));
        // One entry taken, the first after entry 0.
        assert_eq!((h.top, h.entry[3]), (2, 1));
    }

    #[test]
    #[should_panic(expected = "records filled into a list that holds some")]
    fn records_are_filled_into_a_fresh_list_only() {
        let mut h = PairHistory::empty(2);
        h.reset(3, 2);
        h.record_mut(0)[0] = 1.0;
        h.fill_rows(&[0, 3], |_, _| false);
    }

    /// A force stage's contacts that form take fresh entries of their run,
    /// which settle into free entries first, then after the settled ones;
    /// the fresh entries are zero again.
    #[test]
    fn fresh_records_settle_into_free_entries_first() {
        let mut h = PairHistory::empty(2);
        h.reset(6, 2);
        h.record_mut(0).copy_from_slice(&[1.0, 2.0]);
        h.record_mut(1).copy_from_slice(&[3.0, 4.0]);
        assert_eq!((h.entry[0], h.entry[1], h.top), (1, 2, 3));
        // Two runs: jobs 0..3 and 3..6. The first frees job 1's entry and
        // forms job 2's contact; the second forms jobs 4 and 5.
        let (entry, pool, fresh) = h.stage_parts();
        assert_eq!(fresh, 7);
        let mut runs = [
            FreshRecords::of(0, 0..3, fresh),
            FreshRecords::of(1, 3..6, fresh),
        ];
        let freed = std::mem::take(&mut entry[1]);
        runs[0].free(freed);
        for (run, job, v) in [(0, 2, 5.0), (1, 4, 6.0), (1, 5, 7.0)] {
            let e = runs[run].take(job);
            entry[job] = e;
            // SAFETY: one thread, and the entry is the job's alone.
            let rec = unsafe { pool.record_mut(e) };
            assert_eq!(rec, [0.0, 0.0], "a fresh entry is zero");
            rec.copy_from_slice(&[v, -v]);
        }
        assert_eq!((entry[2], entry[4], entry[5]), (7, 10, 11));
        h.settle(&mut runs);
        // Job 2 takes the entry job 1 freed; jobs 4 and 5 the next two.
        assert_eq!(h.entry, [1, 0, 2, 0, 3, 4]);
        assert_eq!(h.top, 5);
        assert_eq!(
            h.job_values(),
            [1.0, 2.0, 0.0, 0.0, 5.0, -5.0, 0.0, 0.0, 6.0, -6.0, 7.0, -7.0]
        );
        assert!(
            h.pool[7 * 2..].iter().all(|&v| v == 0.0),
            "fresh entries zero again"
        );
        assert!(h.free.iter().all(Vec::is_empty));
    }

    /// A contact that forms takes an entry its own run freed, in this
    /// force stage or an earlier one, before another run's.
    #[test]
    fn a_run_reuses_the_entries_it_freed() {
        let mut h = PairHistory::empty(1);
        h.reset(6, 1);
        for j in [0, 1, 3, 4] {
            h.record_mut(j)[0] = j as f64 + 1.0;
        }
        assert_eq!(h.entry, [1, 2, 0, 3, 4, 0]);
        let stage = |h: &mut PairHistory, frees: &[(usize, usize)], forms: &[(usize, usize)]| {
            let (entry, pool, fresh) = h.stage_parts();
            let mut runs = [
                FreshRecords::of(0, 0..3, fresh),
                FreshRecords::of(1, 3..6, fresh),
            ];
            for &(run, job) in frees {
                runs[run].free(std::mem::take(&mut entry[job]));
            }
            for &(run, job) in forms {
                let e = runs[run].take(job);
                entry[job] = e;
                // SAFETY: one thread, and the entry is the job's alone.
                let rec = unsafe { pool.record_mut(e) };
                rec[0] = 10.0 * job as f64;
            }
            h.settle(&mut runs);
        };
        // Run 0 (jobs 0..3) frees job 0's entry, run 1 (jobs 3..6) job
        // 4's; nothing forms.
        stage(&mut h, &[(0, 0), (1, 4)], &[]);
        assert_eq!(h.free, [vec![1], vec![4]]);
        // Job 2 forms in run 0, job 5 in run 1: each takes the entry its
        // run freed (one list for both would have given job 2 entry 4).
        stage(&mut h, &[], &[(0, 2), (1, 5)]);
        assert_eq!(h.entry, [0, 2, 1, 3, 0, 4]);
        assert_eq!((h.record(2), h.record(5)), (&[20.0][..], &[50.0][..]));
        // Run 0 frees job 1's entry and forms job 0's contact: it takes
        // the entry it freed in the same stage.
        stage(&mut h, &[(0, 1)], &[(0, 0)]);
        assert_eq!(h.entry, [2, 0, 1, 3, 0, 4]);
        assert!(h.free.iter().all(Vec::is_empty));
        assert_eq!(h.top, 5);
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
