//! Room in a vector for a known number of elements, without the doubling
//! of `Vec::reserve`.
//!
//! The arrays rebuilt with the neighbour list (rows, jobs, history, share
//! slots) and the particle arrays are refilled to a size known beforehand.
//! `Vec::reserve` may double the capacity, so an array that grows by one
//! element past its capacity holds up to twice what it needs for the rest
//! of the run. [`Room::room_for`] reserves exactly, with 1/16 to spare so
//! that a list that grows slowly is not moved at every rebuild.
//!
//! Beside them, the two ways the threads share such an array out: a
//! parallel fill ([`refill`]) and a split into consecutive parts
//! ([`split_chunks`]); and the reordering of such arrays in place
//! ([`Reorder`]), so that a rebuild's sort leaves no array-sized copy
//! behind.

/// Exact reservations (see the module docs).
pub trait Room {
    /// Make the capacity at least `n` elements in all: when it is less,
    /// reserve exactly `n + n/16` (the length is unchanged).
    fn room_for(&mut self, n: usize);
}

/// Make `v` hold `n` copies of `value` ([`Room::room_for`] first), written
/// by the threads in parallel: a rebuild zeroes megabytes of history and
/// share slots, which one thread writes at a fraction of the machine's
/// bandwidth.
pub fn refill<T: Copy + Send + Sync>(v: &mut Vec<T>, n: usize, value: T) {
    use rayon::prelude::*;
    v.clear();
    v.room_for(n);
    v.par_extend(rayon::iter::repeat_n(value, n));
}

/// Set `values` to zero and give the whole memory pages among them back to
/// the system (which maps them zero again when next written), so that a
/// burst of values that passes through the range once does not stay
/// resident. Ranges under 64 KiB are only zeroed.
pub fn zero_and_release(values: &mut [f64]) {
    const PAGE: usize = 4096;
    let bytes = std::mem::size_of_val(values);
    let start = values.as_mut_ptr() as usize;
    let (first_page, end_page) = (start.div_ceil(PAGE) * PAGE, (start + bytes) / PAGE * PAGE);
    if bytes < 64 << 10 || end_page <= first_page {
        values.fill(0.0);
        return;
    }
    let (head, tail) = ((first_page - start) / 8, (start + bytes - end_page) / 8);
    values[..head].fill(0.0);
    let n = values.len();
    values[n - tail..].fill(0.0);
    // SAFETY: the pages lie within `values`, which this call borrows
    // mutably, and are private anonymous memory (the heap or a mapping of
    // the allocator's), which `MADV_DONTNEED` leaves reading zero: the
    // same as writing `+0.0`, whose bits are all zero, into them.
    let done = unsafe {
        libc::madvise(
            first_page as *mut libc::c_void,
            end_page - first_page,
            libc::MADV_DONTNEED,
        )
    };
    if done != 0 {
        values[head..n - tail].fill(0.0);
    }
}

/// Where consecutive parts of the given lengths start, from `first`: one
/// entry per part and one past the last (`first` and the running sums),
/// so that part `b` is `starts[b]..starts[b + 1]`.
pub fn starts_from(first: usize, lens: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let lens = lens.into_iter();
    let mut starts = Vec::with_capacity(lens.size_hint().0 + 1);
    starts.push(first);
    let mut at = first;
    for len in lens {
        at += len;
        starts.push(at);
    }
    starts
}

/// Split `data` into consecutive mutable chunks of the given lengths.
pub fn split_chunks<T>(mut data: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for len in lens {
        let (head, tail) = data.split_at_mut(len);
        out.push(head);
        data = tail;
    }
    out
}

/// A reordering of the rows of arrays, done in place: new row `k` is old
/// row `order[k]`, where `order` is a permutation of the rows or an
/// ascending selection of them (the others dropped). No array is copied
/// whole: a permutation moves each of its cycles with one row held aside,
/// a selection moves rows forward. Made once for several arrays of the
/// same rows.
pub struct Reorder<'a> {
    order: &'a [usize],
    /// The smallest row of each cycle that moves, where `order` is a
    /// permutation; `None` for a selection.
    leaders: Option<Vec<usize>>,
}

impl<'a> Reorder<'a> {
    /// The reordering of `rows` rows by `order`: a permutation where
    /// `order` has `rows` entries, else an ascending selection.
    ///
    /// # Panics
    /// If `order` has `rows` entries and is not a permutation of `0..rows`.
    pub fn new(order: &'a [usize], rows: usize) -> Self {
        let leaders = (order.len() == rows).then(|| cycle_leaders(order));
        debug_assert!(leaders.is_some() || order.windows(2).all(|w| w[0] < w[1]));
        Self { order, leaders }
    }

    /// Reorder `v`, rows of `width` elements each.
    pub fn apply<T: Copy>(&self, v: &mut Vec<T>, width: usize) {
        let order = self.order;
        match (&self.leaders, width) {
            (Some(leaders), 1) => permute_cycles(v, order, leaders),
            (Some(leaders), w) => permute_row_cycles(v, w, order, leaders),
            // An ascending selection: row `order[k] ≥ k` is still unmoved
            // when row `k` is written.
            (None, 1) => {
                for (k, &old) in order.iter().enumerate() {
                    v[k] = v[old];
                }
            }
            (None, w) => {
                for (k, &old) in order.iter().enumerate() {
                    v.copy_within(old * w..(old + 1) * w, k * w);
                }
            }
        }
        v.truncate(order.len() * width);
    }
}

/// The smallest index of each cycle of the permutation `perm` that moves
/// something (the start of each walk of [`permute_cycles`]).
///
/// # Panics
/// If `perm` is not a permutation of `0..perm.len()`.
fn cycle_leaders(perm: &[usize]) -> Vec<usize> {
    let mut seen = vec![false; perm.len()];
    let mut leaders = Vec::new();
    for s in 0..perm.len() {
        if seen[s] || perm[s] == s {
            continue;
        }
        leaders.push(s);
        seen[s] = true;
        let mut k = perm[s];
        while k != s {
            assert!(!seen[k], "not a permutation: {k} comes twice");
            seen[k] = true;
            k = perm[k];
        }
    }
    leaders
}

/// `v[k] ← v[perm[k]]` for every `k`, in place: each cycle of `perm` (one
/// per entry of `leaders`, from [`cycle_leaders`]) is walked once, holding
/// one value aside.
fn permute_cycles<T: Copy>(v: &mut [T], perm: &[usize], leaders: &[usize]) {
    for &s in leaders {
        let first = v[s];
        let mut k = s;
        loop {
            let next = perm[k];
            if next == s {
                v[k] = first;
                break;
            }
            v[k] = v[next];
            k = next;
        }
    }
}

/// [`permute_cycles`] for rows of `w` elements, holding one row aside.
fn permute_row_cycles<T: Copy>(v: &mut [T], w: usize, perm: &[usize], leaders: &[usize]) {
    let mut aside = Vec::with_capacity(w);
    for &s in leaders {
        aside.clear();
        aside.extend_from_slice(&v[s * w..(s + 1) * w]);
        let mut k = s;
        loop {
            let next = perm[k];
            if next == s {
                v[k * w..(k + 1) * w].copy_from_slice(&aside);
                break;
            }
            v.copy_within(next * w..(next + 1) * w, k * w);
            k = next;
        }
    }
}

impl<T> Room for Vec<T> {
    fn room_for(&mut self, n: usize) {
        if self.capacity() < n {
            let want = n + n / 16;
            self.reserve_exact(want - self.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows `order[0], order[1], …` of `old` (of `w` elements), gathered.
    fn gathered(old: &[u64], w: usize, order: &[usize]) -> Vec<u64> {
        order
            .iter()
            .flat_map(|&k| old[k * w..(k + 1) * w].iter().copied())
            .collect()
    }

    #[test]
    fn a_reorder_in_place_moves_rows_as_a_gather_would() {
        let perm = [3usize, 0, 2, 5, 1, 4, 7, 6];
        assert_eq!(cycle_leaders(&perm), vec![0, 6]);
        assert!(cycle_leaders(&[0, 1, 2]).is_empty());
        let select = [1usize, 2, 5, 7];
        for w in [1, 3] {
            let old: Vec<u64> = (0..8 * w as u64).map(|v| 10 + v).collect();
            for order in [&perm[..], &select[..]] {
                let mut v = old.clone();
                Reorder::new(order, 8).apply(&mut v, w);
                assert_eq!(v, gathered(&old, w, order), "width {w}, order {order:?}");
            }
        }
    }

    /// A range that spans whole pages reads zero after its pages are given
    /// back, its unaligned ends included, and so does a short one only
    /// zeroed; the values around the range stay as they were.
    #[test]
    fn a_range_zeroed_and_released_reads_zero_and_nothing_else_changes() {
        let mut v: Vec<f64> = (0..100_000).map(|k| k as f64 + 1.0).collect();
        let (a, b) = (1_001, 90_003);
        zero_and_release(&mut v[a..b]);
        assert!(v[a..b].iter().all(|&x| x.to_bits() == 0));
        assert!((0..a).chain(b..v.len()).all(|k| v[k] == k as f64 + 1.0));
        zero_and_release(&mut v[5..9]);
        assert_eq!(&v[4..10], [5.0, 0.0, 0.0, 0.0, 0.0, 10.0]);
        // Written again after the release, the pages hold what is written.
        v[a..b].fill(2.5);
        assert!(v[a..b].iter().all(|&x| x == 2.5));
    }

    #[test]
    fn parts_start_at_the_running_sums() {
        assert_eq!(starts_from(0, [3, 0, 2]), vec![0, 3, 3, 5]);
        assert_eq!(starts_from(7, []), vec![7]);
        assert_eq!(starts_from(4, [1, 1]), vec![4, 5, 6]);
    }

    #[test]
    #[should_panic(expected = "not a permutation")]
    fn a_selection_is_not_taken_for_a_permutation() {
        Reorder::new(&[1, 1, 0], 3);
    }

    #[test]
    fn room_is_exact_with_a_sixteenth_to_spare() {
        let mut v: Vec<u64> = Vec::new();
        v.room_for(1600);
        assert_eq!(v.capacity(), 1700);
        v.extend(0..1700);
        // One more element past the capacity would double it under
        // `reserve`; `room_for` adds a sixteenth.
        v.room_for(1701);
        assert_eq!(v.capacity(), 1701 + 106);
        // Enough room already: nothing changes.
        v.room_for(10);
        assert_eq!(v.capacity(), 1807);
        assert_eq!(v.len(), 1700);
    }

    #[test]
    fn refill_writes_every_value_in_exact_room() {
        let mut v = vec![7.0_f64; 10];
        refill(&mut v, 100_000, 0.0);
        assert_eq!(v.len(), 100_000);
        assert!(v.iter().all(|&x| x.to_bits() == 0));
        assert_eq!(v.capacity(), 100_000 + 100_000 / 16);
        // Shorter again: the storage stays.
        refill(&mut v, 5, 1.5);
        assert_eq!(v, [1.5; 5]);
        assert_eq!(v.capacity(), 106_250);
    }
}
