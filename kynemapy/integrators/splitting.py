"""Symmetric splitting: free-rotation splitting with torque kicks (McLachlan; Reich; Touma–Wisdom;
Fassò 2003; the Vilmart seed's ``R₁(h/2) R₂(h/2) R₃(h) R₂(h/2) R₁(h/2)``).

The free Hamiltonian ``H = Σ Πᵢ²/(2Iᵢ)`` is split into its three terms; the flow of
``Hᵢ = Πᵢ²/(2Iᵢ)`` over τ is the rotation about body axis ``i`` by ``τ Πᵢ/Iᵢ`` (``Πᵢ`` is constant
along it): ``R ← R rotᵢ``, ``Π ← rotᵢᵀ Π``.  One step is

    Π ← Π + ½h T(tₙ, Rₙ);   Rₐ(½h) R_b(½h) R_c(h) R_b(½h) Rₐ(½h);   Π ← Π + ½h T(tₙ₊₁, Rₙ₊₁)

(second order, symplectic, time-reversible; exact spatial momentum through the free part).  The
axis order ``(a, b, c)`` comes from ``iopts``; ``integrate``'s default is (smallest, middle,
largest moment of inertia): the largest in the middle, the smallest outside.  Of the six orders
it was the most accurate on the Vilmart body and the Gazebo box, and for the energy of the
Simo–Wong top (its symmetry axis within 5 % of the best order); see ``tests/verification/test_integrators.py``.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.integrators.torques import body_torque


@njit
def rotate_about_body_axis(axis, angle, R, v):
    """``R ← R rot_axis(angle)``, ``v ← rot_axis(angle)ᵀ v`` in place: the exact flow of ``H_i``.

    Parameters
    ----------
    axis : int, the body axis 0, 1 or 2.
    angle : float, the rotation angle [rad]; ``τ Π_i / I_i`` for the flow of
        ``H_i = Π_i²/(2 I_i)`` over the time τ.
    R : (3, 3) float64, body-to-world rotation, updated in place.
    v : (3,) float64, a body-frame vector (the momentum ``Π``), updated in place.
    """
    j = (axis + 1) % 3
    k = (axis + 2) % 3
    c = math.cos(angle)
    s = math.sin(angle)
    for r in range(3):
        rj = R[r, j]
        rk = R[r, k]
        R[r, j] = c * rj + s * rk
        R[r, k] = c * rk - s * rj
    vj = v[j]
    vk = v[k]
    v[j] = c * vj + s * vk
    v[k] = c * vk - s * vj


@njit(inline=True)
def free_rotation_split(axes, h, inertia, R, Pi):
    """``R_a(½h) R_b(½h) R_c(h) R_b(½h) R_a(½h)`` applied to ``(R, Π)`` in place; ``axes`` (3,) int64."""
    a, b, c = axes[0], axes[1], axes[2]
    hh = 0.5 * h
    rotate_about_body_axis(a, hh * Pi[a] / inertia[a], R, Pi)
    rotate_about_body_axis(b, hh * Pi[b] / inertia[b], R, Pi)
    rotate_about_body_axis(c, h * Pi[c] / inertia[c], R, Pi)
    rotate_about_body_axis(b, hh * Pi[b] / inertia[b], R, Pi)
    rotate_about_body_axis(a, hh * Pi[a] / inertia[a], R, Pi)


@njit(inline=True)
def step_splitting(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One splitting step (axis order ``iopts[0:3]``); ``T``: body torque at ``(t, R)`` on entry, at the end on exit."""
    hh = 0.5 * h
    for i in range(3):
        Pi[i] += hh * T[i]
    free_rotation_split(iopts, h, inertia, R, Pi)
    body_torque(torque_fn, torque_params, force_params, t + h, R, T, vwork[5])
    for i in range(3):
        Pi[i] += hh * T[i]
        W[i] = Pi[i] / inertia[i]
    return 0
