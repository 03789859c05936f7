"""The Campbell diagram of Kynema's IEA 15 MW rotor, from rest to its rated 7.55 rpm.

The rotor of Kynema's regression test (three blades of the IEA 15 MW reference turbine, one
beam element of order 10 each, ``tests/data/iea15_rotor_data.json``), roots on prescribed
boundary conditions at r = 3.97 m, no gravity.  At each speed: the steady rotation, the
linearization and the modes; the diagram twice, in the blades' rotating frame and seen from
the ground (multi-blade coordinates: each blade frequency splits into a collective mode and
forward and backward whirls at ± 1P).  Writes ``iea15_campbell_rotating.{csv,png}`` and
``iea15_campbell_fixed.{csv,png}`` into the folder given as the first argument (default: a
folder in the temporary directory) and prints the rotating-frame table.

Checks (exit status 1 on a miss): at rest, the first flapwise and edgewise frequencies against
an independent linear beam model of the same section data
(:func:`kynemapy.validation.beam_fe.clamped_beam_frequencies`, numpy/scipy only) to 5e-4; at
every speed, the fixed-frame frequencies are the rotating-frame ones and those ± 1P to 1e-6.

Run:  python examples/iea15_campbell.py [OUTPUT_FOLDER] [--quick]   (about 10 s once compiled;
``--quick``: three speeds instead of nine, the same checks)
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

import kynemapy as kp
from kynemapy.validation.beam_fe import clamped_beam_frequencies

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "iea15_rotor_data.json"
RATED = 7.55 * 2.0 * math.pi / 60.0  #: rated rotor speed [rad/s]


def iea15_rotor() -> tuple[kp.Model, list[list[int]]]:
    """Kynema's three-blade IEA 15 MW rotor about z, and each blade's node ids."""
    data = json.loads(DATA.read_text())
    sections = data["material_sections"]
    s = [x["s"] for x in sections]
    m_star = [np.asarray(x["m_star"]) for x in sections]
    c_star = [np.asarray(x["c_star"]) for x in sections]
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    blades = []
    for k in range(3):
        nodes = [b.add_node(position=c[:3], orientation=c[3:]) for c in data["node_coords"]]
        e = b.add_beam_element(
            nodes, [(x + 1.0) / 2.0 for x in data["node_xi"]], data["trapz_quadrature"], s, m_star, c_star
        )
        b.translate_beam(e, (3.97, 0.0, 0.0))
        half = math.pi * k / 3.0  # a turn of 2πk/3 about z
        b.rotate_beam_about_point(e, (math.cos(half), 0.0, 0.0, math.sin(half)), (0.0, 0.0, 0.0))
        b.add_prescribed_bc(nodes[0])
        blades.append(nodes)
    return b.build(), blades


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--quick"]
    out = Path(args[0]) if args else Path(tempfile.gettempdir()) / "kynemapy-iea15-campbell"
    out.mkdir(parents=True, exist_ok=True)
    model, blades = iea15_rotor()
    speeds = np.linspace(0.0, RATED, 3 if "--quick" in sys.argv else 9)
    rotating = kp.analysis.campbell(model, speeds, n_modes=12)
    fixed = kp.analysis.campbell(model, speeds, n_modes=12, blades=blades)
    plotted = True
    for name, diagram in (("rotating", rotating), ("fixed", fixed)):
        diagram.write_csv(out / f"iea15_campbell_{name}.csv")
        try:
            diagram.plot(out / f"iea15_campbell_{name}.png", harmonics=(1, 3, 6))
        except ImportError:  # matplotlib is optional (pip install -e ".[plot]")
            plotted = False
    print("rotor speed [rpm] | rotating-frame frequencies of the six lowest blade modes [Hz]")
    for rpm, f in zip(rotating.rpm, rotating.frequency, strict=True):
        print(f"{rpm:6.2f} | " + " ".join(f"{x:7.4f}" for x in f[:6]))
    if plotted:
        print(f"written: {out / 'iea15_campbell_rotating.png'}, {out / 'iea15_campbell_fixed.png'} (and .csv)")
    else:
        csv = f"{out / 'iea15_campbell_rotating.csv'}, {out / 'iea15_campbell_fixed.csv'}"
        print(f"written: {csv} (no plots: matplotlib is not installed)")
    ok = True
    data = json.loads(DATA.read_text())
    sections = data["material_sections"]
    reference = clamped_beam_frequencies(
        data["node_xi"], data["node_coords"], [x["s"] for x in sections],
        [np.asarray(x["m_star"]) for x in sections], [np.asarray(x["c_star"]) for x in sections], n_modes=2,
    )  # fmt: skip
    at_rest = rotating.frequency[0, [0, 3]]  # the first flap and edge modes (three blades each)
    deviation = np.abs(at_rest / reference - 1.0)
    verdict = "ok" if np.all(deviation < 5e-4) else "FAIL"
    ok &= verdict == "ok"
    print(f"at rest against an independent beam model: flap {at_rest[0]:.5f} Hz, edge {at_rest[1]:.5f} Hz, "
          f"deviation {deviation.max():.1e} (< 5e-4): {verdict}")  # fmt: skip
    worst = 0.0
    for w, f_rot, f_fix in zip(speeds, rotating.frequency, fixed.frequency, strict=True):
        one_p = w / (2.0 * math.pi)
        candidates = np.concatenate([f_rot, f_rot + one_p, f_rot - one_p])
        worst = max(worst, max(np.min(np.abs(candidates / f - 1.0)) for f in f_fix))
    verdict = "ok" if worst < 1e-6 else "FAIL"
    ok &= verdict == "ok"
    print(f"fixed frame = rotating frame and ± 1P at every speed: worst {worst:.1e} (< 1e-6): {verdict}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
