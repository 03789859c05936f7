"""Multi-blade coordinates (Coleman transform): fixed-frame modes of a rotor of N >= 3 blades.

A rotor's blades, linearized in the frame turning with it (:func:`steady_rotation`,
:func:`linearize`), have time-invariant equations in their own (rotating) coordinates η_b.  An
observer on the ground (a tower, a nacelle, the aerodynamic loads fixed in space) sees them
through the multi-blade coordinates (Coleman & Feingold 1958; Bir 2008, NREL/CP-500-42553)

    η_b = η_0 + Σ_k (η_kc cos kψ_b + η_ks sin kψ_b) [+ η_d (−1)^(b−1) for even N],
    ψ_b = Ωt + 2π(b − 1)/N,  k = 1 … ⌊(N − 1)/2⌋,

the collective η_0, the cyclic pairs (η_kc, η_ks): for three blades the tilt and yaw of the
rotor disc, and the differential η_d.  With ``η = T₁(ψ) η_mbc`` and its derivatives T₂ = dT₁/dψ,
T₃ = d²T₁/dψ², the rotating-frame equations ``M η̈ + C η̇ + K η = 0`` become

    M̄ = T₁⁻¹ M T₁,  C̄ = T₁⁻¹ (2Ω M T₂ + C T₁),  K̄ = T₁⁻¹ (Ω² M T₃ + Ω C T₂ + K T₁).

**Assumption: an isotropic (cyclically symmetric) rotor.**  When every blade is blade 1 turned
by 2π(b − 1)/N about the axis (structure, steady deformation, constraints), the blade-coordinate
matrices are block circulant and M̄, C̄, K̄ do not depend on ψ: the fixed-frame equations are
time-invariant and their eigenvalues are the rotor's fixed-frame modes.  A rotating-frame mode
of frequency ω (the N blades of an uncoupled rotor share it) splits into a collective mode at
ω, a forward whirl at ω + Ω and a backward whirl at ``|ω − Ω|`` (and, for even N, a
differential mode at ω).  An anisotropic rotor (one blade different, a pitch error, a steady
state that is not symmetric) has periodic MBC matrices: that needs Floquet analysis, which
kynemapy does not do — :func:`mbc_modes` refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from kynemapy.analysis.linearize import Linearization, linearize
from kynemapy.analysis.modes import RELATIVE_ZERO, quadratic_eigen

#: relative tolerance of the cyclic-symmetry checks (geometry and blade-coordinate matrices)
SYMMETRY_TOLERANCE = 1e-6


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    a = axis / np.linalg.norm(axis)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def coleman_matrices(n_blades: int, psi: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Coleman transform of one blade DOF and its ψ-derivatives.

    Parameters
    ----------
    n_blades : int
        The number of blades N (>= 3).
    psi : float [rad], default 0
        The azimuth ψ of blade 1.

    Returns
    -------
    t1, t2, t3 : (N, N) ndarray of float
        Row b (blade b + 1), columns (collective, cos ψ_b, sin ψ_b, cos 2ψ_b, sin 2ψ_b, …[,
        (−1)^b for even N]): ``η_blades = t1 @ η_mbc``; t2 = dt1/dψ, t3 = d²t1/dψ².
    """
    n = int(n_blades)
    psi_b = psi + 2.0 * np.pi * np.arange(n) / n
    t1, t2, t3 = (np.zeros((n, n)) for _ in range(3))
    t1[:, 0] = 1.0
    for k in range(1, (n - 1) // 2 + 1):
        c, s = np.cos(k * psi_b), np.sin(k * psi_b)
        t1[:, 2 * k - 1], t1[:, 2 * k] = c, s
        t2[:, 2 * k - 1], t2[:, 2 * k] = -k * s, k * c
        t3[:, 2 * k - 1], t3[:, 2 * k] = -k * k * c, -k * k * s
    if n % 2 == 0:
        t1[:, -1] = (-1.0) ** np.arange(n)
    return t1, t2, t3


@dataclass(frozen=True)
class RotorModes:
    """Fixed-frame modes of an isotropic rotor in multi-blade coordinates (from :func:`mbc_modes`).

    Attributes
    ----------
    omega : (k,) ndarray of float
        Natural circular frequencies ``|s|`` [rad/s] seen from the fixed (non-rotating) frame,
        increasing.
    frequency : (k,) ndarray of float
        The same in Hz.
    damping_ratio : (k,) ndarray of float
        ``−Re(s)/|s|`` [-].
    eigenvalues : (k,) ndarray of complex
        The eigenvalues s [1/s] (Im s >= 0).
    harmonic : (k,) ndarray of int64
        The multi-blade harmonic each mode lives in (the largest share of its shape): 0
        collective, 1 … ⌊(N − 1)/2⌋ cyclic (1: tilt/yaw of the disc for three blades), N/2
        differential (even N).
    whirl : (k,) ndarray of int64
        For cyclic modes +1 forward whirl (the pattern turns with the rotor), −1 backward, 0 for
        collective and differential modes (and at Ω = 0).
    shapes : (N r, k) ndarray of complex
        The mode shapes in multi-blade coordinates: r entries per harmonic component
        (collective, cos 1, sin 1, …), each blade coordinate η of :attr:`blade_basis`; largest
        entry 1.
    blade_basis : (n, r) ndarray of float
        Blade 1's independent coordinates in the engine's DOFs (the blade's null space of the
        constraint Jacobian); blade b's are these turned by 2π(b − 1)/N.
    matrices : tuple of ndarray
        M̄, C̄, K̄ in multi-blade coordinates (module docstring), each (N r, N r).
    rotating_omega : (N r,) ndarray of float
        The rotating-frame natural frequencies [rad/s] of the same blade-coordinate system
        (each N-fold for uncoupled blades), for comparison.
    frame_rate : (3,) ndarray of float
        Ω [rad/s].
    n_blades : int
        N.
    """

    omega: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    eigenvalues: np.ndarray
    harmonic: np.ndarray
    whirl: np.ndarray
    shapes: np.ndarray
    blade_basis: np.ndarray
    matrices: tuple[np.ndarray, np.ndarray, np.ndarray]
    rotating_omega: np.ndarray
    frame_rate: np.ndarray
    n_blades: int

    def labels(self) -> list[str]:
        """One word per mode: ``collective``, ``forward``/``backward`` (cyclic harmonic 1; ``cyclic
        k forward`` … for higher ones), ``differential`` or ``cyclic`` (no whirl sense at Ω = 0)."""
        out = []
        n = self.n_blades
        for h, w in zip(self.harmonic, self.whirl, strict=True):
            if h == 0:
                out.append("collective")
            elif n % 2 == 0 and h == n // 2:
                out.append("differential")
            else:
                sense = {1: "forward", -1: "backward", 0: ""}[int(w)]
                out.append((f"cyclic {h} {sense}" if h > 1 else sense or "cyclic").strip())
        return out


def _blade_dofs(lin: Linearization, nodes: Sequence[int]) -> np.ndarray:
    model = lin.model
    out = []
    for node in nodes:
        node = int(node)
        if not 0 <= node < int(model.n_nodes):
            raise ValueError(f"mbc_modes: unknown node {node} (the model has {int(model.n_nodes)} nodes)")
        first, d = int(model.node_map[node]), int(model.node_dofs[node])
        out.extend(range(first, first + d))
    return np.asarray(out, dtype=np.int64)


def _harmonic_eigen(
    k_f: np.ndarray, c_f: np.ndarray, m_f: np.ndarray, nb: int, r: int, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-frame eigenproblem of an isotropic rotor, harmonic by harmonic: s (k,) and the
    shapes (N r, k) as :func:`quadratic_eigen` gives them for the whole.

    The multi-blade equations of an isotropic rotor couple only the components of one harmonic
    (the collective, each cyclic pair's cosine and sine, the differential); each group is solved
    alone, so that every mode is of one harmonic exactly.  Where several modes share a frequency
    (the three of a rotating-frame mode at Ω = 0) the solver's vectors for the whole could come
    out nearly parallel, mixing harmonics (mode tracking by MAC then failed with one LAPACK and
    not another).  Where a cyclic pair's cosine and sine components are uncoupled (at Ω = 0) the
    cosine's problem is solved once and its modes given in both components.  Where the groups
    are coupled by more than :data:`SYMMETRY_TOLERANCE` (not an isotropic rotor's matrices) the
    whole is solved at once.
    """
    n_cyc = (nb - 1) // 2
    groups = [[0]] + [[2 * k - 1, 2 * k] for k in range(1, n_cyc + 1)] + ([[nb - 1]] if nb % 2 == 0 else [])
    scale = [max(float(np.abs(mat).max(initial=0.0)), 1e-300) for mat in (k_f, c_f, m_f)]
    scale[1] = max(scale[1], np.sqrt(scale[0] * scale[2]))

    def rows(comps: list[int]) -> np.ndarray:
        return np.concatenate([np.arange(c * r, (c + 1) * r) for c in comps])

    def coupled(a: np.ndarray, b: np.ndarray) -> bool:
        return any(
            float(np.abs(mat[np.ix_(a, b)]).max(initial=0.0)) > SYMMETRY_TOLERANCE * sc
            or float(np.abs(mat[np.ix_(b, a)]).max(initial=0.0)) > SYMMETRY_TOLERANCE * sc
            for mat, sc in zip((k_f, c_f, m_f), scale, strict=True)
        )

    index = [rows(g) for g in groups]
    if any(coupled(index[i], index[j]) for i in range(len(groups)) for j in range(i + 1, len(groups))):
        return quadratic_eigen(k_f, c_f, m_f)
    out_s, out_phi = [], []

    def put(at: np.ndarray, solved: tuple[np.ndarray, np.ndarray]) -> None:
        full = np.zeros((nb * r, solved[0].size), dtype=complex)
        full[at] = solved[1]
        out_s.append(solved[0])
        out_phi.append(full)

    for comps, at in zip(groups, index, strict=True):
        if len(comps) == 2 and rate == 0.0:
            cos, sin = rows([comps[0]]), rows([comps[1]])
            if not coupled(cos, sin):
                solved = quadratic_eigen(k_f[np.ix_(cos, cos)], c_f[np.ix_(cos, cos)], m_f[np.ix_(cos, cos)])
                put(cos, solved)
                put(sin, solved)
                continue
        put(at, quadratic_eigen(k_f[np.ix_(at, at)], c_f[np.ix_(at, at)], m_f[np.ix_(at, at)]))
    return np.concatenate(out_s), np.hstack(out_phi)


def mbc_modes(
    system: Any,
    blades: Sequence[Sequence[int]],
    axis: Any = None,
    center: Any = (0.0, 0.0, 0.0),
    n_modes: int | None = None,
) -> RotorModes:
    """Fixed-frame modes of an isotropic rotor of N >= 3 blades by multi-blade coordinates.

    The rotating-frame linearization (:func:`linearize` of a :func:`steady_rotation`) is written
    in blade coordinates: blade 1's independent coordinates (the null space of the constraint
    Jacobian restricted to its DOFs) and, for blade b, the same turned by 2π(b − 1)/N about the
    axis; the Coleman transform then gives time-invariant fixed-frame equations (module
    docstring), solved as a first-order eigenproblem.

    Parameters
    ----------
    system : Linearization or SteadyRotation
        A rotating-frame linearization (``frame_rate`` set), or a steady rotation (linearized).
    blades : sequence of N sequences of int
        The node ids of each blade, blade b + 1 following blade b in the sense of rotation
        (by 2π/N about the axis), corresponding nodes in the same order.  Every DOF the
        constraints leave free must belong to a blade (a hub held or driven at Ω).
    axis : (3,) array_like of float or None, default None
        The rotation axis; None: the direction of Ω (required at Ω = 0).
    center : (3,) array_like of float [m], default (0, 0, 0)
        A point on the axis.
    n_modes : int or None, default None
        Keep the lowest ``n_modes``; None: all.

    Returns
    -------
    RotorModes
        Fixed-frame frequencies, damping ratios, harmonic and whirl of each mode, shapes.

    Raises
    ------
    ValueError
        Fewer than three blades, blades of different node counts or DOFs, a blade that is not
        blade 1 turned about the axis, free DOFs outside the blades, blades coupled other than
        cyclically, or an anisotropic rotor (its fixed-frame equations are periodic: Floquet
        analysis, not done here).
    """
    lin = system if isinstance(system, Linearization) else linearize(system)
    if lin.frame_rate is None:
        raise ValueError(
            "mbc_modes: the linearization is not in a rotating frame; pass a SteadyRotation or "
            "linearize(..., frame_rate=Ω)"
        )
    omega_vec = np.asarray(lin.frame_rate, dtype=float)
    speed = float(np.linalg.norm(omega_vec))
    if axis is None:
        if speed == 0.0:
            raise ValueError("mbc_modes: Ω = 0, so the axis must be given")
        a = omega_vec / speed
    else:
        a = np.asarray(axis, dtype=float).reshape(3)
        if not np.linalg.norm(a) > 0.0:
            raise ValueError("mbc_modes: the axis is zero")
        a = a / np.linalg.norm(a)
        if speed > 0.0 and np.linalg.norm(np.cross(a, omega_vec / speed)) > 1e-12:
            raise ValueError(f"mbc_modes: the axis {tuple(a)} is not along Ω = {tuple(omega_vec)}")
    if speed > 0.0 and float(a @ omega_vec) < 0.0:
        a = -a
    rate = float(a @ omega_vec)  # Ω along the axis (>= 0)
    c = np.asarray(center, dtype=float).reshape(3)
    blades = [list(b) for b in blades]
    nb = len(blades)
    if nb < 3:
        raise ValueError(f"mbc_modes: multi-blade coordinates need at least 3 blades, got {nb}")
    if len({len(b) for b in blades}) != 1 or not blades[0]:
        counts = [len(b) for b in blades]
        raise ValueError(f"mbc_modes: every blade needs the same, non-zero number of nodes, got {counts}")
    model = lin.model
    dofs = [_blade_dofs(lin, b) for b in blades]
    used = np.concatenate(dofs)
    if np.unique(used).size != used.size:
        raise ValueError("mbc_modes: a node belongs to two blades (or twice to one)")
    node_dofs = np.asarray(model.node_dofs)
    for b in range(1, nb):
        if not np.array_equal(node_dofs[blades[b]], node_dofs[blades[0]]):
            raise ValueError(f"mbc_modes: blade {b + 1}'s nodes have other DOFs than blade 1's")
    # geometry: blade b is blade 1 turned by 2π b/N about the axis (deformed positions)
    x = np.asarray(model.x0)[:, :3] + lin.state.q[:, :3] - c
    size = max(float(np.abs(x[np.concatenate(blades)]).max()), 1e-300)
    rotations = [_rotation(a, 2.0 * np.pi * b / nb) for b in range(nb)]
    for b in range(1, nb):
        err = float(np.abs(x[blades[0]] @ rotations[b].T - x[blades[b]]).max())
        if err > SYMMETRY_TOLERANCE * size:
            raise ValueError(
                f"mbc_modes: blade {b + 1} is not blade 1 turned by {360.0 * b / nb:g}° about the axis "
                f"(positions off by {err:.3g} m; order the blades in the sense of rotation)"
            )
    # blade 1's independent coordinates, and blade b's: the same turned
    n = lin.n_dofs
    b_mat = lin.B.tocsc()
    basis1 = scipy.linalg.null_space(b_mat[:, dofs[0]].toarray()) if b_mat.shape[0] else np.eye(dofs[0].size)
    r = basis1.shape[1]
    if r == 0:
        raise ValueError("mbc_modes: the constraints leave blade 1 no free DOF")
    full = np.zeros((n, nb * r))
    comp = lin.dof_component[dofs[0]]
    for b in range(nb):
        turned = basis1.copy()
        for start in (0, 3):
            rows = np.flatnonzero((comp >= start) & (comp < start + 3))
            if rows.size:
                turned[rows] = (rotations[b] @ basis1[rows].reshape(-1, 3, r)).reshape(-1, r)
        full[dofs[b], b * r : (b + 1) * r] = turned
    if b_mat.shape[0]:
        resid = float(np.abs(b_mat @ full).max()) / max(float(np.abs(b_mat).max()), 1e-300)
        if resid > SYMMETRY_TOLERANCE:
            raise ValueError(
                f"mbc_modes: the blades' constraints are not blade 1's turned (B φ = {resid:.3g}): "
                "not an isotropic rotor"
            )
        free = n - np.linalg.matrix_rank(b_mat.toarray())
    else:
        free = n
    if free != nb * r:
        raise ValueError(
            f"mbc_modes: the constraints leave {free} DOFs free, the blades {nb * r}: free DOFs outside the "
            "blades (a free hub, a tower) are not supported; hold or drive the hub"
        )
    m_b, c_b, k_b = (np.asarray(full.T @ (mat @ full)) for mat in (lin.M, lin.C, lin.K))
    # cyclic symmetry: block (i, j) depends on (j − i) mod N only
    size_m, size_k = (max(float(np.abs(mat).max()), 1e-300) for mat in (m_b, k_b))
    size_c = max(float(np.abs(c_b).max()), np.sqrt(size_m * size_k))  # C of a size to M and K
    for name, mat, scale in (("M", m_b, size_m), ("C", c_b, size_c), ("K", k_b, size_k)):
        blocks = mat.reshape(nb, r, nb, r)
        for i in range(1, nb):
            for j in range(nb):
                err = float(np.abs(blocks[i, :, j] - blocks[0, :, (j - i) % nb]).max())
                if err > SYMMETRY_TOLERANCE * scale:
                    raise ValueError(
                        f"mbc_modes: the rotor is not isotropic ({name} of blades {i + 1}, {j + 1} differs from the "
                        f"cyclic pattern by {err / scale:.3g} relative): its fixed-frame equations are periodic and "
                        "need Floquet analysis, which kynemapy does not do"
                    )
    t1, t2, t3 = (np.kron(t, np.eye(r)) for t in coleman_matrices(nb))
    t1_inv = np.linalg.inv(t1)
    m_f = t1_inv @ m_b @ t1
    c_f = t1_inv @ (2.0 * rate * m_b @ t2 + c_b @ t1)
    k_f = t1_inv @ (rate * rate * m_b @ t3 + rate * c_b @ t2 + k_b @ t1)
    s, phi = _harmonic_eigen(k_f, c_f, m_f, nb, r, rate)
    rot_s, _ = quadratic_eigen(k_b, c_b, m_b)
    rot_omega = np.sort(np.abs(rot_s))
    w = np.abs(s)
    zeta = np.where(w > 0.0, -s.real / np.where(w > 0.0, w, 1.0), 0.0)
    order = np.lexsort((s.real, w))
    s, phi, w, zeta = s[order], phi[:, order], w[order], zeta[order]
    big = np.argmax(np.abs(phi), axis=0)
    phi = phi / phi[big, np.arange(phi.shape[1])]
    parts = np.abs(phi.reshape(nb, r, -1)) ** 2  # (component, r, k)
    energy = parts.sum(axis=1)  # (N, k)
    n_cyc = (nb - 1) // 2
    groups = [energy[0]] + [energy[2 * k - 1] + energy[2 * k] for k in range(1, n_cyc + 1)]
    if nb % 2 == 0:
        groups.append(energy[-1])
    harmonic = np.argmax(np.vstack(groups), axis=0).astype(np.int64)
    whirl = np.zeros(w.size, dtype=np.int64)
    for j, h in enumerate(harmonic):
        if 1 <= h <= n_cyc and rate > 0.0:
            ph = phi.reshape(nb, r, -1)[:, :, j]
            # η_c, η_s = (1, −i)·a: (cos ωt, sin ωt) turns with ψ: forward
            cross = float(np.imag(np.vdot(ph[2 * h - 1], ph[2 * h])))
            scale = float(np.sum(energy[2 * h - 1 : 2 * h + 1, j]))
            if abs(cross) > RELATIVE_ZERO * scale:
                whirl[j] = 1 if cross < 0.0 else -1
    if n_modes is not None:
        keep = slice(0, int(n_modes))
        s, phi, w, zeta, harmonic, whirl = s[keep], phi[:, keep], w[keep], zeta[keep], harmonic[keep], whirl[keep]
    return RotorModes(
        w, w / (2.0 * np.pi), zeta, s, harmonic, whirl, phi, full[:, :r],
        (m_f, c_f, k_f), rot_omega, omega_vec.copy(), nb,
    )  # fmt: skip
