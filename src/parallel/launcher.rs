//! What the MPI launcher announced: the rank count that `mpirun`, `mpiexec`
//! or `srun` put in each process's environment, checked against the ranks
//! the run has.
//!
//! One rule for both builds: the launcher's count must equal the size of
//! the run's communicator. A gravel built without the feature `mpi` is one
//! rank; started by `mpirun -np 2` it would run two whole, independent
//! copies of the simulation into the same output. An MPI build linked
//! against another MPI library than the launcher's starts as N singletons,
//! with the same result. Either is refused before anything is read or
//! written.

/// The variables launchers set to the number of ranks of the job, by
/// launcher: Open MPI's `mpirun`, MPICH's and Intel MPI's Hydra `mpiexec`
/// (PMI), MVAPICH2's `mpirun_rsh`.
pub const SIZE_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"];

/// The first variable of [`SIZE_VARIABLES`] that `lookup` finds with a
/// positive whole number, and that number.
pub fn announced_ranks(lookup: impl Fn(&str) -> Option<String>) -> Option<(&'static str, usize)> {
    SIZE_VARIABLES.iter().find_map(|&name| {
        let n = lookup(name)?.trim().parse::<usize>().ok()?;
        (n > 0).then_some((name, n))
    })
}

/// Check the launcher's count (from `lookup`, the environment in
/// [`check_environment`]) against `ranks`, the communicator's size, in a
/// build with (`mpi_build`) or without MPI. The error says what happened
/// and what to do.
pub fn check(
    lookup: impl Fn(&str) -> Option<String>,
    ranks: usize,
    mpi_build: bool,
) -> Result<(), String> {
    let Some((name, announced)) = announced_ranks(lookup) else {
        return Ok(());
    };
    if announced == ranks {
        return Ok(());
    }
    Err(if mpi_build {
        format!(
            "{name}={announced}: the launcher started {announced} ranks, but MPI \
             gives this process a job of {ranks}; gravel was built against another \
             MPI library than the launcher's (use the `mpirun` of the MPI that \
             gravel was built with)"
        )
    } else {
        format!(
            "{name}={announced}: started as one of {announced} MPI ranks, but this \
             gravel was built without MPI, and each rank would run the whole \
             simulation into the same output; build with \
             `cargo build --release --features mpi` to run on several ranks, or \
             start it without `mpirun`"
        )
    })
}

/// [`check`] against this process's environment.
pub fn check_environment(ranks: usize, mpi_build: bool) -> Result<(), String> {
    check(|name| std::env::var(name).ok(), ranks, mpi_build)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_launcher_or_a_matching_count_is_accepted() {
        assert_eq!(check(env(&[]), 1, false), Ok(()));
        assert_eq!(
            check(env(&[("OMPI_COMM_WORLD_SIZE", "1")]), 1, false),
            Ok(())
        );
        assert_eq!(check(env(&[("PMI_SIZE", "4")]), 4, true), Ok(()));
    }

    #[test]
    fn a_serial_build_under_a_launcher_of_several_ranks_is_refused() {
        for name in SIZE_VARIABLES {
            let e = check(env(&[(name, "2")]), 1, false).unwrap_err();
            assert!(e.starts_with(&format!("{name}=2")), "{e}");
            assert!(e.contains("--features mpi"), "{e}");
        }
    }

    #[test]
    fn an_mpi_build_seeing_fewer_ranks_than_launched_is_refused() {
        let e = check(env(&[("OMPI_COMM_WORLD_SIZE", "2")]), 1, true).unwrap_err();
        assert!(e.contains("another MPI library"), "{e}");
    }

    #[test]
    fn unreadable_counts_are_not_an_announcement() {
        for v in ["", "two", "-2", "0"] {
            assert_eq!(announced_ranks(env(&[("PMI_SIZE", v)])), None, "{v:?}");
        }
        let both = env(&[("PMI_SIZE", "x"), ("MV2_COMM_WORLD_SIZE", "3")]);
        assert_eq!(announced_ranks(both), Some(("MV2_COMM_WORLD_SIZE", 3)));
    }
}
