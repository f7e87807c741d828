//! The simulation box, periodic wrapping, and the ghost halo.
//!
//! On one rank the halo holds the periodic images of owned particles near a
//! periodic face; with MPI it will also hold copies of neighbouring ranks'
//! particles. Ghosts are created when the neighbour list is rebuilt and their
//! positions and velocities refreshed every step ([`Halo::update`]).

use crate::particles::Particles;
use glam::DVec3;

/// An axis-aligned box with per-axis periodicity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    /// Lower corner.
    pub lo: DVec3,
    /// Upper corner.
    pub hi: DVec3,
    /// Periodicity per axis.
    pub periodic: [bool; 3],
}

impl Domain {
    /// Edge lengths.
    pub fn length(&self) -> DVec3 {
        self.hi - self.lo
    }

    /// Map a position back into the box along periodic axes (at most one box
    /// length; particles never move that far between rebuilds).
    pub fn wrap(&self, mut x: DVec3) -> DVec3 {
        let l = self.length();
        for a in 0..3 {
            if self.periodic[a] {
                if x[a] >= self.hi[a] {
                    x[a] -= l[a];
                } else if x[a] < self.lo[a] {
                    x[a] += l[a];
                }
            }
        }
        x
    }

    /// The first non-periodic axis along which `x` lies outside the box, if any.
    pub fn outside_axis(&self, x: DVec3) -> Option<usize> {
        (0..3).find(|&a| {
            let inside = x[a] >= self.lo[a] && x[a] <= self.hi[a];
            !self.periodic[a] && !inside
        })
    }
}

/// Ghost copies of owned particles, with the index each one copies.
#[derive(Debug, Clone, Default)]
pub struct Halo {
    source: Vec<u32>,
}

impl Halo {
    /// Drop the old ghosts and create the periodic images of owned particles
    /// lying within `width` of a periodic face (edges and corners included).
    /// Requires every periodic length to exceed `2 · width`.
    pub fn build(&mut self, p: &mut Particles, domain: &Domain, width: f64) {
        p.truncate_ghosts();
        self.source.clear();
        let l = domain.length();
        for k in 0..p.n_owned {
            let x = p.x[k];
            let mut options: [[i32; 2]; 3] = [[0, 0]; 3];
            let mut counts = [1usize; 3];
            for a in 0..3 {
                if !domain.periodic[a] {
                    continue;
                }
                if x[a] - domain.lo[a] < width {
                    options[a][1] = 1;
                    counts[a] = 2;
                } else if domain.hi[a] - x[a] < width {
                    options[a][1] = -1;
                    counts[a] = 2;
                }
            }
            if counts == [1, 1, 1] {
                continue;
            }
            let record = p.record(k);
            for ix in 0..counts[0] {
                for iy in 0..counts[1] {
                    for iz in 0..counts[2] {
                        let s = [options[0][ix], options[1][iy], options[2][iz]];
                        if s == [0, 0, 0] {
                            continue;
                        }
                        let shift =
                            DVec3::new(s[0] as f64 * l.x, s[1] as f64 * l.y, s[2] as f64 * l.z);
                        p.push_ghost(&record, shift);
                        self.source.push(k as u32);
                    }
                }
            }
        }
    }

    /// Copy positions, velocities and angular velocities from the owners.
    pub fn update(&self, p: &mut Particles) {
        let n = p.n_owned;
        for (g, &s) in self.source.iter().enumerate() {
            let s = s as usize;
            p.x[n + g] = p.x[s];
            p.v[n + g] = p.v[s];
            p.omega[n + g] = p.omega[s];
        }
    }

    /// Number of ghosts.
    pub fn len(&self) -> usize {
        self.source.len()
    }

    /// Whether there are no ghosts.
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }
}
