//! STL mesh walls against the analytic walls they stand for: a randomly
//! triangulated floor is the plane z = 0, an L of four triangles is a floor
//! and a side wall. A sphere dropped, sliding and rolling on the mesh must
//! follow the analytic run to 1e-12 relative in position, velocity, spin
//! and contact history, whether its contacts are on faces, edges or
//! vertices; a sphere in the concave corner gets one contact per face and
//! none from the edge between them.

mod common;

use common::*;
use glam::DVec3;
use gravel::geometry::mesh::{Contacts, Feature};
use gravel::geometry::walls::WallShape;
use gravel::sim::Simulation;
use gravel::state::snapshot::Snapshot;
use std::collections::BTreeSet;
use std::path::Path;

const R: f64 = 0.001;
const G: f64 = 9.81;
/// The floor's half-width, 6/1024 m, so that its 12 × 12 grid's vertices
/// lie at multiples of 1/1024 m, exact in an STL's f32.
const L: f64 = 6.0 / 1024.0;

/// A small deterministic generator for the triangulation (xorshift).
struct Jitter(u64);

impl Jitter {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random triangulation of the square `[-l, l]²` at z = 0, facing +z: an
/// `n × n` grid whose interior vertices are jittered by up to 30 % of a
/// cell, except on the row y = 0, whose vertices stay on the grid; each
/// cell is cut along a diagonal drawn at random.
fn floor_triangles(n: usize, l: f64, seed: u64) -> Vec<[[f64; 3]; 3]> {
    let mut rng = Jitter(seed);
    let h = 2.0 * l / n as f64;
    let mut p = vec![vec![[0.0; 3]; n + 1]; n + 1];
    for (j, row) in p.iter_mut().enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            let inner = i > 0 && i < n && j > 0 && j < n && 2 * j != n;
            let (dx, dy) = if inner {
                (0.6 * (rng.next() - 0.5) * h, 0.6 * (rng.next() - 0.5) * h)
            } else {
                (0.0, 0.0)
            };
            *v = [-l + i as f64 * h + dx, -l + j as f64 * h + dy, 0.0];
        }
    }
    let mut tris = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (p[j][i], p[j][i + 1], p[j + 1][i + 1], p[j + 1][i]);
            if rng.next() < 0.5 {
                tris.push([a, b, c]);
                tris.push([a, c, d]);
            } else {
                tris.push([a, b, d]);
                tris.push([b, c, d]);
            }
        }
    }
    tris
}

/// Write `tris` as a binary STL.
fn write_binary_stl(path: &Path, tris: &[[[f64; 3]; 3]]) {
    let mesh: Vec<stl_io::Triangle> = tris
        .iter()
        .map(|t| stl_io::Triangle {
            normal: stl_io::Normal::new([0.0, 0.0, 0.0]),
            vertices: t.map(|v| stl_io::Vertex::new(v.map(|c| c as f32))),
        })
        .collect();
    let mut f = std::fs::File::create(path).unwrap();
    stl_io::write_stl(&mut f, mesh.iter()).unwrap();
}

/// Write `tris` as an ASCII STL, its coordinates in millimetres.
fn write_ascii_stl_mm(path: &Path, tris: &[[[f64; 3]; 3]]) {
    let mut s = String::from("solid floor\n");
    for t in tris {
        s.push_str("  facet normal 0 0 1\n    outer loop\n");
        for v in t {
            s.push_str(&format!(
                "      vertex {:e} {:e} {:e}\n",
                v[0] * 1e3,
                v[1] * 1e3,
                v[2] * 1e3
            ));
        }
        s.push_str("    endloop\n  endfacet\n");
    }
    s.push_str("endsolid floor\n");
    std::fs::write(path, s).unwrap();
}

/// `[[wall]] kind = "mesh"` reading `path`.
fn mesh_wall(path: &Path) -> Table {
    Table::new()
        .with("kind", "mesh")
        .with("path", path.to_str().unwrap())
        .with("material", "m")
}

/// Hertz–Mindlin with EPSD rolling resistance: every history slot in use.
fn case(walls: Vec<Table>) -> Case {
    let mut c = Case {
        dt: 2e-6,
        gravity: [0.0, 0.0, -G],
        lo: [-0.006, -0.006, -0.001],
        hi: [0.006, 0.006, 0.01],
        elastic: Some((1e7, 0.3)),
        normal: hertz(0.3).into(),
        tangential: mindlin(0.4).into(),
        rolling: model("epsd")
            .with("friction", 0.1)
            .with("damping", 0.3)
            .into(),
        walls,
        ..Default::default()
    };
    // Dropped with spin over a face.
    c.sphere(
        R,
        [-0.003, 0.003, 1.6 * R],
        [0.05, -0.02, 0.0],
        [3.0, 1.0, 5.0],
    );
    // Sliding without spin along the row y = 0: over its edges.
    c.sphere(R, [-0.004, 0.0, R], [0.1, 0.0, 0.0], [0.0; 3]);
    // Rolling across the triangles.
    let v = [-0.05, 0.08, 0.0];
    c.sphere(R, [0.002, -0.003, R], v, [-v[1] / R, v[0] / R, 0.0]);
    // Bouncing on the vertex (2/1024, 0, 0) of the floor of [`L`]: exact in
    // binary, in f32 and in f64.
    c.sphere(R, [2.0 / 1024.0, 0.0, 1.3 * R], [0.0; 3], [0.0; 3]);
    c
}

/// Run `sim` for `steps`, noting the features of every mesh contact of
/// every particle (with wall 0, where it is a mesh), and checking at each
/// step that the wall lists miss no contact (`Simulation::wall_lists_miss`).
fn run(sim: &mut Simulation, steps: usize, seen: &mut BTreeSet<&'static str>) {
    let mut out = Contacts::default();
    for _ in 0..steps {
        sim.step().unwrap();
        assert_eq!(sim.wall_lists_miss(), None);
        let wall = &sim.setup.walls[0];
        if let WallShape::Mesh { .. } = wall.shape {
            for k in 0..sim.particles.n_owned {
                wall.mesh_contacts(sim.particles.x[k], sim.particles.radius[k], &mut out);
                if out.len() > 1 {
                    seen.insert("several");
                }
                for c in out.as_slice() {
                    seen.insert(match c.feature {
                        Feature::Face(_) => "face",
                        Feature::Edge(_) => "edge",
                        Feature::Vertex(_) => "vertex",
                    });
                }
            }
        }
    }
}

/// `|a − b| ≤ 1e-12 (|b| + floor)`, componentwise by the vector's length.
fn close(a: DVec3, b: DVec3, floor: f64) -> bool {
    (a - b).length() <= 1e-12 * (b.length() + floor)
}

/// Each particle's contact record with the mesh (the history of its slot
/// whose key is set) or the plane: `(id, record)`.
fn wall_records(s: &Snapshot, mesh: bool) -> Vec<(u64, Vec<f64>)> {
    let h = s.history_len;
    let mut out: Vec<(u64, Vec<f64>)> = Vec::new();
    for (r, &(id, w)) in s.wall_keys.iter().enumerate() {
        let rec = s.wall_values[r * h..(r + 1) * h].to_vec();
        // A mesh's slot is a key record, then the contact's record.
        let is_history = !mesh || w % 2 == 1;
        if is_history {
            out.push((id, rec));
        }
    }
    out
}

/// Compare two runs' final snapshots to 1e-12 relative.
fn assert_follows(mesh: &Snapshot, plane: &Snapshot, what: &str) {
    assert_eq!(mesh.particles.len(), plane.particles.len());
    for (a, b) in mesh.particles.iter().zip(&plane.particles) {
        assert_eq!(a.id, b.id);
        assert!(
            close(a.x, b.x, R),
            "{what}: id {} x {} vs {}",
            a.id,
            a.x,
            b.x
        );
        assert!(
            close(a.v, b.v, 1e-3),
            "{what}: id {} v {} vs {}",
            a.id,
            a.v,
            b.v
        );
        assert!(
            close(a.omega, b.omega, 1.0),
            "{what}: id {} ω {} vs {}",
            a.id,
            a.omega,
            b.omega
        );
    }
    let (m, p) = (wall_records(mesh, true), wall_records(plane, false));
    assert_eq!(
        m.iter().map(|r| r.0).collect::<Vec<_>>(),
        p.iter().map(|r| r.0).collect::<Vec<_>>(),
        "{what}: contact records of other particles"
    );
    for ((id, a), (_, b)) in m.iter().zip(&p) {
        let scale = b.iter().map(|v| v.abs()).fold(0.0, f64::max);
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-12 * scale,
                "{what}: id {id} history {a:?} vs {b:?}"
            );
        }
    }
}

fn snapshot_after(c: &Case, steps: usize, seen: &mut BTreeSet<&'static str>) -> Snapshot {
    serial(|| {
        let mut sim = c.build();
        run(&mut sim, steps, seen);
        sim.snapshot()
    })
}

#[test]
fn spheres_on_a_triangulated_floor_follow_the_plane() {
    let dir = tempfile::tempdir().unwrap();
    let tris = floor_triangles(12, L, 0x9e37_79b9_7f4a_7c15);
    let (bin, ascii) = (
        dir.path().join("floor.stl"),
        dir.path().join("floor_mm.stl"),
    );
    write_binary_stl(&bin, &tris);
    write_ascii_stl_mm(&ascii, &tris);
    let steps = 12_000;
    let mut none = BTreeSet::new();
    let plane_run = snapshot_after(
        &case(vec![plane([0.0; 3], [0.0, 0.0, 1.0], "m")]),
        steps,
        &mut none,
    );
    // The sliding, rolling and vertex spheres are on the floor at the end
    // and keep a record with it.
    let on_floor: Vec<u64> = wall_records(&plane_run, false)
        .iter()
        .map(|r| r.0)
        .collect();
    assert!(on_floor.len() >= 3 && on_floor.contains(&1), "{on_floor:?}");
    let mut seen = BTreeSet::new();
    let binary = snapshot_after(&case(vec![mesh_wall(&bin)]), steps, &mut seen);
    assert_follows(&binary, &plane_run, "binary STL");
    assert_eq!(
        seen,
        BTreeSet::from(["edge", "face", "vertex"]),
        "the runs must meet faces, edges and vertices"
    );
    let mm = mesh_wall(&ascii).with("scale", 0.001);
    let ascii_run = snapshot_after(&case(vec![mm]), steps, &mut BTreeSet::new());
    assert_follows(&ascii_run, &plane_run, "ASCII STL in mm");
    // A floor sliding at 2 cm/s, as a mesh and as a plane.
    let belt = |t: Table| t.with("velocity", [0.02, 0.0, 0.0]);
    let plane_belt = snapshot_after(
        &case(vec![belt(plane([0.0; 3], [0.0, 0.0, 1.0], "m"))]),
        steps,
        &mut none,
    );
    let mesh_belt = snapshot_after(&case(vec![belt(mesh_wall(&bin))]), steps, &mut none);
    assert_follows(&mesh_belt, &plane_belt, "sliding mesh");
}

/// A floor z = 0 (x ≥ 0) and a side wall x = 0 (z ≥ 0) meeting along the
/// y axis, two triangles each, facing the quarter x, z > 0.
fn corner_triangles(l: f64) -> Vec<[[f64; 3]; 3]> {
    let (a, b, c, d) = ([0.0, -l, 0.0], [l, -l, 0.0], [l, l, 0.0], [0.0, l, 0.0]);
    let (e, f) = ([0.0, l, l], [0.0, -l, l]);
    vec![[a, b, c], [a, c, d], [a, d, e], [a, e, f]]
}

#[test]
fn a_sphere_in_a_concave_corner_touches_each_face_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corner.stl");
    // The corner's edge along y; the domain holds its quarter.
    write_binary_stl(&path, &corner_triangles(0.004));
    let corner = |walls: Vec<Table>| {
        let mut c = case(walls);
        c.lo = [-0.001, -0.004, -0.001];
        c.hi = [0.004, 0.004, 0.004];
        c.radius.clear();
        c.x.clear();
        c.v.clear();
        c.w.clear();
        // Rolling into the corner, and resting in it.
        c.sphere(R, [0.003, -0.0015, R], [-0.1, 0.0, 0.0], [0.0, -100.0, 0.0]);
        c.sphere(R, [0.99 * R, 0.0015, 0.99 * R], [0.0; 3], [0.0; 3]);
        c
    };
    let setup = setup(&corner(vec![mesh_wall(&path)]).config());
    let mut out = Contacts::default();
    setup.walls[0].mesh_contacts(DVec3::new(0.9 * R, 0.0015, 0.9 * R), R, &mut out);
    let features: Vec<Feature> = out.as_slice().iter().map(|c| c.feature).collect();
    assert!(
        features.len() == 2 && features.iter().all(|f| matches!(f, Feature::Face(_))),
        "{features:?}"
    );
    let normals: Vec<DVec3> = out.as_slice().iter().map(|c| c.n).collect();
    assert!(
        normals.contains(&-DVec3::X) && normals.contains(&-DVec3::Z),
        "{normals:?}"
    );
    // Past the corner's edge on the outside: the edge alone, once.
    let outside = DVec3::new(-0.5 * R, 0.0, -0.5 * R);
    setup.walls[0].mesh_contacts(outside, R, &mut out);
    assert!(
        out.len() == 1 && matches!(out.as_slice()[0].feature, Feature::Edge(_)),
        "{:?}",
        out.as_slice()
    );
    // The rolling run against two planes.
    let steps = 15_000;
    let mut seen = BTreeSet::new();
    let mesh_run = snapshot_after(&corner(vec![mesh_wall(&path)]), steps, &mut seen);
    let planes = vec![
        plane([0.0; 3], [0.0, 0.0, 1.0], "m"),
        plane([0.0; 3], [1.0, 0.0, 0.0], "m"),
    ];
    let plane_run = snapshot_after(&corner(planes), steps, &mut BTreeSet::new());
    // Both spheres touched both faces at once, never the edge.
    assert_eq!(
        seen,
        BTreeSet::from(["face", "several"]),
        "corner contacts: {seen:?}"
    );
    for (a, b) in mesh_run.particles.iter().zip(&plane_run.particles) {
        assert!(close(a.x, b.x, R), "id {}: x {} vs {}", a.id, a.x, b.x);
        assert!(close(a.v, b.v, 1e-3), "id {}: v {} vs {}", a.id, a.v, b.v);
        assert!(
            close(a.omega, b.omega, 1.0),
            "id {}: ω {} vs {}",
            a.id,
            a.omega,
            b.omega
        );
    }
}

#[test]
fn a_restart_continues_a_mesh_run_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("floor.stl");
    write_binary_stl(&path, &floor_triangles(12, L, 7));
    let c = case(vec![mesh_wall(&path).with("velocity", [0.01, 0.0, 0.0])]);
    serial(|| {
        let mut whole = c.build();
        let mut seen = BTreeSet::new();
        run(&mut whole, 3000, &mut seen);
        let mut first = c.build();
        run(&mut first, 1700, &mut seen);
        let snap = first.snapshot();
        let mut second = Simulation::from_snapshot(
            first.setup.clone(),
            Box::new(gravel::parallel::comm::SerialComm),
            &snap,
        )
        .unwrap();
        run(&mut second, 1300, &mut seen);
        assert_same_snapshot(&whole.snapshot(), &second.snapshot(), "mesh restart");
        // Mesh history was in the checkpoint.
        assert!(!snap.wall_keys.is_empty());
    });
}

#[test]
fn a_turning_mesh_floor_drags_its_spheres_as_a_turning_plane_does() {
    // A turntable: the floor turning at 5 rad/s about the z axis through
    // the origin, as a plane and as the triangulated floor.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("floor.stl");
    write_binary_stl(&path, &floor_triangles(12, L, 99));
    let turn = |t: Table| {
        t.with(
            "rotation",
            raw("{ axis = [0.0, 0.0, 1.0], point = [0.0, 0.0, 0.0], angular_velocity = 5.0 }"),
        )
    };
    let steps = 8000;
    let mut seen = BTreeSet::new();
    let mesh = snapshot_after(&case(vec![turn(mesh_wall(&path))]), steps, &mut seen);
    let plane = snapshot_after(
        &case(vec![turn(plane([0.0; 3], [0.0, 0.0, 1.0], "m"))]),
        steps,
        &mut BTreeSet::new(),
    );
    // Turning the sphere's centre back into the mesh's frame and the
    // contact forward again rounds differently from the plane's own
    // arithmetic; the runs agree to 1e-12 relative all the same.
    assert_follows(&mesh, &plane, "turning mesh");
    // The resting spheres were dragged round: the one bouncing on the
    // vertex at x = 2/1024 m picked up a tangential speed.
    let spun = mesh.particles.iter().find(|p| p.id == 3).unwrap();
    assert!(spun.v.y.abs() > 1e-4, "{}", spun.v);
}

/// A triangulated piston coming down at 0.3 m/s on three spheres at rest
/// in space, against a plane on the same trajectory. The mesh is listed at
/// a rebuild in its own frame; the spheres stand still, so only the
/// mesh's drift calls for rebuilds (`NearWalls`, `RebuildRule`): every
/// 2 × skin / (0.3 m/s × dt), about 667 steps. Without them the list
/// found at step 0, 4 mm above the spheres, would never list the piston
/// (the check at each step, `Simulation::wall_lists_miss`, and the
/// plane's run would both fail).
#[test]
fn a_mesh_piston_meets_spheres_at_rest_as_a_plane_piston_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("piston.stl");
    // The floor turned over: facing −z, towards the spheres below.
    let over: Vec<_> = (floor_triangles(12, L, 5).into_iter())
        .map(|[a, b, c]| [a, c, b])
        .collect();
    write_binary_stl(&path, &over);
    let down = raw("{ times = [0.0, 0.02], offsets = [[0.0, 0.0, 0.006], [0.0, 0.0, 0.0]] }");
    let case = |piston: Table| {
        let mut c = case(vec![piston]);
        c.gravity = [0.0; 3];
        c.lo = [-0.006, -0.006, -0.006];
        c.radius.clear();
        c.x.clear();
        c.v.clear();
        c.w.clear();
        for x in [
            [-0.003, 0.002, R],
            [0.002, -0.003, 1.3 * R],
            [2.0 / 1024.0, 0.0, 0.8 * R],
        ] {
            c.sphere(R, x, [0.0; 3], [0.0; 3]);
        }
        c
    };
    let steps = 7500;
    let mut rebuilds = 0;
    let mut seen = BTreeSet::new();
    let mesh_case = case(mesh_wall(&path).with("trajectory", down.clone()));
    let mesh = serial(|| {
        let mut sim = mesh_case.build();
        run(&mut sim, steps, &mut seen);
        rebuilds = sim.timers.rebuilds;
        // Restarted 67 steps before the first contact, past the last
        // rebuild: the list is found again where that rebuild saw the
        // spheres and the piston.
        let mut first = mesh_case.build();
        run(&mut first, 6100, &mut seen);
        let mut second = Simulation::from_snapshot(
            first.setup.clone(),
            Box::new(gravel::parallel::comm::SerialComm),
            &first.snapshot(),
        )
        .unwrap();
        run(&mut second, steps - 6100, &mut seen);
        assert_same_snapshot(&sim.snapshot(), &second.snapshot(), "piston restart");
        sim.snapshot()
    });
    let plane = snapshot_after(
        &case(plane([0.0; 3], [0.0, 0.0, -1.0], "m").with("path", down.clone())),
        steps,
        &mut BTreeSet::new(),
    );
    assert_follows(&mesh, &plane, "mesh piston");
    // Every sphere was met and pushed down.
    for p in &mesh.particles {
        assert!(p.v.z < -0.3, "id {}: v {}", p.id, p.v);
    }
    // The piston's drift rebuilt the list some ten times before it came.
    assert!(rebuilds >= 9, "{rebuilds} rebuilds");
}

#[test]
fn the_sidecar_draws_meshes_from_the_output_file_and_moves_them_per_frame() {
    let dir = tempfile::tempdir().unwrap();
    let tris = floor_triangles(6, L, 5);
    write_binary_stl(&dir.path().join("floor.stl"), &tris);
    // A floor at rest and a lid above it sliding along x, both meshes.
    write_ascii_stl_mm(
        &dir.path().join("lid.stl"),
        &tris
            .iter()
            .map(|t| [t[0], t[2], t[1]].map(|v| [v[0], v[1], 0.008]))
            .collect::<Vec<_>>(),
    );
    let config = case(vec![
        mesh_wall(Path::new("floor.stl")).with("name", "floor"),
        mesh_wall(Path::new("lid.stl"))
            .with("name", "lid")
            .with("scale", 0.001)
            .with("velocity", [0.5, 0.0, 0.0]),
    ])
    .config()
    .run("steps", 20)
    .output("every", 10)
    .output("dir", "out");
    let path = write_file(dir.path(), "meshes.toml", &config.text());
    let out = gravel([std::ffi::OsStr::new("run"), path.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let xdmf = std::fs::read_to_string(dir.path().join("out/physics.xdmf")).unwrap();
    // The floor, at rest, read from the file at each of the three frames;
    // the lid's triangles from the file, its points from the file where it
    // is at rest (t = 0), inline where it has moved (steps 10 and 20).
    let floor = "physics.h5:/wall_meshes/floor/";
    assert_eq!(xdmf.matches(&format!("{floor}points")).count(), 3, "{xdmf}");
    assert_eq!(
        xdmf.matches("physics.h5:/wall_meshes/lid/triangles")
            .count(),
        3
    );
    assert_eq!(
        xdmf.matches("physics.h5:/wall_meshes/lid/points").count(),
        1
    );
    let h5 = hdf5::File::open(dir.path().join("out/physics.h5")).unwrap();
    let points = h5.dataset("wall_meshes/floor/points").unwrap();
    let triangles = h5.dataset("wall_meshes/floor/triangles").unwrap();
    assert_eq!(points.shape(), [49, 3]);
    assert_eq!(triangles.shape(), [72, 3]);
    let lid = h5
        .dataset("wall_meshes/lid/points")
        .unwrap()
        .read_2d::<f64>()
        .unwrap();
    // The lid at the last frame (step 20, t = 4e-5 s): its points at rest
    // moved by 0.5 m/s × 4e-5 s along x.
    let last = xdmf.rsplit("<Grid Name=\"lid\"").next().unwrap();
    let inline = last.split("Format=\"XML\">").nth(1).unwrap();
    let values: Vec<f64> = inline
        .split('<')
        .next()
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(values.len(), lid.len());
    for (k, v) in values.iter().enumerate() {
        let shift = if k % 3 == 0 { 0.5 * 20.0 * 2e-6 } else { 0.0 };
        let want = lid[[k / 3, k % 3]] + shift;
        assert!((v - want).abs() < 1e-15, "{k}: {v} vs {want}");
    }
}
