//! Tests of the neighbour list: rows, jobs, rebuilds in place and the
//! history carried through them.

use super::cells::CellGrid;
use super::verlet::sort_row;
use super::*;
use crate::state::particles::ParticleRecord;
use crate::state::particles::Particles;
use glam::{DVec3, DVec4};
use std::ops::Range;

/// 125 polydisperse spheres (radii 1:3) with scrambled ids, some frozen,
/// plus 30 ghosts (images of some of them shifted by 5.5 along x).
fn spheres() -> Particles {
    let mut p = Particles::default();
    let record = |k: u64| {
        let (a, b, c) = ((k % 5) as f64, ((k / 5) % 5) as f64, (k / 25) as f64);
        let radius = 0.25 + 0.5 * ((k * 37 % 11) as f64 / 10.0);
        let x = DVec3::new(a, b, c) * 1.1 + DVec3::splat(0.01 * (k % 3) as f64);
        ParticleRecord {
            frozen: k % 9 == 4,
            ..ParticleRecord::resting((k * 53) % 125, x, radius)
        }
    };
    for k in 0..125 {
        p.push_owned(&record(k));
    }
    for k in 0..30 {
        p.push_ghost(&record(k * 4), DVec3::new(5.5, 0.0, 0.0));
    }
    p
}

/// The spatial order is the order by (cell, id), as a full sort of
/// those keys gives it, for cells holding one or several particles.
#[test]
fn spatial_order_sorts_by_cell_then_id() {
    let p = spheres();
    for cell in [0.5, 1.3, 2.9] {
        let grid = CellGrid::new(&p.x[..p.n_owned], cell);
        let mut keys: Vec<(usize, u64, usize)> = (0..p.n_owned)
            .map(|k| (grid.cell_of(p.x[k]), p.id[k], k))
            .collect();
        keys.sort_unstable();
        let expected: Vec<usize> = keys.iter().map(|e| e.2).collect();
        assert_eq!(spatial_order(&p, cell), expected, "cell {cell}");
        let shared = keys.windows(2).any(|w| w[0].0 == w[1].0);
        assert_eq!(
            shared,
            cell > 1.2,
            "cells shared by several particles at {cell}"
        );
    }
}

/// The parts of two lists, for comparison.
fn fields(nl: &NeighborList) -> String {
    format!("{:?}", (nl.rows(), nl.jobs(), nl.history(), nl.shares()))
}

/// A list rebuilt in place, over the storage of a list of other
/// particles (more of them, with history written), is the list built
/// afresh.
#[test]
fn a_list_rebuilt_in_place_is_the_list_built_afresh() {
    let p = spheres();
    let mut big = spheres();
    for k in 0..big.n_owned {
        big.x[k] *= 0.8;
    }
    big.refresh_packed();
    let mut list = NeighborList::build(&big, 0.3, 3);
    assert!(list.len() > NeighborList::build(&p, 0.2, 3).len());
    for j in 0..list.jobs().len() {
        list.job_record_mut(j).fill(0.5);
    }
    list.rebuild(&p, 0.2, 3);
    assert_eq!(fields(&list), fields(&NeighborList::build(&p, 0.2, 3)));
    list.rebuild(&big, 0.3, 0);
    assert_eq!(fields(&list), fields(&NeighborList::build(&big, 0.3, 0)));
}

/// [`spheres`] with its owned particles reordered by `perm` (new index
/// `k` is old `perm[k]`) and the same 30 images (ghost `g` copies the
/// particle that was owned index `4 g`); also returns the images' sources.
fn permuted_spheres(perm: &[usize]) -> (Particles, Vec<u32>) {
    let mut p = spheres();
    p.truncate_ghosts();
    p.permute_owned(perm);
    let mut new_of_old = vec![0; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_of_old[old] = new;
    }
    let sources: Vec<u32> = (0..30).map(|g| new_of_old[4 * g] as u32).collect();
    for &k in &sources {
        let r = p.record(k as usize);
        p.push_ghost(&r, DVec3::new(5.5, 0.0, 0.0));
    }
    p.refresh_packed();
    (p, sources)
}

/// The history of `old` (a list of [`permuted_spheres`] in their first
/// order, whose images copy `sources`) carried into the list of the
/// spheres reordered by `perm`, both ways: by per-particle rows (the path
/// with migration) and by pair (a single rank's). Returns the reordered
/// spheres and the two lists.
fn carried(
    old: &NeighborList,
    old_ids: &[u64],
    sources: &[u32],
    perm: &[usize],
) -> (Particles, NeighborList, NeighborList) {
    use crate::neighbor::carry::{HistoryRows, PairRecords};
    let (q, _) = permuted_spheres(perm);
    let mut by_rows = NeighborList::build(&q, 0.2, 3);
    let rows = HistoryRows::from_list(old, old_ids, q.n_owned);
    rows.select(perm).fill_list(&mut by_rows, &q.id);
    // Put back in the new order without the reordered copy, the same.
    let mut in_order = NeighborList::build(&q, 0.2, 3);
    rows.fill_list_in_order(&mut in_order, &q.id, |k| perm[k]);
    assert_eq!(in_order.history(), by_rows.history());
    let mut by_pairs = NeighborList::build(&q, 0.2, 3);
    let records = PairRecords::from_list(old, sources);
    records.fill_list(&mut by_pairs, perm, &q.id);
    // Looked up two records at a time, the list is filled the same.
    let mut in_pieces = NeighborList::build(&q, 0.2, 3);
    records.fill_list_in_pieces(&mut in_pieces, perm, &q.id, 2);
    assert_eq!(in_pieces.history(), by_pairs.history());
    (q, by_rows, by_pairs)
}

/// The records carried through a single-rank rebuild by pair
/// ([`PairRecords`]) fill the new list exactly as the per-particle rows
/// ([`HistoryRows`], the path with migration) do, including pairs that
/// meet through periodic images (evaluated on both sides).
#[test]
fn pair_records_fill_a_rebuilt_list_as_history_rows_do() {
    use crate::neighbor::carry::PairRecords;
    let identity: Vec<usize> = (0..125).collect();
    let (p, sources) = permuted_spheres(&identity);
    let mut old = NeighborList::build(&p, 0.2, 3);
    // Every third pair has a record, the same on both of its jobs.
    for k in 0..p.n_owned {
        for e in old.rows().row(k) {
            let (a, b) = (p.id[k], old.rows().partner_id(e, &p.id));
            let (lo, hi) = (a.min(b), a.max(b));
            if (lo + hi) % 3 == 0 {
                let v = lo as f64 + 0.001 * hi as f64;
                old.record_mut(e).copy_from_slice(&[v, -v, 0.5]);
            }
        }
    }
    let perm: Vec<usize> = (0..125).map(|k| (k * 7 + 3) % 125).collect();
    let (q, by_rows, by_pairs) = carried(&old, &p.id, &sources, &perm);
    let records = PairRecords::from_list(&old, &sources);
    assert_eq!(fields(&by_pairs), fields(&by_rows));
    let ghost_jobs = (0..by_pairs.jobs().len())
        .filter(|&j| by_pairs.history().is_active(j) && by_pairs.jobs().partner(j) >= q.n_owned)
        .count();
    assert!(
        records.records() > 20 && ghost_jobs > 0,
        "{ghost_jobs} ghost jobs"
    );
}

/// The search flags a list that holds a pair deeper than the overlap
/// bound, whatever the radii (`R*` of unequal spheres is above the half
/// of the smaller radius the flag assumes), and only such a list: two
/// spheres a hair deeper than `MAX_OVERLAP · R*` are flagged, a hair
/// shallower than the flag's own limit are not.
#[test]
fn the_search_flags_pairs_that_may_overlap_beyond_the_bound() {
    use crate::diagnostics::MAX_OVERLAP;
    let pair = |ra: f64, rb: f64, d: f64| {
        let mut p = Particles::default();
        for (id, x, radius) in [(1, 1.0, ra), (2, 1.0 + d, rb)] {
            p.push_owned(&ParticleRecord::resting(
                id,
                DVec3::new(x, 1.0, 1.0),
                radius,
            ));
        }
        p.refresh_packed();
        NeighborList::build(&p, 0.1, 0).may_overlap_deeply()
    };
    for (ra, rb) in [(0.5, 0.5), (0.2, 0.7), (1e-3, 3e-3)] {
        let r_eff = ra * rb / (ra + rb);
        // Deep by the diagnostics' measure: δ/R* just above the bound.
        let deep = ra + rb - MAX_OVERLAP * r_eff * (1.0 + 1e-6);
        assert!(pair(ra, rb, deep), "radii {ra}, {rb}");
        // In ordinary contact (1 % of R*), and beyond the flag's limit.
        assert!(!pair(ra, rb, ra + rb - 0.01 * r_eff), "radii {ra}, {rb}");
        let limit = ra + rb - 0.5 * MAX_OVERLAP * ra.min(rb);
        assert!(!pair(ra, rb, limit * (1.0 + 1e-6)), "radii {ra}, {rb}");
    }
}

/// A single-rank rebuild that holds the carried records in the old list's
/// share-slot storage ([`NeighborList::lend_share_room`]) lifts the same
/// records, rebuilds the same list in place, and gets its share slots
/// back, zeroed, in the storage it lent (no memory of the records' own).
#[test]
fn records_carried_in_the_share_slots_storage_give_the_same_list() {
    use crate::neighbor::carry::PairRecords;
    let identity: Vec<usize> = (0..125).collect();
    let (p, sources) = permuted_spheres(&identity);
    let mut old = NeighborList::build(&p, 0.2, 3);
    for j in (0..old.jobs().len()).step_by(2) {
        let v = j as f64 + 0.5;
        old.job_record_mut(j).copy_from_slice(&[v, -v, 1.0 / v]);
    }
    let perm: Vec<usize> = (0..125).map(|k| (k * 7 + 3) % 125).collect();
    let (q, _) = permuted_spheres(&perm);
    let own = PairRecords::from_list(&old, &sources);
    let mut fresh = NeighborList::build(&q, 0.2, 3);
    own.fill_list(&mut fresh, &perm, &q.id);

    let mut list = old.clone();
    let room = list.lend_share_room();
    let (at, capacity) = (room.0.as_ptr(), room.0.capacity());
    assert!(capacity >= 6 * old.jobs().slots() && list.shares().is_empty());
    let lent = PairRecords::from_list_in(&list, &sources, room);
    assert_eq!(lent, own);
    assert!(lent.records() > 50, "{} records", lent.records());
    list.rebuild(&q, 0.2, 3);
    assert!(
        list.shares().is_empty(),
        "slots made while their room is lent"
    );
    lent.fill_list(&mut list, &perm, &q.id);
    let room = lent.into_room();
    assert_eq!((room.0.as_ptr(), room.0.capacity()), (at, capacity));
    list.return_share_room(room);
    assert_eq!(fields(&list), fields(&fresh));
    assert_eq!(list.shares().len(), list.jobs().slots());
    assert!(list.shares().iter().all(|c| c == Contribution::default()));
}

/// A contact between two owned particles that meet through periodic
/// images after the rebuild (one wrapped across the boundary) has a
/// job on each side; both get the record, by pairs as by rows.
#[test]
fn a_contact_that_comes_to_meet_through_images_keeps_its_record_on_both_sides() {
    use crate::neighbor::carry::{HistoryRows, PairRecords};
    let sphere = |id: u64, x: f64| ParticleRecord::resting(id, DVec3::new(x, 1.0, 1.0), 0.4);
    let mut before = Particles::default();
    before.push_owned(&sphere(1, 0.2));
    before.push_owned(&sphere(2, 0.9));
    before.refresh_packed();
    let mut old = NeighborList::build(&before, 0.2, 3);
    assert_eq!(old.jobs().len(), 1);
    old.job_record_mut(0).copy_from_slice(&[1e-3, -2e-3, 3e-3]);
    // Particle 2 crossed x = 0 and was wrapped to the far side of a box
    // of length 5.5; each particle now meets the other's image.
    let mut after = Particles::default();
    after.push_owned(&sphere(1, 0.2));
    after.push_owned(&sphere(2, 5.45));
    after.push_ghost(&sphere(1, 0.2), DVec3::new(5.5, 0.0, 0.0));
    after.push_ghost(&sphere(2, 5.45), DVec3::new(-5.5, 0.0, 0.0));
    after.refresh_packed();
    let mut by_rows = NeighborList::build(&after, 0.2, 3);
    HistoryRows::from_list(&old, &before.id, 2)
        .select(&[0, 1])
        .fill_list(&mut by_rows, &after.id);
    let mut by_pairs = NeighborList::build(&after, 0.2, 3);
    PairRecords::from_list(&old, &[]).fill_list(&mut by_pairs, &[0, 1], &after.id);
    assert_eq!(fields(&by_pairs), fields(&by_rows));
    assert_eq!(by_pairs.jobs().len(), 2);
    assert_eq!(
        by_pairs.history().job_values(),
        [[1e-3, -2e-3, 3e-3]; 2].concat()
    );
    assert_eq!(by_pairs.history().active_flags(), [true, true]);
}

#[test]
fn every_pair_has_one_job_held_by_its_evaluator() {
    let p = spheres();
    let nl = NeighborList::build(&p, 0.2, 3);
    let (rows, jobs) = (nl.rows(), nl.jobs());
    let n = p.n_owned;
    assert_eq!((rows.owned(), jobs.offsets().len()), (n, n + 1));
    let evaluator_of = |j: usize| jobs.offsets().partition_point(|&o| o <= j) - 1;
    let mut entries_of_job = vec![0; jobs.len()];
    let mut ghost_pairs = 0;
    for k in 0..n {
        let row: Vec<u64> = rows.row(k).map(|e| rows.partner_id(e, &p.id)).collect();
        assert!(row.windows(2).all(|w| w[0] < w[1]), "row {k} sorted");
        let lower = row.iter().filter(|&&id| id < p.id[k]).count();
        assert_eq!(rows.below(k, p.id[k], &p.id), lower);
        assert_eq!(jobs.slots_of(k).len(), lower);
        for s in jobs.slots_of(k) {
            assert_eq!(jobs.slot_owners()[s] as usize, k % BLOCK, "slot {s}");
        }
        let own = jobs.evaluated_by(k);
        let mut previous = None;
        for e in rows.row(k) {
            let q = rows.partner(e);
            let j = jobs.job_of(e);
            entries_of_job[j] += 1;
            if q >= n || p.id[k] < p.id[q] {
                assert!(own.contains(&j), "entry {e} of {k} evaluates its pair");
                assert_eq!(jobs.evaluator_lower()[j], p.id[k] < p.id[q], "job {j}");
                assert_eq!(jobs.partner(j), q);
                assert_eq!(jobs.owners()[j] as usize, k % BLOCK);
                assert!(previous < Some(j), "jobs in row order");
                previous = Some(j);
                ghost_pairs += (q >= n) as usize;
            } else {
                assert_eq!(evaluator_of(j), q, "the lower id {} evaluates", p.id[q]);
                assert_eq!(jobs.partner(j), k);
                assert!(nl.entry_of(q, p.id[k], &p.id).is_some(), "symmetric rows");
            }
        }
    }
    for (j, &c) in entries_of_job.iter().enumerate() {
        let ghost = jobs.partner(j) >= n;
        assert_eq!(c, if ghost { 1 } else { 2 }, "job {j}");
    }
    assert!(ghost_pairs > 0 && jobs.len() > 100);
    assert_eq!(jobs.slot_owners().len(), jobs.owned_slots());
    // Each job's share goes to the higher-id side's entry of the pair,
    // or to a boundary slot when that side is a ghost; no slot takes two
    // shares, and every slot takes one.
    assert_eq!(nl.shares().len(), jobs.slots());
    let mut taken = vec![false; jobs.slots()];
    for (j, &slot) in jobs.share_slots().iter().enumerate() {
        let (k, q) = (evaluator_of(j), jobs.partner(j));
        let higher = if p.id[k] < p.id[q] { q } else { k };
        let s = slot as usize;
        if higher >= n {
            assert!(s >= jobs.owned_slots(), "job {j}: a boundary slot");
            assert!(
                !std::mem::replace(&mut taken[s], true),
                "slot {s} taken twice"
            );
            continue;
        }
        let s0 = jobs.slot_offsets()[higher];
        assert!(jobs.slots_of(higher).contains(&s), "job {j}");
        let e = rows.row(higher).start + (s - s0);
        assert_eq!(jobs.job_of(e), j, "slot of job {j} is its entry");
        assert!(
            !std::mem::replace(&mut taken[s], true),
            "slot {s} taken twice"
        );
    }
    assert!(taken.iter().all(|&t| t), "every slot has its job");
    assert!(jobs.slots() > jobs.owned_slots(), "boundary slots exist");
}

/// Every owned particle's row holds exactly the partners (owned or
/// ghost) within `(R_i + R_q) + reach` of it, but itself and frozen
/// pairs, by id: the cell search against all pairs, on a polydisperse
/// cloud (radii 1:3) spread over many cells with images along x.
#[test]
fn the_rows_hold_exactly_the_pairs_within_reach() {
    let p = cloud();
    let reach = 0.15;
    let nl = NeighborList::build(&p, reach, 0);
    let image = |k: usize| p.x[k] + p.shift_of(k);
    let n = p.n_owned;
    let mut pairs = 0;
    for i in 0..n {
        let mut expected: Vec<u64> = (0..p.len())
            .filter(|&q| q != i && !(p.frozen[i] && p.frozen[q]))
            .filter(|&q| {
                let cut = (p.radius[i] + p.radius[q]) + reach;
                (image(q) - image(i)).length_squared() < cut * cut
            })
            .map(|q| p.id[q])
            .collect();
        expected.sort_unstable();
        let row: Vec<u64> = nl
            .rows()
            .row(i)
            .map(|e| nl.rows().partner_id(e, &p.id))
            .collect();
        assert_eq!(row, expected, "row of particle {i} (id {})", p.id[i]);
        pairs += row.len();
    }
    assert!(
        pairs > 2 * n,
        "{pairs} entries: a cloud dense enough to test"
    );
}

/// The mirror found by the partner's local index, eight entries at a
/// time, is the entry the binary search by id finds: rows of every
/// length from none to past three groups of eight, the last rows of the
/// list (whose last group runs past its end) included; and none for a
/// particle that is not in the row, or is the row's own.
#[test]
fn the_mirror_by_index_is_the_mirror_by_id() {
    let p = cloud();
    let n = p.n_owned;
    let mut lengths = std::collections::BTreeSet::new();
    // A short reach and a long one: rows of 0 to about 40 entries.
    let lists = [0.0, 0.5].map(|reach| NeighborList::build(&p, reach, 0));
    for q in 0..n {
        for rows in lists.iter().map(NeighborList::rows) {
            lengths.insert(rows.row(q).len());
            let listed: Vec<usize> = rows.row(q).map(|e| rows.partner(e)).collect();
            for &k in listed.iter().filter(|&&k| k < n) {
                let by_index = rows.entry_with_partner(q, k as u32);
                assert_eq!(
                    by_index,
                    rows.entry_of(q, p.id[k], &p.id),
                    "{k} in {q}'s row"
                );
                assert!(by_index.is_some());
            }
            let absent = (0..n)
                .find(|k| !listed.contains(k) && *k != q)
                .expect("some");
            for k in [q, absent] {
                assert_eq!(rows.entry_with_partner(q, k as u32), None);
            }
        }
    }
    assert!(
        (0..=25).all(|l| lengths.contains(&l)),
        "row lengths {lengths:?}"
    );
    // The last row's last group runs past the end of the list.
    let last = lists[1].rows().row(n - 1).len();
    assert!(
        last > 1 && last % 8 != 0,
        "the last row holds {last} entries"
    );
}

/// 1500 polydisperse spheres (radii 1:3) with scrambled ids, some frozen,
/// in a 12 × 4 × 4 box, with images of those near x = 0 shifted past x =
/// 12.
fn cloud() -> Particles {
    let mut p = Particles::default();
    // Positions and radii from the project's counter-based generator.
    let records: Vec<ParticleRecord> = (0..1500u64)
        .map(|k| {
            let u = crate::rng::particle_uniforms(7, 0, crate::rng::Stream::RandomInsertion, k);
            let x = DVec3::new(12.0 * u[0], 4.0 * u[1], 4.0 * u[2]);
            ParticleRecord {
                frozen: k % 11 == 3,
                ..ParticleRecord::resting((k * 389) % 1500, x, 0.1 + 0.2 * u[3])
            }
        })
        .collect();
    for r in &records {
        p.push_owned(r);
    }
    // Images of the particles near x = 0, shifted past x = 12.
    for r in records.iter().filter(|r| r.x.x < 1.0) {
        p.push_ghost(r, DVec3::new(12.0, 0.0, 0.0));
    }
    p
}

/// A row sorted by rank is the row sorted, short or long.
/// The AVX2 search keeps exactly the candidates the one-by-one search
/// keeps, in the same order: ranges of every length from 0 to 11 (one or
/// several groups of four, a last group cut short), at the start, middle
/// and end of the candidates (the end read into the padding), and
/// candidates exactly at the cut-off and an ulp either side of it.
#[test]
fn the_avx2_search_keeps_what_one_by_one_keeps() {
    use super::verlet::{pick_in_reach_avx2, pick_in_reach_one_by_one, Around, NEAR_PAD};
    if !crate::simd::isa::processor_has_avx2() {
        return;
    }
    let mut rng = crate::insert::stream(7, 0, 0);
    let mut uniform = || crate::insert::uniform(&mut rng);
    let (xi, ri, reach) = (DVec3::new(0.25, -0.5, 1.0), 0.5, 0.1);
    let mut near: Vec<DVec4> = (0..200)
        .map(|_| {
            let d = DVec3::new(uniform(), uniform(), uniform()) * 3.0 - DVec3::splat(1.5);
            (xi + d).extend(0.3 + 0.3 * uniform())
        })
        .collect();
    // On the cut-off `(R_i + R_c) + reach` along x, and an ulp either side.
    for (k, at) in [(3, 0.0f64), (4, 1.0), (5, -1.0)] {
        let rc = near[k].w;
        let cut = (ri + rc) + reach;
        let x = f64::from_bits((cut.to_bits() as i64 + at as i64) as u64);
        near[k] = DVec4::new(xi.x + x, xi.y, xi.z, rc);
    }
    let n = near.len();
    near.extend([DVec4::ZERO; NEAR_PAD]);
    let at = Around { xi, ri, reach };
    let candidates = &near[..];
    let (mut one, mut avx2) = (Vec::new(), Vec::new());
    let mut kept = 0;
    for trial in 0..400 {
        let ranges: [Range<usize>; 9] = std::array::from_fn(|r| {
            let len = (trial + 3 * r) % 12;
            let start = match (trial + r) % 3 {
                0 => (trial * 7 + r) % 8,
                1 => (trial * 13 + 5 * r) % (n - len),
                _ => n - len,
            };
            start..start + len
        });
        pick_in_reach_one_by_one(candidates, &ranges, at, &mut one);
        // SAFETY: the processor has AVX2 (tested above).
        unsafe { pick_in_reach_avx2(candidates, &ranges, at, &mut avx2) };
        assert_eq!(avx2, one, "ranges {ranges:?}");
        kept += one.len();
    }
    assert!(
        kept > 1000,
        "only {kept} candidates kept: the test tests little"
    );
    // The cut-off: the one an ulp inside is kept, on it and outside not.
    let all: [Range<usize>; 9] = std::array::from_fn(|r| if r == 0 { 3..6 } else { 0..0 });
    // SAFETY: as above.
    unsafe { pick_in_reach_avx2(candidates, &all, at, &mut avx2) };
    assert_eq!(avx2, vec![5]);
}

#[test]
fn rows_sort_by_id_at_any_length() {
    let mut state = 12345u64;
    for len in 0..40 {
        let mut row: Vec<(u64, u32)> = (0..len)
            .map(|k| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Unique ids: a random high part, the index below.
                ((state >> 40) << 8 | k as u64, k as u32)
            })
            .collect();
        let mut expected = row.clone();
        expected.sort_unstable_by_key(|e| e.0);
        sort_row(&mut row);
        assert_eq!(row, expected, "length {len}");
    }
}

/// The record of the pair of ids `(a, b)` in test [`records_move_with_their_particles_at_a_rebuild`]:
/// non-zero for every third pair, the same from either side.
fn record_of(a: u64, b: u64) -> Option<[f64; 3]> {
    let (lo, hi) = (a.min(b), a.max(b));
    let v = lo as f64 + 0.001 * hi as f64 + 1.0;
    ((lo + 2 * hi) % 3 == 0).then_some([v, -v, 0.25])
}

/// Records written into a list (by entry, outside the force stage) are
/// active; through a rebuild that reorders the particles, every record
/// reaches the pair of the same two particles in the new list, by either
/// way of carrying it, and only the jobs with a record are active.
#[test]
fn records_move_with_their_particles_at_a_rebuild() {
    let identity: Vec<usize> = (0..125).collect();
    let (p, sources) = permuted_spheres(&identity);
    let mut old = NeighborList::build(&p, 0.2, 3);
    assert_eq!(old.history().active_jobs(), 0);
    for k in 0..p.n_owned {
        for e in old.rows().row(k) {
            if let Some(rec) = record_of(p.id[k], old.rows().partner_id(e, &p.id)) {
                old.record_mut(e).copy_from_slice(&rec);
                assert!(old.history().is_active(old.jobs().job_of(e)));
            }
        }
    }
    let perm: Vec<usize> = (0..125).map(|k| (k * 11 + 5) % 125).collect();
    let (q, by_rows, by_pairs) = carried(&old, &p.id, &sources, &perm);
    for nl in [&by_rows, &by_pairs] {
        let mut held = 0;
        for k in 0..q.n_owned {
            for e in nl.rows().row(k) {
                let expected = record_of(q.id[k], nl.rows().partner_id(e, &q.id));
                assert_eq!(nl.record(e), expected.unwrap_or_default(), "entry {e}");
                let j = nl.jobs().job_of(e);
                assert_eq!(nl.history().is_active(j), expected.is_some(), "job {j}");
                held += expected.is_some() as usize;
            }
        }
        assert!(held > 50, "{held} entries with records");
        assert!(nl.shares().iter().all(|s| s == Contribution::default()));
    }
}

/// Clearing the history of a list zeroes every record and share and marks
/// every job inactive, as in a list built afresh.
#[test]
fn a_cleared_history_is_that_of_a_fresh_list() {
    let p = spheres();
    let mut nl = NeighborList::build(&p, 0.2, 3);
    for j in (0..nl.jobs().len()).step_by(4) {
        nl.job_record_mut(j).copy_from_slice(&[1.0, 2.0, 3.0]);
    }
    assert!(nl.history().held(0).is_some());
    nl.clear_history();
    assert_eq!(fields(&nl), fields(&NeighborList::build(&p, 0.2, 3)));
}

/// Deleting particles between lifting the history and the rebuild: the
/// records of pairs with a deleted particle go, by pair
/// ([`PairRecords::retain_particles`], images included) as by rows, and
/// every other record comes back.
///
/// [`PairRecords::retain_particles`]: crate::neighbor::carry::PairRecords::retain_particles
#[test]
fn records_of_deleted_particles_go_by_pairs_as_by_rows() {
    use crate::neighbor::carry::{HistoryRows, PairRecords};
    let identity: Vec<usize> = (0..125).collect();
    let (p, sources) = permuted_spheres(&identity);
    let mut old = NeighborList::build(&p, 0.2, 3);
    for k in 0..p.n_owned {
        for e in old.rows().row(k) {
            let (a, b) = (p.id[k], old.rows().partner_id(e, &p.id));
            let v = a.min(b) as f64 + 0.001 * a.max(b) as f64;
            old.record_mut(e).copy_from_slice(&[v, -v, 0.5]);
        }
    }
    // Delete every particle whose id is a multiple of 4: among them the
    // sources of the images.
    let keep: Vec<usize> = (0..p.n_owned).filter(|&k| p.id[k] % 4 != 0).collect();
    let deleted: Vec<u64> = (0..p.n_owned)
        .map(|k| p.id[k])
        .filter(|i| i % 4 == 0)
        .collect();
    let mut pairs = PairRecords::from_list(&old, &sources);
    let before = pairs.records();
    pairs.retain_particles(&keep, p.n_owned);
    let rows = HistoryRows::from_list(&old, &p.id, p.n_owned).select(&keep);
    assert!(rows.partner.iter().any(|q| deleted.contains(q)));
    // The survivors, without images.
    let mut q = p.clone();
    q.truncate_ghosts();
    q.retain_owned(&keep);
    q.refresh_packed();
    let mut by_rows = NeighborList::build(&q, 0.2, 3);
    rows.fill_list(&mut by_rows, &q.id);
    let mut by_pairs = NeighborList::build(&q, 0.2, 3);
    let new: Vec<usize> = (0..keep.len()).collect();
    pairs.fill_list(&mut by_pairs, &new, &q.id);
    assert_eq!(fields(&by_pairs), fields(&by_rows));
    assert!(pairs.records() > 20 && pairs.records() < before);
    // Every pair of survivors still in reach has its record back.
    let mut held = 0;
    for k in 0..q.n_owned {
        for e in by_pairs.rows().row(k) {
            let (a, b) = (q.id[k], by_pairs.rows().partner_id(e, &q.id));
            assert!(!deleted.contains(&b));
            let v = a.min(b) as f64 + 0.001 * a.max(b) as f64;
            assert_eq!(by_pairs.record(e), &[v, -v, 0.5]);
            held += 1;
        }
    }
    assert!(held > 20, "{held}");
}

/// Rows kept in place are the rows a selection copies: every subset of six
/// rows (empty rows among them, runs of kept rows of every length, the
/// first and last dropped or kept), records of two values.
#[test]
fn rows_retained_in_place_are_the_rows_selected() {
    use crate::neighbor::carry::HistoryRows;
    let mut rows = HistoryRows::empty(0, 2);
    for (p, count) in [2usize, 0, 3, 1, 0, 4].into_iter().enumerate() {
        let records: Vec<(u64, [f64; 2])> = (0..count)
            .map(|r| (10 * p as u64 + r as u64, [p as f64, r as f64 + 0.5]))
            .collect();
        rows.push_row(records.iter().map(|(id, v)| (*id, &v[..])));
    }
    for mask in 0u32..64 {
        let keep: Vec<usize> = (0..6).filter(|&p| mask & (1 << p) != 0).collect();
        let mut kept = rows.clone();
        kept.retain_rows(&keep);
        assert_eq!(kept, rows.select(&keep), "rows {keep:?} kept");
    }
}
