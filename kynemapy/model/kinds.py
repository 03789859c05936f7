"""Constraint kind codes (Kynema's enum values 1-8, then kynemapy's two-body joints) and their sizes."""

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
# two-body joints (not in Kynema; see docs/joints.md and constraints/body_joints.py)
BALL_JOINT = 9
HINGE_JOINT = 10
SLIDER_JOINT = 11
CYLINDRICAL_JOINT = 12
UNIVERSAL_JOINT = 13
PLANAR_JOINT = 14
WELD_JOINT = 15
DISTANCE_CONSTRAINT = 16

KIND_NAMES = {
    FIXED_BC: "fixed_bc",
    PRESCRIBED_BC: "prescribed_bc",
    RIGID_JOINT: "rigid_joint",
    REVOLUTE_JOINT: "revolute_joint",
    ROTATION_CONTROL: "rotation_control",
    FIXED_BC_3DOF: "fixed_bc_3dof",
    PRESCRIBED_BC_3DOF: "prescribed_bc_3dof",
    RIGID_JOINT_6DOF_TO_3DOF: "rigid_joint_6dof_to_3dof",
    BALL_JOINT: "ball_joint",
    HINGE_JOINT: "hinge_joint",
    SLIDER_JOINT: "slider_joint",
    CYLINDRICAL_JOINT: "cylindrical_joint",
    UNIVERSAL_JOINT: "universal_joint",
    PLANAR_JOINT: "planar_joint",
    WELD_JOINT: "weld_joint",
    DISTANCE_CONSTRAINT: "distance_constraint",
}

#: the two-body joints (each side a body or the ground; geometry in ``Model.constraint_geometry``)
BODY_JOINTS = (
    BALL_JOINT,
    HINGE_JOINT,
    SLIDER_JOINT,
    CYLINDRICAL_JOINT,
    UNIVERSAL_JOINT,
    PLANAR_JOINT,
    WELD_JOINT,
    DISTANCE_CONSTRAINT,
)

#: rows of the constraint, indexed by kind code
N_ROWS = np.array([6, 6, 6, 6, 5, 6, 3, 3, 3, 3, 5, 5, 4, 4, 3, 6, 1], dtype=np.int64)
#: 1 for one-node constraints (boundary conditions), 2 for joints
N_NODES = np.array([1, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2], dtype=np.int64)
#: DOFs the constraint needs on its target node (6 = all, 3 = position)
TARGET_DOFS = np.array([6, 6, 6, 6, 6, 6, 3, 3, 3, 6, 6, 6, 6, 6, 6, 6, 6], dtype=np.int64)
#: 1 for the kinds whose input (torque, force) enters the residual: revolute, hinge, slider
HAS_INPUT_LOAD = np.zeros(len(N_ROWS), dtype=np.int64)
HAS_INPUT_LOAD[[REVOLUTE_JOINT, HINGE_JOINT, SLIDER_JOINT]] = 1

#: the kinds that take each input (and the Kynema revolute joint's output), for input checks
ACCEPTS = {
    "prescribed displacement": (PRESCRIBED_BC, PRESCRIBED_BC_3DOF),
    "torque input": (REVOLUTE_JOINT, HINGE_JOINT),
    "force input": (SLIDER_JOINT,),
    "angle input": (ROTATION_CONTROL,),
    "revolute output": (REVOLUTE_JOINT,),
}
#: 1 for the kinds with outputs (angle or displacement, rate, acceleration): revolute, hinge, slider
HAS_OUTPUT = HAS_INPUT_LOAD.copy()
