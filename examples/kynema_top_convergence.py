"""Kynema's heavy top (seed 001): convergence of u₃(t = 2) against h, as in Kynema's docs.

The constrained top (centre-of-mass node, 6→3 rigid joint, pinned node) with generalized-α
(ρ∞ = 0.9) at h = 8e-3 … 5e-4 against an independent DOP853 solution about the pivot, the
least-squares order, and Kynema's verification run (h = 2e-4, accepted at 5e-4).

Run:  python examples/kynema_top_convergence.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case kynema_top``; exit status 1 when a
check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import kynema_top
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three step sizes instead of five")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figures into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = kynema_top.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in kynema_top.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
