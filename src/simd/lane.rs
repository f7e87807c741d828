//! The lane types the contact kernels are written over: [`Lane`] is one
//! value per contact, `f64` for one contact at a time and [`F64x4`] for
//! four contacts at once, and [`V3`] a vector of lanes.
//!
//! A kernel written once over `T: Lane` serves both (as LAMMPS's
//! `template<class T>` kernels serve its CPU and Kokkos builds). Every
//! operation of [`F64x4`] is the `f64` operation applied to each lane, so a
//! contact gives the same bits in either; where the one-contact path would
//! branch on data, a kernel computes both outcomes and keeps one per lane
//! with [`Lane::select`] (for `f64`, a plain `if`). With AVX2 (see
//! [`crate::simd::isa`]) the four lanes fill one 256-bit register.

use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

/// One value per contact of a group: `f64` (a group of one) or [`F64x4`].
pub trait Lane:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// One truth value per lane.
    type Mask: Copy
        + BitAnd<Output = Self::Mask>
        + BitOr<Output = Self::Mask>
        + Not<Output = Self::Mask>;
    /// Number of lanes.
    const LANES: usize;
    /// `x` in every lane.
    fn splat(x: f64) -> Self;
    /// `f(lane)` in every lane (for what has no lane-wise instruction).
    fn map(self, f: impl Fn(f64) -> f64) -> Self;
    /// Square root ([`f64::sqrt`] per lane).
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// The smaller of the two per lane, or the other where one is NaN, as
    /// [`f64::min`]; where they compare equal (`+0` and `−0`), `self`
    /// (which [`f64::min`] leaves open, so the builds could differ).
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Self::select(other.lt(self) | self.is_nan(), other, self)
    }
    /// The larger of the two per lane, as [`Self::min`] the smaller.
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Self::select(other.gt(self) | self.is_nan(), other, self)
    }
    /// Whether a lane is NaN.
    #[inline(always)]
    fn is_nan(self) -> Self::Mask {
        !self.eq(self)
    }
    /// [`f64::signum`] per lane.
    fn signum(self) -> Self;
    /// `self < other` per lane.
    fn lt(self, other: Self) -> Self::Mask;
    /// `self > other` per lane.
    fn gt(self, other: Self) -> Self::Mask;
    /// `self <= other` per lane.
    fn le(self, other: Self) -> Self::Mask;
    /// `self == other` per lane.
    fn eq(self, other: Self) -> Self::Mask;
    /// [`f64::is_finite`] per lane.
    fn is_finite(self) -> Self::Mask;
    /// `if mask { a } else { b }` per lane.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
    /// Whether any lane of `mask` is true.
    fn any(mask: Self::Mask) -> bool;
    /// Lane `l`.
    fn lane(self, l: usize) -> f64;
    /// Set lane `l`.
    fn set_lane(&mut self, l: usize, x: f64);
}

impl Lane for f64 {
    type Mask = bool;
    const LANES: usize = 1;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        f(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::abs(self)
    }
    #[inline(always)]
    fn signum(self) -> Self {
        f64::signum(self)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> bool {
        self < other
    }
    #[inline(always)]
    fn gt(self, other: Self) -> bool {
        self > other
    }
    #[inline(always)]
    fn le(self, other: Self) -> bool {
        self <= other
    }
    #[inline(always)]
    fn eq(self, other: Self) -> bool {
        self == other
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn select(mask: bool, a: Self, b: Self) -> Self {
        if mask {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn any(mask: bool) -> bool {
        mask
    }
    #[inline(always)]
    fn lane(self, _: usize) -> f64 {
        self
    }
    #[inline(always)]
    fn set_lane(&mut self, _: usize, x: f64) {
        *self = x;
    }
}

/// `N` `f64` lanes: [`F64x4`] (one 256-bit register with AVX2) and
/// [`F64x8`] (two groups of four side by side, so that the processor can
/// work on one while the other waits on a division or a root).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(32))]
pub struct Lanes<const N: usize>(pub [f64; N]);

/// Four `f64` lanes.
pub type F64x4 = Lanes<4>;

/// Eight `f64` lanes.
pub type F64x8 = Lanes<8>;

impl<const N: usize> Default for Lanes<N> {
    #[inline(always)]
    fn default() -> Self {
        Lanes([0.0; N])
    }
}

/// `N` truth values, one per lane of a [`Lanes`], as the comparison
/// instructions give them: all 64 bits set (true) or clear (false), so
/// that a select is a bitwise blend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Mask<const N: usize>(pub [u64; N]);

/// The mask of [`F64x4`].
pub type M4 = Mask<4>;

impl<const N: usize> Default for Mask<N> {
    #[inline(always)]
    fn default() -> Self {
        Mask([0; N])
    }
}

impl<const N: usize> Mask<N> {
    /// Lane `l`.
    #[inline(always)]
    pub fn get(self, l: usize) -> bool {
        self.0[l] != 0
    }
}

impl<const N: usize> Lanes<N> {
    #[inline(always)]
    fn zip(self, other: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        let (a, b) = (self.0, other.0);
        Lanes(std::array::from_fn(|l| f(a[l], b[l])))
    }

    #[inline(always)]
    fn test(self, other: Self, f: impl Fn(f64, f64) -> bool) -> Mask<N> {
        let (a, b) = (self.0, other.0);
        Mask(std::array::from_fn(|l| {
            (f(a[l], b[l]) as u64).wrapping_neg()
        }))
    }
}

macro_rules! lane_wise {
    ($($op:ident $method:ident),*) => {$(
        impl<const N: usize> $op for Lanes<N> {
            type Output = Lanes<N>;
            #[inline(always)]
            fn $method(self, other: Lanes<N>) -> Lanes<N> {
                self.zip(other, |a, b| $op::$method(a, b))
            }
        }
    )*};
}
lane_wise!(Add add, Sub sub, Mul mul, Div div);

impl<const N: usize> Neg for Lanes<N> {
    type Output = Lanes<N>;
    #[inline(always)]
    fn neg(self) -> Lanes<N> {
        self.map(|a| -a)
    }
}

impl<const N: usize> BitAnd for Mask<N> {
    type Output = Mask<N>;
    #[inline(always)]
    fn bitand(self, o: Mask<N>) -> Mask<N> {
        Mask(std::array::from_fn(|l| self.0[l] & o.0[l]))
    }
}

impl<const N: usize> BitOr for Mask<N> {
    type Output = Mask<N>;
    #[inline(always)]
    fn bitor(self, o: Mask<N>) -> Mask<N> {
        Mask(std::array::from_fn(|l| self.0[l] | o.0[l]))
    }
}

impl<const N: usize> Not for Mask<N> {
    type Output = Mask<N>;
    #[inline(always)]
    fn not(self) -> Mask<N> {
        Mask(self.0.map(|m| !m))
    }
}

impl<const N: usize> Lane for Lanes<N> {
    type Mask = Mask<N>;
    const LANES: usize = N;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Lanes([x; N])
    }
    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Lanes(self.0.map(f))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(f64::abs)
    }
    #[inline(always)]
    fn signum(self) -> Self {
        self.map(f64::signum)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> Mask<N> {
        self.test(other, |a, b| a < b)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Mask<N> {
        self.test(other, |a, b| a > b)
    }
    #[inline(always)]
    fn le(self, other: Self) -> Mask<N> {
        self.test(other, |a, b| a <= b)
    }
    #[inline(always)]
    fn eq(self, other: Self) -> Mask<N> {
        self.test(other, |a, b| a == b)
    }
    #[inline(always)]
    fn is_finite(self) -> Mask<N> {
        Mask(self.0.map(|x| (x.is_finite() as u64).wrapping_neg()))
    }
    #[inline(always)]
    fn select(mask: Mask<N>, a: Self, b: Self) -> Self {
        Lanes(std::array::from_fn(|l| {
            let m = mask.0[l];
            f64::from_bits((a.0[l].to_bits() & m) | (b.0[l].to_bits() & !m))
        }))
    }
    #[inline(always)]
    fn any(mask: Mask<N>) -> bool {
        mask.0.iter().fold(0, |a, &m| a | m) != 0
    }
    #[inline(always)]
    fn lane(self, l: usize) -> f64 {
        self.0[l]
    }
    #[inline(always)]
    fn set_lane(&mut self, l: usize, x: f64) {
        self.0[l] = x;
    }
}

/// A 3-vector of lanes, with the arithmetic of `glam::DVec3` in its order
/// (so that `V3<f64>` gives `DVec3`'s bits).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct V3<T> {
    /// x component.
    pub x: T,
    /// y component.
    pub y: T,
    /// z component.
    pub z: T,
}

impl<T: Lane> V3<T> {
    /// The vector `(x, y, z)`.
    #[inline(always)]
    pub fn new(x: T, y: T, z: T) -> Self {
        V3 { x, y, z }
    }

    /// The zero vector.
    #[inline(always)]
    pub fn zero() -> Self {
        let z = T::splat(0.0);
        V3 { x: z, y: z, z }
    }

    /// `a · b`, summed as `DVec3::dot`: `(a_x b_x + a_y b_y) + a_z b_z`.
    #[inline(always)]
    pub fn dot(self, b: Self) -> T {
        (self.x * b.x) + (self.y * b.y) + (self.z * b.z)
    }

    /// `a × b`, as `DVec3::cross` computes it.
    #[inline(always)]
    pub fn cross(self, b: Self) -> Self {
        V3 {
            x: self.y * b.z - b.y * self.z,
            y: self.z * b.x - b.z * self.x,
            z: self.x * b.y - b.x * self.y,
        }
    }

    /// `|a|²`.
    #[inline(always)]
    pub fn length_squared(self) -> T {
        self.dot(self)
    }

    /// `|a|`.
    #[inline(always)]
    pub fn length(self) -> T {
        self.length_squared().sqrt()
    }

    /// `s a` (each component `s · a_k`).
    #[inline(always)]
    pub fn scale(self, s: T) -> Self {
        V3 {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }

    /// `if mask { a } else { b }` per lane.
    #[inline(always)]
    pub fn select(mask: T::Mask, a: Self, b: Self) -> Self {
        V3 {
            x: T::select(mask, a.x, b.x),
            y: T::select(mask, a.y, b.y),
            z: T::select(mask, a.z, b.z),
        }
    }
}

impl<T: Lane> Add for V3<T> {
    type Output = Self;
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        V3::new(self.x + b.x, self.y + b.y, self.z + b.z)
    }
}

impl<T: Lane> Sub for V3<T> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        V3::new(self.x - b.x, self.y - b.y, self.z - b.z)
    }
}

impl<T: Lane> Neg for V3<T> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        V3::new(-self.x, -self.y, -self.z)
    }
}

impl From<glam::DVec3> for V3<f64> {
    #[inline(always)]
    fn from(v: glam::DVec3) -> Self {
        V3::new(v.x, v.y, v.z)
    }
}

impl From<V3<f64>> for glam::DVec3 {
    #[inline(always)]
    fn from(v: V3<f64>) -> Self {
        glam::DVec3::new(v.x, v.y, v.z)
    }
}

impl<const N: usize> V3<Lanes<N>> {
    /// Lane `l` as a `DVec3`.
    #[inline(always)]
    pub fn lane(self, l: usize) -> glam::DVec3 {
        glam::DVec3::new(self.x.0[l], self.y.0[l], self.z.0[l])
    }

    /// Set lane `l` to `v`.
    #[inline(always)]
    pub fn set_lane(&mut self, l: usize, v: glam::DVec3) {
        (self.x.0[l], self.y.0[l], self.z.0[l]) = (v.x, v.y, v.z);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn bits(v: DVec3) -> [u64; 3] {
        v.to_array().map(f64::to_bits)
    }

    #[test]
    fn v3_of_f64_has_the_bits_of_dvec3() {
        let (a, b) = (
            DVec3::new(0.1, -0.7, 1.0 / 3.0),
            DVec3::new(2.0f64.sqrt(), 1e-9, -5.5),
        );
        let (va, vb) = (V3::from(a), V3::from(b));
        assert_eq!(va.dot(vb).to_bits(), a.dot(b).to_bits());
        assert_eq!(bits(va.cross(vb).into()), bits(a.cross(b)));
        assert_eq!(bits(va.scale(0.3).into()), bits(0.3 * a));
        assert_eq!(va.length().to_bits(), a.length().to_bits());
        assert_eq!(bits((va - vb + -va).into()), bits(a - b + -a));
    }

    #[test]
    fn four_lanes_give_each_lane_the_f64_bits() {
        let xs = [0.3, -2.0, 0.0, f64::NAN];
        let ys = [1.0 / 7.0, 3.5, -0.0, 2.0];
        let (a, b) = (Lanes(xs), Lanes(ys));
        for l in 0..4 {
            let (x, y) = (xs[l], ys[l]);
            // The same bits, or both NaN (whose sign and payload the
            // compiler may fold differently from the processor).
            let same = |u: F64x4, v: f64| {
                let w = u.lane(l);
                assert!(
                    w.to_bits() == v.to_bits() || w.is_nan() && v.is_nan(),
                    "lane {l}: {w} {v}"
                );
            };
            same(a + b, x + y);
            same(a - b, x - y);
            same(a * b, x * y);
            same(a / b, x / y);
            same(-a, -x);
            same(a.sqrt(), x.sqrt());
            same(a.min(b), Lane::min(x, y));
            same(a.max(b), Lane::max(x, y));
            if x != y {
                same(a.min(b), x.min(y));
                same(a.max(b), x.max(y));
            }
            same(a.signum(), x.signum());
            same(F64x4::select(a.lt(b), a, b), if x < y { x } else { y });
            assert_eq!(a.eq(b).get(l), x == y);
            assert_eq!(a.is_finite().get(l), x.is_finite());
        }
        assert!(F64x4::any(a.gt(b)));
        assert!(!F64x4::any(a.is_finite() & !a.is_finite()));
    }
}
