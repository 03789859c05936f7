"""Narrow phase: the contact points of one pair of shapes at world poses.

Every function writes into ``out`` (K, 10), one row per point: the world point on shape A
(0:3) and on shape B (3:6) [m], the unit normal from A to B (6:9) and the signed gap (9) [m]
(negative: penetration; ``gap = n · (p_B − p_A)``), and returns the number of rows written
(at most K).  Only points whose gap is <= ``margin`` [m] are written.  Poses are a centre
(3,) [m] and a unit rotation quaternion (4,) ``(w, x, y, z)`` of the shape's local axes
(:mod:`kynemapy.collision.shapes`); dims as in the shape table.  No function allocates.

Pairs (kind codes of :mod:`.shapes`): sphere and capsule pairs by the closest points of
their axis segments (two points for parallel capsules whose axes overlap); sphere–box by
the closest point of the solid box (inside: the nearest face); capsule–box by the minimum of
the box's signed distance along the axis (convex: golden-section search) and the two end
spheres; box–box by the separating-axis test over the 15 axes, then, on a face axis, the
incident face clipped against the reference face's sides (up to 8 points), on an edge axis
the closest points of the two edges; boxes apart (no overlap) whose closest features are not
face to face: the one exact closest pair over corners against boxes and edges against edges
(boxes closer than 1e-9 of their size, touching to round-off, as boxes that overlap).
A shape against the ground half-space ``n · y <= d``: the sphere's centre, the capsule's end
spheres, the box's eight corners.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.math.typed import FALSE, ONE, TRUE, TWO, ZERO

SPHERE, CAPSULE, BOX = 0, 1, 2
#: columns of a contact row
ROW = 10
_GOLD = 0.6180339887498949


@njit
def axis(q, k):
    """Column ``k`` of the rotation matrix of the unit quaternion ``q`` (a 3-tuple)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    if k == 0:
        return w * w + x * x - y * y - z * z, 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)
    if k == 1:
        return 2.0 * (x * y - w * z), w * w - x * x + y * y - z * z, 2.0 * (y * z + w * x)
    return 2.0 * (x * z + w * y), 2.0 * (y * z - w * x), w * w - x * x - y * y + z * z


@njit
def _write(out, k, ax, ay, az, bx, by, bz, nx, ny, nz, gap, flip):
    """Row ``k``: A's point, B's point, normal A→B, gap (``flip``: the pair was given swapped)."""
    if flip:
        ax, ay, az, bx, by, bz = bx, by, bz, ax, ay, az
        nx, ny, nz = -nx, -ny, -nz
    out[k, 0], out[k, 1], out[k, 2] = ax, ay, az
    out[k, 3], out[k, 4], out[k, 5] = bx, by, bz
    out[k, 6], out[k, 7], out[k, 8] = nx, ny, nz
    out[k, 9] = gap


@njit
def _clamp01(x):
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@njit
def segment_closest(p1x, p1y, p1z, d1x, d1y, d1z, p2x, p2y, p2z, d2x, d2y, d2z):
    """Parameters ``(s, t)`` in [0, 1] of the closest points of segments ``p1 + s d1`` and
    ``p2 + t d2`` (Ericson, Real-Time Collision Detection 5.1.9; degenerate segments allowed)."""
    rx, ry, rz = p1x - p2x, p1y - p2y, p1z - p2z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    eps = 1e-300
    if a <= eps and e <= eps:
        return 0.0, 0.0
    if a <= eps:
        return 0.0, _clamp01(f / e)
    c = d1x * rx + d1y * ry + d1z * rz
    if e <= eps:
        return _clamp01(-c / a), 0.0
    b = d1x * d2x + d1y * d2y + d1z * d2z
    den = a * e - b * b
    s = _clamp01((b * f - c * e) / den) if den > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = _clamp01(-c / a)
    elif t > 1.0:
        t = 1.0
        s = _clamp01((b - c) / a)
    return s, t


@njit
def _unit_or(dx, dy, dz, fx, fy, fz):
    """``d / |d|``, or the fallback direction ``f`` made unit when d is (nearly) zero."""
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    if n > 1e-300:
        return dx / n, dy / n, dz / n, n
    m = math.sqrt(fx * fx + fy * fy + fz * fz)
    return fx / m, fy / m, fz / m, 0.0


@njit
def _segments_point(out, k, ax, ay, az, bx, by, bz, ra, rb, fx, fy, fz, margin, flip):
    """One row from the closest axis points ``a``, ``b`` of two rounded shapes of radii ``ra``,
    ``rb``; returns the rows written (0 or 1)."""
    nx, ny, nz, dist = _unit_or(bx - ax, by - ay, bz - az, fx, fy, fz)
    gap = dist - ra - rb
    if gap > margin or k >= out.shape[0]:
        return 0
    _write(out, k, ax + ra * nx, ay + ra * ny, az + ra * nz, bx - rb * nx, by - rb * ny, bz - rb * nz, nx, ny, nz, gap,
           flip)  # fmt: skip
    return 1


@njit
def rounded_rounded(pa, qa, dima, ka, pb, qb, dimb, kb, margin, out, flip):
    """Sphere or capsule A against sphere or capsule B (``ka``, ``kb`` kind codes); rows written."""
    ha = dima[1] if ka == CAPSULE else 0.0
    hb = dimb[1] if kb == CAPSULE else 0.0
    ux, uy, uz = axis(qa, TWO)
    vx, vy, vz = axis(qb, TWO)
    a0x, a0y, a0z = pa[0] - ha * ux, pa[1] - ha * uy, pa[2] - ha * uz
    b0x, b0y, b0z = pb[0] - hb * vx, pb[1] - hb * vy, pb[2] - hb * vz
    d1x, d1y, d1z = 2.0 * ha * ux, 2.0 * ha * uy, 2.0 * ha * uz
    d2x, d2y, d2z = 2.0 * hb * vx, 2.0 * hb * vy, 2.0 * hb * vz
    # a fallback normal when the axes meet: perpendicular to both axes, else any
    fx, fy, fz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    if fx * fx + fy * fy + fz * fz < 1e-12:
        fx, fy, fz = (uy, -ux, 0.0) if abs(uz) < 0.9 else (0.0, uz, -uy)
        if ha == 0.0 and hb == 0.0:
            fx, fy, fz = 0.0, 0.0, 1.0
    cross2 = (d1y * d2z - d1z * d2y) ** 2 + (d1z * d2x - d1x * d2z) ** 2 + (d1x * d2y - d1y * d2x) ** 2
    a2 = d1x * d1x + d1y * d1y + d1z * d1z
    e2 = d2x * d2x + d2y * d2y + d2z * d2z
    if ha > 0.0 and hb > 0.0 and cross2 <= 1e-14 * a2 * e2:
        # parallel axes: the ends of the overlap of B's axis projected on A's
        t0 = ((b0x - a0x) * d1x + (b0y - a0y) * d1y + (b0z - a0z) * d1z) / a2
        t1 = t0 + (d2x * d1x + d2y * d1y + d2z * d1z) / a2
        lo, hi = max(min(t0, t1), 0.0), min(max(t0, t1), 1.0)
        if hi - lo > 1e-12:
            k = ZERO
            for s in (lo, hi):
                ax, ay, az = a0x + s * d1x, a0y + s * d1y, a0z + s * d1z
                t = _clamp01(((ax - b0x) * d2x + (ay - b0y) * d2y + (az - b0z) * d2z) / e2)
                k += _segments_point(out, k, ax, ay, az, b0x + t * d2x, b0y + t * d2y, b0z + t * d2z, dima[0],
                                     dimb[0], fx, fy, fz, margin, flip)  # fmt: skip
            return k
    s, t = segment_closest(a0x, a0y, a0z, d1x, d1y, d1z, b0x, b0y, b0z, d2x, d2y, d2z)
    return _segments_point(out, ZERO, a0x + s * d1x, a0y + s * d1y, a0z + s * d1z, b0x + t * d2x, b0y + t * d2y,
                           b0z + t * d2z, dima[0], dimb[0], fx, fy, fz, margin, flip)  # fmt: skip


@njit
def _box_closest(px, py, pz, pb, qb, hb):
    """The closest point of the solid box (centre pb, rotation qb, half extents hb) to p, the
    unit direction from it to p (outside) or the outward normal of the nearest face (inside),
    and the signed distance (negative inside) [m]: (cx, cy, cz, nx, ny, nz, sd)."""
    e0, e1, e2 = axis(qb, ZERO), axis(qb, ONE), axis(qb, TWO)
    dx, dy, dz = px - pb[0], py - pb[1], pz - pb[2]
    x = dx * e0[0] + dy * e0[1] + dz * e0[2]
    y = dx * e1[0] + dy * e1[1] + dz * e1[2]
    z = dx * e2[0] + dy * e2[1] + dz * e2[2]
    cx, cy, cz = min(max(x, -hb[0]), hb[0]), min(max(y, -hb[1]), hb[1]), min(max(z, -hb[2]), hb[2])
    if cx != x or cy != y or cz != z:
        lx, ly, lz, dist = _unit_or(x - cx, y - cy, z - cz, 1.0, 0.0, 0.0)
        sd = dist
    else:
        # inside: the nearest face
        gx, gy, gz = hb[0] - abs(x), hb[1] - abs(y), hb[2] - abs(z)
        lx, ly, lz = 0.0, 0.0, 0.0
        if gx <= gy and gx <= gz:
            lx = 1.0 if x >= 0.0 else -1.0
            cx, sd = lx * hb[0], -gx
        elif gy <= gz:
            ly = 1.0 if y >= 0.0 else -1.0
            cy, sd = ly * hb[1], -gy
        else:
            lz = 1.0 if z >= 0.0 else -1.0
            cz, sd = lz * hb[2], -gz
    wx = pb[0] + cx * e0[0] + cy * e1[0] + cz * e2[0]
    wy = pb[1] + cx * e0[1] + cy * e1[1] + cz * e2[1]
    wz = pb[2] + cx * e0[2] + cy * e1[2] + cz * e2[2]
    nx = lx * e0[0] + ly * e1[0] + lz * e2[0]
    ny = lx * e0[1] + ly * e1[1] + lz * e2[1]
    nz = lx * e0[2] + ly * e1[2] + lz * e2[2]
    return wx, wy, wz, nx, ny, nz, sd


@njit
def _sphere_box_row(out, k, cx, cy, cz, r, pb, qb, hb, margin, flip):
    """One row for a sphere (centre c, radius r) as A against box B; rows written (0 or 1)."""
    wx, wy, wz, nx, ny, nz, sd = _box_closest(cx, cy, cz, pb, qb, hb)
    gap = sd - r
    if gap > margin or k >= out.shape[0]:
        return 0
    # the normal from the sphere to the box is minus the box's outward direction
    _write(out, k, cx - r * nx, cy - r * ny, cz - r * nz, wx, wy, wz, -nx, -ny, -nz, gap, flip)
    return 1


@njit
def sphere_box(pa, dima, pb, qb, hb, margin, out, flip):
    """Sphere A against box B; rows written."""
    return _sphere_box_row(out, ZERO, pa[0], pa[1], pa[2], dima[0], pb, qb, hb, margin, flip)


@njit
def capsule_box(pa, qa, dima, pb, qb, hb, margin, out, flip):
    """Capsule A against box B: the deepest axis point and the two end spheres; rows written."""
    ux, uy, uz = axis(qa, TWO)
    h = dima[1]
    a0x, a0y, a0z = pa[0] - h * ux, pa[1] - h * uy, pa[2] - h * uz
    dx, dy, dz = 2.0 * h * ux, 2.0 * h * uy, 2.0 * h * uz
    # golden-section search of the box's signed distance (convex) along the axis
    lo, hi = 0.0, 1.0
    s1, s2 = hi - _GOLD * (hi - lo), lo + _GOLD * (hi - lo)
    f1 = _box_closest(a0x + s1 * dx, a0y + s1 * dy, a0z + s1 * dz, pb, qb, hb)[6]
    f2 = _box_closest(a0x + s2 * dx, a0y + s2 * dy, a0z + s2 * dz, pb, qb, hb)[6]
    for _ in range(80):
        if f1 <= f2:
            hi, s2, f2 = s2, s1, f1
            s1 = hi - _GOLD * (hi - lo)
            f1 = _box_closest(a0x + s1 * dx, a0y + s1 * dy, a0z + s1 * dz, pb, qb, hb)[6]
        else:
            lo, s1, f1 = s1, s2, f2
            s2 = lo + _GOLD * (hi - lo)
            f2 = _box_closest(a0x + s2 * dx, a0y + s2 * dy, a0z + s2 * dz, pb, qb, hb)[6]
    s = 0.5 * (lo + hi)
    r = dima[0]
    k = ZERO
    f0 = _box_closest(a0x, a0y, a0z, pb, qb, hb)[6]
    f9 = _box_closest(a0x + dx, a0y + dy, a0z + dz, pb, qb, hb)[6]
    fs = _box_closest(a0x + s * dx, a0y + s * dy, a0z + s * dz, pb, qb, hb)[6]
    if fs < min(f0, f9) - 1e-12 * (1.0 + abs(fs)):
        k += _sphere_box_row(out, k, a0x + s * dx, a0y + s * dy, a0z + s * dz, r, pb, qb, hb, margin, flip)
    if h > 0.0:
        k += _sphere_box_row(out, k, a0x, a0y, a0z, r, pb, qb, hb, margin, flip)
    k += _sphere_box_row(out, k, a0x + dx, a0y + dy, a0z + dz, r, pb, qb, hb, margin, flip)
    return k


@njit
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def box_box(pa, qa, ha, pb, qb, hb, margin, out, poly, flip):
    """Box A against box B; ``poly`` (2, 16, 3) scratch for the clipping; rows written."""
    ea = (axis(qa, ZERO), axis(qa, ONE), axis(qa, TWO))
    eb = (axis(qb, ZERO), axis(qb, ONE), axis(qb, TWO))
    d = (pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2])
    scale = ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2]
    best, best_axis = -1e300, -1
    bnx, bny, bnz = 0.0, 0.0, 0.0
    for code in range(15):
        if code < 3:
            lx, ly, lz = ea[code]
        elif code < 6:
            lx, ly, lz = eb[code - 3]
        else:
            i, j = (code - 6) // 3, (code - 6) % 3
            u, v = ea[i], eb[j]
            lx, ly, lz = u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]
            n = math.sqrt(lx * lx + ly * ly + lz * lz)
            if n < 1e-6:
                continue  # parallel edges: covered by the face axes
            lx, ly, lz = lx / n, ly / n, lz / n
        ra = sum_abs(ea, ha, lx, ly, lz)
        rb = sum_abs(eb, hb, lx, ly, lz)
        dl = d[0] * lx + d[1] * ly + d[2] * lz
        sep = abs(dl) - ra - rb
        tol = 1e-9 * scale
        better = sep > best + tol
        if not better and code < 6 and best_axis < 6 and sep > best - tol:
            # a tie between face axes: the larger face is the reference (order-independent)
            this = ha[(code + 1) % 3] * ha[(code + 2) % 3] if code < 3 else hb[(code - 2) % 3] * hb[(code - 1) % 3]
            that = ha[(best_axis + 1) % 3] * ha[(best_axis + 2) % 3] if best_axis < 3 else hb[(best_axis - 2) % 3] * hb[
                (best_axis - 1) % 3]  # fmt: skip
            better = this > that
        if better:
            best, best_axis = sep, code
            sg = 1.0 if dl >= 0.0 else -1.0
            bnx, bny, bnz = sg * lx, sg * ly, sg * lz
    if best > margin:
        return 0
    if best > 0.0:
        # separated: the SAT value is only a lower bound; the exact closest points over the
        # feature pairs (vertex–box both ways, edge–edge)
        ax, ay, az, bx, by, bz, dist = _box_box_distance(pa, qa, ea, ha, pb, qb, eb, hb)
        if dist > margin:
            return 0
        # boxes touching to round-off (closer than the axes' tie tolerance): their closest points
        # are one point, whose difference has no direction; the separating axis's features give
        # the normal below, as for boxes that overlap
        if dist > 1e-9 * scale and (best_axis >= 6 or dist > best + 1e-9 * scale):
            if out.shape[0] == 0:
                return 0
            nx, ny, nz, _ = _unit_or(bx - ax, by - ay, bz - az, bnx, bny, bnz)
            _write(out, ZERO, ax, ay, az, bx, by, bz, nx, ny, nz, dist, flip)
            return 1
    if best_axis >= 6:
        i, j = (best_axis - 6) // 3, (best_axis - 6) % 3
        # the edge of A along a_i furthest along n, the edge of B along b_j furthest along −n
        cax, cay, caz = pa[0], pa[1], pa[2]
        cbx, cby, cbz = pb[0], pb[1], pb[2]
        for k in range(3):
            if k != i:
                e = ea[k]
                sg = ha[k] if e[0] * bnx + e[1] * bny + e[2] * bnz >= 0.0 else -ha[k]
                cax, cay, caz = cax + sg * e[0], cay + sg * e[1], caz + sg * e[2]
            if k != j:
                e = eb[k]
                sg = -hb[k] if e[0] * bnx + e[1] * bny + e[2] * bnz >= 0.0 else hb[k]
                cbx, cby, cbz = cbx + sg * e[0], cby + sg * e[1], cbz + sg * e[2]
        u, v = ea[i], eb[j]
        s, t = segment_closest(cax - ha[i] * u[0], cay - ha[i] * u[1], caz - ha[i] * u[2], 2 * ha[i] * u[0],
                               2 * ha[i] * u[1], 2 * ha[i] * u[2], cbx - hb[j] * v[0], cby - hb[j] * v[1],
                               cbz - hb[j] * v[2], 2 * hb[j] * v[0], 2 * hb[j] * v[1], 2 * hb[j] * v[2])  # fmt: skip
        s, t = 2.0 * s - 1.0, 2.0 * t - 1.0
        ax, ay, az = cax + s * ha[i] * u[0], cay + s * ha[i] * u[1], caz + s * ha[i] * u[2]
        bx, by, bz = cbx + t * hb[j] * v[0], cby + t * hb[j] * v[1], cbz + t * hb[j] * v[2]
        gap = (bx - ax) * bnx + (by - ay) * bny + (bz - az) * bnz
        if gap > margin or out.shape[0] == 0:
            return 0
        _write(out, ZERO, ax, ay, az, bx, by, bz, bnx, bny, bnz, gap, flip)
        return 1
    # a face axis: reference box R (whose face), incident box I; nr from R towards I
    if best_axis < 3:
        pr, er, hr, pi, ei, hi, f = pa, ea, ha, pb, eb, hb, best_axis
        nrx, nry, nrz = bnx, bny, bnz
        ref_is_a = True
    else:
        pr, er, hr, pi, ei, hi, f = pb, eb, hb, pa, ea, ha, best_axis - 3
        nrx, nry, nrz = -bnx, -bny, -bnz
        ref_is_a = False
    # incident face: the face of I whose outward normal is most against nr
    m, mdot = 0, 0.0
    for k in range(3):
        c = ei[k][0] * nrx + ei[k][1] * nry + ei[k][2] * nrz
        if abs(c) > abs(mdot):
            m, mdot = k, c
    sm = -1.0 if mdot > 0.0 else 1.0
    k1, k2 = (m + 1) % 3, (m + 2) % 3
    fcx = pi[0] + sm * hi[m] * ei[m][0]
    fcy = pi[1] + sm * hi[m] * ei[m][1]
    fcz = pi[2] + sm * hi[m] * ei[m][2]
    count = 0
    for s1, s2 in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)):
        poly[0, count, 0] = fcx + s1 * hi[k1] * ei[k1][0] + s2 * hi[k2] * ei[k2][0]
        poly[0, count, 1] = fcy + s1 * hi[k1] * ei[k1][1] + s2 * hi[k2] * ei[k2][1]
        poly[0, count, 2] = fcz + s1 * hi[k1] * ei[k1][2] + s2 * hi[k2] * ei[k2][2]
        count += 1
    # clip against the reference face's four side planes  ±t · (p − pr) <= h_t
    src = 0
    for side in range(4):
        t = (f + 1 + side // 2) % 3
        sg = 1.0 if side % 2 == 0 else -1.0
        tx, ty, tz = sg * er[t][0], sg * er[t][1], sg * er[t][2]
        lim = hr[t]
        dst = 1 - src
        n_out = 0
        for q in range(count):
            r = (q + 1) % count
            dq = (poly[src, q, 0] - pr[0]) * tx + (poly[src, q, 1] - pr[1]) * ty + (poly[src, q, 2] - pr[2]) * tz - lim
            dr = (poly[src, r, 0] - pr[0]) * tx + (poly[src, r, 1] - pr[1]) * ty + (poly[src, r, 2] - pr[2]) * tz - lim
            if dq <= 0.0:
                for c in range(3):
                    poly[dst, n_out, c] = poly[src, q, c]
                n_out += 1
            if (dq <= 0.0) != (dr <= 0.0):
                w = dq / (dq - dr)
                for c in range(3):
                    poly[dst, n_out, c] = poly[src, q, c] + w * (poly[src, r, c] - poly[src, q, c])
                n_out += 1
        src, count = dst, n_out
        if count == 0:
            return 0
    # each clipped point's gap along nr above the reference face
    fx = pr[0] + hr[f] * (er[f][0] if _dot3(er[f], (nrx, nry, nrz)) >= 0 else -er[f][0])
    fy = pr[1] + hr[f] * (er[f][1] if _dot3(er[f], (nrx, nry, nrz)) >= 0 else -er[f][1])
    fz = pr[2] + hr[f] * (er[f][2] if _dot3(er[f], (nrx, nry, nrz)) >= 0 else -er[f][2])
    k = ZERO
    for q in range(count):
        x, y, z = poly[src, q, 0], poly[src, q, 1], poly[src, q, 2]
        gap = (x - fx) * nrx + (y - fy) * nry + (z - fz) * nrz
        if gap > margin or k >= out.shape[0]:
            continue
        rx, ry, rz = x - gap * nrx, y - gap * nry, z - gap * nrz
        if ref_is_a:
            _write(out, k, rx, ry, rz, x, y, z, nrx, nry, nrz, gap, flip)
        else:
            _write(out, k, x, y, z, rx, ry, rz, -nrx, -nry, -nrz, gap, flip)
        k += 1
    return k


@njit
def _box_box_distance(pa, qa, ea, ha, pb, qb, eb, hb):
    """The closest points of two disjoint boxes and their distance [m]: the minimum over each
    box's corners against the other solid box and over every pair of edges."""
    best = 1e300
    rax, ray, raz, rbx, rby, rbz = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for side in range(2):
        p, e, h, q2, p2, h2 = (pa, ea, ha, qb, pb, hb) if side == 0 else (pb, eb, hb, qa, pa, ha)
        for c in range(8):
            s0 = h[0] if c & 4 else -h[0]
            s1 = h[1] if c & 2 else -h[1]
            s2 = h[2] if c & 1 else -h[2]
            x = p[0] + s0 * e[0][0] + s1 * e[1][0] + s2 * e[2][0]
            y = p[1] + s0 * e[0][1] + s1 * e[1][1] + s2 * e[2][1]
            z = p[2] + s0 * e[0][2] + s1 * e[1][2] + s2 * e[2][2]
            wx, wy, wz, _, _, _, sd = _box_closest(x, y, z, p2, q2, h2)
            if sd < best:
                best = sd
                if side == 0:
                    rax, ray, raz, rbx, rby, rbz = x, y, z, wx, wy, wz
                else:
                    rax, ray, raz, rbx, rby, rbz = wx, wy, wz, x, y, z
    for i in range(3):
        for c in range(4):
            j1, j2 = (i + 1) % 3, (i + 2) % 3
            t1 = ha[j1] if c & 1 else -ha[j1]
            t2 = ha[j2] if c & 2 else -ha[j2]
            sx = pa[0] + t1 * ea[j1][0] + t2 * ea[j2][0] - ha[i] * ea[i][0]
            sy = pa[1] + t1 * ea[j1][1] + t2 * ea[j2][1] - ha[i] * ea[i][1]
            sz = pa[2] + t1 * ea[j1][2] + t2 * ea[j2][2] - ha[i] * ea[i][2]
            dx, dy, dz = 2.0 * ha[i] * ea[i][0], 2.0 * ha[i] * ea[i][1], 2.0 * ha[i] * ea[i][2]
            for k in range(3):
                for m in range(4):
                    k1, k2 = (k + 1) % 3, (k + 2) % 3
                    u1 = hb[k1] if m & 1 else -hb[k1]
                    u2 = hb[k2] if m & 2 else -hb[k2]
                    ox = pb[0] + u1 * eb[k1][0] + u2 * eb[k2][0] - hb[k] * eb[k][0]
                    oy = pb[1] + u1 * eb[k1][1] + u2 * eb[k2][1] - hb[k] * eb[k][1]
                    oz = pb[2] + u1 * eb[k1][2] + u2 * eb[k2][2] - hb[k] * eb[k][2]
                    fx, fy, fz = 2.0 * hb[k] * eb[k][0], 2.0 * hb[k] * eb[k][1], 2.0 * hb[k] * eb[k][2]
                    s, t = segment_closest(sx, sy, sz, dx, dy, dz, ox, oy, oz, fx, fy, fz)
                    ax, ay, az = sx + s * dx, sy + s * dy, sz + s * dz
                    bx, by, bz = ox + t * fx, oy + t * fy, oz + t * fz
                    dd = math.sqrt((bx - ax) ** 2 + (by - ay) ** 2 + (bz - az) ** 2)
                    if dd < best:
                        best = dd
                        rax, ray, raz, rbx, rby, rbz = ax, ay, az, bx, by, bz
    return rax, ray, raz, rbx, rby, rbz, best


@njit
def sum_abs(e, h, lx, ly, lz):
    """``Σ_k h_k |e_k · l|``: a box's half width along the unit direction l [m]."""
    return (
        h[0] * abs(e[0][0] * lx + e[0][1] * ly + e[0][2] * lz)
        + h[1] * abs(e[1][0] * lx + e[1][1] * ly + e[1][2] * lz)
        + h[2] * abs(e[2][0] * lx + e[2][1] * ly + e[2][2] * lz)
    )


@njit
def collide(ka, pa, qa, dima, kb, pb, qb, dimb, margin, out, poly):
    """The contact points of shape A (kind ``ka``, centre ``pa`` (3,) [m], rotation ``qa`` (4,),
    ``dima`` (3,) [m]) and shape B, written into ``out`` (K, 10) (module docstring); ``poly``
    (2, 16, 3) scratch.  Returns the number of rows written.  ``collide(B, A)`` gives the same
    points with A's and B's swapped and the normal reversed."""
    if ka > kb:
        return _collide(kb, pb, qb, dimb, ka, pa, qa, dima, margin, out, poly, TRUE)
    return _collide(ka, pa, qa, dima, kb, pb, qb, dimb, margin, out, poly, FALSE)


@njit
def _collide(ka, pa, qa, dima, kb, pb, qb, dimb, margin, out, poly, flip):
    if kb != BOX:
        return rounded_rounded(pa, qa, dima, ka, pb, qb, dimb, kb, margin, out, flip)
    if ka == SPHERE:
        return sphere_box(pa, dima, pb, qb, dimb, margin, out, flip)
    if ka == CAPSULE:
        return capsule_box(pa, qa, dima, pb, qb, dimb, margin, out, flip)
    return box_box(pa, qa, dima, pb, qb, dimb, margin, out, poly, flip)


@njit
def collide_plane(ka, pa, qa, dima, normal, offset, margin, out):
    """Shape A against the ground half-space ``normal · y <= offset`` (unit normal (3,),
    offset [m]), the plane as B: points on the shape, their feet on the plane, the normal
    ``−normal`` (from the shape into the ground); rows written (sphere 1, capsule 2, box 8 at
    most)."""
    nx, ny, nz = normal[0], normal[1], normal[2]
    k = ZERO
    if ka == BOX:
        e0, e1, e2 = axis(qa, ZERO), axis(qa, ONE), axis(qa, TWO)
        for c in range(8):
            s0 = dima[0] if c & 4 else -dima[0]
            s1 = dima[1] if c & 2 else -dima[1]
            s2 = dima[2] if c & 1 else -dima[2]
            x = pa[0] + s0 * e0[0] + s1 * e1[0] + s2 * e2[0]
            y = pa[1] + s0 * e0[1] + s1 * e1[1] + s2 * e2[1]
            z = pa[2] + s0 * e0[2] + s1 * e1[2] + s2 * e2[2]
            gap = x * nx + y * ny + z * nz - offset
            if gap <= margin and k < out.shape[0]:
                _write(out, k, x, y, z, x - gap * nx, y - gap * ny, z - gap * nz, -nx, -ny, -nz, gap, FALSE)
                k += 1
        return k
    r = dima[0]
    h = dima[1] if ka == CAPSULE else 0.0
    ux, uy, uz = axis(qa, TWO)
    for end in range(2 if ka == CAPSULE else 1):
        sg = 1.0 if end == 0 else -1.0
        cx, cy, cz = pa[0] + sg * h * ux, pa[1] + sg * h * uy, pa[2] + sg * h * uz
        gap = cx * nx + cy * ny + cz * nz - offset - r
        if gap <= margin and k < out.shape[0]:
            x, y, z = cx - r * nx, cy - r * ny, cz - r * nz
            _write(out, k, x, y, z, x - gap * nx, y - gap * ny, z - gap * nz, -nx, -ny, -nz, gap, FALSE)
            k += 1
    return k
