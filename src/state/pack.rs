//! Byte records with exact bits, for messages between ranks and for
//! checkpoints: [`Pack`] appends little-endian values to a buffer (an `f64`
//! as its bit pattern), [`Unpack`] reads them back in the same order.
//! Records of a fixed size whose places are known on both sides (the halo
//! update's per-ghost state) are written and read in place, without the
//! bookkeeping of a growing buffer: [`write_f64s`], [`read_f64s`]. Both
//! ways give the same bytes for the same values.

/// Append little-endian values to a byte buffer (exact bits: `f64` goes as its bit pattern).
pub trait Pack {
    /// Append a `u64`.
    fn put_u64(&mut self, v: u64);
    /// Append an `f64` (its bits).
    fn put_f64(&mut self, v: f64);
    /// Append three `f64`.
    fn put_vec3(&mut self, v: glam::DVec3) {
        self.put_f64(v.x);
        self.put_f64(v.y);
        self.put_f64(v.z);
    }
    /// Append a length and the values.
    fn put_f64s(&mut self, v: &[f64]) {
        self.put_u64(v.len() as u64);
        for &x in v {
            self.put_f64(x);
        }
    }
}

impl Pack for Vec<u8> {
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f64(&mut self, v: f64) {
        self.extend_from_slice(&f64_bytes(v));
    }
}

/// The eight bytes of `v` in a record: its bit pattern, little-endian.
#[inline(always)]
fn f64_bytes(v: f64) -> [u8; 8] {
    v.to_bits().to_le_bytes()
}

/// The value whose record bytes ([`f64_bytes`]) are `bytes`.
#[inline(always)]
fn f64_of(bytes: &[u8]) -> f64 {
    f64::from_bits(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
}

/// Write `values` into `out` as [`Pack::put_f64`] would append them (each
/// its bit pattern, little-endian), in place: `out` holds exactly eight
/// bytes a value.
///
/// # Panics
/// If `out` is not `8 · values.len()` bytes long.
#[inline]
pub fn write_f64s(out: &mut [u8], values: &[f64]) {
    assert_eq!(out.len(), 8 * values.len(), "a piece of another size");
    for (at, v) in out.chunks_exact_mut(8).zip(values) {
        at.copy_from_slice(&f64_bytes(*v));
    }
}

/// Read `N` values that [`write_f64s`] (or [`Pack::put_f64`], one after
/// the other) wrote into `bytes`, exactly `8 N` bytes.
///
/// # Panics
/// If `bytes` is not `8 N` bytes long.
#[inline]
pub fn read_f64s<const N: usize>(bytes: &[u8]) -> [f64; N] {
    assert_eq!(bytes.len(), 8 * N, "a piece of another size");
    std::array::from_fn(|i| f64_of(&bytes[8 * i..8 * i + 8]))
}

/// Read back what [`Pack`] wrote, front to back.
#[derive(Debug)]
pub struct Unpack<'a> {
    data: &'a [u8],
}

impl<'a> Unpack<'a> {
    /// Start reading `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }
    /// Whether everything has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// Read a `u64`.
    pub fn u64(&mut self) -> u64 {
        let (head, tail) = self.data.split_at(8);
        self.data = tail;
        u64::from_le_bytes(head.try_into().expect("8 bytes"))
    }
    /// Read an `f64`.
    pub fn f64(&mut self) -> f64 {
        let (head, tail) = self.data.split_at(8);
        self.data = tail;
        f64_of(head)
    }
    /// Read three `f64`.
    pub fn vec3(&mut self) -> glam::DVec3 {
        glam::DVec3::new(self.f64(), self.f64(), self.f64())
    }
    /// Read a length-prefixed list of `f64`.
    pub fn f64s(&mut self) -> Vec<f64> {
        let n = self.u64() as usize;
        (0..n).map(|_| self.f64()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips_exact_bits() {
        let mut b = Vec::new();
        let vals = [0.1 + 0.2, -0.0, f64::MIN_POSITIVE / 3.0, 1e300];
        b.put_u64(u64::MAX - 7);
        b.put_vec3(glam::DVec3::new(vals[0], vals[1], vals[2]));
        b.put_f64s(&vals);
        let mut r = Unpack::new(&b);
        assert_eq!(r.u64(), u64::MAX - 7);
        let v = r.vec3();
        assert_eq!(v.x.to_bits(), vals[0].to_bits());
        assert_eq!(v.y.to_bits(), vals[1].to_bits());
        assert_eq!(v.z.to_bits(), vals[2].to_bits());
        let back = r.f64s();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            vals.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert!(r.is_empty());
    }

    #[test]
    fn pieces_written_in_place_are_the_bytes_pack_appends() {
        let vals = [0.1 + 0.2, -0.0, f64::MIN_POSITIVE / 3.0, f64::NAN, -1e300];
        let mut appended = Vec::new();
        vals.iter().for_each(|&v| appended.put_f64(v));
        let mut piece = vec![0xAAu8; 8 * vals.len()];
        write_f64s(&mut piece, &vals);
        assert_eq!(piece, appended);
        let back: [f64; 5] = read_f64s(&piece);
        assert_eq!(back.map(f64::to_bits), vals.map(f64::to_bits));
    }

    #[test]
    #[should_panic(expected = "a piece of another size")]
    fn a_piece_of_another_size_is_refused() {
        let _: [f64; 2] = read_f64s(&[0u8; 24]);
    }
}
