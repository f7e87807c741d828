#!/usr/bin/env python3
"""Write the flat-bottomed cylindrical silo of configs/hopper.toml as an ASCII STL.

    python3 scripts/make-hopper-stl.py [--out configs/data/hopper.stl]
        [--radius 18] [--height 44] [--orifice 14] [--segments 48] [--row 4]

The silo: a vertical tube of radius R about the z axis, from the floor
z = 0 up to z = H (open at the top), and a flat floor, the annulus between
the orifice (a circular hole of diameter D in its centre) and the tube. The
circles are regular polygons of --segments sides with their corners on the
circle (the tube's and the floor's outer corners are the same points, so
the mesh is welded there). The tube is cut into rows of about --row in
height, the floor into rings of about --row in width, so that no triangle
is long (gravel indexes triangles on a grid of about one triangle's size).

Every triangle's corners run so that its normal by the right-hand rule
points to the particles' side, as gravel's mesh walls want it: the tube's
towards the axis, the floor's up (+z). The file's facet normals are those
same unit normals.

Lengths are in the units given (millimetres by default: configs/hopper.toml
reads the file with scale = 0.001). Needs only the Python standard library.
"""

import argparse
import math
import sys


def silo(radius, height, orifice, segments, row):
    """The triangles (three (x, y, z) corners each) and the side each faces."""
    angles = [2.0 * math.pi * i / segments for i in range(segments)]

    def ring(r, z):
        return [(r * math.cos(a), r * math.sin(a), z) for a in angles]

    tris = []
    # The tube: rows of quads from z = 0 to z = height, facing the axis.
    rows = max(1, round(height / row))
    levels = [height * j / rows for j in range(rows + 1)]
    rings = [ring(radius, z) for z in levels]
    for j in range(rows):
        lo, hi = rings[j], rings[j + 1]
        for i in range(segments):
            k = (i + 1) % segments
            inward = (-math.cos(angles[i] + math.pi / segments),
                      -math.sin(angles[i] + math.pi / segments), 0.0)
            tris.append(((lo[i], hi[i], lo[k]), inward))
            tris.append(((lo[k], hi[i], hi[k]), inward))
    # The floor: rings from the orifice out to the tube, facing up.
    rings_n = max(1, round((radius - orifice / 2.0) / row))
    radii = [orifice / 2.0 + (radius - orifice / 2.0) * j / rings_n
             for j in range(rings_n + 1)]
    radii[-1] = radius  # the tube's bottom ring, to the bit
    floor = [ring(r, 0.0) for r in radii]
    floor[-1] = rings[0]
    up = (0.0, 0.0, 1.0)
    for j in range(rings_n):
        inner, outer = floor[j], floor[j + 1]
        for i in range(segments):
            k = (i + 1) % segments
            tris.append(((inner[i], outer[i], inner[k]), up))
            tris.append(((inner[k], outer[i], outer[k]), up))
    return tris


def oriented(tri, side):
    """The triangle with its corners ordered so its normal points along `side`."""
    a, b, c = tri
    u = [b[m] - a[m] for m in range(3)]
    v = [c[m] - a[m] for m in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    if sum(n[m] * side[m] for m in range(3)) < 0.0:
        a, b, c = a, c, b
        n = tuple(-x for x in n)
    length = math.sqrt(sum(x * x for x in n))
    return (a, b, c), tuple(x / length for x in n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="configs/data/hopper.stl")
    ap.add_argument("--radius", type=float, default=18.0, help="tube radius R")
    ap.add_argument("--height", type=float, default=44.0, help="tube height H")
    ap.add_argument("--orifice", type=float, default=14.0, help="orifice diameter D")
    ap.add_argument("--segments", type=int, default=48, help="polygon sides")
    ap.add_argument("--row", type=float, default=4.0, help="row height and ring width")
    a = ap.parse_args()
    if not 0.0 < a.orifice < 2.0 * a.radius or a.height <= 0.0 or a.segments < 3:
        sys.exit("need 0 < orifice < 2 radius, height > 0, segments >= 3")
    tris = [oriented(t, side) for t, side in silo(a.radius, a.height, a.orifice,
                                                  a.segments, a.row)]
    fmt = lambda p: " ".join(f"{x:.9e}" for x in p)
    with open(a.out, "w") as f:
        f.write("solid hopper\n")
        for (p, q, r), n in tris:
            f.write(f"  facet normal {fmt(n)}\n    outer loop\n")
            for c in (p, q, r):
                f.write(f"      vertex {fmt(c)}\n")
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid hopper\n")
    print(f"{a.out}: {len(tris)} triangles (silo radius {a.radius}, height {a.height}, "
          f"orifice {a.orifice}, {a.segments} segments)")


if __name__ == "__main__":
    main()
