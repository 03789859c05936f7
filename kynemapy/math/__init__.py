"""The package's one layer of quaternion, SO(3) and 3-vector point kernels (numba).

* :mod:`~kynemapy.math.quaternion`: quaternion formulas as Kynema evaluates them;
* :mod:`~kynemapy.math.so3`: SO(3) and 3×3 kernels on arrays, writing into ``out``;
* :mod:`~kynemapy.math.vectors`: 3-vector algebra on 3-tuples of local scalars.
"""
