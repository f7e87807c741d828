//! Print neighbour-list statistics of a config after some steps.
use gravel::{comm::SerialComm, config::Setup, sim::Simulation};
fn main() {
    let path = std::env::args().nth(1).expect("config");
    let steps: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100);
    let setup = Setup::from_file(std::path::Path::new(&path)).unwrap();
    let mut sim = Simulation::new(setup, Box::new(SerialComm)).unwrap();
    for _ in 0..steps {
        sim.step().unwrap();
    }
    let n = sim.particles.n_owned as f64;
    let t = sim.thermo();
    println!(
        "owned {n} ghosts {} entries/particle {:.2} contacts/particle {:.3}",
        sim.particles.len() - sim.particles.n_owned,
        sim.neighbors.len() as f64 / n,
        t.contacts / n
    );
}
