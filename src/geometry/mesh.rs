//! Triangle-mesh walls (STL): the mesh, its spatial index, where a sphere
//! touches it, and the signed distance insertion uses.
//!
//! # Contacts: one per feature, none counted twice
//!
//! A sphere's contacts with a mesh are found from its *features*: faces
//! (a triangle's interior), edges and vertices, each shared by the
//! triangles around it. Every triangle within reach classifies the centre
//! `x` by the feature that holds its nearest point (a face where `x`
//! projects inside it, else the nearest edge, or a vertex where that
//! edge's nearest point is an end). A feature is a contact when every
//! triangle that has it classifies `x` by it: it is then the nearest point
//! of the whole surface around it, the centre lying in its Voronoi region.
//! (Face, edge and vertex contacts told apart by the region of the
//! centre: Kremmer & Favier, *Int. J. Numer. Meth. Eng.* 51 (2001) 1407;
//! the double contacts at shared edges and vertices this removes: Su, Gu &
//! Xu, *Chem. Eng. Sci.* 66 (2011) 6069. Here the region is decided by
//! the triangles around the feature agreeing, so no angle is compared.) So:
//!
//! - a sphere over a flat triangulated floor has one contact, whatever the
//!   triangulation: the face under it, or, exactly over a shared edge or
//!   vertex, that edge or vertex once;
//! - in a concave corner it has one contact per face, none from the edge
//!   between them (each face claims the centre);
//! - on a convex edge or vertex (a hopper's outlet rim) it has the edge or
//!   vertex, once.
//!
//! Contacts are two-sided: the distance is `|x − q|` to the nearest point
//! `q`, the normal points from `x` towards `q`. (Which side is the
//! particles' matters only to insertion, [`TriMesh::signed_distance`].)
//!
//! # Moving meshes
//!
//! A mesh keeps its triangles where they are at rest; a moving mesh wall
//! carries a [`Pose`], and a sphere is met in the mesh's own frame (its
//! centre moved back by the pose's inverse), the contact then turned and
//! moved forward. The pose is a function of the time alone
//! ([`super::motion`]).

use glam::DVec3;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// The contacts of one sphere with one mesh that keep their history
/// ([`crate::force`]'s mesh contacts): enough for a sphere in the corner of
/// three faces, and one more passing over an edge.
pub const MESH_SLOTS: usize = 4;

/// A feature of a mesh: what a contact's nearest point lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// The interior of triangle `t`.
    Face(u32),
    /// Edge `e` (between two vertices, shared by one or more triangles).
    Edge(u32),
    /// Vertex `v`.
    Vertex(u32),
}

/// One contact of a sphere with a mesh, in the frame the query was made in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshContact {
    /// The feature its nearest point lies on.
    pub feature: Feature,
    /// The nearest point of the mesh.
    pub point: DVec3,
    /// Unit normal from the sphere's centre towards `point`.
    pub n: DVec3,
    /// Distance from the centre to `point`.
    pub dist: f64,
}

/// A short list, on the stack up to `N` items, on the heap beyond.
#[derive(Debug, Clone)]
pub struct SmallList<T: Copy + Default, const N: usize> {
    inline: [T; N],
    len: usize,
    spill: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for SmallList<T, N> {
    fn default() -> Self {
        Self {
            inline: [T::default(); N],
            len: 0,
            spill: Vec::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> SmallList<T, N> {
    /// Append `item`.
    pub fn push(&mut self, item: T) {
        if self.len < N {
            self.inline[self.len] = item;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(item);
        }
        self.len += 1;
    }

    /// Remove and return the last item.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(if self.len < N && self.spill.is_empty() {
            self.inline[self.len]
        } else {
            let item = self.spill.pop().expect("spilled items");
            if self.len == N {
                // Back within the inline part.
                self.inline.copy_from_slice(&self.spill);
                self.spill.clear();
            }
            item
        })
    }

    /// Empty it.
    pub fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    /// The items.
    pub fn as_slice(&self) -> &[T] {
        if self.len <= N {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }

    /// The items, to change.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len <= N {
            &mut self.inline[..self.len]
        } else {
            &mut self.spill
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A sphere's contacts with one mesh (8 on the stack).
pub type Contacts = SmallList<MeshContact, 8>;

impl Default for MeshContact {
    fn default() -> Self {
        MeshContact {
            feature: Feature::Face(0),
            point: DVec3::ZERO,
            n: DVec3::ZERO,
            dist: 0.0,
        }
    }
}

/// A triangle classified by one triangle: the feature holding its point
/// nearest to `x`, that point, and the squared distance.
#[derive(Debug, Clone, Copy)]
struct Claim {
    tri: u32,
    feature: Feature,
    point: DVec3,
    d2: f64,
}

/// Why a mesh is refused.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshError(pub String);

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A uniform grid of cells over the mesh's bounding box, each listing the
/// triangles whose bounding boxes overlap it (compressed rows).
#[derive(Debug, Clone, PartialEq)]
struct Grid {
    lo: DVec3,
    /// The mesh's bounding box's high corner (cells are clipped to it).
    hi: DVec3,
    inv_h: f64,
    dims: [usize; 3],
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Grid {
    fn cell_of(&self, p: DVec3) -> [usize; 3] {
        let c = (p - self.lo) * self.inv_h;
        std::array::from_fn(|a| {
            let v = c[a].floor();
            if v <= 0.0 || v.is_nan() {
                0
            } else {
                (v as usize).min(self.dims[a] - 1)
            }
        })
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// A grid over `lo..hi` of the triangles with bounding boxes `boxes`
    /// and mean size `size` (the side of a square of twice their area).
    fn build(lo: DVec3, hi: DVec3, boxes: &[(DVec3, DVec3)], size: f64) -> Grid {
        let n = boxes.len().max(1) as f64;
        let extent = (hi - lo).max(DVec3::splat(1e-300));
        // Cells about a triangle's size (a long, thin triangle crosses
        // several), at most ~4 per triangle.
        let mut h = size.max(1e-300);
        let cells = |h: f64| -> f64 {
            (0..3)
                .map(|a| (extent[a] / h).floor() + 1.0)
                .product::<f64>()
        };
        while cells(h) > 4.0 * n + 64.0 {
            h *= 1.25;
        }
        let dims: [usize; 3] = std::array::from_fn(|a| ((extent[a] / h).floor() as usize) + 1);
        let mut grid = Grid {
            lo,
            hi,
            inv_h: 1.0 / h,
            dims,
            starts: vec![0; dims[0] * dims[1] * dims[2] + 1],
            items: Vec::new(),
        };
        let ranges: Vec<([usize; 3], [usize; 3])> = boxes
            .iter()
            .map(|(a, b)| (grid.cell_of(*a), grid.cell_of(*b)))
            .collect();
        for (a, b) in &ranges {
            for z in a[2]..=b[2] {
                for y in a[1]..=b[1] {
                    for x in a[0]..=b[0] {
                        let c = grid.index([x, y, z]);
                        grid.starts[c + 1] += 1;
                    }
                }
            }
        }
        for i in 1..grid.starts.len() {
            grid.starts[i] += grid.starts[i - 1];
        }
        let mut fill = grid.starts.clone();
        grid.items = vec![0; *grid.starts.last().unwrap() as usize];
        for (t, (a, b)) in ranges.iter().enumerate() {
            for z in a[2]..=b[2] {
                for y in a[1]..=b[1] {
                    for x in a[0]..=b[0] {
                        let c = grid.index([x, y, z]);
                        grid.items[fill[c] as usize] = t as u32;
                        fill[c] += 1;
                    }
                }
            }
        }
        grid
    }

    /// The most cells along an axis a grid search takes.
    const SPAN: usize = 3;

    /// Call `f` for each triangle listed in a cell whose box lies within
    /// `r` of `x` (every triangle nearer than `r` among them: the cell
    /// holding its nearest point lists it; some more than once), and
    /// return true; or, where the search box spans more than
    /// [`Grid::SPAN`] cells along an axis, do nothing and return false.
    #[inline]
    fn try_for_each_near(&self, x: DVec3, r: f64, mut f: impl FnMut(u32)) -> bool {
        let (a, b) = (
            self.cell_of(x - DVec3::splat(r)),
            self.cell_of(x + DVec3::splat(r)),
        );
        if (0..3).any(|k| b[k] - a[k] >= Self::SPAN) {
            return false;
        }
        let r2 = r * r;
        // The slabs' squared gaps along each axis, once.
        let mut gaps = [[0.0; Self::SPAN]; 3];
        for k in 0..3 {
            for i in a[k]..=b[k] {
                gaps[k][i - a[k]] = self.gap2(x, k, i);
            }
        }
        for z in a[2]..=b[2] {
            let gz = gaps[2][z - a[2]];
            if gz >= r2 {
                continue;
            }
            for y in a[1]..=b[1] {
                let gy = gz + gaps[1][y - a[1]];
                if gy >= r2 {
                    continue;
                }
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x_ in a[0]..=b[0] {
                    if gy + gaps[0][x_ - a[0]] >= r2 {
                        continue;
                    }
                    let c = row + x_;
                    for &t in &self.items[self.starts[c] as usize..self.starts[c + 1] as usize] {
                        f(t);
                    }
                }
            }
        }
        true
    }

    /// The squared distance from `x` to the slab of cells `i` along
    /// `axis`, the slab clipped to the mesh's bounding box.
    #[inline]
    fn gap2(&self, x: DVec3, axis: usize, i: usize) -> f64 {
        let h = 1.0 / self.inv_h;
        let lo = self.lo[axis] + i as f64 * h;
        let hi = (lo + h).min(self.hi[axis]);
        let d = (lo - x[axis]).max(x[axis] - hi).max(0.0);
        d * d
    }
}

/// A node of the bounding-volume hierarchy: a box and either two
/// children or a run of triangles.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    lo: DVec3,
    hi: DVec3,
    /// Leaf: the first of its `count` triangles in [`Bvh::order`]; inner
    /// (`count = 0`): its first child, the second being `second`.
    start: u32,
    count: u32,
    second: u32,
}

/// A bounding-volume hierarchy of the triangles (median splits along the
/// longest axis of the centroids, up to 4 triangles a leaf), for nearest
/// searches from far away, and for contacts where the grid's cells are
/// finer than the reach.
#[derive(Debug, Clone, PartialEq)]
struct Bvh {
    nodes: Vec<Node>,
    order: Vec<u32>,
}

impl Node {
    /// A node to be filled in.
    const EMPTY: Node = Node {
        lo: DVec3::ZERO,
        hi: DVec3::ZERO,
        start: 0,
        count: 0,
        second: 0,
    };
}

impl Bvh {
    const LEAF: usize = 4;

    fn build(boxes: &[(DVec3, DVec3)]) -> Bvh {
        let mut bvh = Bvh {
            nodes: Vec::with_capacity(boxes.len() / 2 + 1),
            order: (0..boxes.len() as u32).collect(),
        };
        let centre = |t: u32| {
            let (a, b) = boxes[t as usize];
            0.5 * (a + b)
        };
        // Iteratively: (node index, range of `order`).
        bvh.nodes.push(Node::EMPTY);
        let mut todo = vec![(0usize, 0usize, boxes.len())];
        while let Some((node, a, b)) = todo.pop() {
            let tris = &mut bvh.order[a..b];
            let (lo, hi) = tris
                .iter()
                .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &t| {
                    (lo.min(boxes[t as usize].0), hi.max(boxes[t as usize].1))
                });
            bvh.nodes[node].lo = lo;
            bvh.nodes[node].hi = hi;
            if b - a <= Self::LEAF {
                bvh.nodes[node].start = a as u32;
                bvh.nodes[node].count = (b - a) as u32;
                continue;
            }
            let (clo, chi) = tris
                .iter()
                .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &t| {
                    (lo.min(centre(t)), hi.max(centre(t)))
                });
            let ext = chi - clo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = (b - a) / 2;
            tris.select_nth_unstable_by(mid, |&s, &t| {
                centre(s)[axis].total_cmp(&centre(t)[axis]).then(s.cmp(&t))
            });
            let first = bvh.nodes.len();
            bvh.nodes.extend([Node::EMPTY; 2]);
            bvh.nodes[node].start = first as u32;
            bvh.nodes[node].second = first as u32 + 1;
            todo.push((first, a, a + mid));
            todo.push((first + 1, a + mid, b));
        }
        bvh
    }

    /// The squared distance from `x` to node `i`'s box.
    #[inline]
    fn gap2(&self, x: DVec3, i: usize) -> f64 {
        let n = &self.nodes[i];
        gap2_to_box(x, n.lo, n.hi)
    }
}

/// A triangle mesh, welded (corners with the same coordinates are one
/// vertex), with its edges, the triangles around each edge and vertex,
/// the pseudo-normals that give a point's side, and a spatial index.
#[derive(Clone)]
pub struct TriMesh {
    /// Where it came from (the file), for messages.
    pub source: String,
    vertices: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    /// Unit normals, by the right-hand rule over each triangle's corners.
    normals: Vec<DVec3>,
    /// Edges as (lower, higher) vertex index.
    edges: Vec<[u32; 2]>,
    /// Each triangle's edges: corner 0–1, 1–2, 2–0.
    tri_edges: Vec<[u32; 3]>,
    edge_tri_starts: Vec<u32>,
    edge_tris: Vec<u32>,
    vertex_tri_starts: Vec<u32>,
    vertex_tris: Vec<u32>,
    /// Sums of the face normals around each edge (its side).
    edge_normals: Vec<DVec3>,
    /// Angle-weighted sums of the face normals around each vertex
    /// (Bærentzen & Aanæs, IEEE TVCG 11 (2005) 243).
    vertex_normals: Vec<DVec3>,
    lo: DVec3,
    hi: DVec3,
    /// Each triangle's bounding box.
    boxes: Vec<[DVec3; 2]>,
    grid: Grid,
    bvh: Bvh,
    /// The length scale for rounding tolerances (the bounding box's diagonal).
    scale: f64,
    /// Contacts whose normals' cosine is at least this are one (the
    /// crease angle's cosine; [`TriMesh::set_crease_angle`]).
    crease_cos: f64,
    /// The mesh as read.
    whole: Whole,
    /// For a part ([`TriMesh::near`]), its indices in the whole, by which
    /// contacts are ordered and named, so that every rank orders them
    /// alike.
    ids: Option<WholeIds>,
}

impl fmt::Debug for TriMesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The whole mesh, hashed (a part kept by one rank prints as its
        // whole): a config's fingerprint prints walls with `{:?}`, and must
        // change when the mesh does, whatever the rank count.
        write!(
            f,
            "TriMesh {{ source: {:?}, vertices: {}, triangles: {}, hash: {:016x}, crease_cos: {:?} }}",
            self.source, self.whole.vertices, self.whole.triangles, self.whole.hash, self.crease_cos
        )
    }
}

impl PartialEq for TriMesh {
    fn eq(&self, other: &Self) -> bool {
        self.whole == other.whole
            && self.vertices == other.vertices
            && self.triangles == other.triangles
            && self.crease_cos == other.crease_cos
    }
}

/// What identifies a mesh as read, kept by the parts of it a rank keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Whole {
    vertices: usize,
    triangles: usize,
    /// FNV-1a of the vertices' bits and the triangles' indices.
    hash: u64,
}

/// A part's indices in its whole mesh: of each triangle, edge and vertex.
#[derive(Debug, Clone, PartialEq)]
struct WholeIds {
    tri: Vec<u32>,
    edge: Vec<u32>,
    vertex: Vec<u32>,
}

/// The crease angle (degrees) below which two contacts count as one.
pub const DEFAULT_CREASE_ANGLE: f64 = 20.0;

/// The relative area below which a triangle counts as degenerate: twice its
/// area against the square of its longest edge.
const DEGENERATE: f64 = 1e-10;

impl TriMesh {
    /// A mesh of `corners` (three points a triangle, in the order that
    /// gives its normal by the right-hand rule), from `source` (named in
    /// errors). Refuses non-finite corners, degenerate triangles, and two
    /// triangles that share an edge but face opposite ways.
    pub fn new(source: &str, corners: &[[DVec3; 3]]) -> Result<TriMesh, MeshError> {
        let err = |msg: String| MeshError(format!("{source}: {msg}"));
        if corners.is_empty() {
            return Err(err("the mesh has no triangles".into()));
        }
        let mut index: HashMap<[u64; 3], u32> = HashMap::new();
        let mut vertices = Vec::new();
        let mut triangles = Vec::with_capacity(corners.len());
        let mut normals = Vec::with_capacity(corners.len());
        for (t, c) in corners.iter().enumerate() {
            if let Some(j) = c.iter().position(|p| !p.is_finite()) {
                return Err(err(format!(
                    "triangle {t} (counting from 0): corner {j} is not finite: {:?}",
                    c[j].to_array()
                )));
            }
            let cross = (c[1] - c[0]).cross(c[2] - c[0]);
            let longest = [(c[1] - c[0]), (c[2] - c[1]), (c[0] - c[2])]
                .iter()
                .map(|e| e.length_squared())
                .fold(0.0, f64::max);
            if cross.length() <= DEGENERATE * longest {
                return Err(err(format!(
                    "triangle {t} (counting from 0) is degenerate: its corners {:?}, {:?}, {:?} coincide or lie on a line",
                    c[0].to_array(),
                    c[1].to_array(),
                    c[2].to_array()
                )));
            }
            let ids = c.map(|p| {
                // +0 and −0 are one coordinate.
                let key = (p + DVec3::ZERO).to_array().map(f64::to_bits);
                *index.entry(key).or_insert_with(|| {
                    vertices.push(p);
                    (vertices.len() - 1) as u32
                })
            });
            if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
                return Err(err(format!(
                    "triangle {t} (counting from 0) is degenerate: two of its corners coincide"
                )));
            }
            triangles.push(ids);
            // Divided by its length (not times its reciprocal), so an
            // axis-aligned face has an exact unit normal.
            normals.push(cross / cross.length());
        }
        // Edges, keyed by their vertex pair, in order of first appearance.
        let mut edge_of: HashMap<[u32; 2], u32> = HashMap::new();
        let mut edges = Vec::new();
        let mut tri_edges = Vec::with_capacity(triangles.len());
        // For the orientation check: the first triangle to run along each
        // edge, and which way.
        let mut runs: Vec<(u32, bool, u32)> = Vec::new();
        for (t, tri) in triangles.iter().enumerate() {
            let mut te = [0u32; 3];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let key = [a.min(b), a.max(b)];
                let e = *edge_of.entry(key).or_insert_with(|| {
                    edges.push(key);
                    runs.push((t as u32, a < b, 0));
                    (edges.len() - 1) as u32
                });
                let run = &mut runs[e as usize];
                run.2 += 1;
                if run.0 != t as u32 && run.2 == 2 && run.1 == (a < b) {
                    return Err(err(format!(
                        "triangles {} and {t} (counting from 0) share the edge {:?}–{:?} but face opposite ways (their corners run round it the same way); order every triangle's corners so that its normal (right-hand rule) points to the particles' side",
                        run.0,
                        vertices[a as usize].to_array(),
                        vertices[b as usize].to_array()
                    )));
                }
                te[k] = e;
            }
            tri_edges.push(te);
        }
        drop(edge_of);
        drop(index);
        let (edge_tri_starts, edge_tris) = compressed_rows(edges.len(), || {
            tri_edges
                .iter()
                .enumerate()
                .flat_map(|(t, te)| te.map(|e| (e as usize, t as u32)))
        });
        let (vertex_tri_starts, vertex_tris) = compressed_rows(vertices.len(), || {
            triangles
                .iter()
                .enumerate()
                .flat_map(|(t, tri)| tri.map(|v| (v as usize, t as u32)))
        });
        let mut edge_normals = vec![DVec3::ZERO; edges.len()];
        let mut vertex_normals = vec![DVec3::ZERO; vertices.len()];
        for (t, tri) in triangles.iter().enumerate() {
            for k in 0..3 {
                edge_normals[tri_edges[t][k] as usize] += normals[t];
                let p = |j: usize| vertices[tri[(k + j) % 3] as usize];
                let angle = (p(1) - p(0)).angle_between(p(2) - p(0));
                vertex_normals[tri[k] as usize] += angle * normals[t];
            }
        }
        let lo = vertices.iter().copied().fold(DVec3::INFINITY, DVec3::min);
        let hi = vertices
            .iter()
            .copied()
            .fold(DVec3::NEG_INFINITY, DVec3::max);
        let boxes: Vec<(DVec3, DVec3)> = triangles
            .iter()
            .map(|tri| {
                let p = tri.map(|i| vertices[i as usize]);
                (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]))
            })
            .collect();
        let size = triangles
            .iter()
            .map(|tri| {
                let p = tri.map(|i| vertices[i as usize]);
                (p[1] - p[0]).cross(p[2] - p[0]).length().sqrt()
            })
            .sum::<f64>()
            / triangles.len() as f64;
        let grid = Grid::build(lo, hi, &boxes, size);
        let bvh = Bvh::build(&boxes);
        let mut hash = crate::state::snapshot::Fnv::default();
        for v in &vertices {
            v.to_array().iter().for_each(|c| hash.word(c.to_bits()));
        }
        for t in &triangles {
            t.iter().for_each(|&i| hash.word(i as u64));
        }
        let hash = hash.finish();
        let (vertices_len, triangles_len) = (vertices.len(), triangles.len());
        Ok(TriMesh {
            source: source.to_owned(),
            scale: (hi - lo).length(),
            vertices,
            triangles,
            normals,
            edges,
            tri_edges,
            edge_tri_starts,
            edge_tris,
            vertex_tri_starts,
            vertex_tris,
            edge_normals,
            vertex_normals,
            lo,
            hi,
            boxes: boxes.iter().map(|&(a, b)| [a, b]).collect(),
            grid,
            bvh,
            crease_cos: DEFAULT_CREASE_ANGLE.to_radians().cos(),
            whole: Whole {
                vertices: vertices_len,
                triangles: triangles_len,
                hash,
            },
            ids: None,
        })
    }

    /// Read an STL file (ASCII or binary), each corner `c` placed at
    /// `offset + scale · c`.
    pub fn read_stl(path: &Path, scale: f64, offset: DVec3) -> Result<TriMesh, MeshError> {
        let name = path.display().to_string();
        let mut file = std::fs::File::open(path)
            .map_err(|e| MeshError(format!("{name}: cannot open the mesh file: {e}")))?;
        let reader = stl_io::create_stl_reader(&mut file).map_err(|e| {
            MeshError(format!(
                "{name}: not a readable STL file (ASCII or binary): {e}"
            ))
        })?;
        let mut corners = Vec::with_capacity(reader.size_hint().0);
        for (t, tri) in reader.enumerate() {
            let tri = tri.map_err(|e| {
                MeshError(format!(
                    "{name}: triangle {t} (counting from 0) cannot be read: {e}"
                ))
            })?;
            corners.push(
                tri.vertices
                    .map(|v| offset + scale * DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64)),
            );
        }
        TriMesh::new(&name, &corners)
    }

    /// The part of the mesh a rank needs whose particles lie in `lo..hi`:
    /// the triangles whose bounding boxes meet the box, with their
    /// indices in the whole (contacts are ordered and named by those). A
    /// sphere within the box meets the part exactly as the whole when
    /// every triangle within its reach meets the box (take the box wide
    /// enough). `None` where no triangle meets it.
    pub fn near(&self, lo: DVec3, hi: DVec3) -> Option<TriMesh> {
        let kept: Vec<u32> = (0..self.triangles.len() as u32)
            .filter(|&t| {
                let [a, b] = self.boxes[t as usize];
                a.cmple(hi).all() && b.cmpge(lo).all()
            })
            .collect();
        if kept.is_empty() {
            return None;
        }
        let corners: Vec<[DVec3; 3]> = kept.iter().map(|&t| self.triangle(t as usize)).collect();
        let mut part = TriMesh::new(&self.source, &corners).expect("a part of a valid mesh");
        // Triangle k of the part is whole triangle kept[k], corner for
        // corner: its vertices and edges are the whole's at the same places.
        let up = |t: u32| self.ids.as_ref().map_or(t, |ids| ids.tri[t as usize]);
        let mut ids = WholeIds {
            tri: kept.iter().map(|&t| up(t)).collect(),
            edge: vec![0; part.edges.len()],
            vertex: vec![0; part.vertices.len()],
        };
        for (k, &t) in kept.iter().enumerate() {
            for c in 0..3 {
                let v = self.triangles[t as usize][c];
                let e = self.tri_edges[t as usize][c];
                ids.vertex[part.triangles[k][c] as usize] =
                    self.ids.as_ref().map_or(v, |w| w.vertex[v as usize]);
                ids.edge[part.tri_edges[k][c] as usize] =
                    self.ids.as_ref().map_or(e, |w| w.edge[e as usize]);
            }
        }
        part.ids = Some(ids);
        part.whole = self.whole;
        part.crease_cos = self.crease_cos;
        Some(part)
    }

    /// `f` named by its index in the whole mesh.
    #[inline]
    fn global(&self, f: Feature) -> Feature {
        let Some(ids) = &self.ids else {
            return f;
        };
        match f {
            Feature::Face(t) => Feature::Face(ids.tri[t as usize]),
            Feature::Edge(e) => Feature::Edge(ids.edge[e as usize]),
            Feature::Vertex(v) => Feature::Vertex(ids.vertex[v as usize]),
        }
    }

    /// Triangle `t`'s index in the whole mesh.
    #[inline]
    fn global_tri(&self, t: u32) -> u32 {
        self.ids.as_ref().map_or(t, |ids| ids.tri[t as usize])
    }

    /// Call `f` once for each triangle whose bounding box lies nearer than
    /// the root of `r2` to `x`, down the hierarchy (the boxes farther
    /// pruned whole).
    #[inline]
    fn for_each_near(&self, x: DVec3, r2: f64, mut f: impl FnMut(u32)) {
        let box_gap2 = |t: u32| {
            let [lo, hi] = self.boxes[t as usize];
            gap2_to_box(x, lo, hi)
        };
        // The grid, where the search box spans few cells (a triangle may
        // be listed in several: each is called once).
        let mut seen = SmallList::<u32, 32>::default();
        let gridded = self.grid.try_for_each_near(x, r2.sqrt(), |t| {
            if box_gap2(t) < r2 && !seen.as_slice().contains(&t) {
                seen.push(t);
                f(t);
            }
        });
        if gridded {
            return;
        }
        // Cells much finer than the reach: down the hierarchy instead.
        let mut stack: SmallList<u32, 64> = SmallList::default();
        stack.push(0);
        while let Some(i) = stack.pop() {
            if self.bvh.gap2(x, i as usize) >= r2 {
                continue;
            }
            let node = self.bvh.nodes[i as usize];
            if node.count == 0 {
                stack.push(node.second);
                stack.push(node.start);
                continue;
            }
            for &t in &self.bvh.order[node.start as usize..(node.start + node.count) as usize] {
                if box_gap2(t) < r2 {
                    f(t);
                }
            }
        }
    }

    /// Whether the bounding box comes within `reach` of `x` along every
    /// axis (else no triangle does).
    #[inline]
    pub fn within(&self, x: DVec3, reach: f64) -> bool {
        let r = DVec3::splat(reach);
        !((x + r).cmplt(self.lo).any() || (x - r).cmpgt(self.hi).any())
    }

    /// The bytes its arrays hold (what each rank keeps of it).
    pub fn heap_bytes(&self) -> usize {
        fn b<T>(v: &[T]) -> usize {
            std::mem::size_of_val(v)
        }
        b(&self.vertices)
            + b(&self.triangles)
            + b(&self.normals)
            + b(&self.edges)
            + b(&self.tri_edges)
            + b(&self.edge_tri_starts)
            + b(&self.edge_tris)
            + b(&self.vertex_tri_starts)
            + b(&self.vertex_tris)
            + b(&self.edge_normals)
            + b(&self.vertex_normals)
            + b(&self.boxes)
            + b(&self.grid.starts)
            + b(&self.grid.items)
            + b(&self.bvh.nodes)
            + b(&self.bvh.order)
            + self
                .ids
                .as_ref()
                .map_or(0, |ids| b(&ids.tri) + b(&ids.edge) + b(&ids.vertex))
    }

    /// Merge a sphere's contacts whose normals differ by less than
    /// `degrees` into the deepest: faces meeting at a shallower concave
    /// crease are one surface (a tessellated cylinder or cone), steeper ones
    /// a corner, one contact per face.
    pub fn set_crease_angle(&mut self, degrees: f64) {
        self.crease_cos = degrees.to_radians().cos();
    }

    /// The vertices.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// The triangles (indices into [`Self::vertices`]).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The bounding box of the vertices.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        (self.lo, self.hi)
    }

    fn corner(&self, t: u32, k: usize) -> DVec3 {
        self.vertices[self.triangles[t as usize][k] as usize]
    }

    /// The feature of triangle `t` nearest to `x`, with the nearest point.
    #[inline]
    fn claim(&self, t: u32, x: DVec3) -> Claim {
        let tri = self.triangles[t as usize];
        let n = self.normals[t as usize];
        let p = tri.map(|i| self.vertices[i as usize]);
        // Inside: `x` projects strictly within every edge.
        let inside = (0..3).all(|k| {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            (b - a).cross(x - a).dot(n) > 0.0
        });
        if inside {
            let h = (x - p[0]).dot(n);
            let point = x - h * n;
            return Claim {
                tri: t,
                feature: Feature::Face(t),
                point,
                d2: h * h,
            };
        }
        // Else the nearest point of the boundary, each edge measured from
        // its lower vertex, so the triangles around it agree to the bit.
        let mut best = Claim {
            tri: t,
            feature: Feature::Face(t),
            point: DVec3::ZERO,
            d2: f64::INFINITY,
        };
        for k in 0..3 {
            let e = self.tri_edges[t as usize][k];
            let [ia, ib] = self.edges[e as usize];
            let (a, b) = (self.vertices[ia as usize], self.vertices[ib as usize]);
            let ab = b - a;
            let u = (x - a).dot(ab) / ab.length_squared();
            let (feature, point) = if u <= 0.0 {
                (Feature::Vertex(ia), a)
            } else if u >= 1.0 {
                (Feature::Vertex(ib), b)
            } else {
                (Feature::Edge(e), a + u * ab)
            };
            let d2 = (x - point).length_squared();
            if d2 < best.d2 {
                best = Claim {
                    tri: t,
                    feature,
                    point,
                    d2,
                };
            }
        }
        best
    }

    /// The triangles that have `feature`.
    fn around(&self, feature: Feature) -> &[u32] {
        match feature {
            Feature::Face(_) => &[],
            Feature::Edge(e) => {
                let e = e as usize;
                &self.edge_tris
                    [self.edge_tri_starts[e] as usize..self.edge_tri_starts[e + 1] as usize]
            }
            Feature::Vertex(v) => {
                let v = v as usize;
                &self.vertex_tris
                    [self.vertex_tri_starts[v] as usize..self.vertex_tri_starts[v + 1] as usize]
            }
        }
    }

    /// The contacts of a sphere centred at `x` (in the mesh's frame) with
    /// every part of the mesh nearer than `reach`, one per feature, in
    /// order of feature (see the module's rules), those across a shallow
    /// crease merged into the deepest, into `out`.
    pub fn contacts(&self, x: DVec3, reach: f64, out: &mut Contacts) {
        out.clear();
        if !self.within(x, reach) {
            return;
        }
        // The triangles whose bounding boxes come within reach (most
        // spheres near a mesh's box have none: they stop here).
        let r2 = reach * reach;
        let mut near = SmallList::<u32, 32>::default();
        self.for_each_near(x, r2, |t| near.push(t));
        self.contacts_of_near(x, r2, near.as_slice(), out);
    }

    /// Appends to `out` the triangles whose bounding boxes lie nearer than
    /// `reach` to `x`: a sphere's candidates for [`Self::contacts_among`]
    /// while it stays within `reach` less its radius of `x`.
    pub fn near_triangles(&self, x: DVec3, reach: f64, out: &mut Vec<u32>) {
        if self.within(x, reach) {
            self.for_each_near(x, reach * reach, |t| out.push(t));
        }
    }

    /// [`Self::contacts`] among `candidates` alone, without the search:
    /// the same contacts, to the bit, where `candidates` holds every
    /// triangle whose bounding box lies within `reach` of `x` (as
    /// [`Self::near_triangles`] found them with a reach larger by at least
    /// how far the sphere has moved since). The contacts do not depend on
    /// the order the triangles are found in: their claims are sorted by
    /// feature and triangle.
    pub fn contacts_among(&self, x: DVec3, reach: f64, candidates: &[u32], out: &mut Contacts) {
        out.clear();
        let r2 = reach * reach;
        let mut near = SmallList::<u32, 32>::default();
        for &t in candidates {
            let [lo, hi] = self.boxes[t as usize];
            if gap2_to_box(x, lo, hi) < r2 {
                near.push(t);
            }
        }
        self.contacts_of_near(x, r2, near.as_slice(), out);
    }

    /// The contacts of a sphere at `x` among the triangles `near` (those
    /// whose bounding boxes lie within the root of `r2`), into `out`
    /// (cleared).
    fn contacts_of_near(&self, x: DVec3, r2: f64, near: &[u32], out: &mut Contacts) {
        out.clear();
        if near.is_empty() {
            return;
        }
        let mut claims = SmallList::<Claim, 16>::default();
        for &t in near {
            let c = self.claim(t, x);
            if c.d2 < r2 {
                claims.push(c);
            }
        }
        let claims = claims.as_mut_slice();
        // In the whole mesh's order, the same on every rank.
        claims.sort_unstable_by_key(|c| (self.global(c.feature), self.global_tri(c.tri)));
        let mut last: Option<Feature> = None;
        for i in 0..claims.len() {
            let c = claims[i];
            if last == Some(c.feature) {
                continue;
            }
            last = Some(c.feature);
            // Every triangle around the feature must claim `x` by it.
            let agreed = match c.feature {
                Feature::Face(_) => true,
                f => {
                    let mine = claims.iter().filter(|o| o.feature == f).count();
                    mine == self.around(f).len()
                }
            };
            if !agreed {
                continue;
            }
            let d = c.point - x;
            let dist = c.d2.sqrt();
            let n = match c.feature {
                Feature::Face(t) => {
                    let nt = self.normals[t as usize];
                    if (x - c.point).dot(nt) >= 0.0 {
                        -nt
                    } else {
                        nt
                    }
                }
                _ if dist > 0.0 => d / dist,
                // The centre on an edge or a vertex: towards the surface's
                // back, the only direction defined there.
                Feature::Edge(e) => -self.edge_normals[e as usize].normalize_or(DVec3::Z),
                Feature::Vertex(v) => -self.vertex_normals[v as usize].normalize_or(DVec3::Z),
            };
            // Two triangles that both claim a point of their shared edge as
            // inside (rounding): the one contact once.
            let tol = 1e-12 * self.scale;
            let twin = out
                .as_slice()
                .iter()
                .any(|o| (o.point - c.point).length() <= tol && o.n.dot(n) >= 1.0 - 1e-12);
            if twin {
                continue;
            }
            let point = if let Feature::Face(_) = c.feature {
                x + dist * n
            } else {
                c.point
            };
            let contact = MeshContact {
                feature: self.global(c.feature),
                point,
                n,
                dist,
            };
            // Faces meeting at a shallow concave crease (the facets of a
            // tessellated curve): one contact, the deepest, in the place
            // of the first.
            let crease = out
                .as_mut_slice()
                .iter_mut()
                .find(|o| o.n.dot(n) >= self.crease_cos);
            match crease {
                Some(o) if dist < o.dist => *o = contact,
                Some(_) => {}
                None => out.push(contact),
            }
        }
    }

    /// The distance from `x` to the mesh, negative behind it: on the side
    /// its normals point away from, judged at the nearest feature by that
    /// feature's pseudo-normal (a face's normal, the sum of an edge's faces'
    /// normals, a vertex's angle-weighted sum; Bærentzen & Aanæs 2005).
    /// For an open mesh, points beyond its rim take the rim's side.
    pub fn signed_distance(&self, x: DVec3) -> f64 {
        // Branch and bound down the hierarchy, the nearer child first; a
        // box no nearer than the best is skipped only when strictly farther,
        // so ties go to the lowest triangle index whatever the order.
        let mut best: Option<Claim> = None;
        let mut stack: SmallList<u32, 64> = SmallList::default();
        stack.push(0);
        while let Some(i) = stack.pop() {
            let i = i as usize;
            if best.is_some_and(|b| self.bvh.gap2(x, i) > b.d2) {
                continue;
            }
            let node = self.bvh.nodes[i];
            if node.count > 0 {
                let run = &self.bvh.order[node.start as usize..(node.start + node.count) as usize];
                for &t in run {
                    let c = self.claim(t, x);
                    if best.is_none_or(|b| (c.d2, c.tri) < (b.d2, b.tri)) {
                        best = Some(c);
                    }
                }
                continue;
            }
            let (a, b) = (node.start, node.second);
            let (near, far) = if self.bvh.gap2(x, a as usize) <= self.bvh.gap2(x, b as usize) {
                (a, b)
            } else {
                (b, a)
            };
            stack.push(far);
            stack.push(near);
        }
        let b = best.expect("a mesh has triangles");
        let side = match b.feature {
            Feature::Face(t) => self.normals[t as usize],
            Feature::Edge(e) => self.edge_normals[e as usize],
            Feature::Vertex(v) => self.vertex_normals[v as usize],
        };
        let d = b.d2.sqrt();
        if (x - b.point).dot(side) < 0.0 {
            -d
        } else {
            d
        }
    }

    /// Whether some triangle lies nearer than `r` to `x` (a search of the
    /// cells within `r` only).
    pub fn reaches(&self, x: DVec3, r: f64) -> bool {
        if !self.within(x, r) {
            return false;
        }
        let r2 = r * r;
        let mut near = false;
        self.for_each_near(x, r2, |t| {
            near = near || self.claim(t, x).d2 < r2;
        });
        near
    }

    /// Whether a sphere of radius `r` at `x` stays at least `r` from the
    /// mesh and on its particles' side: [`Self::signed_distance`] `≥ r`.
    pub fn clears(&self, x: DVec3, r: f64) -> bool {
        self.signed_distance(x) >= r
    }

    /// The corners of triangle `t`.
    pub fn triangle(&self, t: usize) -> [DVec3; 3] {
        std::array::from_fn(|k| self.corner(t as u32, k))
    }
}

impl Default for Claim {
    fn default() -> Self {
        Claim {
            tri: 0,
            feature: Feature::Face(0),
            point: DVec3::ZERO,
            d2: 0.0,
        }
    }
}

/// The squared distance from `x` to the box `lo..hi` (zero inside).
#[inline]
fn gap2_to_box(x: DVec3, lo: DVec3, hi: DVec3) -> f64 {
    (lo - x).max(x - hi).max(DVec3::ZERO).length_squared()
}

/// Compressed rows of `count` lists from `(list, item)` pairs, the items
/// of each list in the pairs' order: `(starts, items)`.
fn compressed_rows<I: Iterator<Item = (usize, u32)>>(
    count: usize,
    pairs: impl Fn() -> I,
) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32; count + 1];
    for (i, _) in pairs() {
        starts[i + 1] += 1;
    }
    for i in 1..=count {
        starts[i] += starts[i - 1];
    }
    let mut items = vec![0u32; starts[count] as usize];
    let mut fill = starts.clone();
    for (i, t) in pairs() {
        items[fill[i] as usize] = t;
        fill[i] += 1;
    }
    (starts, items)
}

/// Where a moving mesh is: a turn by the angle with sine and cosine `sc`
/// about the unit `axis` through `centre`, then a shift by `shift`. A
/// point `p` of the mesh at rest is at `centre + shift + R (p − centre)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// The turn's point (at rest).
    pub centre: DVec3,
    /// The translation.
    pub shift: DVec3,
    /// The turn's unit axis.
    pub axis: DVec3,
    /// Sine and cosine of the turn's angle.
    pub sc: (f64, f64),
}

impl Pose {
    /// Where the mesh is at rest.
    pub const REST: Pose = Pose {
        centre: DVec3::ZERO,
        shift: DVec3::ZERO,
        axis: DVec3::Z,
        sc: (0.0, 1.0),
    };

    /// Whether this is the place at rest (then no point is moved, to the bit).
    #[inline]
    pub fn is_rest(&self) -> bool {
        self.shift == DVec3::ZERO && self.sc == (0.0, 1.0)
    }

    /// A direction of the mesh at rest, turned as the mesh is.
    #[inline]
    pub fn turn(&self, v: DVec3) -> DVec3 {
        super::motion::rotate(v, self.axis, self.sc)
    }

    /// A point of the mesh at rest, placed.
    #[inline]
    pub fn place(&self, p: DVec3) -> DVec3 {
        self.centre + self.shift + self.turn(p - self.centre)
    }

    /// The point of the mesh at rest that is placed at `x`.
    #[inline]
    pub fn back(&self, x: DVec3) -> DVec3 {
        let (s, c) = self.sc;
        self.centre + super::motion::rotate(x - self.centre - self.shift, self.axis, (-s, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The square `[0, 1]²` at `z = 0`, facing +z, cut along its diagonal.
    fn square() -> TriMesh {
        let (a, b, c, d) = (DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Y);
        TriMesh::new("square", &[[a, b, c], [a, c, d]]).unwrap()
    }

    fn contacts(m: &TriMesh, x: DVec3, r: f64) -> Vec<MeshContact> {
        let mut out = Contacts::default();
        m.contacts(x, r, &mut out);
        out.as_slice().to_vec()
    }

    #[test]
    fn a_flat_mesh_gives_one_contact_wherever_the_sphere_is() {
        let m = square();
        // Over a face.
        let c = contacts(&m, DVec3::new(0.7, 0.2, 0.3), 0.5);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].feature, Feature::Face(0));
        assert_eq!((c[0].dist, c[0].n), (0.3, -DVec3::Z));
        // Exactly over the shared diagonal, and over the shared corner.
        for x in [DVec3::new(0.5, 0.5, 0.3), DVec3::new(0.0, 0.0, 0.3)] {
            let c = contacts(&m, x, 0.5);
            assert_eq!(c.len(), 1, "{x}: {c:?}");
            assert!((c[0].dist - 0.3).abs() < 1e-15 && (c[0].n + DVec3::Z).length() < 1e-15);
        }
        // Beyond the rim: the edge y = 0, once.
        let c = contacts(&m, DVec3::new(0.5, -0.3, 0.4), 0.6);
        assert_eq!(c.len(), 1);
        assert!(matches!(c[0].feature, Feature::Edge(_)));
        assert!((c[0].dist - 0.5).abs() < 1e-15);
        // Out of reach.
        assert!(contacts(&m, DVec3::new(0.5, 0.5, 0.6), 0.5).is_empty());
        // From behind: the same contact, the normal towards the face.
        let c = contacts(&m, DVec3::new(0.7, 0.2, -0.3), 0.5);
        assert_eq!((c.len(), c[0].n), (1, DVec3::Z));
    }

    #[test]
    fn bad_meshes_name_the_triangle() {
        let (a, b) = (DVec3::ZERO, DVec3::X);
        let e = TriMesh::new("m.stl", &[[a, b, 2.0 * b]]).unwrap_err();
        assert!(
            e.0.contains("m.stl: triangle 0") && e.0.contains("degenerate"),
            "{e}"
        );
        let e = TriMesh::new(
            "m.stl",
            &[[a, b, DVec3::Y], [a, b, DVec3::new(0.0, f64::NAN, 0.0)]],
        )
        .unwrap_err();
        assert!(
            e.0.contains("triangle 1") && e.0.contains("not finite"),
            "{e}"
        );
        let e = TriMesh::new("m.stl", &[[a, b, DVec3::Y], [a, b, -DVec3::Y]]).unwrap_err();
        assert!(
            e.0.contains("triangles 0 and 1") && e.0.contains("opposite"),
            "{e}"
        );
        assert!(TriMesh::new("m.stl", &[])
            .unwrap_err()
            .0
            .contains("no triangles"));
    }

    #[test]
    fn the_signed_distance_takes_the_side_of_the_nearest_feature() {
        let m = square();
        assert_eq!(m.signed_distance(DVec3::new(0.3, 0.6, 0.25)), 0.25);
        assert_eq!(m.signed_distance(DVec3::new(0.3, 0.6, -0.25)), -0.25);
        // Beyond the rim, above: the edge, on the front side.
        let d = m.signed_distance(DVec3::new(1.3, 0.5, 0.4));
        assert!((d - 0.5).abs() < 1e-15, "{d}");
        // Far away.
        assert!((m.signed_distance(DVec3::new(0.5, 0.5, -40.0)) + 40.0).abs() < 1e-12);
        assert!(m.clears(DVec3::new(0.5, 0.5, 0.3), 0.3));
        assert!(!m.clears(DVec3::new(0.5, 0.5, 0.3), 0.31));
        assert!(!m.clears(DVec3::new(0.5, 0.5, -3.0), 0.3));
    }

    /// The contacts found among the triangles near where a sphere was
    /// (reach larger by the skin) are those of the full search wherever it
    /// has moved since by less than the skin: faces, edges and vertices of
    /// a bumpy surface, above and below it, on the grid and down the
    /// hierarchy (a mesh finer than the reach), and on a part of a mesh.
    #[test]
    fn contacts_among_the_triangles_found_near_are_those_of_the_search() {
        let skin = 0.03;
        for (mesh, reach) in [(bumps(12), 0.08), (bumps(60), 0.08), (bumps(12), 0.3)] {
            let part = mesh
                .near(DVec3::new(0.3, 0.2, -1.0), DVec3::new(0.8, 0.9, 1.0))
                .unwrap();
            for m in [&mesh, &part] {
                let (mut searched, mut among) = (Contacts::default(), Contacts::default());
                let (mut found, mut compared) = (Vec::new(), 0);
                for i in 0..15 {
                    for j in 0..15 {
                        let (x, y) = (0.35 + 0.4 * i as f64 / 14.0, 0.25 + 0.6 * j as f64 / 14.0);
                        let z = 0.1 * (7.0 * x).sin() * (5.0 * y).cos() + 0.05 * x * y;
                        // Near the surface, and just beyond the reach above and
                        // below it (coming into reach as it moves towards it).
                        let side = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
                        for offset in [0.07 * ((i * j) as f64).sin(), side * (reach + 0.9 * skin)] {
                            let was = DVec3::new(x, y, z + offset);
                            found.clear();
                            m.near_triangles(was, reach + skin, &mut found);
                            // Moved by just under the skin: along each axis, a
                            // diagonal, and towards the surface.
                            let d = 0.999 * skin;
                            let steps = [
                                DVec3::ZERO,
                                DVec3::X * d,
                                -DVec3::Y * d,
                                DVec3::Z * d,
                                DVec3::new(1.0, -1.0, 1.0).normalize() * d,
                                -DVec3::Z * d * offset.signum(),
                            ];
                            for step in steps {
                                let now = was + step;
                                m.contacts(now, reach, &mut searched);
                                m.contacts_among(now, reach, &found, &mut among);
                                assert_eq!(searched.as_slice(), among.as_slice(), "{now}");
                                compared += searched.len();
                            }
                        }
                    }
                }
                assert!(compared > 1000, "{compared} contacts compared");
            }
        }
    }

    /// A bumpy height field `z = f(x, y)` over `[0, 1]²`, `n × n` cells.
    fn bumps(n: usize) -> TriMesh {
        let f = |x: f64, y: f64| 0.1 * (7.0 * x).sin() * (5.0 * y).cos() + 0.05 * x * y;
        let p = |i: usize, j: usize| {
            let (x, y) = (i as f64 / n as f64, j as f64 / n as f64);
            DVec3::new(x, y, f(x, y))
        };
        let mut tris = Vec::new();
        for j in 0..n {
            for i in 0..n {
                tris.push([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
                tris.push([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
            }
        }
        TriMesh::new("bumps", &tris).unwrap()
    }

    #[test]
    fn grid_searches_agree_with_a_search_of_every_triangle() {
        let mut m = bumps(30);
        // Every feature's contact, none merged across creases.
        m.set_crease_angle(0.0);
        let mut seed = 12345u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut out = Contacts::default();
        for k in 0..400 {
            // Near the surface, and (one in four) far from it.
            let spread = if k % 4 == 0 { 4.0 } else { 1.2 };
            let x = DVec3::new(
                spread * (next() - 0.5) + 0.5,
                spread * (next() - 0.5) + 0.5,
                spread * 0.3 * (next() - 0.5),
            );
            let all: Vec<Claim> = (0..m.triangles.len() as u32)
                .map(|t| m.claim(t, x))
                .collect();
            let nearest = all.iter().map(|c| c.d2).fold(f64::INFINITY, f64::min);
            let d = m.signed_distance(x);
            assert_eq!(d.abs(), nearest.sqrt(), "{x}");
            // The contacts within a reach: the same features as agreed over
            // every triangle.
            let reach = 0.08;
            m.contacts(x, reach, &mut out);
            let mut want: Vec<Feature> = all
                .iter()
                .filter(|c| c.d2 < reach * reach)
                .map(|c| c.feature)
                .collect();
            want.sort();
            want.dedup();
            want.retain(|&f| match f {
                Feature::Face(_) => true,
                f => {
                    let agree = all
                        .iter()
                        .filter(|c| c.feature == f && c.d2 < reach * reach);
                    agree.count() == m.around(f).len()
                }
            });
            let got: Vec<Feature> = out.as_slice().iter().map(|c| c.feature).collect();
            assert_eq!(got, want, "{x}");
        }
    }

    #[test]
    fn a_part_meets_spheres_in_its_box_as_the_whole_does() {
        let whole = bumps(30);
        let (lo, hi) = (DVec3::new(0.3, 0.2, -1.0), DVec3::new(0.7, 0.5, 1.0));
        let part = whole.near(lo, hi).unwrap();
        assert!(part.triangles.len() < whole.triangles.len() / 4);
        assert_eq!(format!("{part:?}"), format!("{whole:?}"));
        // A part of the part is named in the whole too.
        let inner = part.near(lo + 0.05, hi - 0.05).unwrap();
        let (mut a, mut b, mut c) = (
            Contacts::default(),
            Contacts::default(),
            Contacts::default(),
        );
        let reach = 0.08;
        for i in 0..20 {
            for j in 0..20 {
                let (x, y) = (0.4 + 0.2 * i as f64 / 19.0, 0.3 + 0.1 * j as f64 / 19.0);
                // Within reach of the surface, above and below it.
                let z = 0.1 * (7.0 * x).sin() * (5.0 * y).cos() + 0.05 * x * y;
                let x = DVec3::new(x, y, z + 0.06 * ((i * j) as f64).sin());
                whole.contacts(x, reach, &mut a);
                part.contacts(x, reach, &mut b);
                inner.contacts(x, reach, &mut c);
                assert!(!a.is_empty());
                assert_eq!(a.as_slice(), b.as_slice(), "{x}");
                assert_eq!(a.as_slice(), c.as_slice(), "{x}");
                assert_eq!(whole.signed_distance(x), part.signed_distance(x));
            }
        }
    }

    /// Two unit squares meeting along the y axis, the floor z = 0 (x > 0)
    /// and a face tilted up by `degrees` (x < 0): a concave crease.
    fn crease(degrees: f64) -> TriMesh {
        let (s, c) = degrees.to_radians().sin_cos();
        let (a, b) = (DVec3::ZERO, DVec3::Y);
        let (p, q) = (DVec3::new(1.0, 0.0, 0.0), DVec3::new(1.0, 1.0, 0.0));
        let (u, v) = (DVec3::new(-c, 0.0, s), DVec3::new(-c, 1.0, s));
        TriMesh::new("crease", &[[a, p, q], [a, q, b], [a, b, v], [a, v, u]]).unwrap()
    }

    #[test]
    fn faces_across_a_shallow_crease_are_one_contact_the_deepest() {
        // Over the crease, nearer the floor: both faces within reach.
        let x = DVec3::new(0.05, 0.5, 0.3);
        for (degrees, want) in [(10.0, 1), (15.0, 1), (30.0, 2), (90.0, 2)] {
            let c = contacts(&crease(degrees), x, 0.35);
            assert_eq!(c.len(), want, "{degrees}°: {c:?}");
            // The deepest, the floor's, is kept.
            assert_eq!(c[0].n, -DVec3::Z, "{degrees}°");
        }
        // With the crease angle at 0, every face counts.
        let mut m = crease(10.0);
        m.set_crease_angle(0.0);
        assert_eq!(contacts(&m, x, 0.35).len(), 2);
    }

    #[test]
    fn a_pose_places_and_takes_back() {
        let p = Pose {
            centre: DVec3::new(1.0, 0.0, 0.0),
            shift: DVec3::new(0.0, 2.0, 0.0),
            axis: DVec3::Z,
            sc: (1.0, 0.0),
        };
        let x = DVec3::new(2.0, 0.0, 3.0);
        // Turned a quarter about z through (1, 0, 0): (1, 1, 3); shifted: (1, 3, 3).
        assert!((p.place(x) - DVec3::new(1.0, 3.0, 3.0)).length() < 1e-15);
        assert!((p.back(p.place(x)) - x).length() < 1e-15);
        assert!(Pose::REST.is_rest() && !p.is_rest());
    }
}
