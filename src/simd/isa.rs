//! Which instruction set the hot loops run with.
//!
//! The binary is built for the baseline x86-64 (SSE2), so that it runs on
//! any such processor. The hot loops (the force stage's pair jobs, filter
//! and summing pass, the half steps) are compiled a second time with AVX2
//! enabled (`#[target_feature(enable = "avx2")]`), and each call picks the
//! AVX2 build where the processor has it (the three-operand VEX forms and
//! 256-bit registers; the gain is measured in `docs/performance.md`). The
//! macro `in_best_build!` makes the second build of a loop.
//!
//! Both builds give the same bits: AVX2 adds no operation that rounds
//! differently, FMA stays off (Rust never contracts a multiply and an add
//! into one rounding on its own, and the fused instructions are not
//! enabled), and the order of every sum is the source's.
//!
//! `GRAVEL_ISA=baseline` in the environment keeps the baseline build
//! everywhere (to compare the two, or on a processor whose AVX2 support is
//! suspect); `GRAVEL_ISA=avx2` (or nothing) picks AVX2 where it is present.

use std::sync::OnceLock;

/// The environment variable that chooses the instruction set ([`Isa`]).
pub const ISA_VAR: &str = "GRAVEL_ISA";

/// An instruction set the hot loops are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// Baseline x86-64 (or whatever the target is elsewhere).
    Baseline,
    /// x86-64 with AVX2.
    Avx2,
}

impl Isa {
    /// Its name, as [`ISA_VAR`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
        }
    }
}

/// Whether this processor has AVX2.
pub fn processor_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The instruction set for a request (the value of [`ISA_VAR`], if set) on
/// a processor with or without AVX2. An unknown request is an error naming
/// the variable and the values allowed.
pub fn choose(request: Option<&str>, has_avx2: bool) -> Result<Isa, String> {
    match request.map(str::trim) {
        None | Some("") | Some("avx2") => Ok(if has_avx2 { Isa::Avx2 } else { Isa::Baseline }),
        Some("baseline") => Ok(Isa::Baseline),
        Some(other) => Err(format!(
            "{ISA_VAR}={other:?} is not an instruction set gravel knows: use \"baseline\" or \"avx2\""
        )),
    }
}

/// The instruction set of this run, chosen once from [`ISA_VAR`] and the
/// processor. An unknown value of [`ISA_VAR`] falls back to the choice
/// without it ([`check_request`] reports it before a run starts).
pub fn active() -> Isa {
    static ACTIVE: OnceLock<Isa> = OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let request = std::env::var(ISA_VAR).ok();
        choose(request.as_deref(), processor_has_avx2())
            .unwrap_or_else(|_| choose(None, processor_has_avx2()).expect("no request"))
    })
}

/// Whether the hot loops take their AVX2 build.
#[inline(always)]
pub fn avx2() -> bool {
    cfg!(target_arch = "x86_64") && active() == Isa::Avx2
}

/// `in_best_build!(NAME, || BODY)`: run the closure (made
/// `#[inline(always)]` here; `BODY` calls a function marked so too) in the
/// build of the hot loops that this run takes: compiled a second time, with AVX2 on,
/// inside a function `NAME` defined at the call site (so profiles name
/// it), and called where [`avx2`]; else in the baseline build. The one way
/// a hot loop gets its two builds.
macro_rules! in_best_build {
    ($avx2:ident, $($body:tt)+) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2<R>(body: impl FnOnce() -> R) -> R {
            body()
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
    choose(request.as_deref(), processor_has_avx2()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_and_the_processor_choose_the_build() {
        assert_eq!(choose(None, true), Ok(Isa::Avx2));
        assert_eq!(choose(None, false), Ok(Isa::Baseline));
        assert_eq!(choose(Some("avx2"), true), Ok(Isa::Avx2));
        // AVX2 asked for on a processor without it: the baseline, never a fault.
        assert_eq!(choose(Some("avx2"), false), Ok(Isa::Baseline));
        assert_eq!(choose(Some("baseline"), true), Ok(Isa::Baseline));
        assert_eq!(choose(Some(" baseline "), true), Ok(Isa::Baseline));
        let err = choose(Some("avx512"), true).unwrap_err();
        assert!(
            err.contains("GRAVEL_ISA") && err.contains("\"avx512\""),
            "{err}"
        );
        assert!(err.contains("baseline") && err.contains("avx2"), "{err}");
    }
}
