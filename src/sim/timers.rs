//! Wall-clock time per stage of the step, and the share of it spent in
//! communication.

use std::time::{Duration, Instant};

/// A stage of the step (and the output between steps), as timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The two half kicks and the drift, with the displacement scan.
    Integrate,
    /// Pouring: drawing and placing the particles a source owes.
    Insert,
    /// The neighbour list: a rebuild (wrap, migrate, sort, ghosts, list),
    /// or a halo update.
    Neighbor,
    /// Contact, wall and body forces.
    Force,
    /// Frames, thermo rows, checkpoints and state dumps.
    Output,
}

impl Stage {
    /// Every stage, in the order of the step.
    pub const ALL: [Stage; 5] = [
        Stage::Integrate,
        Stage::Insert,
        Stage::Neighbor,
        Stage::Force,
        Stage::Output,
    ];

    /// The stage's name in the run's summary.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Integrate => "integrate",
            Stage::Insert => "insert",
            Stage::Neighbor => "neighbor",
            Stage::Force => "force",
            Stage::Output => "output",
        }
    }
}

/// Wall-clock time spent per [`Stage`], communication and rebuilds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timers {
    spent: [Duration; 5],
    /// Of the stages' time, time spent in communication (halo, migration,
    /// reductions, gathers), waiting for other ranks included.
    pub comm: Duration,
    /// Number of neighbour-list rebuilds.
    pub rebuilds: u64,
}

impl Timers {
    /// Time spent in `stage`.
    pub fn spent(&self, stage: Stage) -> Duration {
        self.spent[stage as usize]
    }

    /// Count `time` to `stage`.
    pub fn add(&mut self, stage: Stage, time: Duration) {
        self.spent[stage as usize] += time;
    }

    /// Time spent in all stages.
    pub fn total(&self) -> Duration {
        self.spent.iter().sum()
    }
}

/// A clock read at the end of each stage: [`Self::lap`] gives the time
/// since the last lap (or the start).
#[derive(Debug, Clone, Copy)]
pub struct Lap(Instant);

impl Lap {
    /// Start now.
    pub fn start() -> Self {
        Lap(Instant::now())
    }

    /// The time since the last lap, and start the next.
    pub fn lap(&mut self) -> Duration {
        let now = Instant::now();
        let d = now - self.0;
        self.0 = now;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_add_up_separately() {
        let mut t = Timers::default();
        t.add(Stage::Force, Duration::from_millis(3));
        t.add(Stage::Force, Duration::from_millis(4));
        t.add(Stage::Output, Duration::from_millis(5));
        assert_eq!(t.spent(Stage::Force), Duration::from_millis(7));
        assert_eq!(t.spent(Stage::Insert), Duration::ZERO);
        assert_eq!(t.total(), Duration::from_millis(12));
        let names: Vec<_> = Stage::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            ["integrate", "insert", "neighbor", "force", "output"]
        );
    }
}
