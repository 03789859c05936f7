"""ABAQUS Benchmarks 1.3.6 (seed 002): force-free symmetric body and the forced top (cases 1, 2).

Force-free: global ω against the closed form over [0, 2] s at h = 0.01 and the precession of ω.
Forced top: the first Euler angle against the elliptic-function solution, turning angles (roots of
the cubic in cos θ), the locus of the figure axis, the mean precession period and total energy,
for every scheme at h = 0.01 and 0.001.

Run:  python examples/abaqus_rigid_body.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case abaqus``; exit status 1 when a
check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import abaqus
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the forced top at h = 0.01 only")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figures into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = abaqus.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in abaqus.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
