"""Kynema's geometrically exact beam (GEBT, displacement based, Legendre spectral elements).

Modules
-------
:mod:`.quadrature`
    Legendre polynomials, GLL points and weights, Gauss and trapezoidal rules (set-up).
:mod:`.shape`
    Lagrange shape functions and derivatives tabulated at points, linear weights (set-up).
:mod:`.sections`
    sectional matrices at the quadrature points, an element's set-up tables
    (:func:`~.sections.element_tables`), sectional matrices from engineering properties (set-up).
:mod:`.interpolate`
    node values to one quadrature point, reference geometry (compiled).
:mod:`.qp`
    strain, elastic/damping forces and the O, P, Q, D_D1 … K_D2 matrices at one point, and the
    three per-point drivers (inertial, stiffness, damping); the inertial terms reuse the
    rigid-body kernels of :mod:`kynemapy.engine.elements.masses` (compiled).
:mod:`.integrate`
    one element's residual, stiffness, inertia and iteration matrix
    (:func:`~.integrate.beam_element_terms`, Kynema's ``CalculateQuadraturePointValues``).

Conventions (Kynema's): quaternions (w, x, y, z); a node's state is ``q = (u, r)`` with u the
displacement [m] and r the rotation quaternion of the displacement, so the current orientation
is ``r ⊗ r0``; strain and forces are in the inertial frame; the sectional matrices ``M*``,
``C*`` are given in the material frame with the first axis along the beam and are rotated at
every evaluation by the *current* orientation ``R(r ⊗ r0)`` of the quadrature point
(``r`` interpolated from the nodes and normalised, ``r0`` the reference orientation at the
point); ``mu`` damping is ``D* = diag(mu) C*``.

Not yet an element table of the step
------------------------------------
How the element maps onto the element-table pattern of :mod:`kynemapy.engine.elements`
(``TABLE``, ``FIELDS``, ``NODE_DOFS``, ``nodes(model)``, ``terms``; see :mod:`kynemapy.engine.elements.table` and
:mod:`kynemapy.engine.elements.springs`), for the wiring that comes next:

* **One row per element**, ``NODE_DOFS = 6``.  ``nodes`` (n, P) holds the element's nodes
  (P = its GLL count, order + 1), padded with −1 when elements of different orders share the
  table (P = the largest count): :func:`kynemapy.linalg.sparsity.node_rows` already gives −1
  rows for node −1, so the padded rows and slots drop out of the generic assembly.  Rows
  ``m = 6 P``, blocks ``(m, m)``: the block of nodes (i, j) is ``mat[6i:6i+6, 6j:6j+6]``,
  exactly the layout :func:`~.integrate.beam_element_terms` writes (``res`` (6P,),
  ``mat`` (6P, 6P)).
* **Own fields** (leading n, model arena unless noted): ``n_nodes`` (int), ``n_qps`` (int),
  ``mu`` (6), ``qp_weight`` (Q), ``qp_jacobian`` (Q), ``shape_interp``, ``shape_deriv`` (P, Q),
  ``qp_r0`` (Q, 4), ``qp_x0_prime`` (Q, 3), ``qp_m_star``, ``qp_c_star`` (Q, 6, 6) — all from
  :func:`~.sections.element_tables` at build time (Q = the largest quadrature count; the kernel
  must get the slices ``[:n_qps]``, since a padded point with J = 0 would give 0/0) — and the
  loads ``node_fx`` (P, 6) and ``qp_fe`` (Q, 6) (inputs).
  The trailing shapes depend on P and Q, so ``FIELDS`` needs symbolic trailing sizes
  (``"nodes_per"``, ``"qps_per"``) resolved per table in ``Data._pack``, as the standard fields
  already are.  Scratch: one :class:`~.integrate.ElementScratch` sized (P, Q) in the workspace
  arena (the kernel runs the elements one after the other).
* **terms** ``(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p)``: for each element e,
  :func:`~.integrate.beam_element_terms` with ``nodes = t.nodes[e, :t.n_nodes[e]]`` and the
  element's slices of the fields (nodes ``[:n_nodes]``, points ``[:n_qps]``),
  β′ = ``p[P_BETA_PRIME]``, γ′ = ``p[P_GAMMA_PRIME]``, κ = ``p[P_STIFFNESS]``, writing
  ``t.res[e]`` (residual ``∫ φ′ (F_C + F_D1) + φ (F_D + F_D2 + F_I − F_e − F_g) − F_X``, i.e.
  the integrated forces) and ``t.mat[e]``
  (``β′ M + γ′ G + κ K 𝒯`` per node pair: mass, gyroscopic + damping, and elastic + geometric
  + inertial stiffness times the column node's tangent ``blockdiag(I, T)``).  Whether κ should
  weigh the elastic stiffness in the initial-acceleration solve as it weighs the inertial one
  for masses is to be checked against Kynema there.
* **Order**: Kynema assembles beams, then masses, then springs; ``TABLES`` would become
  ``(beams, masses, springs)`` so that the sums into the residual and matrix keep Kynema's
  order.
* **Exact tangent** (``p[P_EXACT]``): Kynema's tangent is exact (finite-difference checked in
  ``tests/unit/test_beam_element.py``) for the mass, gyroscopic and damping-velocity parts and,
  when the nodes share one rotation, for the elastic, geometric and inertial stiffness; it is not
  (a) with relative node rotations (error ∝ the relative rotation: the variation of the
  normalised interpolated quaternion and of ``κ = 2 E(r) r′`` is linearised as if rotations
  interpolated linearly), (b) for damping: Kynema's ``P_D2`` lower-left block has the opposite
  sign of ``∂F_D2/∂u′`` and its ``K_D2`` lacks the ``x̃ᵀ`` factor (both fixes make the damped
  tangent exact at equal node rotations, checked by finite differences), (c) for gravity: the
  moment of gravity about the node, ``−(m g)~ η̃``, is missing, as for masses.
"""
