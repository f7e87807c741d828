//! Which instruction set the hot loops run with.
//!
//! The binary is built for the baseline x86-64 (SSE2), so that it runs on
//! any such processor. The hot loops (the force stage's pair jobs, filter
//! and summing pass, the half steps, the neighbour search) are compiled a
//! second time with AVX2 enabled (`#[target_feature(enable = "avx2")]`),
//! and the contact kernels and the summing pass a third time with AVX-512
//! (the x86-64-v4 set: `avx512f`, `avx512vl`, `avx512dq`, `avx512bw`,
//! `avx512cd`); each call picks the widest build the processor has. AVX2
//! brings the three-operand VEX forms and 256-bit registers; AVX-512 32
//! registers of 512 bits, so that a group of eight contacts
//! (`force::pairs`) is one register per value instead of two, and the
//! kernel's values spill less (the gains are measured in
//! `docs/performance.md`). The half steps stay at AVX2 (they ran
//! 10 % slower with AVX-512), as do the loops written with AVX2
//! intrinsics (the filter, the search's row test). The macro
//! `in_best_build!` makes the builds of a loop.
//!
//! Every build gives the same bits: none adds an operation that rounds
//! differently, no fused multiply–add is formed where the source has none
//! (Rust never contracts a multiply and an add into one rounding on its
//! own; the one `mul_add`, in `math::erfcx`, rounds once in every build),
//! and the order of every sum is the source's.
//!
//! `GRAVEL_ISA` in the environment caps the build: `baseline` keeps the
//! baseline everywhere (to compare, or on a processor whose vector support
//! is suspect), `avx2` goes no further than AVX2, `avx512` (or nothing)
//! takes the widest the processor has.

use std::sync::OnceLock;

/// The environment variable that chooses the instruction set ([`Isa`]).
pub const ISA_VAR: &str = "GRAVEL_ISA";

/// An instruction set the hot loops are compiled for, narrowest first (a
/// later one includes the earlier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// Baseline x86-64 (or whatever the target is elsewhere).
    Baseline,
    /// x86-64 with AVX2.
    Avx2,
    /// x86-64-v4: AVX2 and AVX-512 (F, VL, DQ, BW, CD).
    Avx512,
}

impl Isa {
    /// Every build, narrowest first.
    pub const ALL: [Isa; 3] = [Isa::Baseline, Isa::Avx2, Isa::Avx512];

    /// Its name, as [`ISA_VAR`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

/// The widest build this processor runs.
pub fn processor_best() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2")
            && has!("avx512f")
            && has!("avx512vl")
            && has!("avx512dq")
            && has!("avx512bw")
            && has!("avx512cd")
        {
            Isa::Avx512
        } else if has!("avx2") {
            Isa::Avx2
        } else {
            Isa::Baseline
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Isa::Baseline
    }
}

/// Whether this processor has AVX2.
pub fn processor_has_avx2() -> bool {
    processor_best() >= Isa::Avx2
}

/// The instruction set for a request (the value of [`ISA_VAR`], if set) on
/// a processor whose widest build is `best`: the request caps the build,
/// and a build the processor lacks falls to the widest it has. An unknown
/// request is an error naming the variable and the values allowed.
pub fn choose(request: Option<&str>, best: Isa) -> Result<Isa, String> {
    let cap = match request.map(str::trim) {
        None | Some("") => Isa::Avx512,
        Some(name) => *Isa::ALL.iter().find(|i| i.name() == name).ok_or_else(|| {
            format!(
                "{ISA_VAR}={name:?} is not an instruction set gravel knows: use \"baseline\", \"avx2\" or \"avx512\""
            )
        })?,
    };
    Ok(cap.min(best))
}

/// The instruction set of this run, chosen once from [`ISA_VAR`] and the
/// processor. An unknown value of [`ISA_VAR`] falls back to the choice
/// without it ([`check_request`] reports it before a run starts).
pub fn active() -> Isa {
    static ACTIVE: OnceLock<Isa> = OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let request = std::env::var(ISA_VAR).ok();
        choose(request.as_deref(), processor_best())
            .unwrap_or_else(|_| choose(None, processor_best()).expect("no request"))
    })
}

/// Whether the hot loops may use AVX2 (the AVX2 or the AVX-512 build).
#[inline(always)]
pub fn avx2() -> bool {
    cfg!(target_arch = "x86_64") && active() >= Isa::Avx2
}

/// Whether the hot loops that have an AVX-512 build take it.
#[inline(always)]
pub fn avx512() -> bool {
    cfg!(target_arch = "x86_64") && active() == Isa::Avx512
}

/// `avx2_build! { fn ... }`: the function compiled with AVX2 on (on
/// x86-64 only), as the hot loops' AVX2 build; the caller checks the
/// processor ([`avx2`], [`processor_best`]) before calling it.
#[doc(hidden)]
#[macro_export]
macro_rules! avx2_build {
    ($($item:tt)+) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        $($item)+
    };
}

/// `avx512_build! { fn ... }`: the function compiled with AVX-512 on (on
/// x86-64 only): the features [`processor_best`] checks for
/// [`Isa::Avx512`], named here once for every use (the hot loops, the lane
/// test, the kernel bench). The caller checks the processor ([`avx512`],
/// [`processor_best`]) before calling it.
#[doc(hidden)]
#[macro_export]
macro_rules! avx512_build {
    ($($item:tt)+) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
        $($item)+
    };
}

/// `in_best_build!(NAME_AVX2, [NAME_AVX512,] || BODY)`: run the closure
/// (made `#[inline(always)]` here; `BODY` calls a function marked so too)
/// in the build of the hot loops that this run takes: compiled again with
/// AVX2 on, inside a function `NAME_AVX2` defined at the call site (so
/// that profiles name it), and, where a second name is given, once more
/// with AVX-512 on, inside `NAME_AVX512`; each called where [`avx2`] or
/// [`avx512`] says; else the baseline build. The one way a hot loop gets
/// its builds.
macro_rules! in_best_build {
    ($avx2:ident, $avx512:ident, $($body:tt)+) => {{
        $crate::avx512_build! {
            unsafe fn $avx512<R>(body: impl FnOnce() -> R) -> R {
                body()
            }
        }
        #[cfg(target_arch = "x86_64")]
        let result = if $crate::simd::isa::avx512() {
            // SAFETY: the processor has AVX-512 (`isa::avx512` checks it).
            unsafe { $avx512(#[inline(always)] $($body)+) }
        } else {
            $crate::simd::isa::in_best_build!($avx2, $($body)+)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let result = $crate::simd::isa::in_baseline_build(#[inline(always)] $($body)+);
        result
    }};
    ($avx2:ident, $($body:tt)+) => {{
        $crate::avx2_build! {
            unsafe fn $avx2<R>(body: impl FnOnce() -> R) -> R {
                body()
            }
        }
        #[cfg(target_arch = "x86_64")]
        let result = if $crate::simd::isa::avx2() {
            // SAFETY: the processor has AVX2 (`isa::avx2` checks it).
            unsafe { $avx2(#[inline(always)] $($body)+) }
        } else {
            $crate::simd::isa::in_baseline_build(#[inline(always)] $($body)+)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let result = $crate::simd::isa::in_baseline_build(#[inline(always)] $($body)+);
        result
    }};
}
pub(crate) use in_best_build;

/// `body`, in the baseline build (the other arm of `in_best_build!`).
#[inline(always)]
pub fn in_baseline_build<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// Check the value of [`ISA_VAR`], if any: an error names it and the
/// values allowed.
pub fn check_request() -> Result<(), String> {
    let request = std::env::var(ISA_VAR).ok();
    choose(request.as_deref(), processor_best()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_and_the_processor_choose_the_build() {
        use Isa::*;
        assert_eq!(choose(None, Avx512), Ok(Avx512));
        assert_eq!(choose(None, Avx2), Ok(Avx2));
        assert_eq!(choose(None, Baseline), Ok(Baseline));
        assert_eq!(choose(Some(""), Avx512), Ok(Avx512));
        assert_eq!(choose(Some("avx2"), Avx512), Ok(Avx2));
        assert_eq!(choose(Some("avx2"), Avx2), Ok(Avx2));
        assert_eq!(choose(Some("avx512"), Avx512), Ok(Avx512));
        // A build the processor lacks: the widest it has, never a fault.
        assert_eq!(choose(Some("avx512"), Avx2), Ok(Avx2));
        assert_eq!(choose(Some("avx2"), Baseline), Ok(Baseline));
        assert_eq!(choose(Some("baseline"), Avx512), Ok(Baseline));
        assert_eq!(choose(Some(" baseline "), Avx2), Ok(Baseline));
        for bad in ["avx", "AVX2", "sse4"] {
            let err = choose(Some(bad), Avx512).unwrap_err();
            assert!(
                err.contains("GRAVEL_ISA") && err.contains(&format!("{bad:?}")),
                "{err}"
            );
            assert!(
                err.contains("\"baseline\", \"avx2\" or \"avx512\""),
                "{err}"
            );
        }
    }
}
