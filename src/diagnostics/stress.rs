//! The stress tensor of a granular assembly, its kinetic and contact parts,
//! in the form of Christoffersen, Mehrabadi & Nemat-Nasser (J. Appl. Mech.
//! 48 (1981) 339) and of LAMMPS `compute stress/atom` (with the opposite,
//! compressive-positive sign):
//!
//! `σ = (1/V) [Σ_contacts l ⊗ f + Σ_i m_i v_i ⊗ v_i]`
//!
//! where `f` is the force on particle `i` at a contact and `l = x_i −
//! x_partner` (minimum image; at a wall, `x_partner` is the contact point on
//! the wall). Each pair contact is split half and half between its two
//! particles (both halves are the same bits: `l` and `f` change sign
//! together), so a region's stress sums its particles' shares, and the
//! whole box's is the sum over ranks of the owned particles'.
//!
//! Six components, `xx, yy, zz, xy, xz, yz`, of the symmetric part: `l ⊗ f`
//! is symmetric only when every particle's torques balance.

use glam::DVec3;

/// The six components of a symmetric tensor, `xx, yy, zz, xy, xz, yz`.
pub type Sym = [f64; 6];

/// The symmetric part of `a ⊗ b`, scaled by `s`, added to `t`.
#[inline]
pub fn add_outer(t: &mut Sym, a: DVec3, b: DVec3, s: f64) {
    t[0] += s * a.x * b.x;
    t[1] += s * a.y * b.y;
    t[2] += s * a.z * b.z;
    t[3] += s * 0.5 * (a.x * b.y + a.y * b.x);
    t[4] += s * 0.5 * (a.x * b.z + a.z * b.x);
    t[5] += s * 0.5 * (a.y * b.z + a.z * b.y);
}

/// `t + s u`, component by component.
#[inline]
pub fn add_scaled(t: &mut Sym, u: &Sym, s: f64) {
    for (a, b) in t.iter_mut().zip(u) {
        *a += s * b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_product_is_symmetrised_in_voigt_order() {
        let mut t = [0.0; 6];
        add_outer(
            &mut t,
            DVec3::new(1.0, 2.0, 3.0),
            DVec3::new(4.0, 5.0, 6.0),
            2.0,
        );
        // a ⊗ b = [[4,5,6],[8,10,12],[12,15,18]]; its symmetric part, doubled.
        assert_eq!(t, [8.0, 20.0, 36.0, 13.0, 18.0, 27.0]);
        let mut u = [1.0; 6];
        add_scaled(&mut u, &t, 0.5);
        assert_eq!(u, [5.0, 11.0, 19.0, 7.5, 10.0, 14.5]);
    }
}
