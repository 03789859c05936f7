"""The ``kynemapy`` command line: run a TOML model, summarise and plot a result file.

    kynemapy run model.toml [-o run.h5] [--resume | --overwrite] [--every K] [--block B] [--adaptive] [--no-progress]
    kynemapy info run.h5
    kynemapy plot run.h5 [-o DIR]
    kynemapy animate run.h5 [-o run.gif|run.mp4] [--style box|frame] [--magnify F]
    kynemapy export run.h5 [-o run.vtkhdf]
    kynemapy sweep model.toml --set KEY=V1,V2,... [--set ...] -o DIR [--workers N] [--scheduler ADDRESS]
    kynemapy validate [--quick] [--out DIR] [--case NAME ...] [--no-figures]
    kynemapy campbell model.toml --speed START:STOP:COUNT [--rad-s] [--axis X,Y,Z] [--modes K] [-o campbell.csv]
    kynemapy --version

Exit status: 0 on success, 1 when a run stops before its end (a step that does not
converge, a load that cannot be evaluated, a result file that cannot be written: the rows so
far are in the file, and the message says how many), a sweep member fails or a validation
check fails, 2 for bad input (model file, options, output path, a damaged or foreign result
file, a file another live process writes, sweep keys and values, an unreachable scheduler),
130 when interrupted (Ctrl-C) and 143 when terminated (SIGTERM, ``kill PID``): the rows
computed so far are in the file, and the message says how to resume.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


class Terminated(BaseException):
    """SIGTERM arrived (``kill PID``): the run stops as after Ctrl-C (a BaseException, like KeyboardInterrupt)."""


class _LoadFailed(Exception):
    """A load of the model file could not be evaluated during the run (``__cause__``: why)."""


@contextmanager
def _sigterm_stops_the_run() -> Iterator[None]:
    """While the run goes on, SIGTERM raises :class:`Terminated` in the main thread (as SIGINT raises
    KeyboardInterrupt), so that the rows so far are written and the resume command is printed.
    A SIGTERM that the parent set to be ignored stays ignored."""
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _plural(n: int, word: str) -> str:
    """``1 mass``, ``2 masses``, ``0 nodes`` (:func:`kynemapy.model.registry.kind.plural`)."""
    from kynemapy.model.registry.kind import plural

    return plural(n, word)


def _rows_in(output: str) -> str:
    """``5121 rows are in run.h5`` (read back), or why the file cannot say."""
    from kynemapy.io import read

    try:
        n = read(output).committed
    except Exception as exc:  # the file is not readable: say so rather than hide it
        return f"the output file cannot be read ({exc})"
    return f"{_plural(n, 'row')} {'is' if n == 1 else 'are'} in {output}"


def _positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def _check_resume(output: str, model_path: str, mf: object) -> None:
    """Refuse to continue ``output`` with a model file whose model or step parameters differ from the file's."""
    import dataclasses

    from kynemapy.io import model_difference, read

    r = read(output)
    difference = model_difference(r.model, mf.model)  # type: ignore[attr-defined]
    if difference is None:
        for fld in dataclasses.fields(r.params):
            theirs, mine = getattr(r.params, fld.name), getattr(mf.params, fld.name)  # type: ignore[attr-defined]
            if theirs != mine:
                difference = f"step parameter {fld.name} is {mine!r} in {model_path}, {theirs!r} in the file"
                break
    written = r.attrs.get("step_control")  # a controlled file's settings (files since 2026-11-30)
    if difference is None and written is not None and mf.step_control is not None:  # type: ignore[attr-defined]
        from kynemapy.run.controlled import control_settings
        from kynemapy.run.stepcontrol import StepControl

        try:
            mine = json.loads(control_settings(StepControl(**mf.step_control)))  # type: ignore[attr-defined]
        except ValueError:
            mine = None  # a bad table: said by the run, with its own message
        theirs = json.loads(written)
        if mine is not None and mine != theirs:
            changed = [
                f"{k} = {mine.get(k)!r} ({theirs.get(k)!r} in the file)"
                for k in sorted(mine)
                if mine.get(k) != theirs.get(k)
            ]
            difference = "[step_control] " + ", ".join(changed)
    if difference is not None:
        origin = r.attrs.get("model_file")
        hint = (
            f"kynemapy run {origin} -o {output} --resume" if origin else f"kp.Simulation.restart({output!r}).run(...)"
        )
        raise ValueError(
            f"--resume: {output} was written by another model than {model_path}: {difference}; "
            f"to continue the file's own model: {hint}"
        )


def _model_loads(mf: Any) -> Callable[[Any, float], None] | None:
    """The model file's loads as a run's ``loads(sim, t)``; a load that fails raises :class:`_LoadFailed`."""
    if not mf.loads:
        return None

    def loads(sim: Any, t: float) -> None:
        try:
            mf.apply_loads(sim, t)
        except Exception as exc:
            raise _LoadFailed(str(exc)) from exc

    return loads


def _run(args: argparse.Namespace) -> int:
    from kynemapy.model.file import load_model_file
    from kynemapy.run.simulation import ConvergenceError, Simulation
    from kynemapy.run.writer import OutputWriteError

    mf = load_model_file(args.model)
    output = args.output or mf.output.get("path")
    if output is None:
        raise ValueError("no output file: give -o/--output or an [output] path in the model file")
    every = args.every if args.every is not None else int(mf.output.get("every", 1))
    block = args.block if args.block is not None else mf.output.get("block")
    n_total = mf.n_steps
    if args.resume:
        if not os.path.exists(output):
            raise ValueError(f"--resume: {output!r} does not exist")
        sim = Simulation.restart(output)  # first: a file a live process writes is refused by name
        _check_resume(output, args.model, mf)
        if args.every is None and sim.resume_every is not None:
            every = sim.resume_every  # the file's own spacing, whatever the model file says
        remaining = max(n_total - sim.step_count, 0)
        to_go = (
            f"on to t = {mf.t_end:.9g} s under step control"
            if mf.step_control is not None and mf.t_end is not None
            else f"{remaining} steps to go"
        )
        print(f"resuming {output} at step {sim.step_count} (t = {sim.time:.9g} s); {to_go}")
    else:
        sim = Simulation(mf.model, mf.params)
        remaining = n_total
    control = None
    if mf.step_control is not None:
        from kynemapy.run.stepcontrol import StepControl

        try:
            control = StepControl(**mf.step_control)
        except ValueError as exc:
            raise ValueError(f"{args.model}: [step_control]: {str(exc).removeprefix('StepControl: ')}") from None
        if args.adaptive:
            raise ValueError("--adaptive does not apply to a model file with [step_control] (the control redoes steps)")
    resume = f"kynemapy run {args.model} -o {output} --resume"
    try:
        with _sigterm_stops_the_run():
            info = sim.run(
                n_steps=remaining if control is None else None,
                t_end=mf.t_end if control is not None else None,
                control=control,
                output=output,
                every=every,
                block=block,
                progress=not args.no_progress,
                loads=_model_loads(mf),
                adaptive=args.adaptive,
                attrs={"model_file": str(Path(args.model).resolve())},
                overwrite=args.overwrite,
            )
    except ConvergenceError as exc:
        print(f"kynemapy run: {exc}", file=sys.stderr)
        return 1
    except _LoadFailed as exc:
        print(
            f"kynemapy run: stopped at step {sim.step_count}, t = {sim.time:.9g} s: a load cannot be evaluated: "
            f"{exc}; {_rows_in(output)} (up to step {sim.step_count})",
            file=sys.stderr,
        )
        return 1
    except OutputWriteError as exc:
        print(
            f"kynemapy run: stopped at step {sim.step_count}, t = {sim.time:.9g} s: cannot write {output}: "
            f"{exc.reason}; {_plural(exc.committed, 'row')} {'is' if exc.committed == 1 else 'are'} safe in "
            f"{output}; once there is room, continue with: {resume}",
            file=sys.stderr,
        )
        return 1
    except (KeyboardInterrupt, Terminated) as exc:
        how = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        print(
            f"kynemapy run: {how} at step {sim.step_count}, t = {sim.time:.9g} s; {_rows_in(output)}; "
            f"continue with: {resume}",
            file=sys.stderr,
        )
        return 130 if isinstance(exc, KeyboardInterrupt) else 143
    if control is not None:
        print(
            f"{info.steps} accepted steps ({info.rejected} rejected"
            + (f", the smallest {info.min_step:.3g} s" if info.steps else "")
            + ") to "
            f"t = {info.time:.9g} s in {info.wall_time:.2f} s; {info.rows} rows written to {output}"
        )
        return 0
    print(
        f"{info.steps} steps to t = {info.time:.9g} s in {info.wall_time:.2f} s; "
        f"Newton iterations/step mean {info.iterations_mean:.2f}, max {info.iterations_max}; "
        f"{info.rows} rows written to {output}"
    )
    return 0


def _info(args: argparse.Namespace) -> int:
    from kynemapy.io import read

    r = read(args.result)
    m = r.model
    print(f"file              {r.path}")
    print(f"written by        kynemapy {r.attrs.get('kynemapy_version', '?')} on {r.attrs.get('created', '?')}")
    print(f"closed cleanly    {'yes' if r.closed_cleanly else 'no (writer killed or still running)'}")
    print(
        f"model             {_plural(m.n_nodes, 'node')}, {_plural(m.n_masses, 'mass')}, "
        f"{_plural(m.n_springs, 'spring')}, {_plural(m.n_constraints, 'constraint')}, "
        f"{_plural(m.n_dofs, 'unknown')}"
    )
    p = r.params
    print(
        f"step parameters   h = {p.h} s, rho_inf = {p.rho_inf}, max_iter = {p.max_iter}, atol = {p.atol}, "
        f"rtol = {p.rtol}, geometric_stiffness = {p.geometric_stiffness}"
    )
    print(f"rows              {r.committed}")
    if r.committed:
        print(f"time              {r.time[0]:.9g} s to {r.time[-1]:.9g} s (steps {r.step[0]} to {r.step[-1]})")
        sc = r.step_control
        if sc is not None:  # a step-controlled run: its rows are no steps
            sizes = sc["step_size"][sc["accepted"] > 0]
            print(
                f"step control      {int(sc['accepted'].sum())} accepted steps, {int(sc['rejected'].sum())} rejected; "
                + (f"step size {sizes.min():.3g} s to {sizes.max():.3g} s; " if sizes.size else "")
                + f"largest estimated error {sc['estimated_error'].max():.3g}"
            )
            settings = r.attrs.get("step_control")
            if settings is not None:
                c = json.loads(settings)
                print(f"                  scheme {c.get('scheme')}, rtol = {c.get('rtol')}, atol = {c.get('atol')}")
        else:
            its = r.iterations[r.step > 0] if np.any(r.step > 0) else r.iterations
            print(f"Newton iterations mean {its.mean():.3f}, max {its.max()}")
        energy = r.kinetic_energy + r.potential_energy + r.strain_energy
        change = float(np.max(np.abs(energy - energy[0])))
        if energy[0] != 0.0:
            drift = f"max relative change {change / abs(energy[0]):.3g}"
        else:  # a model starting from rest at the origin of the potential: no scale to divide by
            drift = f"max change {change:.3g} J"
        print(f"energy            {energy[0]:.9g} J at start, {energy[-1]:.9g} J at end ({drift})")
    from kynemapy.model.registry import kinds

    for kind in kinds():  # each kind's lines (kynemapy.model.registry)
        for label, text in kind.info(r) if kind.info is not None else ():
            print(f"{label:<18}{text}")
    kept = r.restart_memory()  # the kinds' memories of the run kept with it
    extra = "".join(f", with its memory {name} ({rows.shape[0]} rows)" for name, rows in kept.items())
    print(f"restart data      {'yes' + extra if r.restart is not None else 'no'}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from kynemapy.run.extras import install_command

        raise ValueError(f"kynemapy plot needs matplotlib: {install_command('plot')}") from exc
    from kynemapy.io import read
    from kynemapy.post.plots import plot_result

    r = read(args.result)
    out = Path(args.output_dir or Path(args.result).with_suffix(""))
    for path in plot_result(r, out):
        print(path)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from kynemapy.model.overrides import parse_values
    from kynemapy.run.sweep import SweepError, sweep

    axes: dict[str, list] = {}
    for item in args.set or []:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise SweepError(f"--set {item!r}: expected KEY=V1,V2,... (e.g. step.rho_inf=0,0.5,0.9)")
        if key.strip() in axes:
            raise SweepError(f"--set {key.strip()}: given twice")
        axes[key.strip()] = parse_values(values, key.strip())
    if not axes:
        raise SweepError("give at least one --set KEY=V1,V2,...")
    if args.serial and (args.scheduler or args.workers is not None):
        raise SweepError("--serial runs in this process; it does not combine with --scheduler or --workers")
    if args.scheduler and args.workers is not None:
        raise SweepError("--workers sizes the local cluster; it does not apply with --scheduler")
    if args.workers is not None and args.workers < 1:
        raise SweepError(f"--workers must be >= 1, got {args.workers}")
    client = "serial" if args.serial else args.scheduler
    try:
        result = sweep(
            args.model,
            axes,
            args.output_dir,
            every=args.every,
            client=client,
            workers=args.workers,
            timeout=args.timeout,
            outputs=args.record or (),
            summary_format=args.summary_format,
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        print(f"kynemapy sweep: interrupted; run the same command again to resume {args.output_dir}", file=sys.stderr)
        return 130
    failed = result.failed
    reused = sum(1 for r in result.rows if r.get("reused"))
    print(
        f"{len(result.rows)} members ({reused} reused from an earlier run), {len(failed)} failed, "
        f"in {result.wall_time:.1f} s; summary: {result.summary}"
    )
    for r in failed:
        print(f"  {r['member']}: {r['status']}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


def _animate(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from kynemapy.run.extras import install_command

        raise ValueError(f"kynemapy animate needs matplotlib: {install_command('plot')}") from exc
    import warnings

    from kynemapy.post.animate import animate

    if args.fps < 1:
        raise ValueError(f"--fps must be >= 1, got {args.fps}")
    if args.max_frames < 1:
        raise ValueError(f"--max-frames must be >= 1, got {args.max_frames}")
    output = args.output or str(Path(args.result).with_suffix(".gif" if args.mode is None else f".mode{args.mode}.gif"))
    source: Any = args.result if args.mode is None else _mode_view(args)
    derived: dict[str, Any] = {}
    if args.mode is None:
        from kynemapy.io import read
        from kynemapy.run.hooks import derived as kinds_derived

        source = read(args.result)
        derived = kinds_derived(source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = animate(
            source,
            output,
            style=args.style,
            view=(args.elevation, args.azimuth),
            fps=args.fps,
            max_frames=args.max_frames if args.mode is None else None,
            every=args.every if args.mode is None else 1,
            magnify=args.magnify,
            progress=not args.no_progress,
            **derived,
        )
    for w in caught:
        print(f"kynemapy animate: {w.message}", file=sys.stderr)
    print(path)
    return 0


def _speeds(text: str) -> np.ndarray:
    """``START:STOP:COUNT`` (COUNT evenly spaced speeds, both ends included) or ``S1,S2,...``."""
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
            if count < 1:
                raise ValueError
            return np.linspace(start, stop, count)
        return np.array([float(x) for x in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected START:STOP:COUNT (e.g. 0:12:13) or a list S1,S2,... of speeds, got {text!r}"
        ) from None


def _vector(text: str) -> np.ndarray:
    try:
        v = np.array([float(x) for x in text.split(",")])
    except ValueError:
        v = np.zeros(0)
    if v.shape != (3,):
        raise argparse.ArgumentTypeError(f"expected three numbers X,Y,Z, got {text!r}")
    return v


def _campbell(args: argparse.Namespace) -> int:
    from kynemapy.analysis import campbell
    from kynemapy.analysis.campbell import RPM
    from kynemapy.model.file import load_model_file

    mf = load_model_file(args.model)
    if np.any(args.speed < 0.0):
        raise ValueError("--speed: speeds must be >= 0 (turn the other way with --axis)")
    speeds = args.speed if args.rad_s else args.speed * RPM
    output = Path(args.output or Path(args.model).with_suffix(".campbell.csv"))
    blades = None
    if args.blades:
        names = [x.strip() for x in args.blades.split(",") if x.strip()]
        unknown = [x for x in names if x not in mf.beams]
        if unknown:
            raise ValueError(
                f"--blades: no beam named {', '.join(map(repr, unknown))} in {args.model} "
                f"(its beams: {', '.join(mf.beams) or 'none'})"
            )
        blades = [list(mf.beams[x].nodes) for x in names]
    from kynemapy.engine.api import ConvergenceError

    try:
        result = campbell(mf.model, speeds, axis=args.axis, center=args.center, n_modes=args.modes, blades=blades)
    except ConvergenceError as exc:  # a message and exit status 2, not a traceback
        raise ValueError(str(exc)) from exc
    print(result.write_csv(output))
    if not args.no_plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            from kynemapy.run.extras import install_command

            print(f"kynemapy campbell: no plot (it needs matplotlib: {install_command('plot')})", file=sys.stderr)
        else:
            print(result.plot(output.with_suffix(".png"), harmonics=tuple(args.harmonics), rpm=not args.rad_s))
    unit, scale = ("rad/s", 1.0) if args.rad_s else ("rpm", 1.0 / RPM)
    low = np.flatnonzero(result.mac.min(axis=1) < 0.8)
    if low.size:
        where = ", ".join(f"{result.speeds[i] * scale:g}" for i in low)
        print(
            f"kynemapy campbell: uncertain tracking (MAC < 0.8) at {where} {unit}: more speeds between would help",
            file=sys.stderr,
        )
    return 0


def _mode_view(args: argparse.Namespace) -> Any:
    """The mode ``--mode K`` (1-based) of the model file ``args.result`` over one cycle: about its
    static equilibrium under gravity, or with ``--speed`` about the steady rotation (rotating
    frame); ``ModeFrames`` for the animation and the ParaView writers."""
    from kynemapy.analysis import modes, static_equilibrium, steady_rotation
    from kynemapy.analysis.campbell import RPM
    from kynemapy.model.file import load_model_file
    from kynemapy.post.modeshape import mode_frames

    if Path(args.result).suffix.lower() != ".toml":
        raise ValueError(f"--mode needs a model file (.toml), got {args.result}")
    if args.mode < 1:
        raise ValueError(f"--mode: modes are numbered from 1 (the lowest frequency), got {args.mode}")
    if args.frames < 1:
        raise ValueError(f"--frames must be >= 1, got {args.frames}")
    from kynemapy.engine.api import ConvergenceError

    mf = load_model_file(args.result)
    try:
        if args.speed is None:
            about: Any = static_equilibrium(mf.model)
        else:
            if args.speed < 0.0:
                raise ValueError("--speed must be >= 0 (turn the other way with --axis)")
            rate = args.speed if args.rad_s else args.speed * RPM
            about = steady_rotation(mf.model, rate * args.axis / np.linalg.norm(args.axis), args.center)
    except ConvergenceError as exc:  # a message and exit status 2, not a traceback
        raise ValueError(str(exc)) from exc
    m = modes(about)
    if args.mode > m.omega.size:
        raise ValueError(f"--mode {args.mode}: the model has {m.omega.size} modes (numbered 1 to {m.omega.size})")
    view = mode_frames(m, args.mode - 1, args.amplitude, args.frames, name=f"{Path(args.result).name} mode {args.mode}")
    f = m.frequency[args.mode - 1]
    note = " (unstable: negative stiffness along this mode, it grows instead of oscillating)" if f < 0.0 else ""
    print(f"mode {args.mode}: {f:.6g} Hz, damping ratio {m.damping_ratio[args.mode - 1]:.3g}{note}", file=sys.stderr)
    return view


def _export(args: argparse.Namespace) -> int:
    from kynemapy.io.vtkhdf import write_vtkhdf

    if args.mode is not None:
        output = args.output or str(Path(args.result).with_suffix(f".mode{args.mode}.vtkhdf"))
        print(write_vtkhdf(_mode_view(args), output))
        return 0
    from kynemapy.io import read
    from kynemapy.run.hooks import derived

    result = read(args.result)
    print(write_vtkhdf(result, args.output, every=args.every, **derived(result)))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from kynemapy.validation.report import DEFAULT_OUT, validate

    out = DEFAULT_OUT if args.out is None else args.out
    results, _ = validate(out=out, quick=args.quick, cases=args.case, figures=not args.no_figures)
    return 0 if all(r.passed for r in results) else 1


def _compile(args: argparse.Namespace) -> int:
    from kynemapy.run.precompile import cache_location, compile_all

    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    seconds = compile_all(jobs=args.jobs, progress=not args.quiet)
    print(f"kernels compiled or loaded in {seconds:.0f} s; cached in {cache_location()}")
    return 0


def _mode_options(p: argparse.ArgumentParser) -> None:
    """``--mode K`` and its options (animate, export): RESULT is then a model file."""
    g = p.add_argument_group(
        "mode shapes", "with --mode, the first argument is a model file (.toml): one of its modes over one cycle"
    )
    g.add_argument(
        "--mode", type=int, metavar="K", help="draw mode K (1: the lowest frequency) about the static equilibrium"
    )
    g.add_argument("--speed", type=float, help="about the steady rotation at this speed (rpm unless --rad-s)")
    g.add_argument("--rad-s", action="store_true", help="--speed in rad/s")
    g.add_argument("--axis", type=_vector, default=np.array([0.0, 0.0, 1.0]), help="rotation axis (default 0,0,1)")
    g.add_argument("--center", type=_vector, default=np.zeros(3), help="a point X,Y,Z [m] on the axis (default 0,0,0)")
    g.add_argument("--amplitude", type=float, help="largest displacement drawn [m] (default: a tenth of the model)")
    g.add_argument("--frames", type=int, default=24, help="phases per cycle (default 24)")


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``kynemapy`` command."""
    from kynemapy import __version__
    from kynemapy.validation import ALL_CASES

    ap = argparse.ArgumentParser(prog="kynemapy", description="Lie-group generalized-alpha multibody dynamics")
    ap.add_argument("--version", action="version", version=f"kynemapy {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a TOML model file, streaming results to HDF5")
    run.add_argument("model", help="model file (.toml; see docs/model-file.md)")
    run.add_argument("-o", "--output", help="HDF5 result file (default: the model file's [output] path)")
    run.add_argument("--resume", action="store_true", help="continue the output file from its last committed step")
    run.add_argument("--overwrite", action="store_true", help="replace an existing output file (else refused)")
    run.add_argument(
        "--every",
        type=_positive,
        help="write every K-th step (default: model file, else 1; --resume: the file's own spacing)",
    )
    run.add_argument(
        "--block",
        type=_positive,
        help="rows a killed run may lose at most, written in half blocks "
        "(default: model file, else about 4 MiB of rows)",
    )
    run.add_argument("--adaptive", action="store_true", help="retry a failed step with halved sub-steps")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(func=_run)
    info = sub.add_parser("info", help="summarise a result file")
    info.add_argument("result", help="HDF5 result file written by kynemapy run")
    info.set_defaults(func=_info)
    plot = sub.add_parser(
        "plot", help="write PNG plots (displacement, rotation, energy error, iterations) of a result file"
    )
    plot.add_argument("result", help="HDF5 result file written by kynemapy run")
    plot.add_argument("-o", "--output-dir", help="directory for the PNGs (default: next to the file)")
    plot.set_defaults(func=_plot)
    an = sub.add_parser("animate", help="write an animation (GIF, or MP4 with ffmpeg) of a result file")
    an.add_argument("result", help="HDF5 result file written by kynemapy run (with --mode: a model file)")
    an.add_argument("-o", "--output", help="run.gif or run.mp4 (default: the result file with .gif)")
    an.add_argument("--style", choices=("box", "frame"), default="box", help="bodies as inertia boxes or axes")
    an.add_argument("--elevation", type=float, default=25.0, help="camera elevation [deg] (default 25)")
    an.add_argument("--azimuth", type=float, default=-60.0, help="camera azimuth [deg] (default -60)")
    an.add_argument("--fps", type=int, default=20, help="frames per second (default 20)")
    an.add_argument("--max-frames", type=int, default=200, help="most frames; rows are thinned evenly (default 200)")
    an.add_argument("--every", type=int, help="draw every K-th row instead of --max-frames")
    an.add_argument("--magnify", type=float, default=1.0, help="magnify the motion from the first row (default 1)")
    an.add_argument("--no-progress", action="store_true", help="no frame counter")
    _mode_options(an)
    an.set_defaults(func=_animate)
    ex = sub.add_parser("export", help="write a VTKHDF file (ParaView, with time) beside a result file")
    ex.add_argument("result", help="HDF5 result file written by kynemapy run (with --mode: a model file)")
    ex.add_argument("-o", "--output", help="the .vtkhdf file (default: the result file with .vtkhdf)")
    ex.add_argument("--every", type=int, default=1, help="write every K-th row (default 1)")
    _mode_options(ex)
    ex.set_defaults(func=_export)
    sw = sub.add_parser(
        "sweep", help="run a TOML model once per parameter set (a grid of --set values) on Dask, one HDF5 file each"
    )
    sw.add_argument("model", help="model file (.toml)")
    sw.add_argument(
        "--set",
        action="append",
        metavar="KEY=V1,V2,...",
        help="values of a dotted key of the model file (step.rho_inf, mass.top.mass, node.top.velocity[4], ...); "
        "several --set make a grid",
    )
    sw.add_argument("-o", "--output-dir", required=True, help="folder of the member files and summary.csv")
    sw.add_argument("--workers", type=int, help="worker processes of the local Dask cluster (default: one per core)")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786")
    sw.add_argument("--serial", action="store_true", help="run the members one after another in this process")
    sw.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for --scheduler (default 10)")
    sw.add_argument("--every", type=int, default=1, help="write every K-th step of each member (default 1)")
    sw.add_argument(
        "--record",
        action="append",
        metavar="STAT:NODE.QUANTITY",
        help="a summary column, e.g. maxabs:platform.uz, final:top.angle, max:iterations (repeatable)",
    )
    sw.add_argument("--summary-format", choices=("csv", "parquet"), default="csv", help="summary table format")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.set_defaults(func=_sweep)
    val = sub.add_parser("validate", help="run the seed validation cases, write a Markdown report with figures")
    val.add_argument("--quick", action="store_true", help="a subset of each case (a few minutes on two cores)")
    val.add_argument(
        "--out",
        default=None,
        help="report directory, created if needed (default: ./kynemapy-validation in the working directory)",
    )
    val.add_argument("--case", action="append", help=f"run only this case (repeatable): {', '.join(ALL_CASES)}")
    val.add_argument("--no-figures", action="store_true", help="no PNG figures (no matplotlib needed)")
    val.set_defaults(func=_validate)
    cb = sub.add_parser(
        "campbell",
        help="Campbell diagram: rotating-frame modes of a model turning about an axis, over speed (CSV, PNG)",
        description="Find the steady rotation at each speed (the model's prescribed BCs turned with it), linearize "
        "in the rotating frame, take the modes and track them across speeds by MAC; write a CSV table and, with "
        "matplotlib, a PNG with the nP lines.  The model file's [[load]] items are not applied; its gravity must be "
        "zero or along the axis.  See docs/modes.md.",
    )
    cb.add_argument("model", help="model file (.toml; see docs/model-file.md)")
    cb.add_argument(
        "--speed",
        type=_speeds,
        required=True,
        help="speeds: START:STOP:COUNT (COUNT evenly spaced, ends included) or S1,S2,...; rpm unless --rad-s",
    )
    cb.add_argument("--rad-s", action="store_true", help="--speed in rad/s (default rpm)")
    cb.add_argument(
        "--axis",
        type=_vector,
        default=np.array([0.0, 0.0, 1.0]),
        help="rotation axis X,Y,Z (default 0,0,1; a leading minus as --axis=-1,0,0)",
    )
    cb.add_argument("--center", type=_vector, default=np.zeros(3), help="a point X,Y,Z [m] on the axis (default 0,0,0)")
    cb.add_argument("--modes", type=_positive, default=10, help="modes to track (default 10)")
    cb.add_argument("--harmonics", type=_positive, nargs="+", default=[1, 3, 6], help="nP lines drawn (default 1 3 6)")
    cb.add_argument(
        "--blades",
        metavar="B1,B2,B3",
        help="the fixed-frame diagram of a rotor of identical blades (beam names, in the sense of rotation): "
        "multi-blade coordinates, each mode labelled collective / forward / backward",
    )
    cb.add_argument("-o", "--output", help="CSV file (default: the model file with .campbell.csv); the PNG beside it")
    cb.add_argument("--no-plot", action="store_true", help="no PNG (no matplotlib needed)")
    cb.set_defaults(func=_campbell)
    comp = sub.add_parser(
        "compile",
        help="compile every numba kernel into the cache ahead of the first run (once per install and version)",
    )
    comp.add_argument(
        "--jobs", type=int, default=None, help="processes to compile with (default: 2 with two cores or more)"
    )
    comp.add_argument("--quiet", action="store_true", help="no progress bar")
    comp.set_defaults(func=_compile)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    import warnings

    from kynemapy.model.builder import ModelError

    args = parser().parse_args(argv)
    prefix = f"kynemapy {args.command}: "
    if args.command == "run" and args.resume and args.overwrite:
        print(prefix + "give --resume or --overwrite, not both", file=sys.stderr)
        return 2

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(prefix + str(message), file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show  # a library warning (e.g. a killed writer's marks cleared): one line
            status = int(args.func(args))
            sys.stdout.flush()  # here, not at exit: a reader that stopped early is handled below
            return status
    except BrokenPipeError:
        # the output's reader stopped reading (``kynemapy info run.h5 | head``): stop quietly, as
        # command-line tools do; what is still buffered goes nowhere (no second error at exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, the status of a tool stopped by a closed pipe
    except (ModelError, ValueError, OSError, KeyError) as exc:
        message = str(exc)
        if isinstance(exc, OSError) and exc.filename is not None and message.startswith("[Errno"):
            message = f"{exc.filename}: {exc.strerror}"  # Python's own: "[Errno 2] No such file ...: 'x'"
        if message.startswith(f"{args.command}: "):  # the library names the call already
            message = message[len(args.command) + 2 :]
        print(prefix + message, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(prefix + "interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
