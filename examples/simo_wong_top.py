"""The Simo–Wong heavy symmetrical top (seed 000) with every rigid-body scheme and generalized-α.

J = diag(5, 5, 1) about the fixed point, a force (0, 0, −20) at the body point e₃, W(0) = (0, 0, 50)
rad/s, t ∈ [0, 10] s, h ∈ {0.001, 0.003, 0.009}: the Hamiltonian H(t) (Solfec's Figs. 11–13 for
RIG_POS, RIG_NEG, RIG_IMP, plus LIEMID, splitting, DMV and the constrained engine), the symmetry
axis against a DOP853 reference, the drift directions and the vertical spatial momentum.

Run:  python examples/simo_wong_top.py [--quick] [--plot DIR]
(the same case, checks and bounds as ``kynemapy validate --case simo_wong``; exit status 1 when a
check fails)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kynemapy.validation import simo_wong
from kynemapy.validation.common import text_result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same runs (the case takes a few seconds)")
    ap.add_argument("--plot", metavar="DIR", help="also write the case's PNG figures into DIR (needs matplotlib)")
    args = ap.parse_args(argv)
    result = simo_wong.run(quick=args.quick)
    print(text_result(result))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        Path(args.plot).mkdir(parents=True, exist_ok=True)
        for name, _ in simo_wong.plot(result, args.plot):
            print(Path(args.plot) / name)
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
