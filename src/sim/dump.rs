//! The state with exact bits, for comparisons: the particles and every
//! contact-history record, sorted by id, and the text dump of
//! `gravel run --dump-state`.

use super::Simulation;
use glam::DVec3;

impl Simulation {
    /// Owned particles sorted by id: `(id, x, v, ω)`, for comparisons and output.
    pub fn state_by_id(&self) -> Vec<(u64, DVec3, DVec3, DVec3)> {
        self.assert_settled("the state by id");
        let p = &self.particles;
        let mut v: Vec<_> = (0..p.n_owned)
            .map(|k| (p.id[k], p.x[k], p.v[k], p.omega[k]))
            .collect();
        v.sort_by_key(|e| e.0);
        v
    }

    /// Every contact-history record `(id_a, id_b or wall, values)` held by this rank, sorted.
    /// Pair records are listed from each owned side; only records with a non-zero value are listed.
    pub fn history_records(&self) -> Vec<(u64, HistoryPartner, Vec<f64>)> {
        let p = &self.particles;
        let nl = &self.neighbors;
        let mut out = Vec::new();
        for k in 0..p.n_owned {
            for e in nl.rows().row(k) {
                let rec = nl.record(e);
                if rec.iter().any(|&x| x != 0.0) {
                    out.push((
                        p.id[k],
                        HistoryPartner::Particle(nl.rows().partner_id(e, &p.id)),
                        rec.to_vec(),
                    ));
                }
            }
            for w in 0..self.wall_history.walls() {
                let rec = self.wall_history.record(k, w);
                if rec.iter().any(|&x| x != 0.0) {
                    out.push((p.id[k], HistoryPartner::Wall(w as u32), rec.to_vec()));
                }
            }
        }
        out.sort_by_key(|a| (a.0, a.1));
        out
    }

    /// The whole state of every rank, on rank 0 (`None` elsewhere), as text
    /// with exact bits: a line per particle (`p id x y z vx vy vz wx wy wz`,
    /// floats as hexadecimal bit patterns), then a line per non-zero history
    /// record (`h id partner values…`, the partner `p<id>` or `w<wall>`),
    /// sorted. Bitwise-identical runs give identical dumps whatever their
    /// rank and thread counts. Collective.
    pub fn dump_state(&self) -> Option<String> {
        self.assert_settled("the state dump");
        let hex = |v: &[f64]| -> String {
            v.iter()
                .map(|x| format!("{:016x}", x.to_bits()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut lines = Vec::new();
        for (id, x, v, w) in self.state_by_id() {
            let vals = [x.to_array(), v.to_array(), w.to_array()].concat();
            lines.push(format!("p {id:020} {}", hex(&vals)));
        }
        for (id, partner, vals) in self.history_records() {
            let who = match partner {
                HistoryPartner::Particle(q) => format!("p{q:020}"),
                HistoryPartner::Wall(w) => format!("w{w:010}"),
            };
            lines.push(format!("h {id:020} {who} {}", hex(&vals)));
        }
        let text = lines.join("\n");
        let all = self.comm.gather(text.as_bytes())?;
        let mut lines: Vec<String> = all
            .iter()
            .flat_map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|l| !l.is_empty())
            .collect();
        lines.sort();
        Some(lines.join("\n") + "\n")
    }
}

/// The other side of a contact-history record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HistoryPartner {
    /// A particle, by global id.
    Particle(u64),
    /// A wall, by index.
    Wall(u32),
}
