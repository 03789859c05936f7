"""The beam elements' kernels: the engine's beam units (:mod:`kynemapy.engine.unit_call`,
``BEAMS`` and ``BEAMS_FULL``), over the table :mod:`.table` declares.

:func:`beam_elements` runs :func:`~kynemapy.engine.elements.beams.integrate.beam_element_terms`
on each element's own slices (nodes ``[:n_nodes]``, points ``[:n_qps]``: a padded point has
J = 0), writing the integrated forces ``∫ φ′ (F_C + F_D1) + φ (F_D + F_D2 + F_I − F_g)`` into
``res`` and ``β′ M + γ′ G + κ K 𝒯`` into ``mat`` (K Kynema's stiffness, or with ``p[P_EXACT]``
the exact one of :mod:`~kynemapy.engine.elements.beams.exact`).  Node loads act through the
global load vector (the step's ``f``); distributed loads are not an input yet (zero).
Imported on first use by :mod:`kynemapy.engine.units` (a model with beams).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.integrate import ElementScratch, beam_element_terms
from kynemapy.engine.elements.table import add_element_block
from kynemapy.engine.params import P_BETA_PRIME, P_EXACT, P_GAMMA_PRIME, P_STIFFNESS


@njit(inline=True)
def beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, exact):
    """Residual and iteration matrix of every beam element of the table ``t`` into ``t.res``,
    ``t.mat``, each added into the Newton system (``vals``, ``b``, conditioner ``c``) as soon as
    it is computed (the signature of every table kernel, :mod:`kynemapy.engine.elements`, and
    ``exact``); ``exact`` as :func:`~kynemapy.engine.elements.beams.integrate.beam_element_terms`
    takes it (None: the plain variant, undamped elements and Kynema's tangent only)."""
    beta_prime = p[P_BETA_PRIME]
    gamma_prime = p[P_GAMMA_PRIME]
    kappa = p[P_STIFFNESS]
    w = ElementScratch(
        t.w_node_u, t.w_node_v, t.w_node_vd, t.w_qp_vec, t.w_qp_mat, t.w_blk, t.w_sums, t.w_acc, t.w_res,
        t.w_s3, t.w_s33, t.w_s4, t.w_s6, t.w_s66,
        t.w_ex_cols, t.w_ex_grad, t.w_ex_maps, t.w_ex_lam, t.w_ex_s3, t.w_ex_s4, t.w_pts, t.w_wm,
    )  # fmt: skip
    for e in range(t.nodes.shape[0]):
        nn = t.n_nodes[e]
        nq = t.n_qps[e]
        m = 6 * nn
        beam_element_terms(
            t.nodes[e, :nn], q, v, vd, tangent, gravity, beta_prime, gamma_prime, kappa, t.mu[e],
            t.qp_weight[e, :nq], t.qp_jacobian[e, :nq], t.shape_interp[e], t.shape_deriv[e],
            t.qp_r0[e, :nq], t.qp_x0_prime[e, :nq], t.qp_m_star[e, :nq], t.qp_c_star[e, :nq],
            t.w_node_fx[:nn], t.qp_fe[e, :nq], w, t.res[e, :m], t.mat[e], exact,
        )  # fmt: skip
        add_element_block(t, e, c, vals, b)


@njit
def beam_phase(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """The engine's beam unit (:mod:`kynemapy.engine.unit_call`, ``BEAMS``) for a model whose
    beams are undamped: Kynema's tangent (the exact one is :func:`beam_phase_full`'s), neither
    damping nor the exact stiffness compiled in.  Compiled on its own, the first time a model
    has beams, and called through its address; returns 0."""
    beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, None)
    return 0


@njit
def beam_phase_full(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """:func:`beam_elements` as the engine's full beam unit (``BEAMS_FULL``): damping and the exact
    tangent (``p[P_EXACT]``) included; compiled only for a model with damped beams or a
    simulation that asks for the exact tangent.  Returns 0."""
    beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, p[P_EXACT] != 0.0)
    return 0
