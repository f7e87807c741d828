//! The tasks of one parallel region over the force stage's runs (one task
//! per thread), finishing together.
//!
//! A rayon thread with nothing left to do yields a few dozen times and
//! then sleeps, and a sleeping thread is woken by the one that finishes
//! the task it waits for, or that brings new work: on a virtual machine a
//! wake-up takes several microseconds. The chute on 1 rank × 2 threads
//! (2026-12-04) lost 13–41 µs a step that way in its four regions over
//! the runs (the drift, the force stage's two passes, the periodic
//! images): the drift's two runs differ by about 20 µs, long enough for
//! the first thread done to fall asleep. MPI ranks wait for each other by
//! polling and never pay it. A [`Team`] keeps its tasks' threads polling
//! instead: a task done before its partners yields its core until they
//! are done too, for at most [`Team::PATIENCE`], and only while every task
//! of the region has started (a task not started yet may be waiting in
//! this very thread's queue, and only returning lets the thread take it).
//! Yielding, not spinning, leaves the core to any other thread that needs
//! it, as when ranks × threads exceed the cores.
//!
//! What the tasks compute, and on which thread, is unchanged; only when a
//! thread goes idle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The tasks of one parallel region, counted as they start and finish.
#[derive(Debug)]
pub struct Team {
    tasks: usize,
    started: AtomicUsize,
    done: AtomicUsize,
    waits: AtomicUsize,
}

impl Team {
    /// The longest a finished task waits for its partners before its
    /// thread goes idle as rayon's would (a few times the wake-up it
    /// saves, and short against a step).
    pub const PATIENCE: Duration = Duration::from_micros(200);

    /// A region of `tasks` tasks.
    pub fn new(tasks: usize) -> Self {
        Self {
            tasks,
            started: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            waits: AtomicUsize::new(0),
        }
    }

    /// Run one of the region's tasks, `work`; then, if others are still
    /// running and all have started, yield until they are done (at most
    /// [`Self::PATIENCE`]).
    pub fn task<R>(&self, work: impl FnOnce() -> R) -> R {
        self.started.fetch_add(1, Ordering::AcqRel);
        let result = work();
        let done = self.done.fetch_add(1, Ordering::AcqRel) + 1;
        let waiting = || {
            self.started.load(Ordering::Acquire) == self.tasks
                && self.done.load(Ordering::Acquire) < self.tasks
        };
        if done < self.tasks && waiting() {
            self.waits.fetch_add(1, Ordering::Relaxed);
            let since = Instant::now();
            while waiting() && since.elapsed() < Self::PATIENCE {
                std::thread::yield_now();
            }
        }
        result
    }

    /// How many of the region's tasks waited for others when done.
    pub fn waits(&self) -> usize {
        self.waits.load(Ordering::Relaxed)
    }

    /// How many of the region's tasks have finished.
    pub fn finished(&self) -> usize {
        self.done.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    }

    #[test]
    fn every_task_runs_once_and_returns_its_result() {
        for (threads, tasks) in [(1, 1), (1, 4), (2, 2), (2, 5), (4, 3)] {
            let team = Team::new(tasks);
            let out: Vec<usize> = pool(threads).install(|| {
                (0..tasks)
                    .into_par_iter()
                    .map(|i| team.task(|| 10 * i))
                    .collect()
            });
            assert_eq!(out, (0..tasks).map(|i| 10 * i).collect::<Vec<_>>());
            assert_eq!(team.finished(), tasks);
        }
    }

    #[test]
    fn more_tasks_than_threads_never_wait_for_a_task_not_started() {
        // On one thread the tasks run one after another: a wait for the
        // next would last the whole patience each time, for nothing.
        let tasks = 64;
        let team = Team::new(tasks);
        pool(1).install(|| (0..tasks).into_par_iter().for_each(|_| team.task(|| ())));
        assert_eq!(team.finished(), tasks);
        assert_eq!(team.waits(), 0);
    }

    #[test]
    fn a_task_done_early_waits_no_longer_than_its_patience() {
        // The first task finishes once the second has started on the other
        // thread; the second then holds on until the first has given up
        // waiting (or 5 s have passed): the first must give up on its own.
        let team = Team::new(2);
        let (second_started, gave_up) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let hold_until = |flag: &AtomicUsize| {
            let since = Instant::now();
            while flag.load(Ordering::Acquire) == 0 && since.elapsed() < Duration::from_secs(5) {
                std::thread::yield_now();
            }
            flag.load(Ordering::Acquire) == 1
        };
        let (partner_ran, told) = pool(2).install(|| {
            rayon::join(
                || {
                    let partner_ran = team.task(|| hold_until(&second_started));
                    gave_up.store(1, Ordering::Release);
                    partner_ran
                },
                || {
                    team.task(|| {
                        second_started.store(1, Ordering::Release);
                        hold_until(&gave_up)
                    })
                },
            )
        });
        assert!(
            partner_ran,
            "the second task never started on the other thread"
        );
        assert!(
            told,
            "the first task waited past its patience: the second ran out its 5 s"
        );
        assert_eq!((team.finished(), team.waits()), (2, 1));
    }
}
