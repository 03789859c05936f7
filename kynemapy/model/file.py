"""Model files: describe a kynemapy model, its loads, step parameters and run in TOML.

``load_model_file(path)`` reads a TOML file, checks it strictly and returns a
:class:`ModelFile` holding the built :class:`~kynemapy.Model`, the node and
constraint ids by name, the :class:`~kynemapy.StepParameters`, the loads (as
functions of time), the run length and the output settings::

    import kynemapy as kp
    from kynemapy.model.file import load_model_file

    mf = load_model_file("examples/heavy_top.toml")
    sim = kp.Simulation(mf.model, mf.params)
    for i in range(mf.n_steps):
        mf.apply_loads(sim, i * mf.params.h)   # loads for step i at its start time
        sim.step()
    sim.state.q[mf.nodes["top"]]

``parse_model_file(text, source)`` does the same for TOML text.  ``kynemapy/__init__.py``
does not re-export these names: import them from ``kynemapy.model.file``.

Schema
------
Units are SI throughout: m, kg, s, rad, N, N m.  Vectors are TOML arrays of numbers
(integers are accepted where floats are expected).  Positions, axes, velocities and
loads are in the inertial (world) frame; quaternions are (w, x, y, z).

``[model]`` (optional)
    ``gravity = [gx, gy, gz]``  gravitational acceleration [m/s²], default [0, 0, 0].

``[[node]]`` (one per node, at least one; node ids follow file order, from 0)

    ================ ================================================================
    key              value
    ================ ================================================================
    ``name``         string, unique (required).
    ``position``     [x, y, z] reference position [m], default [0, 0, 0].
    ``orientation``  [w, x, y, z] reference orientation, unit quaternion, default [1, 0, 0, 0].
    ``velocity``     [u̇x, u̇y, u̇z, ωx, ωy, ωz] initial velocity [m/s, rad/s], default zeros.
    ``acceleration`` [üx, üy, üz, ω̇x, ω̇y, ω̇z] initial acceleration [m/s², rad/s²], optional.
                     Leave it out on every node and consistent accelerations are computed
                     at t = 0; give it on some nodes and the others start from zero (Kynema).
    ``displacement`` [ux, uy, uz, w, x, y, z] initial displacement [m] and rotation, optional.
    ================ ================================================================

``[[beam]]`` (a whole geometrically exact beam, :meth:`~kynemapy.ModelBuilder.add_beam`; its
nodes follow the ``[[node]]`` nodes, named ``"<name>.0"`` (root) ... in span order, and
``"<name>.root"``, ``"<name>.tip"`` name its ends wherever a node is named)

    ``name`` (required, unique), ``points`` ([[x, y, z], ...] m, required), ``section_s``
    (span fractions, first 0, last 1, required), ``m_star``, ``c_star`` (one 6×6 matrix per
    section, or its 6 diagonal values, required), and the optional keys of ``add_beam``:
    ``point_s``, ``twist`` (rad: one number, or an array at ``twist_s`` or at the sections),
    ``twist_s``, ``order`` (10), ``n_elements`` (1), ``quadrature`` ("gll"),
    ``quadrature_style`` ("segmented"), ``section_refinement`` (0, or enough to integrate), ``mu``, ``root_position``,
    ``root_orientation``, ``root_velocity``, ``root_acceleration``.

``[[mass]]`` (a rigid body on a node)

    ================ ================================================================
    key              value
    ================ ================================================================
    ``node``         node name (required).
    ``mass``         [kg], with ``inertia`` [kg m²] about the node in the body frame:
                     3 principal values or a 3×3 matrix; or instead
    ``mass_matrix``  6×6 material mass matrix M* [kg, kg m, kg m²].
    ================ ================================================================

``[[spring]]`` (linear spring between two node positions)
    ``nodes = ["a", "b"]``, ``stiffness`` [N/m] >= 0, ``undeformed_length`` [m] >= 0 (all required).

``[[constraint]]`` (constraint ids follow file order, from 0)
    ``kind`` (required) and ``name`` (optional, unique), plus the keys of the kind:

    ============================ ====================================================
    kind                         keys
    ============================ ====================================================
    ``fixed_bc``                 ``node``
    ``fixed_bc_3dof``            ``node``
    ``prescribed_bc``            ``node``, ``initial_displacement`` (opt., [u m, quaternion])
    ``prescribed_bc_3dof``       ``node``, ``initial_displacement`` (opt., [ux, uy, uz] m)
    ``rigid_joint``              ``base``, ``target``
    ``rigid_joint_6dof_to_3dof`` ``base``, ``target``
    ``revolute_joint``           ``base``, ``target``, ``axis`` (opt., [-]), ``brake_torque``
                                 (opt., N m, Kynema's: acts as −τ; ``torque`` is its deprecated name)
    ``rotation_control``         ``base``, ``target``, ``axis`` (required), ``angle`` (opt., rad)
    ``spherical_joint``          ``body``, ``point`` ([x, y, z] m)
    ``ball_joint``               ``body_a``, ``body_b``, ``point`` (m), and a cone limit's keys
                                 (opt.): ``cone_axis``, ``cone_angle`` (rad), ``cone_stiffness``
                                 (N m/rad), ``cone_damping`` (N m s/rad)
    ``hinge_joint``              ``body_a``, ``body_b``, ``point`` (m), ``axis``, ``torque`` (opt., N m),
                                 and the drive keys (below)
    ``slider_joint``             ``body_a``, ``body_b``, ``point`` (m), ``axis``, ``force`` (opt., N),
                                 and the drive keys (below)
    ``cylindrical_joint``        ``body_a``, ``body_b``, ``point`` (m), ``axis``
    ``universal_joint``          ``body_a``, ``body_b``, ``point`` (m), ``axis_a``, ``axis_b``
    ``planar_joint``             ``body_a``, ``body_b``, ``point`` (m), ``normal``
    ``weld_joint``               ``body_a``, ``body_b``, ``point`` (m)
    ``distance_constraint``      ``body_a``, ``body_b``, ``point_a``, ``point_b`` (m), ``length`` (opt., m)
    ``point_on_line_joint``      ``body_a``, ``body_b``, ``point`` (m), ``axis``
    ``point_on_plane_joint``     ``body_a``, ``body_b``, ``point`` (m), ``normal``
    ``generic_joint``            ``body_a``, ``body_b``, ``point`` (m), ``locked`` (6 booleans:
                                 translations x, y, z, rotations x, y, z), ``frame`` (opt.,
                                 3×3 rotation matrix, its columns the joint axes, row by row)
    ============================ ====================================================

    The two-body joints (``ball_joint`` ... ``generic_joint``, see docs/joints.md) name
    their bodies by node name, or ``"ground"`` for the fixed world (unless a node is named
    ``"ground"``, which is then meant); every key but ``torque``, ``force``, ``length``,
    ``frame`` and the drive keys is required.

    Drive keys of ``hinge_joint`` (units rad, N m) and ``slider_joint`` (m, N), all optional
    (docs/joints.md, "Drives, springs, dampers and friction"): ``stiffness`` [N m/rad, N/m],
    ``rest`` [rad, m], ``damping`` [N m s/rad, N s/m], ``friction`` [N m, N],
    ``friction_rate`` [rad/s, m/s], compliant travel limits ``limits`` ([lower, upper] [rad, m]),
    ``limit_stiffness`` [N m/rad, N/m], ``limit_damping`` [N m s/rad, N s/m], or hard ones with
    ``limits`` and ``limit_restitution`` [-] (docs/joints.md, "Hard joint limits")
    (:meth:`~kynemapy.ModelBuilder.add_hinge_joint`), and a
    servo (:meth:`~kynemapy.ModelBuilder.set_servo`) with ``servo_kp``, ``servo_kd``,
    ``servo_position``, ``servo_rate``, ``servo_feedforward``, ``servo_limit``.

    ``spherical_joint`` adds a pin node and two constraints (a 6→3 rigid joint and a 3-DOF
    fixed BC, see :meth:`~kynemapy.ModelBuilder.add_spherical_joint`); when it is named
    ``"ball"``, the ids are ``nodes["ball.pin"]``, ``constraints["ball"]`` (the joint) and
    ``constraints["ball.bc"]``.  The pin node is created after every ``[[node]]``.

``[[load]]`` (external load on a node; several loads on one node add up)
    ``node``          node name (required).
    ``force``         [fx, fy, fz] [N], default zeros.
    ``moment``        [mx, my, mz] [N m], default zeros.
    Each component is a number or a string expression of the time ``t`` [s], e.g.
    ``"1e6*sin(2*pi*t/20)"``.  The grammar is restricted: numbers, ``t``, ``pi``,
    ``+ - * / **`` (Python precedence: ``-t**2`` is ``-(t**2)``), parentheses and the
    functions ``sin``, ``cos``, ``exp``, ``sqrt``.  It is parsed with :mod:`ast` and only
    those nodes are evaluated (never ``eval``).

``[[shape]]`` (collision shape on a body, docs/contact.md)
    ``kind`` (``"sphere"``, ``"capsule"``, ``"box"``) and ``node`` (required); sphere: ``radius``
    [m], ``center`` (opt., [m], default the node); capsule: ``radius``, ``point_a``, ``point_b``
    [m]; box: ``half_extents`` [m], ``center`` (opt.), ``axes`` (opt., 3×3 rotation matrix, its
    columns the box's axes, row by row).  Points are world coordinates at the reference
    configuration.  ``group``, ``mask`` (opt., integer bit masks: the pair filter).

``[[ground]]`` (ground half-space with its contact law, docs/contact.md)
    ``normal`` (opt., default [0, 0, 1]), ``offset`` [m] (opt., 0): the plane ``n · y = offset``;
    ``law`` (opt., ``"compliant"`` or ``"hard"``, default ``"compliant"``); the compliant law:
    ``stiffness`` [N/m^exponent] (required), ``damping`` [N s/m, or N s/m^(1+e) with
    ``damping_model = "hunt_crossley"``], ``friction`` (μ), ``exponent`` (e >= 1),
    ``slip_velocity`` [m/s] (the friction's regularization, default 1e-3); the hard law:
    ``restitution`` (Newton's e in [0, 1], default 0) and ``friction`` (μ) only; ``group``, ``mask``.

``[body_contact]`` (optional: shapes on different bodies touch, docs/contact.md)
    the contact law of :meth:`~kynemapy.ModelBuilder.set_body_contact`: ``stiffness`` (required),
    ``damping``, ``friction``, ``exponent``, ``damping_model``, ``slip_velocity``, as in ``[[ground]]``;
    or ``law = "hard"`` with ``restitution`` and ``friction`` only (models of free bodies).

``[step]`` (required)
    ``h`` time step [s] (required); ``rho_inf`` ρ∞ ∈ [0, 1] (default 0); ``max_iter``
    (default 10); ``atol`` (1e-5), ``rtol`` (1e-3); ``geometric_stiffness`` (false);
    also ``dynamic`` (true), ``static_load_retries`` (20), ``convergence`` ("kynema" or
    "roundoff") and ``predictor`` ("kynema" or "last"), see :class:`~kynemapy.StepParameters`.

``[run]`` (optional)
    ``t_end`` [s] or ``n_steps``, not both.  With ``t_end`` the number of steps is t_end/h
    rounded up (a ratio within 1e-9 of an integer counts as that integer).

``[output]`` (optional)
    ``path`` (string, as written in the file, not resolved), ``every`` (write every
    n-th step, default 1), ``block`` (rows a killed run may lose at most; the rows are
    written in buffers of half a block; default about 4 MiB of rows).

``[step_control]`` (optional; needs ``[run] t_end``)
    Run with step-size control (:class:`~kynemapy.StepControl`, ``Simulation.run(...,
    control=...)``): ``rtol``, ``atol``, ``scheme`` ("generalized-alpha" or "extrapolated"),
    ``scope`` ("step" or "run"), ``newton`` ("auto" or "params"), ``h_min``, ``h_max``,
    ``h_initial`` [s], ``safety``, ``fac_min``, ``fac_max``, ``max_attempts``.  The rows stay
    on the grid of ``every`` steps of ``[step] h``, interpolated by the scheme.

Errors
------
Every problem raises :class:`ModelFileError` (a :class:`~kynemapy.ModelError`) whose
message starts with ``<file>, line <n>:`` and names the item (``mass #2 (node 'top')``,
items counted from 1 in file order) and the key: TOML syntax errors, unknown tables
or keys, wrong types, unknown or duplicate names, missing keys, unsafe or invalid
load expressions and the builder's own checks (e.g. a negative mass).  The values of
``[step_control]`` are read here by type; their ranges and combinations (a tolerance > 0,
``h_min <= h_max``, ...) are :class:`~kynemapy.StepControl`'s to check, when the run is made
(``kynemapy run`` names the table and exits with status 2).
"""

from __future__ import annotations

import ast
import json
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from kynemapy.engine.params import StepParameters
from kynemapy.model import Model
from kynemapy.model.builder import GROUND, ModelBuilder, ModelError
from kynemapy.model.registry import model_tables
from kynemapy.model.registry.kind import READ_AFTER

__all__ = ["Expression", "Load", "ModelFile", "ModelFileError", "load_model_file", "parse_model_file"]


class ModelFileError(ModelError):
    """A model file that cannot be read or built.

    ``source`` is the file, ``line`` the 1-based line the problem was found on (None
    where no line applies); the message starts with ``<source>, line <line>:``.
    """

    def __init__(self, message: str, source: str = "<string>", line: int | None = None) -> None:
        where = f"{source}, line {line}" if line is not None else str(source)
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line


# ------------------------------------------------------------------------------------------------
# load expressions
_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sin": math.sin,
    "cos": math.cos,
    "exp": math.exp,
    "sqrt": math.sqrt,
}
_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: math.pow,  # float power: raises instead of returning a complex or a huge integer
}
_UNARY: dict[type, Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_DESCRIBE = {
    ast.Attribute: "attribute access",
    ast.Lambda: "lambda",
    ast.Subscript: "subscripts",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
    ast.IfExp: "conditional expressions",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.ListComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.NamedExpr: "assignment expressions",
    ast.JoinedStr: "f-strings",
    ast.Starred: "starred arguments",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}
_MAX_EXPRESSION_LENGTH = 2000
_GRAMMAR = "numbers, t, pi, + - * / **, parentheses, sin, cos, exp, sqrt"


class _ExpressionSyntaxError(ValueError):
    pass


def _compile_node(node: ast.AST) -> tuple[Callable[[float], float], bool]:
    """A closure evaluating ``node`` at t, and whether it depends on t."""
    if isinstance(node, ast.Expression):
        return _compile_node(node.body)
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _ExpressionSyntaxError(f"constant {value!r} is not a real number")
        c = float(value)
        return (lambda t: c), False
    if isinstance(node, ast.Name):
        if node.id == "t":
            return (lambda t: t), True
        if node.id == "pi":
            return (lambda t: math.pi), False
        if node.id in _FUNCTIONS:
            raise _ExpressionSyntaxError(f"function '{node.id}' must be called, e.g. {node.id}(t)")
        raise _ExpressionSyntaxError(f"unknown name '{node.id}'")
    if isinstance(node, ast.BinOp):
        op = _BINARY.get(type(node.op))
        if op is None:
            raise _ExpressionSyntaxError(f"operator {type(node.op).__name__} is not allowed")
        (left, dl), (right, dr) = _compile_node(node.left), _compile_node(node.right)
        return (lambda t: op(left(t), right(t))), dl or dr
    if isinstance(node, ast.UnaryOp):
        uop = _UNARY.get(type(node.op))
        if uop is None:
            raise _ExpressionSyntaxError(f"operator {type(node.op).__name__} is not allowed")
        operand, d = _compile_node(node.operand)
        return (lambda t: uop(operand(t))), d
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            what = _DESCRIBE.get(type(node.func), type(node.func).__name__)
            raise _ExpressionSyntaxError(f"calling {what} is not allowed")
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None:
            raise _ExpressionSyntaxError(f"function '{node.func.id}' is not allowed")
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise _ExpressionSyntaxError(f"{node.func.id}() takes exactly one argument")
        arg, d = _compile_node(node.args[0])
        return (lambda t: fn(arg(t))), d
    what = _DESCRIBE.get(type(node), type(node).__name__)
    raise _ExpressionSyntaxError(f"{what} is not allowed")


class Expression:
    """A load component given as a safe expression of the time t [s]; call it with t.

    Calling it returns the value (a float, in the unit of the component it gives) and raises
    :class:`ModelFileError` (naming ``label`` and the text) when the value cannot be
    computed or is not finite.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"1e6*sin(2*pi*t/20)"`` (at most 2000 characters; the grammar
        of the module docstring's ``[[load]]``).
    label : str, default "expression"
        What the expression gives (e.g. ``"load #1 (node 'top') force[0]"``), named in errors.
    source : str, default "<string>"
        The file it came from, named in errors.
    line : int or None, default None
        The 1-based line of the file, named in errors (None: none).

    Attributes
    ----------
    depends_on_time : bool
        Whether the expression uses ``t``.

    Raises
    ------
    ValueError
        ``text`` is too long, not an expression, or uses anything outside the grammar.
    """

    __slots__ = ("_fn", "depends_on_time", "label", "line", "source", "text")

    def __init__(self, text: str, label: str = "expression", source: str = "<string>", line: int | None = None) -> None:
        self.text = text
        self.label = label
        self.source = source
        self.line = line
        if len(text) > _MAX_EXPRESSION_LENGTH:
            raise _ExpressionSyntaxError(f"longer than {_MAX_EXPRESSION_LENGTH} characters")
        try:
            tree = ast.parse(text.strip(), mode="eval")
            self._fn, self.depends_on_time = _compile_node(tree)
        except _ExpressionSyntaxError as exc:
            raise _ExpressionSyntaxError(f"{exc} (allowed: {_GRAMMAR})") from None
        except SyntaxError as exc:
            raise _ExpressionSyntaxError(f"syntax error ({exc.msg})") from None
        except (RecursionError, MemoryError, ValueError):
            raise _ExpressionSyntaxError("too deeply nested or malformed") from None

    def __call__(self, t: float) -> float:
        try:
            value = self._fn(float(t))
        except (ArithmeticError, ValueError, RecursionError) as exc:
            raise ModelFileError(
                f"{self.label} = {self.text!r}: cannot evaluate at t = {t!r} s: {exc}", self.source, self.line
            ) from None
        if not math.isfinite(value):
            raise ModelFileError(
                f"{self.label} = {self.text!r}: not finite at t = {t!r} s (got {value!r})", self.source, self.line
            )
        return value

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


# ------------------------------------------------------------------------------------------------
# results
LoadComponent = float | Expression


@dataclass(frozen=True)
class Load:
    """An external load on a node, inertial frame.

    Attributes
    ----------
    node : int
        The node id.
    components : tuple of (float or Expression)
        ``(fx, fy, fz [N], mx, my, mz [N m])``, each a constant or an :class:`Expression`
        of t [s].
    label : str, default ""
        The load's name in messages (e.g. ``"load #1 (node 'top')"``).
    """

    node: int
    components: tuple[LoadComponent, ...]
    label: str = ""

    def evaluate(self, t: float) -> np.ndarray:
        """The load at a time.

        Parameters
        ----------
        t : float [s]
            The time.

        Returns
        -------
        (6,) ndarray of float
            ``(force [N], moment [N m])``, inertial frame.

        Raises
        ------
        ModelFileError
            An expression cannot be evaluated at ``t`` or is not finite there.
        """
        return np.array([c(t) if isinstance(c, Expression) else c for c in self.components], dtype=np.float64)


@dataclass(frozen=True)
class ModelFile:
    """A loaded model file (see the module docstring for the schema).

    Attributes
    ----------
    model : Model
        The built model.
    nodes : dict[str, int]
        Node name → node id.
    constraints : dict[str, int]
        Constraint name → constraint id (the named constraints).
    params : StepParameters
        Step parameters from ``[step]``.
    loads : tuple[Load, ...]
        The ``[[load]]`` items in file order.
    output : dict[str, Any]
        ``{"path": str | None, "every": int, "block": int | None}`` (None: automatic block).
    t_end : float or None
        End time [s] (``[run] t_end``, or n_steps·h); None without ``[run]``.
    n_steps : int or None
        Number of steps (``[run] n_steps``, or from t_end); None without ``[run]``.
    source : Path
        The file read.
    _loaded_nodes : tuple of int
        The ids of the nodes that carry a load (the rows :meth:`apply_loads` overwrites);
        internal, default ``()``.
    beams : dict[str, Any]
        Beam name → :class:`~kynemapy.model.beams.Beam` (its node and element ids).
    step_control : dict[str, Any] or None
        The keyword arguments of :class:`~kynemapy.StepControl` from ``[step_control]``
        (checked when it is built), or None without that table.
    """

    model: Model
    nodes: dict[str, int]
    constraints: dict[str, int]
    params: StepParameters
    loads: tuple[Load, ...]
    output: dict[str, Any]
    t_end: float | None
    n_steps: int | None
    source: Path
    _loaded_nodes: tuple[int, ...] = field(default=(), repr=False, compare=False)
    beams: dict[str, Any] = field(default_factory=dict)
    step_control: dict[str, Any] | None = None

    def load_vector(self, t: float) -> np.ndarray:
        """The sum of every load at a time.

        Parameters
        ----------
        t : float [s]
            The time.

        Returns
        -------
        (N, 6) ndarray of float
            Per node ``(force [N], moment [N m])``, inertial frame (zeros where no load).
        """
        f = np.zeros((self.model.n_nodes, 6))
        for load in self.loads:
            f[load.node] += load.evaluate(t)
        return f

    def apply_loads(self, sim: Any, t: float) -> None:
        """Write every load at time t [s] into ``sim.inputs.f`` (force N, moment N m, inertial frame).

        Rows of nodes that carry a load are overwritten with the sum of their loads;
        rows of other nodes are left as they are.

        Parameters
        ----------
        sim : Simulation
            A simulation of this file's model (anything with ``inputs.f`` (N, 6)).
        t : float [s]
            The time (the start of the step the loads are for).
        """
        f = sim.inputs.f
        for node in self._loaded_nodes:
            f[node] = 0.0
        for load in self.loads:
            f[load.node] += load.evaluate(t)

    def simulation(self, consistent_initial_accelerations: bool | None = None) -> Any:
        """Deprecated: ``kp.Simulation(mf.model, mf.params)``, which this returns.

        It warns with a ``DeprecationWarning``.  A model file describes a model; the
        simulation layer builds on it, not the other way round.

        Parameters
        ----------
        consistent_initial_accelerations : bool or None, default None
            Passed to :class:`~kynemapy.Simulation`.

        Returns
        -------
        Simulation
            A new simulation of :attr:`model` with :attr:`params`.
        """
        import warnings

        import kynemapy  # the public entry point, not the run layer: the model never imports it

        warnings.warn(
            "ModelFile.simulation() is deprecated: use kp.Simulation(mf.model, mf.params)",
            DeprecationWarning,
            stacklevel=2,
        )
        return kynemapy.Simulation(self.model, self.params, consistent_initial_accelerations)


# ------------------------------------------------------------------------------------------------
# line numbers: TOML parsers do not report them, so scan the source text
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_Section = tuple[str, int | None]


def _parse_key(line: str, pos: int) -> tuple[list[str], int]:
    """Dotted key starting at ``pos``: its parts and the position after it."""
    parts: list[str] = []
    n = len(line)
    while True:
        while pos < n and line[pos] in " \t":
            pos += 1
        if pos >= n:
            return parts, pos
        c = line[pos]
        if c == '"':
            j = pos + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            raw = line[pos + 1 : j]
            try:
                parts.append(json.loads(f'"{raw}"'))
            except ValueError:
                parts.append(raw)
            pos = j + 1
        elif c == "'":
            j = line.find("'", pos + 1)
            j = n if j < 0 else j
            parts.append(line[pos + 1 : j])
            pos = j + 1
        else:
            m = _BARE_KEY.match(line, pos)
            if m is None:
                return parts, pos
            parts.append(m.group())
            pos = m.end()
        while pos < n and line[pos] in " \t":
            pos += 1
        if pos < n and line[pos] == ".":
            pos += 1
            continue
        return parts, pos


def _scan_value(line: str, pos: int, depth: int, ml: str | None) -> tuple[int, str | None]:
    """Follow strings, comments and brackets from ``pos`` to the end of the line."""
    i, n = pos, len(line)
    while i < n:
        if ml is not None:
            if ml == '"""':
                j = i
                while j < n and not line.startswith('"""', j):
                    j += 2 if line[j] == "\\" else 1
            else:
                j = line.find("'''", i)
                j = n if j < 0 else j
            if j >= n:
                return depth, ml
            i = j + 3
            while i < n and line[i] == ml[0]:
                i += 1
            ml = None
            continue
        c = line[i]
        if c == "#":
            break
        if c in "\"'":
            if line.startswith(c * 3, i):
                ml = c * 3
                i += 3
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if (c == '"' and line[j] == "\\") else 1
            i = j + 1
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        i += 1
    return depth, ml


class _Lines:
    """Line numbers of table headers and keys in a TOML text."""

    def __init__(self, text: str) -> None:
        self.headers: dict[_Section, int] = {}
        self.keys: dict[tuple[_Section, str], int] = {}
        self.n_lines = max(1, len(text.splitlines()))
        counts: dict[str, int] = {}
        section: _Section = ("", None)
        depth, ml = 0, None
        for lineno, line in enumerate(text.splitlines(), start=1):
            pos = 0
            if ml is None and depth <= 0:
                depth = 0
                stripped = line.lstrip()
                pos = len(line) - len(stripped)
                if stripped.startswith("["):
                    array = stripped.startswith("[[")
                    parts, _ = _parse_key(line, pos + (2 if array else 1))
                    name = ".".join(parts)
                    if array:
                        section = (name, counts.get(name, 0))
                        counts[name] = section[1] + 1  # type: ignore[operator]
                    else:
                        section = (name, None)
                    self.headers.setdefault(section, lineno)
                    if len(parts) > 1:  # [a.b] or [[a.b]]: key b of the enclosing table a
                        parent = parts[0]
                        parent_section = (parent, counts[parent] - 1) if parent in counts else (parent, None)
                        self.keys.setdefault((parent_section, parts[1]), lineno)
                    else:
                        self.keys.setdefault((("", None), name), lineno)
                    continue
                if not stripped or stripped.startswith("#"):
                    continue
                parts, pos = _parse_key(line, pos)
                if parts:
                    self.keys.setdefault((section, parts[0]), lineno)
                    if section == ("", None) and len(parts) > 1:  # a.b = … at the top level
                        self.keys.setdefault(((parts[0], None), parts[1]), lineno)
                eq = line.find("=", pos)
                pos = len(line) if eq < 0 else eq + 1
            depth, ml = _scan_value(line, pos, depth, ml)

    def line(self, section: _Section, key: str | None = None) -> int | None:
        """Line of ``key`` in ``section``, else of the section's header, else of the table's key."""
        if key is not None and (section, key) in self.keys:
            return self.keys[(section, key)]
        if section in self.headers:
            return self.headers[section]
        return self.keys.get((("", None), section[0]))


# ------------------------------------------------------------------------------------------------
# checked access to one table
_CORE_TABLES = ("model", "node", "beam", "mass", "constraint", "load")
_RUN_TABLES = ("step", "run", "output", "step_control")
_CORE_ARRAY_TABLES = frozenset({"node", "beam", "mass", "constraint", "load"})


def _tables() -> tuple[str, ...]:
    """The allowed top-level tables: the core's, each followed by the kinds' tables read after it
    (:mod:`kynemapy.model.registry`), then the run's."""
    kinds = model_tables()
    listed = (name for core in _CORE_TABLES for name in (core, *(t.name for t in kinds if t.after == core)))
    return (*listed, *_RUN_TABLES)


def _is_array_table(name: str) -> bool:
    return name in _CORE_ARRAY_TABLES or any(t.name == name and t.array for t in model_tables())


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__  # dates and times


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({_toml_type(value)})"


class _Table:
    """One table of the file with the checks and messages of its keys."""

    def __init__(self, reader: _Reader, table: str, index: int | None, data: dict[str, Any], label: str) -> None:
        self.reader = reader
        self.table = table
        self.index = index
        self.data = data
        self.label = label

    @property
    def header(self) -> str:
        return f"[[{self.table}]]" if _is_array_table(self.table) else f"[{self.table}]"

    def line(self, key: str | None = None) -> int | None:
        return self.reader.lines.line((self.table, self.index), key)

    def error(self, message: str, key: str | None = None) -> ModelFileError:
        return ModelFileError(f"{self.label}: {message}", self.reader.source, self.line(key))

    def check_keys(self, allowed: tuple[str, ...], context: str = "") -> None:
        for key in self.data:
            if key not in allowed:
                where = context or f"table {self.header}"
                raise self.error(f"unknown key '{key}' in {where} (allowed keys: {', '.join(allowed)})", key)

    def require(self, *keys: str) -> None:
        for key in keys:
            if key not in self.data:
                raise self.error(f"missing required key '{key}' in table {self.header}")

    def wrong_type(self, key: str, expected: str) -> ModelFileError:
        return self.error(f"key '{key}': expected {expected}, got {_show(self.data[key])}", key)

    def number(self, key: str, default: float | None = None, unit: str = "") -> float | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if not _is_number(value):
            raise self.wrong_type(key, f"a number{f' [{unit}]' if unit else ''}")
        return float(value)

    def integer(self, key: str, default: int | None = None) -> int | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong_type(key, "an integer")
        return value

    def boolean(self, key: str, default: bool | None = None) -> bool | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if not isinstance(value, bool):
            raise self.wrong_type(key, "true or false")
        return value

    def string(self, key: str, default: str | None = None) -> str | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if not isinstance(value, str) or not value:
            raise self.wrong_type(key, "a non-empty string")
        return value

    def vector(self, key: str, size: int, unit: str = "", default: Any = None) -> list[float] | None:
        if key not in self.data:
            return default
        value = self.data[key]
        expected = f"an array of {size} finite numbers{f' [{unit}]' if unit else ''}"
        if not isinstance(value, list) or len(value) != size or not all(_is_number(v) for v in value):
            raise self.wrong_type(key, expected)
        out = [float(v) for v in value]
        if not all(math.isfinite(v) for v in out):
            raise self.wrong_type(key, expected)
        return out

    def matrix(self, key: str, size: int, unit: str = "", allow_diagonal: bool = False) -> np.ndarray | None:
        if key not in self.data:
            return None
        value = self.data[key]
        unit_text = f" [{unit}]" if unit else ""
        expected = f"a {size}×{size} array of arrays of finite numbers{unit_text}"
        if allow_diagonal:
            expected = f"an array of {size} numbers (principal values) or {expected[2:]}"
        if allow_diagonal and isinstance(value, list) and all(_is_number(v) for v in value):
            if len(value) != size:
                raise self.wrong_type(key, expected)
            out = np.diag([float(v) for v in value])
        elif (
            isinstance(value, list)
            and len(value) == size
            and all(isinstance(r, list) and len(r) == size and all(_is_number(v) for v in r) for r in value)
        ):
            out = np.array(value, dtype=np.float64)
        else:
            raise self.wrong_type(key, expected)
        if not np.all(np.isfinite(out)):
            raise self.wrong_type(key, expected)
        return out

    def numbers(self, key: str, unit: str = "") -> list[float]:
        """A non-empty array of finite numbers."""
        value = self.data[key]
        unit_text = f" [{unit}]" if unit else ""
        if not isinstance(value, list) or not value or not all(_is_number(v) for v in value):
            raise self.wrong_type(key, f"a non-empty array of numbers{unit_text}")
        out = [float(v) for v in value]
        if not all(math.isfinite(v) for v in out):
            raise self.wrong_type(key, f"a non-empty array of finite numbers{unit_text}")
        return out

    def rows(self, key: str, size: int, unit: str = "") -> np.ndarray:
        """An array of arrays of ``size`` finite numbers, shape (K, size)."""
        value = self.data[key]
        expected = f"an array of [{', '.join('xyz'[:size]) if size == 3 else size}] arrays of numbers [{unit}]"
        if not isinstance(value, list) or not value:
            raise self.wrong_type(key, expected)
        if not all(isinstance(r, list) and len(r) == size and all(_is_number(v) for v in r) for r in value):
            raise self.wrong_type(key, expected)
        out = np.array(value, dtype=np.float64)
        if not np.all(np.isfinite(out)):
            raise self.wrong_type(key, expected)
        return out

    def section_matrices(self, key: str, n: int, unit: str) -> np.ndarray:
        """``n`` 6×6 matrices, each written as 6 rows of 6 numbers or as its 6 diagonal values."""
        value = self.data[key]
        expected = f"an array of {n} sectional matrices [{unit}], each 6×6 (rows) or 6 diagonal values"
        if not isinstance(value, list) or len(value) != n:
            raise self.wrong_type(key, expected)
        out = np.zeros((n, 6, 6))
        for k, mat in enumerate(value):
            if isinstance(mat, list) and len(mat) == 6 and all(_is_number(v) for v in mat):
                out[k] = np.diag([float(v) for v in mat])
            elif (
                isinstance(mat, list)
                and len(mat) == 6
                and all(isinstance(r, list) and len(r) == 6 and all(_is_number(v) for v in r) for r in mat)
            ):
                out[k] = np.array(mat, dtype=np.float64)
            else:
                raise self.error(f"key '{key}': entry {k} must be 6×6 (six rows of six numbers) or 6 numbers", key)
        if not np.all(np.isfinite(out)):
            raise self.wrong_type(key, expected)
        return out

    def node_ref(self, key: str, value: Any = None) -> int:
        """Node id of the node named by ``key`` (or by ``value``, an element of that key)."""
        name = self.data[key] if value is None else value
        if not isinstance(name, str):
            raise self.wrong_type(key, "a node name (string)")
        nodes = self.reader.nodes
        if name not in nodes and name in self.reader.node_aliases:
            return self.reader.node_aliases[name]
        if name not in nodes:
            known = ", ".join(f"'{n}'" for n in nodes) or "none"
            raise self.error(f"key '{key}' names unknown node '{name}' (nodes: {known})", key)
        return nodes[name]

    def build(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call a builder method, re-raising its ModelError with this item's name and line."""
        try:
            return fn(*args, **kwargs)
        except ModelError as exc:
            message = _builder_prefix().sub("", str(exc), count=1)
            first = re.match(r"[A-Za-z_]+", message)
            key = first.group() if first and first.group() in self.data else None
            raise self.error(message, key) from exc


def _builder_prefix() -> re.Pattern[str]:
    """The builder's own prefix of an error about an item (the core's, and each kind's table's)."""
    kinds = "".join(f"|{t.message_prefix}" for t in model_tables() if t.message_prefix)
    return re.compile(
        r"^(?:add_[a-z0-9_]+: )?(?:(?:node|mass|spring|constraint) \d+(?: \([a-z0-9_]+\))?|beam '[^']*'"
        rf"{kinds})(?::\s*|\s+)"
    )


# ------------------------------------------------------------------------------------------------
# the reader
_NODE_KEYS = ("name", "position", "orientation", "velocity", "acceleration", "displacement")
_MASS_KEYS = ("node", "mass", "inertia", "mass_matrix")
_BEAM_KEYS = (
    "name", "points", "point_s", "section_s", "m_star", "c_star", "twist", "twist_s", "order", "n_elements",
    "quadrature", "quadrature_style", "section_refinement", "mu", "root_position", "root_orientation",
    "root_velocity", "root_acceleration",
)  # fmt: skip
_LOAD_KEYS = ("node", "force", "moment")
_STEP_KEYS = (
    "h", "rho_inf", "max_iter", "atol", "rtol", "geometric_stiffness", "dynamic", "static_load_retries", "convergence",
    "predictor",
)  # fmt: skip
#: a hinge's or slider's drive keys (docs/joints.md, "Drives"): the builder's keywords, then the servo's
_DRIVE_KEYS_ONLY = (
    "stiffness", "rest", "damping", "friction", "friction_rate", "limits", "limit_stiffness", "limit_damping",
    "limit_restitution",
)  # fmt: skip
_SERVO_KEYS = ("servo_kp", "servo_kd", "servo_position", "servo_rate", "servo_feedforward", "servo_limit")
_DRIVE_KEYS = (*_DRIVE_KEYS_ONLY, *_SERVO_KEYS)
#: a ball joint's cone limit (docs/joints.md, "Cone limit of a ball joint")
_CONE_KEYS = ("cone_axis", "cone_angle", "cone_stiffness", "cone_damping")
_CONSTRAINT_KEYS: dict[str, tuple[str, ...]] = {
    "fixed_bc": ("node",),
    "fixed_bc_3dof": ("node",),
    "prescribed_bc": ("node", "initial_displacement"),
    "prescribed_bc_3dof": ("node", "initial_displacement"),
    "rigid_joint": ("base", "target"),
    "rigid_joint_6dof_to_3dof": ("base", "target"),
    "revolute_joint": ("base", "target", "axis", "brake_torque", "torque"),
    "rotation_control": ("base", "target", "axis", "angle"),
    "spherical_joint": ("body", "point"),
    "ball_joint": ("body_a", "body_b", "point", *_CONE_KEYS),
    "hinge_joint": ("body_a", "body_b", "point", "axis", "torque", *_DRIVE_KEYS),
    "slider_joint": ("body_a", "body_b", "point", "axis", "force", *_DRIVE_KEYS),
    "cylindrical_joint": ("body_a", "body_b", "point", "axis"),
    "universal_joint": ("body_a", "body_b", "point", "axis_a", "axis_b"),
    "planar_joint": ("body_a", "body_b", "point", "normal"),
    "weld_joint": ("body_a", "body_b", "point"),
    "distance_constraint": ("body_a", "body_b", "point_a", "point_b", "length"),
    "point_on_line_joint": ("body_a", "body_b", "point", "axis"),
    "point_on_plane_joint": ("body_a", "body_b", "point", "normal"),
    "generic_joint": ("body_a", "body_b", "point", "locked", "frame"),
}
_CONSTRAINT_REQUIRED: dict[str, tuple[str, ...]] = {
    "fixed_bc": ("node",),
    "fixed_bc_3dof": ("node",),
    "prescribed_bc": ("node",),
    "prescribed_bc_3dof": ("node",),
    "rigid_joint": ("base", "target"),
    "rigid_joint_6dof_to_3dof": ("base", "target"),
    "revolute_joint": ("base", "target"),
    "rotation_control": ("base", "target", "axis"),
    "spherical_joint": ("body", "point"),
    "ball_joint": ("body_a", "body_b", "point"),
    "hinge_joint": ("body_a", "body_b", "point", "axis"),
    "slider_joint": ("body_a", "body_b", "point", "axis"),
    "cylindrical_joint": ("body_a", "body_b", "point", "axis"),
    "universal_joint": ("body_a", "body_b", "point", "axis_a", "axis_b"),
    "planar_joint": ("body_a", "body_b", "point", "normal"),
    "weld_joint": ("body_a", "body_b", "point"),
    "distance_constraint": ("body_a", "body_b", "point_a", "point_b"),
    "point_on_line_joint": ("body_a", "body_b", "point", "axis"),
    "point_on_plane_joint": ("body_a", "body_b", "point", "normal"),
    "generic_joint": ("body_a", "body_b", "point", "locked"),
}
#: the keys of ``[step_control]``: the numbers, then the strings (StepControl's fields)
_STEP_CONTROL_NUMBERS = ("rtol", "atol", "h_min", "h_max", "h_initial", "safety", "fac_min", "fac_max")
_STEP_CONTROL_KEYS = (*_STEP_CONTROL_NUMBERS, "max_attempts", "scheme", "scope", "newton")
_TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("gravity",),
    "node": _NODE_KEYS,
    "beam": _BEAM_KEYS,
    "mass": _MASS_KEYS,
    "constraint": tuple(dict.fromkeys(("kind", "name", *(k for keys in _CONSTRAINT_KEYS.values() for k in keys)))),
    "load": _LOAD_KEYS,
    "step": _STEP_KEYS,
    "run": ("t_end", "n_steps"),
    "output": ("path", "every", "block"),
    "step_control": _STEP_CONTROL_KEYS,
}


_BODY_JOINT_ADDERS = {
    "ball_joint": "add_ball_joint",
    "hinge_joint": "add_hinge_joint",
    "slider_joint": "add_slider_joint",
    "cylindrical_joint": "add_cylindrical_joint",
    "universal_joint": "add_universal_joint",
    "planar_joint": "add_planar_joint",
    "weld_joint": "add_weld_joint",
    "distance_constraint": "add_distance_constraint",
    "point_on_line_joint": "add_point_on_line_joint",
    "point_on_plane_joint": "add_point_on_plane_joint",
    "generic_joint": "add_generic_joint",
}


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines = _Lines(text)
        try:
            self.data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            line = None
            m = re.search(r"at line (\d+)", message)
            if m:
                line = int(m.group(1))
            elif "end of document" in message:
                line = self.lines.n_lines
            raise ModelFileError(f"TOML syntax error: {message}", source, line) from None
        self.nodes: dict[str, int] = {}
        #: other names of nodes ("<beam>.root", "<beam>.tip"), accepted wherever a node is named
        self.node_aliases: dict[str, int] = {}
        self.beams: dict[str, Any] = {}
        self.constraints: dict[str, int] = {}

    # -- structure
    def table(self, name: str) -> _Table | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            line = self.lines.line((name, None)) or self.lines.line((name, 0))
            raise ModelFileError(f"'{name}' must be a table, written [{name}]; got {_show(value)}", self.source, line)
        return _Table(self, name, None, value, f"[{name}]")

    def array(self, name: str) -> list[dict[str, Any]]:
        value = self.data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            line = self.lines.line((name, None)) or self.lines.line((name, 0))
            shown = "a table" if isinstance(value, dict) else _show(value)
            raise ModelFileError(
                f"'{name}' must be an array of tables, each written [[{name}]]; got {shown}", self.source, line
            )
        return value

    def check_top_level(self) -> None:
        for key, value in self.data.items():
            if key not in _tables():
                is_table = isinstance(value, dict) or (
                    isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
                )
                hint = ""
                if not is_table:
                    table_keys = _TABLE_KEYS | {t.name: t.keys for t in model_tables()}
                    owners = [f"[{t}]" for t, keys in table_keys.items() if key in keys]
                    hint = f"; '{key}' belongs in {' or '.join(owners)}" if owners else ""
                raise ModelFileError(
                    f"unknown top-level {'table' if is_table else 'key'} '{key}' "
                    f"(allowed tables: {', '.join(_tables())}{hint})",
                    self.source,
                    self.lines.line((key, None)),
                )

    # -- items
    def read(self) -> ModelFile:
        self.check_top_level()
        node_items = self.array("node")
        beam_items = self.array("beam")
        mass_items = self.array("mass")
        constraint_items = self.array("constraint")
        load_items = self.array("load")
        kind_items = {t.name: self.array(t.name) if t.array else self.data.get(t.name) for t in model_tables()}

        model_table = self.table("model")
        gravity = [0.0, 0.0, 0.0]
        if model_table is not None:
            model_table.check_keys(("gravity",))
            gravity = model_table.vector("gravity", 3, "m/s²", default=gravity)
        builder = ModelBuilder(gravity=gravity)

        if not node_items and not beam_items:
            raise ModelFileError(
                "the model has no nodes (add at least one [[node]] or [[beam]] table)", self.source, None
            )
        stages: dict[str, tuple[list[dict[str, Any]], Callable[..., None]]] = {
            "node": (node_items, self.read_node),
            "beam": (beam_items, self.read_beam),
            "mass": (mass_items, self.read_mass),
            "constraint": (constraint_items, self.read_constraint),
        }
        loads: tuple[Load, ...] = ()
        for stage in READ_AFTER:  # the file's own tables, each followed by the kinds' tables read after it
            if stage == "load":
                loads = tuple(self.read_load(i, data) for i, data in enumerate(load_items))
            else:
                items, read = stages[stage]
                for i, data in enumerate(items):
                    read(builder, i, data)
            self.read_kind_tables(builder, stage, kind_items)  # (kynemapy.model.registry)
        params = self.read_step()
        t_end, n_steps = self.read_run(params)
        output = self.read_output()
        step_control = self.read_step_control()
        try:
            model = builder.build()
        except ModelError as exc:
            raise ModelFileError(str(exc), self.source, None) from exc
        loaded = tuple(sorted({load.node for load in loads}))
        return ModelFile(
            model=model,
            nodes=dict(self.nodes),
            constraints=dict(self.constraints),
            params=params,
            loads=loads,
            output=output,
            t_end=t_end,
            n_steps=n_steps,
            source=Path(self.source),
            _loaded_nodes=loaded,
            beams=dict(self.beams),
            step_control=step_control,
        )

    def read_node(self, builder: ModelBuilder, i: int, data: dict[str, Any]) -> None:
        name = data.get("name")
        label = f"node #{i + 1} '{name}'" if isinstance(name, str) else f"node #{i + 1}"
        item = _Table(self, "node", i, data, label)
        item.check_keys(_NODE_KEYS)
        item.require("name")
        name = item.string("name")
        assert name is not None
        if name in self.nodes:
            first = self.lines.line(("node", self.nodes[name]), "name")
            raise item.error(f"duplicate node name '{name}' (first defined on line {first})", "name")
        node_id = item.build(
            builder.add_node,
            position=item.vector("position", 3, "m", default=(0.0, 0.0, 0.0)),
            orientation=item.vector("orientation", 4, "unit quaternion w, x, y, z", default=(1.0, 0.0, 0.0, 0.0)),
            velocity=item.vector("velocity", 6, "m/s, rad/s", default=(0.0,) * 6),
            acceleration=item.vector("acceleration", 6, "m/s², rad/s²"),
            displacement=item.vector("displacement", 7, "m and unit quaternion"),
        )
        self.nodes[name] = node_id

    def read_beam(self, builder: ModelBuilder, i: int, data: dict[str, Any]) -> None:
        name = data.get("name")
        label = f"beam #{i + 1} '{name}'" if isinstance(name, str) else f"beam #{i + 1}"
        item = _Table(self, "beam", i, data, label)
        item.check_keys(_BEAM_KEYS)
        item.require("name", "points", "section_s", "m_star", "c_star")
        name = item.string("name")
        assert name is not None
        if name in self.beams:
            raise item.error(f"duplicate beam name '{name}'", "name")
        points = item.rows("points", 3, "m")
        section_s = item.numbers("section_s", "span fractions")
        n_sec = len(section_s)
        m_star = item.section_matrices("m_star", n_sec, "kg/m, kg, kg m")
        c_star = item.section_matrices("c_star", n_sec, "N, N m, N m²")
        twist: Any = None
        if "twist" in data:
            twist = item.number("twist", unit="rad") if _is_number(data["twist"]) else item.numbers("twist", "rad")
        beam = item.build(
            builder.add_beam,
            points,
            section_s,
            m_star,
            c_star,
            point_s=item.numbers("point_s", "span fractions") if "point_s" in data else None,
            twist=twist,
            twist_s=item.numbers("twist_s", "span fractions") if "twist_s" in data else None,
            order=item.integer("order", 10),
            n_elements=item.integer("n_elements", 1),
            quadrature=item.string("quadrature", "gll"),
            quadrature_style=item.string("quadrature_style", "segmented"),
            section_refinement=item.integer("section_refinement"),
            mu=item.vector("mu", 6, "s"),
            root_position=item.vector("root_position", 3, "m"),
            root_orientation=item.vector("root_orientation", 4, "unit quaternion w, x, y, z"),
            root_velocity=item.vector("root_velocity", 6, "m/s, rad/s"),
            root_acceleration=item.vector("root_acceleration", 6, "m/s², rad/s²"),
            name=name,
        )
        for k, node in enumerate(beam.nodes):
            node_name = f"{name}.{k}"
            if node_name in self.nodes:
                raise item.error(f"beam '{name}': its node name '{node_name}' is taken by a [[node]]", "name")
            self.nodes[node_name] = node
        for alias, node in (("root", beam.root), ("tip", beam.tip)):
            if f"{name}.{alias}" not in self.nodes:
                self.node_aliases[f"{name}.{alias}"] = node
        self.beams[name] = beam

    def read_mass(self, builder: ModelBuilder, i: int, data: dict[str, Any]) -> None:
        node = data.get("node")
        label = f"mass #{i + 1} (node '{node}')" if isinstance(node, str) else f"mass #{i + 1}"
        item = _Table(self, "mass", i, data, label)
        item.check_keys(_MASS_KEYS)
        item.require("node")
        node_id = item.node_ref("node")
        item.build(
            builder.add_mass,
            node_id,
            mass=item.number("mass", unit="kg"),
            inertia=item.matrix("inertia", 3, "kg m²", allow_diagonal=True),
            mass_matrix=item.matrix("mass_matrix", 6, "kg, kg m, kg m²"),
        )

    def read_kind_tables(self, builder: ModelBuilder, after: str, items: dict[str, Any]) -> None:
        """The kinds' tables read after the core table ``after``
        (:attr:`~kynemapy.model.registry.kind.ModelTable.after`): each item of an array of tables
        in file order (``items``: the table's items), or the single table when the file has it."""
        for table in (t for t in model_tables() if t.after == after):
            if not table.array:
                item = self.table(table.name)
                if item is not None:
                    table.read(item, builder)
                continue
            for i, data in enumerate(items[table.name]):
                label = table.label(i, data) if table.label is not None else f"{table.name} #{i + 1}"
                table.read(_Table(self, table.name, i, data, label), builder)

    def read_constraint(self, builder: ModelBuilder, i: int, data: dict[str, Any]) -> None:
        kind = data.get("kind")
        name = data.get("name")
        inner = " ".join(([kind] if isinstance(kind, str) else []) + ([repr(name)] if isinstance(name, str) else []))
        label = f"constraint #{i + 1}" + (f" ({inner})" if inner else "")
        item = _Table(self, "constraint", i, data, label)
        item.require("kind")
        kind = item.string("kind")
        assert kind is not None
        if kind not in _CONSTRAINT_KEYS:
            raise item.error(
                f"key 'kind': unknown constraint kind '{kind}' (kinds: {', '.join(_CONSTRAINT_KEYS)})",
                "kind",
            )
        allowed = ("kind", "name", *_CONSTRAINT_KEYS[kind])
        item.check_keys(allowed, context=f"table [[constraint]] of kind '{kind}'")
        item.require(*_CONSTRAINT_REQUIRED[kind])
        name = item.string("name")
        if name is not None and name in self.constraints:
            raise item.error(f"duplicate constraint name '{name}'", "name")

        if kind in ("fixed_bc", "fixed_bc_3dof"):
            add = builder.add_fixed_bc if kind == "fixed_bc" else builder.add_fixed_bc_3dof
            cid = item.build(add, item.node_ref("node"))
        elif kind == "prescribed_bc":
            cid = item.build(
                builder.add_prescribed_bc,
                item.node_ref("node"),
                item.vector("initial_displacement", 7, "m and unit quaternion"),
            )
        elif kind == "prescribed_bc_3dof":
            cid = item.build(
                builder.add_prescribed_bc_3dof, item.node_ref("node"), item.vector("initial_displacement", 3, "m")
            )
        elif kind in ("rigid_joint", "rigid_joint_6dof_to_3dof"):
            add = builder.add_rigid_joint if kind == "rigid_joint" else builder.add_rigid_joint_6dof_to_3dof
            cid = item.build(add, item.node_ref("base"), item.node_ref("target"))
        elif kind == "revolute_joint":
            cid = item.build(
                builder.add_revolute_joint,
                item.node_ref("base"),
                item.node_ref("target"),
                axis=item.vector("axis", 3),
                **self.brake_torque(item),
            )
        elif kind == "rotation_control":
            cid = item.build(
                builder.add_rotation_control,
                item.node_ref("base"),
                item.node_ref("target"),
                axis=item.vector("axis", 3),
                angle=item.number("angle", 0.0, "rad"),
            )
        elif kind in _BODY_JOINT_ADDERS:
            cid = self.read_body_joint(builder, item, kind)
        else:  # spherical_joint
            joint = item.build(builder.add_spherical_joint, item.node_ref("body"), item.vector("point", 3, "m"))
            cid = joint.joint
            if name is not None:
                for extra, table in ((f"{name}.pin", self.nodes), (f"{name}.bc", self.constraints)):
                    if extra in table:
                        raise item.error(f"name '{name}' makes '{extra}', which is already taken", "name")
                self.nodes[f"{name}.pin"] = joint.pin
                self.constraints[f"{name}.bc"] = joint.bc
        if name is not None:
            self.constraints[name] = cid

    def brake_torque(self, item: _Table) -> dict[str, float | None]:
        """A revolute joint's ``brake_torque`` (or its deprecated name ``torque``, with a warning)."""
        if "torque" in item.data and "brake_torque" in item.data:
            raise item.error("give brake_torque or its deprecated name torque, not both", "torque")
        if "torque" in item.data:
            return {"torque": item.number("torque", None, "N m")}
        return {"brake_torque": item.number("brake_torque", 0.0, "N m")}

    def body_ref(self, item: _Table, key: str) -> int:
        """Node id named by ``key``, or ``kp.GROUND`` for ``"ground"`` when no node has that name."""
        if item.data.get(key) == "ground" and "ground" not in self.nodes:
            return GROUND
        return item.node_ref(key)

    def read_body_joint(self, builder: ModelBuilder, item: _Table, kind: str) -> int:
        a, b = self.body_ref(item, "body_a"), self.body_ref(item, "body_b")
        add = getattr(builder, _BODY_JOINT_ADDERS[kind])
        if kind == "distance_constraint":
            point_a, point_b = item.vector("point_a", 3, "m"), item.vector("point_b", 3, "m")
            return item.build(add, a, b, point_a, point_b, item.number("length", None, "m"))
        point = item.vector("point", 3, "m")
        if kind == "universal_joint":
            return item.build(add, a, b, point, item.vector("axis_a", 3), item.vector("axis_b", 3))
        if kind in ("planar_joint", "point_on_plane_joint"):
            return item.build(add, a, b, point, item.vector("normal", 3))
        if kind == "generic_joint":
            locked = item.data["locked"]
            if not isinstance(locked, list) or len(locked) != 6 or not all(isinstance(v, bool) for v in locked):
                raise item.wrong_type("locked", "an array of 6 booleans (translations x, y, z, rotations x, y, z)")
            return item.build(add, a, b, point, locked, frame=item.matrix("frame", 3))
        if kind == "ball_joint":
            cone: dict[str, Any] = {
                key: item.number(key, None, unit)
                for key, unit in (("cone_angle", "rad"), ("cone_stiffness", "N m/rad"), ("cone_damping", "N m s/rad"))
                if key in item.data
            }
            if "cone_axis" in item.data:
                cone["cone_axis"] = item.vector("cone_axis", 3)
            return item.build(add, a, b, point, **cone)
        if kind == "weld_joint":
            return item.build(add, a, b, point)
        if kind in ("hinge_joint", "slider_joint"):
            return self.driven_joint(builder, item, kind, add, a, b, point)
        return item.build(add, a, b, point, item.vector("axis", 3))

    def driven_joint(
        self, builder: ModelBuilder, item: _Table, kind: str, add: Callable[..., int], a: int, b: int, point: Any
    ) -> int:
        """A hinge or slider joint with its input, its drive keys and, with any ``servo_*`` key, its
        servo (:meth:`~kynemapy.ModelBuilder.set_servo`; ``servo_kp`` 0 when not given)."""
        hinge = kind == "hinge_joint"
        x, rate, effort = ("rad", "rad/s", "N m") if hinge else ("m", "m/s", "N")
        units = {
            "stiffness": f"{effort}/{x}", "rest": x, "damping": f"{effort} s/{x}", "friction": effort,
            "friction_rate": rate, "limit_stiffness": f"{effort}/{x}", "limit_damping": f"{effort} s/{x}",
            "limit_restitution": "-",
        }  # fmt: skip
        drive: dict[str, Any] = {key: item.number(key, None, unit) for key, unit in units.items() if key in item.data}
        if "limits" in item.data:
            drive["limits"] = tuple(item.vector("limits", 2, x))
        load = {"torque": item.number("torque", 0.0, "N m")} if hinge else {"force": item.number("force", 0.0, "N")}
        cid = item.build(add, a, b, point, item.vector("axis", 3), **load, **drive)
        servo = {
            "kp": ("servo_kp", f"{effort}/{x}"), "kd": ("servo_kd", f"{effort} s/{x}"),
            "position": ("servo_position", x), "rate": ("servo_rate", rate),
            "feedforward": ("servo_feedforward", effort), "limit": ("servo_limit", effort),
        }  # fmt: skip
        given = {name: item.number(key, None, unit) for name, (key, unit) in servo.items() if key in item.data}
        if given:
            given.setdefault("kp", 0.0)
            try:
                builder.set_servo(cid, **given)
            except ModelError as exc:  # "... servo <name> must be ...": the line of the key servo_<name>
                named = re.search(r"servo ([a-z]+)", str(exc))
                key = f"servo_{named.group(1)}" if named else None
                raise item.error(str(exc).split(": ", 2)[-1], key if key in item.data else None) from exc
        return cid

    def read_load(self, i: int, data: dict[str, Any]) -> Load:
        node = data.get("node")
        label = f"load #{i + 1} (node '{node}')" if isinstance(node, str) else f"load #{i + 1}"
        item = _Table(self, "load", i, data, label)
        item.check_keys(_LOAD_KEYS)
        item.require("node")
        node_id = item.node_ref("node")
        components: list[LoadComponent] = []
        for key, unit in (("force", "N"), ("moment", "N m")):
            value = data.get(key, [0.0, 0.0, 0.0])
            expected = f"an array of 3 numbers [{unit}] or expressions of t (strings)"
            if not isinstance(value, list) or len(value) != 3:
                raise item.wrong_type(key, expected)
            for j, component in enumerate(value):
                where = f"{key}[{j}]"
                if _is_number(component):
                    if not math.isfinite(component):
                        raise item.wrong_type(key, expected.replace("numbers", "finite numbers"))
                    components.append(float(component))
                elif isinstance(component, str):
                    try:
                        expression = Expression(component, f"{label} {where}", self.source, item.line(key))
                    except _ExpressionSyntaxError as exc:
                        raise item.error(
                            f"{where}: invalid expression {component!r}: {exc}",
                            key,
                        ) from None
                    if not expression.depends_on_time:
                        expression(0.0)  # a constant that cannot be computed fails now
                    components.append(expression)
                else:
                    raise item.wrong_type(key, expected)
        return Load(node_id, tuple(components), label)

    def read_step(self) -> StepParameters:
        item = self.table("step")
        if item is None:
            raise ModelFileError("missing table [step] (at least: h = time step [s])", self.source, None)
        item.check_keys(_STEP_KEYS)
        item.require("h")
        defaults = StepParameters(h=1.0)
        kwargs = {
            "h": item.number("h", unit="s"),
            "rho_inf": item.number("rho_inf", defaults.rho_inf),
            "max_iter": item.integer("max_iter", defaults.max_iter),
            "atol": item.number("atol", defaults.atol),
            "rtol": item.number("rtol", defaults.rtol),
            "dynamic": item.boolean("dynamic", defaults.dynamic),
            "geometric_stiffness": item.boolean("geometric_stiffness", defaults.geometric_stiffness),
            "static_load_retries": item.integer("static_load_retries", defaults.static_load_retries),
            "convergence": item.string("convergence", defaults.convergence),
            "predictor": item.string("predictor", defaults.predictor),
        }
        try:
            return StepParameters(**kwargs)
        except ValueError as exc:
            message = str(exc).removeprefix("StepParameters: ")
            key = next((k for k in kwargs if re.search(rf"\b{k}\b", message)), None)
            raise item.error(message, key) from None

    def read_run(self, params: StepParameters) -> tuple[float | None, int | None]:
        item = self.table("run")
        if item is None:
            return None, None
        item.check_keys(("t_end", "n_steps"))
        if ("t_end" in item.data) == ("n_steps" in item.data):
            raise item.error("give exactly one of t_end [s] or n_steps")
        if "n_steps" in item.data:
            n = item.integer("n_steps")
            assert n is not None
            if n < 1:
                raise item.error(f"key 'n_steps': must be >= 1, got {n}", "n_steps")
            return n * params.h, n
        t_end = item.number("t_end", unit="s")
        assert t_end is not None
        if not (math.isfinite(t_end) and t_end > 0.0):
            raise item.error(f"key 't_end': must be a finite time > 0 s, got {t_end}", "t_end")
        ratio = t_end / params.h
        nearest = round(ratio)
        n = nearest if abs(ratio - nearest) <= 1e-9 * max(1.0, ratio) else math.ceil(ratio)
        return t_end, max(1, int(n))

    def read_step_control(self) -> dict[str, Any] | None:
        item = self.table("step_control")
        if item is None:
            return None
        item.check_keys(_STEP_CONTROL_KEYS)
        run = self.table("run")
        if run is None or "t_end" not in run.data:
            raise item.error("[step_control] needs [run] t_end (the control chooses the steps: n_steps does not apply)")
        kwargs: dict[str, Any] = {}
        for key in _STEP_CONTROL_NUMBERS:
            if key in item.data:
                kwargs[key] = item.number(key, unit="s" if key.startswith("h_") else "")
        if "max_attempts" in item.data:
            kwargs["max_attempts"] = item.integer("max_attempts")
        for key in ("scheme", "scope", "newton"):
            if key in item.data:
                kwargs[key] = item.string(key)
        return kwargs

    def read_output(self) -> dict[str, Any]:
        output: dict[str, Any] = {"path": None, "every": 1, "block": None}
        item = self.table("output")
        if item is None:
            return output
        item.check_keys(("path", "every", "block"))
        output["path"] = item.string("path")  # optional: ``kynemapy run -o`` names the file then
        for key in ("every", "block"):
            value = item.integer(key, output[key])
            if value is None:
                continue
            if value < 1:
                raise item.error(f"key '{key}': must be an integer >= 1, got {value}", key)
            output[key] = value
        return output


# ------------------------------------------------------------------------------------------------
def parse_model_file(text: str, source: str = "<string>") -> ModelFile:
    """Read a model from TOML text (see the module docstring for the schema).

    Parameters
    ----------
    text : str
        The TOML text.
    source : str, default "<string>"
        The name of the text (a file name) in messages and in :attr:`ModelFile.source`.

    Returns
    -------
    ModelFile
        The built model with its names, step parameters, loads, run and output settings.

    Raises
    ------
    ModelFileError
        Any problem in the text, naming its line.
    """
    return _Reader(text, str(source)).read()


def load_model_file(path: str | PathLike[str]) -> ModelFile:
    """Read the TOML model file at ``path`` (see the module docstring for the schema).

    Parameters
    ----------
    path : str or os.PathLike
        The file (UTF-8 TOML).

    Returns
    -------
    ModelFile
        The built model with its names, step parameters, loads, run and output settings.

    Raises
    ------
    ModelFileError
        Any problem in the file (a :class:`~kynemapy.ModelError`), naming its line.
    OSError
        The file cannot be read.
    """
    p = Path(path)
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ModelFileError(f"not UTF-8 text ({exc.reason})", str(p), line) from None
    model_file = parse_model_file(text, str(p))
    return model_file
