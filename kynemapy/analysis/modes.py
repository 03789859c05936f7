"""Natural frequencies, damping ratios and mode shapes of a linearized model.

In the independent coordinates η (δq = N η, N the null space of the constraint Jacobian) the
linearized equations are ``M_r η̈ + C_r η̇ + K_r η = 0``.  Without damping (C_r = 0) and with
symmetric M_r and K_r, the modes are those of the symmetric generalized eigenproblem
``K_r φ = ω² M_r φ`` (``scipy.linalg.eigh``; with a singular M_r — DOFs without inertia — the
finite ones of ``M_r φ = ω⁻² K_r φ``).  Otherwise they are the eigenvalues s of the quadratic
problem ``(s² M_r + s C_r + K_r) φ = 0``, solved in its first-order form, the pencil
``([[0, I], [−K_r, −C_r]], [[I, 0], [0, M_r]])`` (``scipy.linalg.eig``, infinite eigenvalues
dropped): ω_n = ``|s|``, ζ = ``−Re(s)/|s|``, one mode per pair of complex conjugate eigenvalues.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg

from kynemapy.analysis.linearize import Linearization, linearize

if TYPE_CHECKING:
    from kynemapy.analysis.scheme import SchemeError

#: :attr:`Linearization.equilibrium_error` above which :func:`modes` warns
EQUILIBRIUM_TOLERANCE = 1e-6
#: relative size below which an asymmetric part, a damping matrix or a pencil's β counts as zero
RELATIVE_ZERO = 1e-10


@dataclass(frozen=True)
class Modes:
    """The modes of a linearized model (from :func:`modes`), by increasing natural frequency.

    Attributes
    ----------
    omega : (k,) ndarray of float
        The natural (undamped) circular frequencies ω_n = ``|s|`` [rad/s]; for an unstable mode of
        an undamped system (ω² < 0), ``−√|ω²|``.
    frequency : (k,) ndarray of float
        The natural frequencies ω_n/2π [Hz] (negative for unstable undamped modes).
    damping_ratio : (k,) ndarray of float
        The damping ratios ζ = ``−Re(s)/|s|`` [-] (0 without damping; 1 for a negative real s,
        −1 for a positive one).
    eigenvalues : (k,) ndarray of complex
        The eigenvalues s = −ζω_n + iω_n√(1 − ζ²) [1/s] (the one with Im s >= 0 of each pair;
        in the first-order solve each real eigenvalue — overdamped, unstable or a zero-frequency
        mode — is a mode of its own).
    shapes : (n, k) ndarray of float or complex
        The mode shapes in the engine's DOF coordinates (world-frame δu [m], δθ [rad]; see
        :class:`Linearization`): real and mass-normalized (φᵀMφ = 1) for undamped symmetric
        systems, else complex with the largest component 1.
    reduced_shapes : (r, k) ndarray of float or complex
        The same in the independent coordinates η (``shapes = N @ reduced_shapes``).
    linearization : Linearization
        The linearization the modes belong to.
    """

    omega: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    eigenvalues: np.ndarray
    shapes: np.ndarray
    reduced_shapes: np.ndarray
    linearization: Linearization

    def scheme_error(self, h: Any, rho_inf: float | None = None) -> SchemeError:
        """What the time integrator does to these modes, apart from the physics: the
        generalized-α scheme's numerical damping ratio and period error at each ω_n h
        (:func:`kynemapy.analysis.scheme_error`).

        Parameters
        ----------
        h : float [s] or StepParameters
            The step, or the step parameters (their h and ρ∞).
        rho_inf : float or None, default None
            ρ∞ in [0, 1]; None: from ``h`` when it is StepParameters.

        Returns
        -------
        SchemeError
            Per mode: ω_n h, spectral radius, numerical damping ratio ζ̄, period error T̄/T − 1.
        """
        from kynemapy.analysis.scheme import scheme_error

        return scheme_error(self.omega, h, rho_inf)

    def node_shape(self, mode: int, node: int) -> np.ndarray:
        """One node's part of a mode shape, zero where the node has no DOF.

        Parameters
        ----------
        mode : int
            The mode index (0: the lowest frequency).
        node : int
            The node id.

        Returns
        -------
        (6,) ndarray of float or complex
            δu [m] and δθ [rad] (world frame) of the node in that mode.
        """
        lin = self.linearization
        out = np.zeros(6, dtype=self.shapes.dtype)
        for k in range(int(lin.model.node_dofs[node])):
            out[k] = self.shapes[lin.dof(node, k), mode]
        return out


def _small(a: np.ndarray, scale: float) -> bool:
    return bool(np.abs(a).max(initial=0.0) <= RELATIVE_ZERO * max(scale, 1e-300))


def _undamped(k_r: np.ndarray, m_r: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(ω² (k,), mass-normalized shapes (r, k)) of a symmetric undamped system, or None when
    neither M_r nor K_r is positive definite.

    All eigenvalues, not a subset: LAPACK's subset driver (``gvx``, bisection) was no faster at
    r = 180 (1.6 ms against 1.5 ms) and 1.5e-7 less accurate on a cantilever's first frequency."""
    try:
        scipy.linalg.cholesky(m_r)
    except np.linalg.LinAlgError:
        pass
    else:
        return scipy.linalg.eigh(k_r, m_r)
    try:
        scipy.linalg.cholesky(k_r)
    except np.linalg.LinAlgError:
        return None
    mu, phi = scipy.linalg.eigh(m_r, k_r)  # μ = 1/ω², φᵀKφ = 1
    finite = mu > RELATIVE_ZERO * np.abs(mu).max(initial=0.0)
    mu, phi = mu[finite], phi[:, finite]
    w2 = 1.0 / mu
    order = np.argsort(w2)
    return w2[order], phi[:, order] * np.sqrt(w2[order])


def quadratic_eigen(k_r: np.ndarray, c_r: np.ndarray, m_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The finite eigenvalues with Im s >= 0 of ``(s² M + s C + K) φ = 0`` (first-order form).

    The lowest eigenvalues carry round-off of about ε times the largest ones (relative 1e-8 for
    a beam whose axial and shear frequencies are 3e4 times its first bending frequency).

    Parameters
    ----------
    k_r, c_r, m_r : (r, r) ndarray of float
        The stiffness, damping and mass matrices.

    Returns
    -------
    s : (k,) ndarray of complex
        The eigenvalues [1/s] (one per complex pair; real ones each a mode of their own).
    shapes : (r, k) ndarray of complex
        The eigenvectors' displacement part.
    """
    r = m_r.shape[0]
    # the rates scaled by w0 = √(max|K|/max|M|) (state (η, η̇/w0)): the two block rows of the pencil
    # of equal size; unscaled, round-off in the stiff rows moved the lowest damping ratios of a
    # beam (ω from 3.5 to 1e5 rad/s) by 2e-5 relative, scaled by 4e-8
    # (with no stiffness at all, a free spinning body, the gyroscopic rate max|C|/max|M| instead)
    k_max, c_max = np.abs(k_r).max(initial=0.0), np.abs(c_r).max(initial=0.0)
    m_max = max(np.abs(m_r).max(initial=0.0), 1e-300)
    w0 = np.sqrt(k_max / m_max) if k_max > 0.0 else (c_max / m_max if c_max > 0.0 else 1.0)
    a = np.zeros((2 * r, 2 * r))
    a[:r, r:] = w0 * np.eye(r)
    a[r:, :r] = -k_r
    a[r:, r:] = -w0 * c_r
    e = np.eye(2 * r)
    e[r:, r:] = w0 * m_r
    (alpha, beta), vectors = scipy.linalg.eig(a, e, homogeneous_eigvals=True)
    scale = np.abs(a).max(initial=0.0) / max(np.abs(e).max(initial=0.0), 1e-300)
    finite = np.abs(beta) * scale > RELATIVE_ZERO * np.abs(alpha)
    s = alpha[finite] / beta[finite]
    vectors = vectors[:r, finite]
    keep = s.imag >= -RELATIVE_ZERO * np.abs(s)
    s, vectors = s[keep], vectors[:, keep]
    # a real eigenvalue's vector is real; a complex pair gives one mode (Im s > 0)
    return s, vectors


def modes(system: Any, n_modes: int | None = None, damped: bool | None = None) -> Modes:
    """Natural frequencies, damping ratios and mode shapes about a state (an equilibrium).

    Parameters
    ----------
    system : Linearization, Equilibrium, Simulation or Model
        A :class:`Linearization`, or what :func:`linearize` takes (then linearized about its
        state: linearize about a static equilibrium, :func:`static_equilibrium`, for the
        vibration modes of a loaded structure).
    n_modes : int or None, default None
        Keep the ``n_modes`` lowest modes; None: all.
    damped : bool or None, default None
        True: the quadratic eigenproblem with C_r (first-order form); False: ignore C_r;
        None: True when C_r is not zero or K_r, M_r are not symmetric.

    Returns
    -------
    Modes
        ω_n [rad/s], f [Hz], ζ, eigenvalues and shapes, by increasing ω_n.

    Warns
    -----
    UserWarning
        The state is not a static equilibrium (:attr:`Linearization.equilibrium_error` above
        1e-6): modes about it are those of its own multipliers, not of the loaded structure.
    """
    lin = system if isinstance(system, Linearization) else linearize(system)
    if lin.equilibrium_error > EQUILIBRIUM_TOLERANCE:
        warnings.warn(
            f"modes about a state that is not a static equilibrium (out-of-balance force "
            f"{lin.equilibrium_error:.3g} of the loads): the constraint forces' stiffness is that of the "
            "state's multipliers; use kynemapy.analysis.static_equilibrium first",
            UserWarning,
            stacklevel=2,
        )
    m_r, c_r, k_r = lin.reduced()
    scale_k = np.abs(k_r).max(initial=0.0)
    scale_m = np.abs(m_r).max(initial=0.0)
    symmetric = _small(k_r - k_r.T, scale_k) and _small(m_r - m_r.T, scale_m)
    if damped is None:
        damped = not symmetric or not _small(c_r, np.sqrt(max(scale_k * scale_m, 0.0)))
    solved = None if damped else _undamped(0.5 * (k_r + k_r.T), 0.5 * (m_r + m_r.T)) if symmetric else None
    if solved is not None:
        w2, phi = solved
        omega = np.sign(w2) * np.sqrt(np.abs(w2))
        eigenvalues = np.where(w2 >= 0.0, 1j * np.sqrt(np.abs(w2)), np.sqrt(np.abs(w2)) + 0j)
        zeta = np.zeros_like(omega)
    else:
        s, phi = quadratic_eigen(k_r, c_r if damped else np.zeros_like(c_r), m_r)
        omega = np.abs(s)
        zeta = np.where(omega > 0.0, -s.real / np.where(omega > 0.0, omega, 1.0), 0.0)
        order = np.lexsort((s.real, omega))
        s, phi, omega, zeta = s[order], phi[:, order], omega[order], zeta[order]
        eigenvalues = s
        big = np.argmax(np.abs(phi), axis=0)
        phi = phi / phi[big, np.arange(phi.shape[1])]
    if n_modes is not None:
        keep = slice(0, int(n_modes))
        omega, zeta, eigenvalues, phi = omega[keep], zeta[keep], eigenvalues[keep], phi[:, keep]
    shapes = lin.null_space @ phi
    return Modes(omega, omega / (2.0 * np.pi), zeta, eigenvalues, shapes, phi, lin)
