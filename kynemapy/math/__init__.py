"""Quaternion and SO(3) point kernels (numba, write into ``out`` arguments)."""
