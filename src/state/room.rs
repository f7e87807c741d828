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
//! ([`split_chunks`]).

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
