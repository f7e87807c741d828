//! Sums over the owned particles that give the same bits on any number of
//! threads: each block of [`BLOCK`] particles is summed on its own, the
//! blocks in parallel, and the blocks' parts are added in block order.

use crate::neighbor::BLOCK;
use rayon::prelude::*;
use std::ops::Range;

/// A block's part of a sum, and how two are added.
pub(crate) trait Partial: Default + Send {
    /// Add `other` (the part of the blocks after this one's).
    fn merge(&mut self, other: &Self);
}

/// Values added index by index; a shorter one counts as zeros beyond its end.
impl Partial for Vec<f64> {
    fn merge(&mut self, other: &Self) {
        if self.len() < other.len() {
            self.resize(other.len(), 0.0);
        }
        merge_sums(self, other);
    }
}

/// The sum over owned particles `0..n`: `add(range, part)` adds the
/// particles of one block's range to its part, which starts at
/// `P::default()`; the parts are merged in block order.
pub(crate) fn in_blocks<P: Partial>(n: usize, add: impl Fn(Range<usize>, &mut P) + Sync) -> P {
    let parts: Vec<P> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut part = P::default();
            add(b * BLOCK..((b + 1) * BLOCK).min(n), &mut part);
            part
        })
        .collect();
    let mut total = P::default();
    for part in &parts {
        total.merge(part);
    }
    total
}

/// `into[i] += from[i]` for each `i` of both.
pub(crate) fn merge_sums(into: &mut [f64], from: &[f64]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same bits on one thread and on several: blocks summed apart,
    /// then in order.
    #[test]
    fn block_sums_do_not_depend_on_the_threads() {
        let n = 5 * BLOCK + 17;
        let value =
            |k: usize| 1.0 / (k as f64 + 0.3) * if k.is_multiple_of(3) { -1e3 } else { 1.0 };
        let sum = || {
            in_blocks(n, |ks, part: &mut Vec<f64>| {
                part.resize(2, 0.0);
                for k in ks {
                    part[0] += value(k);
                    part[1] += 1.0;
                }
            })
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let four = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let (a, b) = (one.install(sum), four.install(sum));
        assert_eq!(a[0].to_bits(), b[0].to_bits());
        assert_eq!(a[1], n as f64);
        // The blocks' parts, added in order.
        let mut by_hand = 0.0;
        for b in 0..n.div_ceil(BLOCK) {
            let mut part = 0.0;
            for k in b * BLOCK..((b + 1) * BLOCK).min(n) {
                part += value(k);
            }
            by_hand += part;
        }
        assert_eq!(a[0].to_bits(), by_hand.to_bits());
    }
}
