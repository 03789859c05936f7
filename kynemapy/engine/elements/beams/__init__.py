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
:mod:`.exact`
    the exact stiffness of the exact-tangent mode: derivatives of the point forces with respect
    to ``u′``, the point frame's rotation and ``κ``, chained with each node's rotation through
    the normalised quaternion interpolation (compiled).

Conventions (Kynema's): quaternions (w, x, y, z); a node's state is ``q = (u, r)`` with u the
displacement [m] and r the rotation quaternion of the displacement, so the current orientation
is ``r ⊗ r0``; strain and forces are in the inertial frame; the sectional matrices ``M*``,
``C*`` are given in the material frame with the first axis along the beam and are rotated at
every evaluation by the *current* orientation ``R(r ⊗ r0)`` of the quadrature point
(``r`` interpolated from the nodes and normalised, ``r0`` the reference orientation at the
point); ``mu`` damping is ``D* = diag(mu) C*``.

The element table of the step
-----------------------------
:mod:`.table` is the beam table of :data:`kynemapy.engine.elements.TABLES` (first: Kynema
assembles beams, then masses, then springs); :mod:`.loads` turns distributed loads into the
node loads they are equivalent to.  How the element maps onto the element-table pattern of
:mod:`kynemapy.engine.elements` (``TABLE``, ``FIELDS``, ``NODE_DOFS``, ``nodes(model)``,
``terms``; see :mod:`kynemapy.engine.elements.table` and :mod:`kynemapy.engine.elements.springs`):

* **One row per element**, ``NODE_DOFS = 6``.  ``nodes`` (n, P) holds the element's nodes
  (P = its GLL count, order + 1), padded with −1 when elements of different orders share the
  table (P = the largest count): :func:`kynemapy.linalg.sparsity.node_rows` gives −1 rows for
  node −1, so the padded rows and slots drop out of the generic assembly.  Rows ``m = 6 P``,
  blocks ``(m, m)``: the block of nodes (i, j) is ``mat[6i:6i+6, 6j:6j+6]``, the layout
  :func:`~.integrate.beam_element_terms` writes.
* **Own fields** (the model's ``beam_*`` arrays) with trailing sizes ``"P"`` and ``"Q"`` (the
  largest quadrature count) resolved per table by its ``counts(model)``; the kernel takes each
  element's slices ``[:n_nodes]``, ``[:n_qps]`` (a padded point has J = 0, which would give
  0/0).  Scratch (``SCRATCH``): one :class:`~.integrate.ElementScratch`, once per table.
* **terms**: for each element :func:`~.integrate.beam_element_terms`, β′, γ′, κ from the
  step coefficients, writing the integrated forces into ``res`` and ``β′ M + γ′ G + κ K 𝒯``
  into ``mat``.  In the initial-acceleration solve κ = 0, so the matrix is the mass matrix.
* **Exact tangent** (``p[P_EXACT]``, ``StepParameters(geometric_stiffness=True)``): the
  stiffness is the exact derivative of the residual (:mod:`.exact`), finite-difference checked
  to ~1e-11 of the largest entry in ``tests/unit/test_beam_exact_tangent.py`` (curved, twisted,
  moving element with different node rotations, with damping and gravity, full iteration
  matrix with non-identity tangent operators); the mass, gyroscopic and damping-velocity parts
  are Kynema's (already exact), the residual is the same to the bit.  Kynema's stiffness
  (the default mode, reproduced to the bit) is exact only when the nodes share one rotation
  and without damping or gravity: (a) it linearises the normalised interpolated quaternion and
  ``κ = 2 E(r) r′`` as if rotations interpolated linearly (error ∝ the relative node
  rotation), (b) its ``P_D2`` lower-left block has the opposite sign of ``∂F_D2/∂u′`` and its
  ``K_D2`` lacks the ``x̃ᵀ`` factor, (c) the moment of gravity about the section,
  ``−(m g)~ η̃``, is missing, as for masses.  The exact stiffness gives Newton's quadratic
  convergence on strongly bent coarse beams (order-6 rollup: 9 iterations instead of 17).
"""
