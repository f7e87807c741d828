//! The XDMF 3 sidecar: a small XML file, next to the HDF5 output, that describes the
//! frames so that ParaView (or VisIt) opens them as a time series of points.
//!
//! Each frame becomes a `Uniform` grid inside a `Temporal` collection: a `Polyvertex`
//! topology with one vertex per particle, `XYZ` geometry from
//! `<h5>:/frames/<step>/position`, and the node-centred attributes `radius`, `id`,
//! `material`, `frozen` (scalars) and every field (vectors). The vertex connectivity (`0..N`)
//! is a hyperslab of the shared dataset [`VERTEX_INDEX`]
//! in the HDF5 file, which [`OutputFile`](super::frames::OutputFile) keeps at least as
//! long as the largest frame: readers that build no default connectivity (ParaView's
//! `Xdmf3Reader*`) then still get one vertex cell per particle. Frames without
//! particles are left out of the sidecar, since readers reject zero-sized arrays.
//!
//! The walls ([`WallScene`]) are drawn as triangle surfaces with their data written
//! inline (a mesh's triangles, and its points at rest, from `/wall_meshes/<name>/`
//! of the HDF5 file): one `Uniform` grid per wall, named as in `/walls`, in a `Spatial`
//! collection `walls`. Walls at rest are drawn once; where a wall moves, the
//! collection is drawn at every frame's time, inside a `Temporal` collection, each
//! wall placed where it is then (a function of the time alone,
//! [`crate::geometry::motion`]).
//!
//! Each temporal collection ends in room (whitespace, [`section_len`]) where
//! the next frame's grid is written in place ([`super::sidecar`]). This module
//! renders; [`super::sidecar`] writes the file.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::layout::{
    frame_path, FROZEN, ID, MATERIAL, POSITION, RADIUS, VERTEX_INDEX, WALL_MESHES,
};
use crate::geometry::domain::Domain;
use crate::geometry::mesh::{Pose, TriMesh};
use crate::geometry::motion::{place_walls, MovingWall};
use crate::geometry::surface::tessellate;
use crate::geometry::walls::{Wall, WallShape};
use glam::DVec3;

/// The walls as the sidecar draws them: where they are at `t = 0`, which
/// move and how, their names, and the box that clips planes and infinite
/// cylinders.
#[derive(Debug, Clone)]
pub struct WallScene {
    /// The walls at `t = 0`.
    pub walls: Vec<Wall>,
    /// The walls that move.
    pub moving: Vec<MovingWall>,
    /// Their names, by index.
    pub names: Vec<String>,
    /// The box.
    pub domain: Domain,
}

/// What the sidecar needs to know about one frame: step, time (s), particle count and
/// the names of its datasets beyond `id`, `position`, `radius` and `material`, in the
/// order they should be listed: `frozen` (a u8 scalar) where the frame has it, and
/// the vector fields.
pub type XdmfFrame = (u64, f64, usize, Vec<String>);

/// An element type as XDMF spells it.
#[derive(Clone, Copy)]
enum Num {
    F64,
    U64,
    U32,
    U8,
    I64,
}

impl Num {
    /// `NumberType` and `Precision` (bytes).
    fn xdmf(self) -> (&'static str, u8) {
        match self {
            Num::F64 => ("Float", 8),
            Num::U64 => ("UInt", 8),
            Num::U32 => ("UInt", 4),
            Num::U8 => ("UChar", 1),
            Num::I64 => ("Int", 8),
        }
    }
}

/// The particles' temporal collection, opened (the frames' grids follow).
const PARTICLES_OPEN: &str =
    "    <Grid Name=\"particles\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
/// The moving walls' temporal collection, opened (a placement per frame follows).
const WALLS_OPEN: &str =
    "    <Grid Name=\"walls\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
/// A collection closed.
const COLLECTION_CLOSE: &str = "    </Grid>\n";
/// The document closed.
const DOCUMENT_CLOSE: &str = "  </Domain>\n</Xdmf>\n";

/// Bytes of the sections a collection's grids are written into: 64 KiB,
/// doubled up to 4 MiB, then in steps of 4 MiB.
const SECTION_FIRST: usize = 64 << 10;
/// See [`SECTION_FIRST`].
const SECTION_STEP: usize = 4 << 20;

/// The length of the section that holds `used` bytes of a collection's
/// grids and the room after them: the first of 64 KiB, 128 KiB, … 4 MiB,
/// 8 MiB, 12 MiB, … that leaves at least one byte of room (the room's
/// closing newline).
///
/// The room is whitespace, so the document reads the same with any
/// amount of it; it lets a frame's grid be written in place after the
/// last one ([`super::sidecar`]). The length depends on `used` alone, so
/// a sidecar grown frame by frame and one written whole from the same
/// frames are the same bytes; and a room stays under 4 MiB, well below
/// the 10 MB that libxml2 (ParaView's XML parser) accepts in one text
/// node.
#[must_use]
pub fn section_len(used: usize) -> usize {
    let mut len = SECTION_FIRST;
    while len <= used && len < SECTION_STEP {
        len *= 2;
    }
    if len > used {
        len
    } else {
        (used / SECTION_STEP + 1) * SECTION_STEP
    }
}

/// `len` bytes of room: spaces, then a newline.
#[must_use]
pub fn room(len: usize) -> String {
    let mut room = " ".repeat(len.saturating_sub(1));
    room.push('\n');
    room
}

/// The sidecar as a document, and where its rooms are.
#[derive(Debug, Clone)]
pub struct Document {
    /// The whole text.
    pub text: String,
    /// The particles' section: from its first grid to the end of its room.
    pub particles: Section,
    /// The moving walls' section, where a wall moves.
    pub walls: Option<Section>,
}

/// Where a collection's grids and their room lie in a [`Document`] (byte
/// offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// Where the first grid starts.
    pub start: usize,
    /// Where the room starts (the next grid goes here).
    pub room: usize,
    /// Where the room ends (the collection's closing tag).
    pub end: usize,
}

/// The sidecar listing `frames` (in step order, whatever order they are
/// given in) whose data live in the HDF5 file `h5_file_name`, a name
/// relative to the sidecar's folder, with `/xdmf/vertex_index` of
/// `vertex_count` entries (at least the largest frame's particles). Frames
/// without particles are left out: XDMF readers fail on zero-sized arrays.
/// Each temporal collection ends with its room ([`section_len`]).
#[must_use]
pub fn render(
    h5_file_name: &str,
    frames: &[XdmfFrame],
    walls: Option<&WallScene>,
    vertex_count: usize,
) -> Document {
    // Readers fail on zero-sized arrays, so frames without particles are left out.
    let mut listed: Vec<&XdmfFrame> = frames.iter().filter(|f| f.2 > 0).collect();
    listed.sort_by_key(|f| f.0);

    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    out.push_str("<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n");
    out.push_str("  <Domain>\n");
    out.push_str(PARTICLES_OPEN);
    let start = out.len();
    for &frame in &listed {
        out.push_str(&frame_grid(h5_file_name, frame, vertex_count));
    }
    let particles = close_section(&mut out, start);
    let mut moving = None;
    if let Some(scene) = walls.filter(|s| !s.walls.is_empty()) {
        if scene.moving.is_empty() {
            render_walls_at_rest(&mut out, h5_file_name, scene);
        } else {
            out.push_str(WALLS_OPEN);
            let start = out.len();
            for frame in &listed {
                out.push_str(&walls_grid(h5_file_name, scene, frame.1));
            }
            moving = Some(close_section(&mut out, start));
        }
    }
    out.push_str(DOCUMENT_CLOSE);
    Document {
        text: out,
        particles,
        walls: moving,
    }
}

/// The walls of `scene` where they are at rest, drawn once: the
/// `Spatial` collection `walls` at the document's top level.
fn render_walls_at_rest(out: &mut String, h5_file_name: &str, scene: &WallScene) {
    render_walls(out, 4, &escape(h5_file_name), scene, &scene.walls, None);
}

/// Ends the section of grids that started at `start` with its room and
/// closes the collection.
fn close_section(out: &mut String, start: usize) -> Section {
    let room_at = out.len();
    let end = start + section_len(room_at - start);
    out.push_str(&room(end - room_at));
    out.push_str(COLLECTION_CLOSE);
    Section {
        start,
        room: room_at,
        end,
    }
}

/// What follows the particles' section where no wall moves: the
/// collection's closing tag, the walls at rest (if any) and the
/// document's end.
#[must_use]
pub fn after_particles(h5_file_name: &str, walls: Option<&WallScene>) -> String {
    let mut out = String::from(COLLECTION_CLOSE);
    if let Some(scene) = walls.filter(|s| !s.walls.is_empty()) {
        render_walls_at_rest(&mut out, h5_file_name, scene);
    }
    out.push_str(DOCUMENT_CLOSE);
    out
}

/// What follows the moving walls' section: its closing tag and the
/// document's end.
#[must_use]
pub fn after_walls() -> String {
    format!("{COLLECTION_CLOSE}{DOCUMENT_CLOSE}")
}

/// The walls of `scene` placed where they are at `time`, as the moving
/// walls' collection lists them at a frame's time.
#[must_use]
pub fn walls_grid(h5_file_name: &str, scene: &WallScene, time: f64) -> String {
    let mut placed = scene.walls.clone();
    place_walls(&mut placed, &scene.moving, time);
    let mut out = String::new();
    render_walls(
        &mut out,
        6,
        &escape(h5_file_name),
        scene,
        &placed,
        Some(time),
    );
    out
}

/// The `Spatial` collection `walls`: each of `walls` (placed where they are
/// at `time`, if given) as a triangle surface, its data inline, but for a
/// mesh, whose triangles (and points at rest) are read from
/// `/wall_meshes/<name>/` of the HDF5 file `h5` (escaped).
fn render_walls(
    out: &mut String,
    indent: usize,
    h5: &str,
    scene: &WallScene,
    walls: &[Wall],
    time: Option<f64>,
) {
    let pad = " ".repeat(indent);
    let _ = writeln!(
        out,
        "{pad}<Grid Name=\"walls\" GridType=\"Collection\" CollectionType=\"Spatial\">"
    );
    if let Some(t) = time {
        let _ = writeln!(out, "{pad}  <Time Value=\"{t}\"/>");
    }
    for (wall, name) in walls.iter().zip(&scene.names) {
        if let WallShape::Mesh { mesh, pose } = &wall.shape {
            render_mesh(out, &pad, h5, name, mesh, pose);
            continue;
        }
        let surface = tessellate(wall, &scene.domain);
        if surface.triangles.is_empty() {
            continue; // wholly outside the box: nothing to draw
        }
        let nt = surface.triangles.len();
        open_surface(out, &pad, name, nt);
        let _ = write!(
            out,
            "{pad}      <DataItem Dimensions=\"{nt} 3\" NumberType=\"UInt\" Precision=\"4\" Format=\"XML\">"
        );
        for t in &surface.triangles {
            let _ = write!(out, "{} {} {} ", t[0], t[1], t[2]);
        }
        let _ = writeln!(out, "</DataItem>\n{pad}    </Topology>");
        let _ = writeln!(out, "{pad}    <Geometry GeometryType=\"XYZ\">");
        inline_points(out, &pad, surface.points.iter().copied());
        let _ = writeln!(out, "{pad}    </Geometry>\n{pad}  </Grid>");
    }
    let _ = writeln!(out, "{pad}</Grid>");
}

/// A wall's `Uniform` grid opened, up to its topology's data item.
fn open_surface(out: &mut String, pad: &str, name: &str, triangles: usize) {
    let _ = writeln!(
        out,
        "{pad}  <Grid Name=\"{}\" GridType=\"Uniform\">\n{pad}    <Topology TopologyType=\"Triangle\" NumberOfElements=\"{triangles}\">",
        escape(name)
    );
}

/// A data item of `points`, written inline.
fn inline_points(out: &mut String, pad: &str, points: impl ExactSizeIterator<Item = DVec3>) {
    let _ = write!(
        out,
        "{pad}      <DataItem Dimensions=\"{} 3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">",
        points.len()
    );
    for p in points {
        let _ = write!(out, "{} {} {} ", p.x, p.y, p.z);
    }
    let _ = writeln!(out, "</DataItem>");
}

/// A mesh wall's grid: its triangles from the HDF5 file, its points from
/// the file where the mesh is at rest, else placed and inline.
fn render_mesh(out: &mut String, pad: &str, h5: &str, name: &str, mesh: &TriMesh, pose: &Pose) {
    let (nt, np) = (mesh.triangles().len(), mesh.vertices().len());
    let group = format!("{h5}:/{WALL_MESHES}/{}", escape(name));
    open_surface(out, pad, name, nt);
    let _ = writeln!(
        out,
        "{pad}      <DataItem Dimensions=\"{nt} 3\" NumberType=\"UInt\" Precision=\"4\" Format=\"HDF\">{group}/triangles</DataItem>\n{pad}    </Topology>"
    );
    let _ = writeln!(out, "{pad}    <Geometry GeometryType=\"XYZ\">");
    if pose.is_rest() {
        let _ = writeln!(
            out,
            "{pad}      <DataItem Dimensions=\"{np} 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">{group}/points</DataItem>"
        );
    } else {
        inline_points(out, pad, mesh.vertices().iter().map(|&v| pose.place(v)));
    }
    let _ = writeln!(out, "{pad}    </Geometry>\n{pad}  </Grid>");
}

/// One frame's `Uniform` grid: time, topology, geometry and attributes, its
/// data in the HDF5 file `h5_file_name`, its connectivity from a vertex index
/// of `vertex_count` entries.
#[must_use]
pub fn frame_grid(h5_file_name: &str, frame: &XdmfFrame, vertex_count: usize) -> String {
    let h5 = escape(h5_file_name);
    let (step, time, n, fields) = frame;
    let group = frame_path(*step);
    let data = |name: &str| format!("{h5}:{group}/{}", escape(name));
    let (scalar, vector) = (n.to_string(), format!("{n} 3"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "      <Grid Name=\"step {step}\" GridType=\"Uniform\">"
    );
    // `{}` on f64 prints the shortest text that reads back to the same value.
    let _ = writeln!(out, "        <Time Value=\"{time}\"/>");
    render_topology(&mut out, &h5, *n, vertex_count);
    out.push_str("        <Geometry GeometryType=\"XYZ\">\n");
    data_item(&mut out, 10, &vector, Num::F64, &data(POSITION));
    out.push_str("        </Geometry>\n");
    for (name, num) in [(RADIUS, Num::F64), (ID, Num::U64), (MATERIAL, Num::U32)] {
        attribute(&mut out, name, "Scalar", &scalar, num, &data(name));
    }
    for name in fields {
        if name == FROZEN {
            attribute(&mut out, name, "Scalar", &scalar, Num::U8, &data(name));
        } else {
            attribute(&mut out, name, "Vector", &vector, Num::F64, &data(name));
        }
    }
    out.push_str("      </Grid>\n");
    out
}

/// A `Polyvertex` topology whose connectivity is the first `n` entries of the shared
/// vertex index (`vertex_count` long): a hyperslab with start 0, stride 1, count `n`.
fn render_topology(out: &mut String, h5: &str, n: usize, vertex_count: usize) {
    let _ = writeln!(
        out,
        "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{n}\" \
         NodesPerElement=\"1\">"
    );
    let _ = writeln!(
        out,
        "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"{n}\" Type=\"HyperSlab\">"
    );
    let _ = writeln!(
        out,
        "            <DataItem Dimensions=\"3 1\" NumberType=\"Int\" Format=\"XML\">\
         0 1 {n}</DataItem>"
    );
    let index = format!("{h5}:/{VERTEX_INDEX}");
    data_item(out, 12, &vertex_count.to_string(), Num::I64, &index);
    out.push_str("          </DataItem>\n");
    out.push_str("        </Topology>\n");
}

/// A node-centred `Attribute` read from one HDF5 dataset.
fn attribute(out: &mut String, name: &str, kind: &str, dims: &str, num: Num, source: &str) {
    let _ = writeln!(
        out,
        "        <Attribute Name=\"{}\" AttributeType=\"{kind}\" Center=\"Node\">",
        escape(name)
    );
    data_item(out, 10, dims, num, source);
    out.push_str("        </Attribute>\n");
}

/// A `DataItem` read from the HDF5 dataset `source` (`file:/path`, already escaped).
fn data_item(out: &mut String, indent: usize, dims: &str, num: Num, source: &str) {
    let (number_type, precision) = num.xdmf();
    let _ = writeln!(
        out,
        "{:indent$}<DataItem Dimensions=\"{dims}\" NumberType=\"{number_type}\" \
         Precision=\"{precision}\" Format=\"HDF\">{source}</DataItem>",
        ""
    );
}

/// `text` with the five XML special characters replaced by entities.
fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            _ => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use quick_xml::events::Event;
    use quick_xml::Reader;

    /// Parses `xml` completely (quick-xml checks that end tags match start tags) and
    /// returns the names of the elements in document order.
    pub(crate) fn element_names(xml: &str) -> Vec<String> {
        let mut reader = Reader::from_str(xml);
        let mut names = Vec::new();
        let mut depth = 0usize;
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Start(e) => {
                    depth += 1;
                    names.push(String::from_utf8_lossy(e.name().as_ref()).into_owned());
                }
                Event::Empty(e) => {
                    names.push(String::from_utf8_lossy(e.name().as_ref()).into_owned())
                }
                Event::End(_) => depth -= 1,
                Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced tags");
        names
    }

    pub(crate) fn frames() -> Vec<XdmfFrame> {
        vec![
            (
                200,
                0.002,
                5,
                vec!["frozen".into(), "velocity".into(), "omega".into()],
            ),
            (100, 0.001, 4, vec!["velocity".into()]),
            (0, 0.0, 0, vec![]),
        ]
    }

    #[test]
    fn document_is_well_formed_and_ordered_by_step() {
        let xml = render("run&co.h5", &frames(), None, 5).text;
        let names = element_names(&xml);
        assert_eq!(names.iter().filter(|n| *n == "Grid").count(), 3);
        assert_eq!(
            names.iter().filter(|n| *n == "Attribute").count(),
            (3 + 3) + (3 + 1)
        );
        let first = xml.find("/frames/000000100/position").unwrap();
        let second = xml.find("/frames/000000200/position").unwrap();
        assert!(first < second);
        assert!(xml.contains("run&amp;co.h5:/frames/000000200/omega"));
        assert!(xml.contains("<Time Value=\"0.001\"/>"));
        assert!(!xml.contains("000000000"), "the empty frame is left out");
    }

    #[test]
    fn number_types_match_the_datasets() {
        let xml = render("run.h5", &frames(), None, 5).text;
        let item = |name: &str| {
            let start = xml.find(&format!("Attribute Name=\"{name}\"")).unwrap();
            xml[start..].lines().nth(1).unwrap().to_owned()
        };
        assert!(item("id").contains("NumberType=\"UInt\" Precision=\"8\""));
        assert!(item("material").contains("NumberType=\"UInt\" Precision=\"4\""));
        assert!(item("frozen").contains("NumberType=\"UChar\" Precision=\"1\""));
        assert!(item("radius").contains("NumberType=\"Float\" Precision=\"8\""));
        assert!(
            item("velocity").contains("Dimensions=\"4 3\""),
            "first frame listed is step 100"
        );
        // The connectivity hyperslab reads from an index of the length given.
        assert!(xml.contains("Dimensions=\"5\" NumberType=\"Int\" Precision=\"8\""));
        let longer = render("run.h5", &frames(), None, 8).text;
        assert!(longer.contains("Dimensions=\"8\" NumberType=\"Int\" Precision=\"8\""));
    }

    #[test]
    fn sections_double_to_4_mib_then_grow_by_4_mib() {
        assert_eq!(section_len(0), 64 << 10);
        assert_eq!(section_len((64 << 10) - 1), 64 << 10);
        assert_eq!(section_len(64 << 10), 128 << 10);
        assert_eq!(section_len(3 << 20), 4 << 20);
        assert_eq!(section_len((4 << 20) - 1), 4 << 20);
        assert_eq!(section_len(4 << 20), 8 << 20);
        assert_eq!(section_len((8 << 20) + 5), 12 << 20);
        // Every section leaves room for the closing newline, and no room
        // reaches 4 MiB.
        for used in [0, 1, 1000, 65_535, 65_536, 5_000_000, 40_000_000] {
            let len = section_len(used);
            assert!(len > used && len - used <= 4 << 20, "{used}: {len}");
        }
    }

    #[test]
    fn rooms_are_whitespace_where_the_sections_say() {
        for walls in [None, Some(scene(false)), Some(scene(true))] {
            let doc = render("run.h5", &frames(), walls.as_ref(), 5);
            element_names(&doc.text);
            let mut sections = vec![doc.particles];
            sections.extend(doc.walls);
            assert_eq!(
                doc.walls.is_some(),
                walls.is_some_and(|w| !w.moving.is_empty())
            );
            for s in sections {
                assert_eq!(s.end - s.start, section_len(s.room - s.start));
                let room = &doc.text[s.room..s.end];
                assert!(room.ends_with('\n') && room.trim().is_empty());
                assert!(doc.text[s.end..].starts_with(COLLECTION_CLOSE));
            }
            let p = doc.particles;
            assert!(doc.text[..p.start].ends_with(PARTICLES_OPEN));
            let grids: String = [&frames()[1], &frames()[0]]
                .iter()
                .map(|f| frame_grid("run.h5", f, 5))
                .collect();
            assert_eq!(&doc.text[p.start..p.room], grids);
        }
    }

    #[test]
    fn escape_replaces_special_characters_only() {
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
    }

    pub(crate) fn scene(moving: bool) -> WallScene {
        use crate::geometry::motion::{Motion, Translation};
        use crate::geometry::walls::{Rigid, WallShape};
        let floor = Wall {
            shape: WallShape::Plane {
                point: DVec3::ZERO,
                normal: DVec3::Z,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        let drum = Wall {
            shape: WallShape::Cylinder {
                axis_point: DVec3::splat(0.5),
                axis: DVec3::Y,
                radius: 0.4,
                half_length: 0.25,
                inside: true,
            },
            material: 0,
            rigid: Rigid::REST,
        };
        WallScene {
            walls: vec![floor.clone(), drum],
            moving: if moving {
                vec![MovingWall::new(
                    0,
                    floor,
                    Motion {
                        translation: Translation::Velocity(DVec3::new(0.0, 0.0, 100.0)),
                        turn: None,
                    },
                )]
            } else {
                Vec::new()
            },
            names: vec!["floor".into(), "drum<1>".into()],
            domain: Domain {
                lo: DVec3::ZERO,
                hi: DVec3::ONE,
                periodic: [false; 3],
            },
        }
    }

    use crate::geometry::motion::MovingWall;
    use glam::DVec3;

    #[test]
    fn walls_at_rest_are_drawn_once_as_triangle_surfaces() {
        let xml = render("run.h5", &frames(), Some(&scene(false)), 5).text;
        let names = element_names(&xml);
        // The particles' frames, then one spatial collection of two walls.
        let listed = frames().iter().filter(|f| f.2 > 0).count();
        assert_eq!(
            names.iter().filter(|n| *n == "Topology").count(),
            listed + 2
        );
        assert_eq!(xml.matches("TopologyType=\"Triangle\"").count(), 2);
        assert!(
            xml.contains("<Grid Name=\"floor\"") && xml.contains("<Grid Name=\"drum&lt;1&gt;\"")
        );
        // The floor is the unit square at z = 0: two triangles of a fan
        // of four corners about the centre, four triangles.
        assert!(xml.contains("NumberOfElements=\"4\""), "{xml}");
    }

    #[test]
    fn moving_walls_are_drawn_where_they_are_at_each_frame() {
        let xml = render("run.h5", &frames(), Some(&scene(true)), 5).text;
        element_names(&xml);
        let listed = frames().iter().filter(|f| f.2 > 0).count();
        assert_eq!(xml.matches("<Grid Name=\"floor\"").count(), listed);
        // Each frame's floor lies at z = 100 t.
        for f in frames().iter().filter(|f| f.2 > 0) {
            let z = 100.0 * f.1;
            let corner = format!("0 0 {z} ");
            assert!(xml.contains(&format!("<Time Value=\"{}\"/>", f.1)));
            assert!(xml.contains(&corner), "no floor corner at z = {z}");
        }
    }
}
