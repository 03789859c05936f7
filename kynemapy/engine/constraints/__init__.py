"""Constraint kernels: one module per kind, plus :mod:`.dispatch`.

Every kernel evaluates, for one constraint, the residual Φ (6,), the gradients
``B_b`` and ``B_t`` (6, 6) with respect to the base and target node DOFs
(translations, then spatial rotation increments δθ, ``q_rot ← exp(δθ) ⊗ q_rot``),
and on request the geometric stiffness ``K^Φ``: the derivative of ``Bᵀλ`` with
respect to the same rotation increments, as four (3, 3) rotation-rotation blocks
``K[a, b]`` (a: rows of node a ∈ {base=0, target=1}; b: columns of node b).
"""
