"""Kynema's geometrically exact beam (GEBT, displacement based, Legendre spectral elements).

Modules: :mod:`.quadrature` (GLL/Gauss points, quadrature rules), :mod:`.shape` (Lagrange
shape functions at points), :mod:`.sections` (sectional matrices at the quadrature points, the
set-up tables of an element), :mod:`.interpolate` (node values to a quadrature point),
:mod:`.qp` (strain, forces and matrices at one quadrature point), :mod:`.integrate` (one
element's residual and iteration matrix).  Not yet an element table of the step.
"""
