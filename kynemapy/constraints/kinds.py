"""Constraint kind codes (Kynema's enum values) and their sizes."""

from __future__ import annotations

import numpy as np

FIXED_BC = 1
PRESCRIBED_BC = 2
RIGID_JOINT = 3
REVOLUTE_JOINT = 4
ROTATION_CONTROL = 5
FIXED_BC_3DOF = 6
PRESCRIBED_BC_3DOF = 7
RIGID_JOINT_6DOF_TO_3DOF = 8

KIND_NAMES = {
    FIXED_BC: "fixed_bc",
    PRESCRIBED_BC: "prescribed_bc",
    RIGID_JOINT: "rigid_joint",
    REVOLUTE_JOINT: "revolute_joint",
    ROTATION_CONTROL: "rotation_control",
    FIXED_BC_3DOF: "fixed_bc_3dof",
    PRESCRIBED_BC_3DOF: "prescribed_bc_3dof",
    RIGID_JOINT_6DOF_TO_3DOF: "rigid_joint_6dof_to_3dof",
}

#: rows of the constraint, indexed by kind code
N_ROWS = np.array([6, 6, 6, 6, 5, 6, 3, 3, 3], dtype=np.int64)
#: 1 for one-node constraints (boundary conditions), 2 for joints
N_NODES = np.array([1, 1, 1, 2, 2, 2, 1, 1, 2], dtype=np.int64)
#: DOFs the constraint needs on its target node (6 = all, 3 = position)
TARGET_DOFS = np.array([6, 6, 6, 6, 6, 6, 3, 3, 3], dtype=np.int64)
