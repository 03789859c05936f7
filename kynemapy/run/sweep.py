"""Ensembles: run one model many times with chosen parameters changed, on Dask.

:func:`sweep` runs every member (one parameter set: a dict of dotted keys and values, see
:mod:`kynemapy.model.overrides`) as a complete :meth:`~kynemapy.Simulation.run` with its own
HDF5 file, on a ``dask.distributed`` cluster: a local one by default (one worker process per
core, one thread each), or the scheduler at an address.  ``kynemapy sweep`` is its command.

Output folder::

    DIR/sweep.json      the sweep's definition (model, keys, members, run length): a rerun
                        with the same definition resumes, another sweep is refused
    DIR/m0000.h5        member 0's result file (kynemapy.io.read), written as m0000.h5.part
                        and renamed when complete; a failed member's rows go to m0000.failed.h5
    DIR/m0000.json      member 0's row of the summary
    DIR/summary.csv     one row per member (summary.parquet instead with summary_format="parquet")

Each member runs exactly as it would alone (same model, parameters and run driver; the
arrays are bit-identical to a standalone run).  A member that fails (a step that does not
converge, a parameter the model rejects) is reported in the summary with its error; the
others go on.  A rerun of an interrupted sweep skips the members whose files are complete
and verified (they read back, belong to this member and end at its last step).

Dask is imported only when a sweep runs on it (the ``ensemble`` extra: ``pip install -e '.[ensemble]'`` in a clone).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import itertools
import json
import logging
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from kynemapy.engine.params import StepParameters
from kynemapy.model import Model
from kynemapy.model.geometry import relative_rotation_vectors
from kynemapy.model.overrides import (
    OverrideError,
    apply_overrides,
    check_value,
    dump_toml,
    read_toml,
    resolve_key,
)

__all__ = [
    "FORMAT",
    "SweepError",
    "SweepResult",
    "SweepWarning",
    "grid",
    "member_file_problem",
    "member_rotation_angle",
    "run_member",
    "sweep",
    "verify_member",
]

#: ``format`` of a sweep's ``sweep.json``
FORMAT = "kynemapy-sweep/1"
MANIFEST = "sweep.json"
#: statistics of a recorded output (``STAT:NODE.QUANTITY``)
STATS: dict[str, Callable[[np.ndarray], float]] = {
    "final": lambda s: float(s[-1]),
    "max": lambda s: float(np.max(s)),
    "min": lambda s: float(np.min(s)),
    "mean": lambda s: float(np.mean(s)),
    "maxabs": lambda s: float(np.max(np.abs(s))),
}
#: node quantities of a recorded output: displacement [m], rotation angle [rad], velocities
NODE_QUANTITIES = ("ux", "uy", "uz", "angle", "vx", "vy", "vz", "wx", "wy", "wz")
#: whole-model quantities of a recorded output
GLOBAL_QUANTITIES = ("kinetic_energy", "potential_energy", "strain_energy", "energy", "iterations")

#: an output: a spec string ``STAT:NODE.QUANTITY`` / ``STAT:QUANTITY``, or a name and a function of the result
OutputSpec = str | tuple[str, Callable[[Any], float]]


class SweepError(ValueError):
    """A sweep that cannot start: bad keys or values, an unreachable scheduler, an output
    folder holding another sweep, missing Dask."""


class SweepWarning(UserWarning):
    """A resumed sweep found a member's file it cannot reuse (damaged, cut short, stopped early):
    the member runs again and its file is replaced."""


@dataclass
class SweepResult:
    """What :func:`sweep` did.

    Attributes
    ----------
    folder : pathlib.Path
        The output folder.
    rows : list of dict
        One summary row per member, in member order (the columns of ``summary.csv``).
    summary : pathlib.Path
        The summary table (``summary.csv``, or ``summary.parquet``).
    wall_time : float
        Wall time of the sweep [s].
    """

    folder: Path
    rows: list[dict[str, Any]]
    summary: Path
    wall_time: float

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the members that did not finish (status other than ``"ok"``)."""
        return [r for r in self.rows if r["status"] != "ok"]

    def to_pandas(self) -> Any:
        """The summary as a ``pandas.DataFrame`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows)


# ------------------------------------------------------------------------------------------------
# parameter sets
def grid(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the values of ``axes``, the first key slowest.

    Parameters
    ----------
    axes : mapping of str to sequence
        Override key (e.g. ``"step.h"``) → the values it takes.

    Returns
    -------
    list of dict of str to Any
        One parameter set (key → value) per combination.

    Raises
    ------
    SweepError
        A key whose values are not a list, or are empty.

    Examples
    --------
    >>> grid({"step.rho_inf": [0.0, 0.9], "mass.top.mass": [10.0, 15.0]})[1]
    {'step.rho_inf': 0.0, 'mass.top.mass': 15.0}
    """
    keys = list(axes)
    for k in keys:
        if isinstance(axes[k], (str, bytes)) or not isinstance(axes[k], Iterable):
            raise SweepError(f"grid: the values of {k!r} must be a list, got {axes[k]!r}")
    lists = [list(axes[k]) for k in keys]
    for k, v in zip(keys, lists, strict=True):
        if not v:
            raise SweepError(f"grid: no values for {k!r}")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*lists)]


def _member_sets(parameters: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(parameters, Mapping):
        return grid(parameters)
    sets = [dict(p) for p in parameters]
    if not sets:
        raise SweepError("sweep: no parameter sets")
    for i, p in enumerate(sets):
        for k in p:
            if not isinstance(k, str):
                raise SweepError(f"sweep: parameter set {i}: keys must be strings, got {k!r}")
    return sets


# ------------------------------------------------------------------------------------------------
# outputs
def member_rotation_angle(q: np.ndarray) -> np.ndarray:
    """Rotation angle [rad] of each row's orientation relative to the first row's.

    Parameters
    ----------
    q : numpy.ndarray
        (n, 7) displacement and rotation quaternion (w, x, y, z) of one node.

    Returns
    -------
    numpy.ndarray
        (n,) angle in [0, π] of ``r_k ⊗ r_0⁻¹``.
    """
    return np.linalg.norm(relative_rotation_vectors(q), axis=1)


def _parse_output(spec: OutputSpec) -> tuple[str, Any]:
    if isinstance(spec, tuple):
        name, fn = spec
        if not isinstance(name, str) or not callable(fn):
            raise SweepError(f"sweep: an output is a spec string or (name, function of the result), got {spec!r}")
        return name, fn
    if not isinstance(spec, str) or ":" not in spec:
        raise SweepError(
            f"sweep: output {spec!r}: expected STAT:NODE.QUANTITY or STAT:QUANTITY, e.g. maxabs:platform.uz "
            f"(stats: {', '.join(STATS)})"
        )
    stat, what = spec.split(":", 1)
    if stat not in STATS:
        raise SweepError(f"sweep: output {spec!r}: unknown statistic {stat!r} (stats: {', '.join(STATS)})")
    if what in GLOBAL_QUANTITIES:
        return spec, (stat, None, what)
    node, _, qty = what.rpartition(".")
    if not node or qty not in NODE_QUANTITIES:
        raise SweepError(
            f"sweep: output {spec!r}: expected NODE.QUANTITY with a quantity among {', '.join(NODE_QUANTITIES)}, "
            f"or one of {', '.join(GLOBAL_QUANTITIES)}"
        )
    return spec, (stat, node, qty)


def _evaluate_output(how: Any, result: Any, nodes: Mapping[str, int]) -> float:
    if callable(how):
        return float(how(result))
    stat, node, qty = how
    if node is None:
        series = {
            "kinetic_energy": lambda: result.kinetic_energy,
            "potential_energy": lambda: result.potential_energy,
            "strain_energy": lambda: result.strain_energy,
            "energy": lambda: result.kinetic_energy + result.potential_energy + result.strain_energy,
            "iterations": lambda: result.iterations[1:] if len(result.iterations) > 1 else result.iterations,
        }[qty]()
    else:
        if node in nodes:
            i = nodes[node]
        elif node.isdigit() and int(node) < result.model.n_nodes:
            i = int(node)
        else:
            raise KeyError(f"output {stat}:{node}.{qty}: no node {node!r}")
        if qty == "angle":
            series = member_rotation_angle(result.q[:, i])
        elif qty.startswith("u"):
            k = "xyz".index(qty[1])
            series = result.q[:, i, k] - result.q[0, i, k]
        else:
            k = "xyz".index(qty[1]) + (3 if qty[0] == "w" else 0)
            series = result.v[:, i, k]
    return STATS[stat](np.asarray(series))


# ------------------------------------------------------------------------------------------------
# one member (runs on a worker)
def _member_model(spec: Mapping[str, Any]) -> tuple[Any, StepParameters, Any, int, dict[str, int]]:
    """(model, step parameters, loads function or None, n_steps, node names) of one member."""
    from kynemapy.model.file import ModelFile, parse_model_file

    values = spec["values"]
    if spec["toml"] is not None:
        data = apply_overrides(read_toml(spec["toml"], spec["source"]), values)
        label = f"{spec['source']} [member {spec['id']}]"
        mf = parse_model_file(dump_toml(data), label)
        if mf.n_steps is None:
            raise ValueError(f"{label}: no run length ([run] n_steps or t_end)")
        return mf.model, mf.params, (mf.apply_loads if mf.loads else None), mf.n_steps, mf.nodes
    made = spec["factory"](dict(values))
    params, n_steps, loads, nodes = spec["params"], spec["n_steps"], None, {}
    if isinstance(made, ModelFile):
        model, params = made.model, params or made.params
        loads = made.apply_loads if made.loads else None
        n_steps = n_steps if n_steps is not None else made.n_steps
        nodes = dict(made.nodes)
    elif isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], StepParameters):
        model, params = made
    elif isinstance(made, Model):
        model = made
    else:
        raise TypeError(
            "the model factory must return a kynemapy.Model, a (Model, StepParameters) pair or a ModelFile, "
            f"got {type(made).__name__}"
        )
    if params is None:
        raise ValueError("no step parameters: pass params= to sweep() or return them from the factory")
    step_values = {k.removeprefix("step."): v for k, v in values.items() if k.startswith("step.")}
    if step_values:
        params = dataclasses.replace(params, **step_values)
    if spec["t_end"] is not None:
        h = params.h
        ratio = spec["t_end"] / h
        n_steps = round(ratio) if abs(ratio - round(ratio)) <= 1e-9 * max(1.0, ratio) else math.ceil(ratio)
    if n_steps is None:
        raise ValueError("no run length: pass n_steps= or t_end= to sweep()")
    return model, params, loads, int(n_steps), nodes


def verify_member(path: str | os.PathLike[str], member: str, values: Mapping[str, Any]) -> Any:
    """The result of a member's file when it is complete and belongs to the member, else None.

    Complete and verified: the file reads back (:func:`kynemapy.io.read`), was closed cleanly,
    its ``sweep_member`` and ``sweep_values`` attributes are this member's and its last row is
    the planned last step (``sweep_n_steps``).  :func:`member_file_problem` says why not.

    Parameters
    ----------
    path : str or os.PathLike
        The member's result file.
    member : str
        The member id (the ``sweep_member`` attribute it must carry).
    values : mapping of str to Any
        The member's parameter set (the ``sweep_values`` attribute it must carry).

    Returns
    -------
    Result or None
        The file read by :func:`kynemapy.io.read`, or None when it cannot be reused.
    """
    result, _ = _check_member(path, member, values)
    return result


def member_file_problem(path: str | os.PathLike[str], member: str, values: Mapping[str, Any]) -> str | None:
    """Why a member's file cannot be reused (``"damaged: ..."``, ``"not closed ..."``), or None when it can."""
    return _check_member(path, member, values)[1]


def _check_member(path: str | os.PathLike[str], member: str, values: Mapping[str, Any]) -> tuple[Any, str | None]:
    from kynemapy.io.hdf5 import read

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a killed writer's marks cleared: the reason is given below
            r = read(path)
    except (OSError, KeyError, ValueError) as exc:
        return None, str(exc).removeprefix(f"{os.fspath(path)}: ")
    a = r.attrs
    try:
        if a.get("sweep_member") != member or json.loads(a.get("sweep_values", "null")) != json.loads(
            json.dumps(dict(values))
        ):
            return None, f"it belongs to another member ({a.get('sweep_member')!r}, {a.get('sweep_values')})"
        planned = int(a.get("sweep_n_steps", -1))
        if not r.closed_cleanly:
            return None, f"its run was stopped before the end ({r.committed} rows, not closed)"
        if r.committed == 0 or int(r.step[-1]) != planned:
            last = int(r.step[-1]) if r.committed else None
            return None, f"it ends at step {last}, not at the planned step {planned}"
    except (TypeError, ValueError) as exc:
        return None, f"its sweep attributes cannot be read ({exc})"
    return r, None


def _summary_of(result: Any) -> dict[str, Any]:
    energy = result.kinetic_energy + result.potential_energy + result.strain_energy
    e0 = float(energy[0]) if len(energy) else math.nan
    its = result.iterations[result.step > 0]
    return {
        "steps": int(result.step[-1]) if result.committed else 0,
        "final_time_s": float(result.time[-1]) if result.committed else math.nan,
        "energy_drift": (float(energy[-1]) - e0) / abs(e0) if e0 != 0.0 and math.isfinite(e0) else math.nan,
        "iterations_mean": float(its.mean()) if its.size else math.nan,
        "iterations_max": int(its.max()) if its.size else 0,
    }


def run_member(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Run one member (a task on a Dask worker, or in this process) and return its summary row.

    ``spec`` is built by :func:`sweep`.  Never raises for a failing member: the row's
    ``status`` is ``"ok"``, ``"diverged"`` (a step did not converge; its rows are in
    ``<id>.failed.h5``) or ``"error"`` (the model or a parameter was rejected), with ``error``
    the message.

    Parameters
    ----------
    spec : mapping of str to Any
        The member's task, built by :func:`sweep`: ``id``, ``values``, ``path`` (the result
        file), ``toml`` and ``source`` (the model file's text and name) or ``factory``,
        ``params``, ``n_steps`` or ``t_end`` [s], ``every``, ``block`` and ``outputs``.

    Returns
    -------
    dict of str to Any
        The summary row: ``member``, ``status``, ``error``, the parameter values,
        ``wall_time_s`` [s], ``steps``, ``n_steps``, ``final_time_s`` [s],
        ``energy_drift``, ``iterations_mean``, ``iterations_max``, the requested outputs
        and, when a result file was kept, ``file``.
    """
    from kynemapy.engine.api import ConvergenceError
    from kynemapy.io.hdf5 import read
    from kynemapy.run.simulation import Simulation

    path = Path(spec["path"])
    part = path.with_name(path.name + ".part")
    failed = path.with_name(path.stem + ".failed.h5")
    row: dict[str, Any] = {"member": spec["id"], "status": "ok", "error": ""}
    row.update({k: _cell(v) for k, v in spec["values"].items()})
    row.update({"wall_time_s": math.nan, "steps": 0, "n_steps": None, "final_time_s": math.nan})
    row.update({"energy_drift": math.nan, "iterations_mean": math.nan, "iterations_max": 0})
    outputs = [_parse_output(o) for o in spec["outputs"]]
    row.update({name: math.nan for name, _ in outputs})
    t0 = time.perf_counter()
    for stale in (part, failed, path):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    nodes: dict[str, int] = {}
    try:
        model, params, loads, n_steps, nodes = _member_model(spec)
        row["n_steps"] = n_steps
        sim = Simulation(model, params)
        attrs = {
            "sweep_member": spec["id"],
            "sweep_values": json.dumps(spec["values"]),
            "sweep_n_steps": int(n_steps),
            "model_file": spec["source"],
        }
        sim.run(n_steps=n_steps, output=part, every=spec["every"], block=spec["block"], loads=loads, attrs=attrs)
        os.replace(part, path)
        result = read(path)
    except ConvergenceError as exc:
        row.update(status="diverged", error=str(exc).replace(str(part), str(failed)))
        if part.exists():
            os.replace(part, failed)
            with contextlib.suppress(OSError, KeyError, ValueError):
                row.update(_summary_of(read(failed)), file=failed.name)
        row["wall_time_s"] = time.perf_counter() - t0
        return row
    except Exception as exc:
        row.update(status="error", error=_error_text(exc, spec))
        if part.exists():
            os.replace(part, failed)
        row["wall_time_s"] = time.perf_counter() - t0
        return row
    row["wall_time_s"] = time.perf_counter() - t0
    row.update(_summary_of(result), file=path.name)
    for name, how in outputs:
        try:
            row[name] = _evaluate_output(how, result, nodes)
        except Exception as exc:
            row.update(status="error", error=f"output {name}: {type(exc).__name__}: {exc}")
    return row


def _error_text(exc: Exception, spec: Mapping[str, Any]) -> str:
    """The message of a member's error; a model file error without the line number of the
    patched text (it is not a line of the user's file)."""
    from kynemapy.model.file import ModelFileError

    if isinstance(exc, ModelFileError):
        message = str(exc)
        prefix = f"{exc.source}, line {exc.line}: " if exc.line is not None else f"{exc.source}: "
        return f"{spec['source']}: {message.removeprefix(prefix)}"
    return f"{type(exc).__name__}: {exc}"


def _cell(value: Any) -> Any:
    """A summary cell: numbers, booleans and strings as they are, arrays as JSON text."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return json.dumps(value)


# ------------------------------------------------------------------------------------------------
# the sweep
class MemberProgress:
    """``[######........] 6/16 members  1 failed  12 s  ETA 20 s`` on a stream (stderr)."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None) -> None:
        self.total, self.done, self.failed = max(total, 1), done, 0
        self.start_done = done
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.draw()

    def update(self, ok: bool) -> None:
        """Count one more finished member (``ok``: it succeeded) and redraw."""
        self.done += 1
        self.failed += 0 if ok else 1
        self.draw()

    def draw(self) -> None:
        """Redraw the bar."""
        width = 30
        filled = round(width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        ran = self.done - self.start_done
        if self.done >= self.total:
            eta = "done"
        else:
            eta = f"ETA {elapsed / ran * (self.total - self.done):.0f} s" if ran else "ETA ?"
        failed = f"  {self.failed} failed" if self.failed else ""
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} members{failed}  "
            f"{elapsed:.0f} s  {eta}   "
        )
        self.stream.flush()

    def close(self) -> None:
        """End the line (every update drew already: the last state is not drawn a second time)."""
        self.stream.write("\n")
        self.stream.flush()


def _definition(
    model_info: dict[str, Any], members: list[dict[str, Any]], run: dict[str, Any], outputs: list[str]
) -> dict[str, Any]:
    defn = {"format": FORMAT, "model": model_info, "run": run, "outputs": outputs, "members": members}
    return json.loads(json.dumps(defn))  # as it reads back from sweep.json


def _check_folder(folder: Path, definition: dict[str, Any]) -> bool:
    """True when ``folder`` holds this sweep (resume); raise when it holds something else."""
    manifest = folder / MANIFEST
    if manifest.exists():
        try:
            old = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SweepError(f"{manifest}: unreadable sweep definition ({exc})") from None
        old = (
            {k: v for k, v in old.items() if k not in ("created", "kynemapy_version")} if isinstance(old, dict) else {}
        )
        if old.get("format") != FORMAT:
            raise SweepError(f"{folder} holds {MANIFEST} of another format; choose another output folder")
        what = {
            "model": "another model (or the model file changed)",
            "run": "another run length, output interval or step parameters",
            "outputs": "other recorded outputs",
            "members": "other parameter sets",
        }
        differ = [text for part, text in what.items() if old.get(part) != definition[part]]
        if differ:
            raise SweepError(
                f"{folder} holds another sweep ({', '.join(differ)}); choose another output folder "
                f"or remove it to start over"
            )
        return True
    if folder.exists():
        if not folder.is_dir():
            raise SweepError(f"{folder} exists and is not a folder")
        if any(folder.iterdir()):
            raise SweepError(f"{folder} is not empty and holds no {MANIFEST}; choose a new or empty output folder")
    return False


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _columns(rows: list[dict[str, Any]], keys: list[str], outputs: list[str]) -> list[str]:
    fixed = ["member", "status", "error", *keys]
    tail = ["wall_time_s", "steps", "n_steps", "final_time_s", "energy_drift", "iterations_mean", "iterations_max"]
    cols = [*fixed, *tail, *outputs, "file", "reused"]
    extra = [c for r in rows for c in r if c not in cols]
    return cols + list(dict.fromkeys(extra))


def _write_summary(folder: Path, rows: list[dict[str, Any]], columns: list[str], fmt: str) -> Path:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
        path = folder / "summary.parquet"
        pq.write_table(table, path)
        return path
    path = folder / "summary.csv"
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in columns})
    os.replace(tmp, path)
    return path


class _Executor:
    """Runs member specs on Dask (a client it owns or was given) or in this process."""

    def __init__(self, client: Any, workers: int | None, timeout: float, needed: int | None = None) -> None:
        self.client = None
        self.cluster = None
        self.serial = client == "serial" or (client is None and needed == 0)
        if self.serial:
            return
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            from kynemapy.run.extras import install_command

            raise SweepError(
                f"sweeps run on Dask: {install_command('ensemble')} (dask[distributed]), or run serially"
            ) from None
        if client is None:
            n = int(workers) if workers is not None else (os.cpu_count() or 1)
            if n < 1:
                raise SweepError(f"sweep: workers must be >= 1, got {workers}")
            if needed is not None:
                n = min(n, needed)  # no idle workers: each would only start and be closed
            try:
                self.cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # a worker's or the scheduler's ERROR at shutdown (CommClosedError as the cluster
                    # closes) is noise after a sweep whose members all reported; their failures are rows
                    silence_logs=logging.CRITICAL,
                )
                self.client = Client(self.cluster)
            except Exception as exc:
                if self.cluster is not None:
                    with contextlib.suppress(Exception):
                        self.cluster.close()
                raise SweepError(
                    f"cannot start a local Dask cluster of {n} worker processes ({type(exc).__name__}: {exc}); "
                    "in a script, call sweep() under `if __name__ == '__main__':` (worker processes import "
                    "the main module)"
                ) from None
        elif isinstance(client, str):
            try:
                self.client = Client(client, timeout=timeout)
            except Exception as exc:
                raise SweepError(f"cannot reach the Dask scheduler at {client} within {timeout:g} s ({exc})") from None
        else:
            self.client = client
        self.owned = client is None or isinstance(client, str)

    def run(self, specs: list[dict[str, Any]], on_done: Callable[[dict[str, Any]], None]) -> None:
        if self.serial:
            for spec in specs:
                on_done(run_member(spec))
            return
        from distributed import as_completed

        futures = {self.client.submit(run_member, s, pure=False): s for s in specs}
        try:
            for fut in as_completed(list(futures)):
                spec = futures[fut]
                if fut.status == "finished":
                    on_done(fut.result())
                else:
                    exc = fut.exception()
                    on_done(
                        {"member": spec["id"], "status": "error", "error": f"{type(exc).__name__}: {exc}"}
                        | {k: _cell(v) for k, v in spec["values"].items()}
                    )
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise

    def close(self) -> None:
        # closing a client and its cluster races with their own connections: distributed logs the
        # CommClosedError it then meets, with a traceback, though nothing failed
        quiet = [logging.getLogger(name) for name in ("distributed", "tornado", "asyncio")]
        levels = [logger.level for logger in quiet]
        for logger in quiet:
            logger.setLevel(logging.CRITICAL + 1)
        try:
            if self.client is not None and self.owned:
                with contextlib.suppress(Exception):
                    self.client.close()
            if self.cluster is not None:
                with contextlib.suppress(Exception):
                    self.cluster.close()
        finally:
            for logger, level in zip(quiet, levels, strict=True):
                logger.setLevel(level)


def sweep(
    model: str | os.PathLike[str] | Callable[[dict[str, Any]], Any],
    parameters: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike[str],
    *,
    params: StepParameters | None = None,
    n_steps: int | None = None,
    t_end: float | None = None,
    every: int = 1,
    block: int | None = None,
    client: Any = None,
    workers: int | None = None,
    timeout: float = 10.0,
    outputs: Sequence[OutputSpec] = (),
    summary_format: str = "csv",
    progress: bool = True,
) -> SweepResult:
    """Run a model once per parameter set, each run with its own HDF5 file, on Dask.

    Parameters
    ----------
    model : str, os.PathLike or callable
        A TOML model file (the parameter keys are dotted keys into it, see
        :mod:`kynemapy.model.overrides`), or a model factory: ``factory(values)`` gets a
        member's dict of values and returns a :class:`~kynemapy.Model`, a ``(Model,
        StepParameters)`` pair or a :class:`~kynemapy.model.file.ModelFile`; keys
        ``step.<field>`` also replace that field of the step parameters.  A factory must be
        picklable (cloudpickle: lambdas and closures are fine) and importable on the workers.
    parameters : dict of lists, or list of dicts
        A grid (key → values; every combination, first key slowest) or a list of parameter
        sets (key → value).
    output_dir : str or os.PathLike
        Folder of the member files and the summary (created; see the module docstring).  A
        folder holding the same sweep is resumed; one holding anything else is refused.
    params : StepParameters, optional
        Step parameters: with a TOML file they replace its ``[step]`` table (``step.*`` keys
        apply on top); with a factory they are the base parameters.
    n_steps : int, optional
        Steps per member (with a TOML file: replaces its ``[run]``).
    t_end : float, optional
        End time [s] instead of ``n_steps``.
    every : int
        Write every ``every``-th step (and the last).
    block : int, optional
        Rows a killed member may lose at most (see :meth:`~kynemapy.Simulation.run`).
    client : None, str, distributed.Client or "serial"
        None: a local cluster of ``workers`` worker processes (one thread each) on the
        loopback, closed at the end; an address (``"tcp://host:8786"``): that scheduler;
        a ``Client``: used as it is; ``"serial"``: every member in this process, one after
        another (no Dask).
    workers : int, optional
        Worker processes of the local cluster (default: one per core).
    timeout : float
        Seconds to wait for a scheduler at an address.
    outputs : sequence of str or (str, callable)
        Extra summary columns: ``"STAT:NODE.QUANTITY"`` with STAT in final, max, min, mean,
        maxabs and QUANTITY in ux, uy, uz (displacement from the initial position [m]),
        angle (rotation from the initial orientation [rad]), vx, vy, vz [m/s], wx, wy, wz
        [rad/s] (NODE: a node name of the model file, or a node id); ``"STAT:QUANTITY"`` with
        kinetic_energy, potential_energy, strain_energy, energy (their sum) [J], iterations; or ``(name, f)`` with
        ``f(result) -> float`` of the member's :class:`~kynemapy.io.hdf5.Result`.
    summary_format : {"csv", "parquet"}
        Format of the summary table (Parquet needs pyarrow).
    progress : bool
        Draw a progress bar over the members on stderr.

    Returns
    -------
    SweepResult
        The summary rows (member, status, error, one column per key, wall_time_s, steps,
        n_steps, final_time_s, energy_drift = ``(E_end − E_0) / abs(E_0)`` of the kinetic plus
        gravitational energy, iterations_mean, iterations_max, the outputs, file, reused)
        and the summary file.

    Raises
    ------
    SweepError
        Before any member runs: a key that names no value of the model file, a value of the
        wrong type, an unreachable scheduler, an output folder holding another sweep, bad
        options, Dask not installed.
    """
    t_start = time.perf_counter()
    sets = _member_sets(parameters)
    keys = list(dict.fromkeys(k for s in sets for k in s))
    if summary_format not in ("csv", "parquet"):
        raise SweepError(f"sweep: summary_format must be 'csv' or 'parquet', got {summary_format!r}")
    if summary_format == "parquet":
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise SweepError("sweep: a Parquet summary needs pyarrow (pip install pyarrow), or use csv") from None
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise SweepError(f"sweep: every must be an integer >= 1, got {every!r}")
    if n_steps is not None and t_end is not None:
        raise SweepError("sweep: give n_steps or t_end, not both")
    if params is not None and not isinstance(params, StepParameters):
        raise SweepError(f"sweep: params must be a kynemapy.StepParameters, got {type(params).__name__}")
    parsed_outputs = [_parse_output(o) for o in outputs]
    output_names = [name for name, _ in parsed_outputs]
    if len(set(output_names)) != len(output_names):
        raise SweepError(f"sweep: duplicate output names {output_names}")

    folder = Path(output_dir)
    toml_text, factory, source = None, None, ""
    if isinstance(model, (str, os.PathLike)):
        from kynemapy.model.file import parse_model_file

        source = str(model)
        try:
            toml_text = Path(model).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SweepError(f"cannot read the model file {source}: {exc}") from None
        base = read_toml(toml_text, source)
        if params is not None:
            base["step"] = {f.name: getattr(params, f.name) for f in dataclasses.fields(StepParameters)}
        if n_steps is not None or t_end is not None:
            base["run"] = {"n_steps": int(n_steps)} if n_steps is not None else {"t_end": float(t_end)}
        toml_text = dump_toml(base) if (params is not None or n_steps is not None or t_end is not None) else toml_text
        base_file = parse_model_file(toml_text, source)  # the unchanged model must load
        if base_file.step_control is not None:
            raise SweepError(
                f"{source}: [step_control]: a sweep's members run fixed steps of [step] h (their rows on that "
                "grid for the summary); remove the table for the sweep, or run the model with step control "
                "by `kynemapy run`"
            )
        if base_file.n_steps is None and not any(k.startswith("run.") for k in keys):
            raise SweepError(f"{source}: no run length: add [run] n_steps or t_end, or pass n_steps/t_end")
        for i, s in enumerate(sets):
            for k, v in s.items():
                try:
                    check_value(resolve_key(base, k), v)
                except OverrideError as exc:
                    where = f" (parameter set {i})" if not isinstance(parameters, Mapping) else ""
                    raise SweepError(f"{source}: {exc}{where}") from None
        for name, how in parsed_outputs:
            if isinstance(how, tuple) and how[1] is not None:
                node = how[1]
                if node not in base_file.nodes and not (node.isdigit() and int(node) < base_file.model.n_nodes):
                    known = ", ".join(base_file.nodes)
                    raise SweepError(f"output {name}: no node {node!r} in {source} (nodes: {known})")
        model_info = {"kind": "toml", "sha256": hashlib.sha256(toml_text.encode()).hexdigest()}
    elif callable(model):
        factory = model
        if n_steps is None and t_end is None:
            raise SweepError("sweep: with a model factory give n_steps or t_end")
        types = {f.name: str(getattr(f.type, "__name__", f.type)) for f in dataclasses.fields(StepParameters)}
        for s in sets:
            for k, v in s.items():
                if k.startswith("step."):
                    field = k.removeprefix("step.")
                    if field not in types:
                        raise SweepError(f"sweep: {k}: StepParameters has no field {field!r} (fields: {list(types)})")
                    expected = types[field]
                    fits = (
                        isinstance(v, bool)
                        if expected == "bool"
                        else (isinstance(v, int) and not isinstance(v, bool))
                        if expected == "int"
                        else (isinstance(v, (int, float)) and not isinstance(v, bool))
                        if expected == "float"
                        else True
                    )
                    if not fits:
                        raise SweepError(f"sweep: {k}: expected {expected}, got {v!r} ({type(v).__name__})")
        name = f"{getattr(model, '__module__', '?')}.{getattr(model, '__qualname__', type(model).__name__)}"
        model_info = {"kind": "factory", "name": name}
        source = name
    else:
        raise SweepError(f"sweep: model must be a TOML file or a model factory, got {type(model).__name__}")

    width = max(4, len(str(len(sets) - 1)))
    ids = [f"m{i:0{width}d}" for i in range(len(sets))]
    run_info = {
        "n_steps": n_steps,
        "t_end": t_end,
        "every": every,
        "params": dataclasses.asdict(params) if params is not None else None,
    }
    definition = _definition(
        model_info, [{"id": i, "values": s} for i, s in zip(ids, sets, strict=True)], run_info, output_names
    )
    for s in sets:
        try:
            json.dumps(s)
        except TypeError as exc:
            raise SweepError(f"sweep: parameter values must be numbers, booleans, strings or lists ({exc})") from None
    from kynemapy.io.paths import output_folder

    # a file given, or a folder that takes no files: said now (the folder is made once the scheduler answers)
    output_folder(folder, "sweep folder", create=False)
    resume = _check_folder(folder, definition)

    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for member, values in zip(ids, sets, strict=True):
        path = folder / f"{member}.h5"
        problem = member_file_problem(path, member, values) if resume and path.exists() else "absent"
        if resume and problem not in (None, "absent"):
            warnings.warn(f"{path}: {problem}; running {member} again", SweepWarning, stacklevel=2)
        if problem is None:
            # a stale part file of a run stopped earlier (the member finished since): not kept beside it
            for stale in (path.with_name(path.name + ".part"), path.with_name(path.name + ".part.lock")):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
            row = None
            with contextlib.suppress(OSError, ValueError):
                row = json.loads((folder / f"{member}.json").read_text(encoding="utf-8"))
            if not isinstance(row, dict) or row.get("status") != "ok":
                from kynemapy.io.hdf5 import read

                row = {"member": member, "status": "ok", "error": ""} | {k: _cell(v) for k, v in values.items()}
                row |= _summary_of(read(path)) | {"file": path.name, "wall_time_s": math.nan}
            row["reused"] = True
            rows[member] = row
            continue
        todo.append(
            {
                "id": member,
                "values": values,
                "path": str(path.resolve()),
                "toml": toml_text,
                "factory": factory,
                "source": source,
                "params": params,
                "n_steps": n_steps,
                "t_end": t_end,
                "every": every,
                "block": block,
                "outputs": list(outputs),
            }
        )
    # a local cluster only as large as the work left: none for a sweep whose members are all reused
    # (a cluster closed while its workers still start up logged CommClosedError tracebacks)
    executor = _Executor(client, workers, timeout, needed=len(todo))  # reaches the scheduler first
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not resume:
            import kynemapy

            _write_json(
                folder / MANIFEST,
                definition
                | {"source": str(Path(source).resolve()) if toml_text is not None else source}
                | {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                | {"kynemapy_version": kynemapy.__version__},
            )
        bar = MemberProgress(len(sets), len(rows)) if progress else None

        def done(row: dict[str, Any]) -> None:
            row["reused"] = False
            rows[row["member"]] = row
            with contextlib.suppress(OSError, TypeError, ValueError):
                _write_json(folder / f"{row['member']}.json", row)
            if bar is not None:
                bar.update(row["status"] == "ok")

        try:
            executor.run(todo, done)
        finally:
            if bar is not None:
                bar.close()
            ordered = [rows[m] for m in ids if m in rows]
            summary = _write_summary(folder, ordered, _columns(ordered, keys, output_names), summary_format)
    finally:
        executor.close()
    return SweepResult(folder=folder, rows=ordered, summary=summary, wall_time=time.perf_counter() - t_start)
