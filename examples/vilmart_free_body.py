"""Vilmart's free rigid body (seed 003): invariants and errors of every scheme.

I = (0.376, 0.627, 1.0), y(0) = (0, 0.6, −0.8), h = 0.01, t ∈ [0, 40]: H, C and the spatial momentum
per scheme, errors against a tight DOP853 solution, the exact (Jacobi) flow against it, and the
trajectories of the principal axes.

Run:  python examples/vilmart_free_body.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case vilmart``; exit status 1 when a
check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import vilmart
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same runs (the case takes about a second)")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figures into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = vilmart.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in vilmart.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
