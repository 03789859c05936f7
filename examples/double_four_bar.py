"""IFToMM's double four-bar mechanism through its singular positions (Exudyn's ``fourBarMechanismIftomm``).

Three cranks and two couplers (1 m, 1 kg each), the cranks passing the horizontal 14 times in
10 s, stepped at h = 1e-2 … 1e-4 with atol = rtol = 1e-8 and ``convergence="roundoff"``, against
the 1-DOF reduced equation θ̈ = −(7/6) g cos θ integrated by DOP853.

Run:  python examples/double_four_bar.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case double_four_bar``; exit status 1
when a check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import double_four_bar
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="h = 1e-2, 5e-3, 1e-3 only (not 1e-4)")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figure into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = double_four_bar.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in double_four_bar.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
