"""The Gazebo Boxes benchmark (seed 004): free-floating boxes, simple and complex scenarios.

The benchmark's metrics (position, velocity, angular-momentum, energy and rotation-angle errors,
simulated/wall time) for every scheme over dt = 1e-4 … 1e-3, beside the published ODE, Bullet,
Simbody and DART results.

Run:  python examples/gazebo_boxes.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case boxes``; exit status 1 when a
check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import boxes
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="dt = 5e-4 and 1e-3 only")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figures into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = boxes.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in boxes.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
