//! Prescribed wall motion: where a wall is at time `t`, and how its surface
//! moves there, from its place at `t = 0`.
//!
//! A wall moves as a rigid body: a turn at a constant rate about a fixed
//! axis through `point`, then a translation (constant velocity, or a
//! piecewise-linear path of offsets in time). A surface point `x₀` of the
//! wall at rest is at
//!
//! `x(t) = c + d(t) + R(Ωt) (x₀ − c)`
//!
//! where `R(θ)` turns by `θ` about the unit axis `u` (Rodrigues' formula),
//! `Ω` is the rate, `c` the turn's point and `d(t)` the offset, and it
//! moves at `d′(t) + Ω u × (x − c − d(t))`: the turn's point travels with
//! the wall. The place is a function of `t` alone, computed afresh each
//! step from `t = step · dt`, never from accumulated increments, so a
//! moving wall is at the same place, to the bit, on any number of ranks
//! and after a restart.

use super::mesh::Pose;
use super::walls::{Rigid, Wall, WallShape};
use glam::DVec3;

/// A piecewise-linear path: offset `offsets[i]` at `times[i]`, linear in
/// between, held at the first offset before the first time and at the
/// last after the last.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    times: Vec<f64>,
    offsets: Vec<DVec3>,
}

impl Path {
    /// A path through `offsets` at strictly increasing `times`, at least
    /// one of each and as many of each; `None` otherwise.
    pub fn new(times: Vec<f64>, offsets: Vec<DVec3>) -> Option<Self> {
        let ordered = times.windows(2).all(|w| w[0] < w[1]);
        (!times.is_empty() && times.len() == offsets.len() && ordered)
            .then_some(Self { times, offsets })
    }

    /// The offset at `t` and its rate of change (that of the segment `t`
    /// lies in, the segment starting at a knot for `t` on one; zero
    /// outside the times).
    pub fn at(&self, t: f64) -> (DVec3, DVec3) {
        let (times, offsets) = (&self.times, &self.offsets);
        let last = times.len() - 1;
        if t < times[0] {
            return (offsets[0], DVec3::ZERO);
        }
        if t >= times[last] {
            return (offsets[last], DVec3::ZERO);
        }
        // The segment i..i+1 with times[i] <= t < times[i + 1].
        let i = times.partition_point(|&s| s <= t) - 1;
        let span = times[i + 1] - times[i];
        let rate = (offsets[i + 1] - offsets[i]) / span;
        let s = (t - times[i]) / span;
        (offsets[i] + s * (offsets[i + 1] - offsets[i]), rate)
    }

    /// The offsets at the knots (the path's extremes along any axis lie
    /// among them).
    pub fn offsets(&self) -> &[DVec3] {
        &self.offsets
    }
}

/// The translation of a wall.
#[derive(Debug, Clone, PartialEq)]
pub enum Translation {
    /// None.
    Still,
    /// A constant velocity from `t = 0`.
    Velocity(DVec3),
    /// A piecewise-linear path of offsets.
    Path(Path),
}

impl Translation {
    /// The offset at `t` and its rate of change.
    fn at(&self, t: f64) -> (DVec3, DVec3) {
        match self {
            Translation::Still => (DVec3::ZERO, DVec3::ZERO),
            Translation::Velocity(v) => (t * *v, *v),
            Translation::Path(p) => p.at(t),
        }
    }
}

/// A turn at a constant `rate` (rad/s, right-handed) about the unit `axis`
/// through `point`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Turn {
    /// Unit axis direction.
    pub axis: DVec3,
    /// A point on the axis (at `t = 0`; it travels with the translation).
    pub point: DVec3,
    /// Angular velocity (rad/s).
    pub rate: f64,
}

/// The prescribed motion of a wall.
#[derive(Debug, Clone, PartialEq)]
pub struct Motion {
    /// Translation.
    pub translation: Translation,
    /// Turn, if any.
    pub turn: Option<Turn>,
}

/// The distance of `x` from the line through `point` along the unit `axis`.
pub(crate) fn off_axis(x: DVec3, point: DVec3, axis: DVec3) -> f64 {
    let d = x - point;
    (d - axis * axis.dot(d)).length()
}

/// `v` turned by `angle` about the unit `axis` (Rodrigues' formula).
pub(crate) fn rotate(v: DVec3, axis: DVec3, (sin, cos): (f64, f64)) -> DVec3 {
    v * cos + axis.cross(v) * sin + axis * (axis.dot(v) * (1.0 - cos))
}

impl Motion {
    /// `base` (the wall at `t = 0` with no offset) placed at time `t`: its
    /// shape moved rigidly, its surface motion (a drum's own turn) carried
    /// along and combined with the wall's.
    pub fn place(&self, base: &Wall, t: f64) -> Wall {
        let (d, v) = self.translation.at(t);
        let (centre, axis, rate, sc) = match self.turn {
            Some(turn) => (turn.point, turn.axis, turn.rate, (turn.rate * t).sin_cos()),
            None => (DVec3::ZERO, DVec3::Z, 0.0, (0.0, 1.0)),
        };
        let dir = |u: DVec3| rotate(u, axis, sc);
        let point = |x: DVec3| centre + d + dir(x - centre);
        let shape = match base.shape.clone() {
            WallShape::Mesh { mesh, .. } => WallShape::Mesh {
                mesh,
                pose: Pose {
                    centre,
                    shift: d,
                    axis,
                    sc,
                },
            },
            WallShape::Plane { point: p, normal } => WallShape::Plane {
                point: point(p),
                normal: dir(normal),
            },
            WallShape::Cylinder {
                axis_point,
                axis: a,
                radius,
                half_length,
                inside,
            } => WallShape::Cylinder {
                axis_point: point(axis_point),
                axis: dir(a),
                radius,
                half_length,
                inside,
            },
            WallShape::Disc {
                center,
                normal,
                radius,
            } => WallShape::Disc {
                center: point(center),
                normal: dir(normal),
                radius,
            },
        };
        // The wall's own surface motion, carried along, plus the turn about
        // the travelling point `centre + d` and the translation's rate.
        let own = base.rigid;
        let pivot = point(own.pivot);
        let omega_turn = rate * axis;
        let rigid = Rigid {
            velocity: dir(own.velocity) + v + omega_turn.cross(pivot - (centre + d)),
            omega: omega_turn + dir(own.omega),
            pivot,
        };
        Wall {
            shape,
            material: base.material,
            rigid,
        }
    }
}

impl Motion {
    /// A bound on how much nearer the wall a point that lay in the box
    /// `lo..hi` at `t0` can have come by `t`, besides its own displacement.
    /// Two bounds hold, with the turn `R(Ωt)` about the axis through the
    /// travelling point `c + d(t)` (turns about one axis commute, and
    /// `|R(θ) v − v| = 2 |sin(θ/2)| |v⊥|`):
    ///
    /// - In the wall's own frame, where it stands still, a point `p` is at
    ///   `p_b(t) = c + R(Ωt)ᵀ (p(t) − c − d(t))`, and
    ///   `|p_b(t) − p_b(t0)| ≤ |p(t) − p(t0)| + |d(t) − d(t0)| + 2 |sin(Ω (t − t0)/2)| ρ`,
    ///   with `ρ` the distance of `p(t0)` from the axis: at most the box's
    ///   farthest corner's (a distance from a line is convex, so it is
    ///   greatest at a corner).
    /// - The wall's own points `q` each move by
    ///   `|d(t) − d(t0) + (R(Ωt) − R(Ωt0)) (q − c)| ≤ |d(t) − d(t0)| + 2 |sin(Ω (t − t0)/2)| ρ`,
    ///   with `ρ` the distance of `q` from the axis, at most `extent`,
    ///   the caller's bound on the wall's points' distance from the axis
    ///   (`f64::INFINITY`: none); a point's distance from the wall (the
    ///   set of its points) shrinks by no more than the point's own
    ///   displacement plus the largest of theirs.
    ///
    /// The bound takes `2 |sin(x/2)| ≤ min(|x|, 2)` and the lesser `ρ`:
    /// the box's farthest corner's or `extent`. The same on every rank: a
    /// function of the times, the box and `extent` alone.
    pub fn frame_drift(&self, (t0, t): (f64, f64), (lo, hi): (DVec3, DVec3), extent: f64) -> f64 {
        let (d0, _) = self.translation.at(t0);
        let (d, _) = self.translation.at(t);
        let turned = self.turn.map_or(0.0, |turn| {
            let on_axis = turn.point + d0;
            let farthest = (0..8)
                .map(|c| {
                    let pick = |a: usize| if c >> a & 1 == 0 { lo[a] } else { hi[a] };
                    off_axis(DVec3::new(pick(0), pick(1), pick(2)), on_axis, turn.axis)
                })
                .fold(0.0, f64::max)
                .min(extent);
            (turn.rate * (t - t0)).abs().min(2.0) * farthest
        });
        (d - d0).length() + turned
    }
}

/// A wall that moves: its index among the walls, its place at rest and
/// its motion ([`MovingWall::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MovingWall {
    /// Index among the walls.
    pub index: usize,
    /// The wall at `t = 0` before any offset.
    pub base: Wall,
    /// Its motion.
    pub motion: Motion,
    /// [`Self::turn_extent`], found once: the base never changes (a rank
    /// keeps a moving mesh whole).
    turn_extent: f64,
}

impl MovingWall {
    /// Wall `index` of the walls, `base` at rest, moving by `motion`.
    pub fn new(index: usize, base: Wall, motion: Motion) -> Self {
        let turn_extent = match (&base.shape, motion.turn) {
            (WallShape::Mesh { mesh, .. }, Some(turn)) => mesh
                .vertices()
                .iter()
                .map(|&v| off_axis(v, turn.point, turn.axis))
                .fold(0.0, f64::max),
            _ => f64::INFINITY,
        };
        Self {
            index,
            base,
            motion,
            turn_extent,
        }
    }

    /// For a mesh that turns, the largest distance of its points at rest
    /// from the turn's axis: at a vertex, since a triangle's points lie
    /// between its corners and a distance from a line is convex. No point
    /// of it moves farther than the turn's angle times that (the `extent`
    /// of [`Motion::frame_drift`]). Infinite for any other wall (the box
    /// bounds its drift instead).
    pub fn turn_extent(&self) -> f64 {
        self.turn_extent
    }
}

/// Place every moving wall of `walls` at time `t`.
pub fn place_walls(walls: &mut [Wall], moving: &[MovingWall], t: f64) {
    for m in moving {
        walls[m.index] = m.motion.place(&m.base, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_2;

    fn plane(point: DVec3, normal: DVec3) -> Wall {
        Wall {
            shape: WallShape::Plane { point, normal },
            material: 0,
            rigid: Rigid::REST,
        }
    }

    #[test]
    fn a_path_is_linear_between_its_knots_and_held_outside() {
        let p = Path::new(
            vec![1.0, 2.0, 4.0],
            vec![DVec3::ZERO, DVec3::X, DVec3::new(1.0, 2.0, 0.0)],
        )
        .unwrap();
        assert_eq!(p.at(0.5), (DVec3::ZERO, DVec3::ZERO));
        assert_eq!(p.at(1.5), (DVec3::new(0.5, 0.0, 0.0), DVec3::X));
        assert_eq!(p.at(2.0), (DVec3::X, DVec3::Y));
        assert_eq!(p.at(3.0), (DVec3::new(1.0, 1.0, 0.0), DVec3::Y));
        assert_eq!(p.at(9.0), (DVec3::new(1.0, 2.0, 0.0), DVec3::ZERO));
        assert!(Path::new(vec![1.0, 1.0], vec![DVec3::ZERO; 2]).is_none());
        assert!(Path::new(vec![1.0], vec![DVec3::ZERO; 2]).is_none());
        assert!(Path::new(vec![], vec![]).is_none());
    }

    #[test]
    fn a_turning_plane_turns_its_normal_and_its_surface_moves() {
        // The floor z = 0 turning about the y axis through (1, 0, 0) at
        // π/2 rad/s: after 1 s its normal is R(π/2) ẑ = x̂, and it passes
        // through (1, 0, 0).
        let m = Motion {
            translation: Translation::Still,
            turn: Some(Turn {
                axis: DVec3::Y,
                point: DVec3::X,
                rate: FRAC_PI_2,
            }),
        };
        let w = m.place(&plane(DVec3::ZERO, DVec3::Z), 1.0);
        let WallShape::Plane { point, normal } = w.shape else {
            unreachable!()
        };
        assert!((normal - DVec3::X).length() < 1e-15, "{normal}");
        assert!(
            (point - DVec3::new(1.0, 0.0, 1.0)).length() < 1e-15,
            "{point}"
        );
        assert!((point - DVec3::X).dot(normal).abs() < 1e-15);
        // Its surface point (1, 0, 2) moves at Ω ŷ × (0, 0, 2) = (π, 0, 0).
        let v = w.rigid.velocity_at(DVec3::new(1.0, 0.0, 2.0));
        assert!(
            (v - DVec3::new(std::f64::consts::PI, 0.0, 0.0)).length() < 1e-14,
            "{v}"
        );
    }

    #[test]
    fn the_surface_velocity_is_the_rate_of_change_of_the_place() {
        // A cap turning with its drum (its own turn about the drum's axis)
        // on a wall that slides and tumbles: the velocity of a surface
        // point is the derivative of its place, by central differences.
        let base = Wall {
            shape: WallShape::Disc {
                center: DVec3::new(0.0, 0.0, 1.0),
                normal: -DVec3::Z,
                radius: 1.0,
            },
            material: 0,
            rigid: Rigid::turning(3.0, DVec3::Z, DVec3::new(0.0, 0.0, 0.5)),
        };
        let m = Motion {
            translation: Translation::Velocity(DVec3::new(0.2, -0.1, 0.3)),
            turn: Some(Turn {
                axis: DVec3::new(1.0, 1.0, 0.0).normalize(),
                point: DVec3::new(0.5, 0.0, 0.0),
                rate: 0.7,
            }),
        };
        // A material point of the cap: its place at rest turned by its own
        // turn (3 rad/s about z through (0, 0, 0.5)), then moved by the motion.
        let x0 = DVec3::new(0.6, 0.2, 1.0);
        let at = |t: f64| {
            let own = DVec3::new(0.0, 0.0, 0.5)
                + rotate(
                    x0 - DVec3::new(0.0, 0.0, 0.5),
                    DVec3::Z,
                    (3.0 * t).sin_cos(),
                );
            let turn = m.turn.unwrap();
            turn.point
                + t * DVec3::new(0.2, -0.1, 0.3)
                + rotate(own - turn.point, turn.axis, (turn.rate * t).sin_cos())
        };
        let (t, h) = (0.8, 1e-6);
        let numeric = (at(t + h) - at(t - h)) / (2.0 * h);
        let w = m.place(&base, t);
        let analytic = w.rigid.velocity_at(at(t));
        assert!((numeric - analytic).length() < 1e-8, "{numeric} {analytic}");
        // The point lies on the placed disc's plane.
        let WallShape::Disc { center, normal, .. } = w.shape else {
            unreachable!()
        };
        assert!((at(t) - center).dot(normal).abs() < 1e-14);
    }

    #[test]
    fn places_depend_on_the_time_alone() {
        let m = Motion {
            translation: Translation::Velocity(DVec3::new(0.1, 0.0, 0.0)),
            turn: Some(Turn {
                axis: DVec3::Z,
                point: DVec3::ZERO,
                rate: 2.0,
            }),
        };
        let base = plane(DVec3::ZERO, DVec3::X);
        let (dt, steps) = (1e-5, 12_345u64);
        // Placed from the step alone: the same bits however it was reached.
        let mut walls = vec![base.clone()];
        let moving = [MovingWall::new(0, base.clone(), m.clone())];
        for step in [3, 12_345, 7] {
            place_walls(&mut walls, &moving, step as f64 * dt);
        }
        place_walls(&mut walls, &moving, steps as f64 * dt);
        assert_eq!(walls[0], m.place(&base, steps as f64 * dt));
    }

    #[test]
    fn a_point_moves_in_the_walls_frame_no_farther_than_the_frame_drift() {
        // A mesh sliding along a path and tumbling: for points of a box at
        // t0, held still or moved, the distance they travel in the mesh's
        // frame (`Pose::back`, the force stage's arithmetic) stays within
        // their own displacement plus the bound.
        use crate::geometry::mesh::{Pose, TriMesh};
        let mesh =
            std::sync::Arc::new(TriMesh::new("one", &[[DVec3::ZERO, DVec3::X, DVec3::Y]]).unwrap());
        let base = Wall {
            shape: WallShape::Mesh {
                mesh,
                pose: Pose::REST,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let path = Path::new(
            vec![0.0, 0.3, 1.0],
            vec![
                DVec3::ZERO,
                DVec3::new(0.1, 0.0, 0.2),
                DVec3::new(-0.2, 0.1, 0.0),
            ],
        )
        .unwrap();
        let m = Motion {
            translation: Translation::Path(path),
            turn: Some(Turn {
                axis: DVec3::new(1.0, 2.0, 2.0) / 3.0,
                point: DVec3::new(0.5, -0.5, 0.0),
                rate: 1.3,
            }),
        };
        let bounds = (DVec3::new(-1.0, -1.0, 0.0), DVec3::new(2.0, 1.0, 1.5));
        let pose = |t: f64| match m.place(&base, t).shape {
            WallShape::Mesh { pose, .. } => pose,
            _ => unreachable!(),
        };
        let mut tightest: f64 = 0.0;
        for (t0, t) in [(0.0, 0.01), (0.2, 0.45), (0.9, 1.4), (0.5, 6.0)] {
            let bound = m.frame_drift((t0, t), bounds, f64::INFINITY);
            assert!(bound > 0.0);
            for i in 0..=4 {
                for j in 0..=4 {
                    for k in 0..=4 {
                        let f = DVec3::new(i as f64, j as f64, k as f64) / 4.0;
                        let p0 = bounds.0 + f * (bounds.1 - bounds.0);
                        for own in [DVec3::ZERO, DVec3::new(0.01, -0.02, 0.005)] {
                            let moved = (pose(t).back(p0 + own) - pose(t0).back(p0)).length();
                            assert!(
                                moved <= own.length() + bound,
                                "t0 {t0}, t {t}, p0 {p0}: {moved} > {} + {bound}",
                                own.length()
                            );
                            if own == DVec3::ZERO && t - t0 < 0.02 {
                                tightest = tightest.max(moved / bound);
                            }
                        }
                    }
                }
            }
        }
        // A path and a turn add their bounds: the corners' own motion
        // comes within 10 % of the sum over a short interval.
        assert!(tightest > 0.9, "{tightest}");
        // A turn alone: a corner's motion meets the bound to within 1 %.
        let turning = Motion {
            translation: Translation::Still,
            ..m.clone()
        };
        let pose = |t: f64| match turning.place(&base, t).shape {
            WallShape::Mesh { pose, .. } => pose,
            _ => unreachable!(),
        };
        let bound = turning.frame_drift((0.2, 0.21), bounds, f64::INFINITY);
        let corner = (0..8)
            .map(|c| {
                let pick = |a: usize| {
                    if c >> a & 1 == 0 {
                        bounds.0[a]
                    } else {
                        bounds.1[a]
                    }
                };
                let p0 = DVec3::new(pick(0), pick(1), pick(2));
                (pose(0.21).back(p0) - pose(0.2).back(p0)).length()
            })
            .fold(0.0, f64::max);
        assert!(
            corner <= bound && corner > 0.99 * bound,
            "{corner} of {bound}"
        );
        // A wall within 0.5 of the axis: its turn's drift, and no more.
        let near_axis = turning.frame_drift((0.2, 0.21), bounds, 0.5);
        assert!((near_axis - 1.3 * 0.01 * 0.5).abs() < 1e-15, "{near_axis}");
        // The wall's own points move no farther than the bound with its
        // extent from the axis (MovingWall::turn_extent), however far the
        // box reaches (here the box would allow 40 times more); its
        // farthest vertex meets the bound to 1 % over a short turn.
        let vertices = [DVec3::ZERO, DVec3::X, DVec3::Y];
        let extent = MovingWall::new(0, base.clone(), m.clone()).turn_extent();
        let turn = m.turn.expect("a turn");
        let farthest = vertices.map(|q| off_axis(q, turn.point, turn.axis));
        assert!(farthest.contains(&extent), "{extent} of {farthest:?}");
        assert!(farthest.iter().all(|&d| d <= extent));
        let still_plane = MovingWall::new(0, plane(DVec3::ZERO, DVec3::X), m.clone());
        assert_eq!(still_plane.turn_extent(), f64::INFINITY);
        let wide = (DVec3::splat(-40.0), DVec3::splat(40.0));
        let short = (0.2, 0.21);
        let box_bound = turning.frame_drift(short, wide, f64::INFINITY);
        assert!(box_bound > 40.0 * turning.frame_drift(short, wide, extent));
        for motion in [&m, &turning] {
            let pose = |t: f64| match motion.place(&base, t).shape {
                WallShape::Mesh { pose, .. } => pose,
                _ => unreachable!(),
            };
            for (t0, t) in [(0.0, 0.01), (0.2, 0.21), (0.2, 0.45), (0.5, 6.0)] {
                let bound = motion.frame_drift((t0, t), wide, extent);
                let moved = vertices
                    .map(|q| (pose(t).place(q) - pose(t0).place(q)).length())
                    .into_iter()
                    .fold(0.0, f64::max);
                assert!(moved <= bound, "t0 {t0}, t {t}: {moved} > {bound}");
                if std::ptr::eq(motion, &turning) && t - t0 < 0.02 {
                    assert!(moved > 0.99 * bound, "{moved} of {bound}");
                }
            }
        }
        // Still: no drift.
        let still = Motion {
            translation: Translation::Velocity(DVec3::ZERO),
            turn: None,
        };
        assert_eq!(still.frame_drift((0.0, 5.0), bounds, f64::INFINITY), 0.0);
    }
}
