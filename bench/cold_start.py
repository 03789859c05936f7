"""Benchmark: cold and warm start of ``python examples/heavy_top.py`` in a fresh clone.

Clones the repository that holds this file (its committed HEAD; with ``--worktree``, a
copy of the working tree instead, uncommitted changes included: the files of
``git ls-files -co --exclude-standard``) into a temporary directory, removes any
``__pycache__``, and runs the example there as a fresh process with ``PYTHONPATH`` set to
the clone (so that the clone's package is imported, not an installed one) and
``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME`` set to fresh empty temporary directories (so
that no earlier cache can be used).  Whole-process wall times:

* cold: the first run, numba's cache empty (every kernel compiled, the cache written);
* warm: the median of ``--runs`` further runs (the cache filled: loaded, not compiled);
* import: the median of ``--runs`` runs of ``python -c "import kynemapy"`` (warm), beside
  the bare interpreter start (``python -c pass``);
* numba's floor: the median of ``--runs`` runs, interleaved with the warm runs, of a program
  that imports numba and calls one trivial cached function (``@numba.njit(cache=True)``,
  compiled once before): issue 26's warm target is this floor plus 0.25 s.

The runs use Python's default of writing bytecode (``__pycache__``) at the first import, as an
installed numba has its own from its installation: ``PYTHONDONTWRITEBYTECODE`` is removed from
the runs' environment.  Where it was set (as in some sandboxes and CI images), the warm runs
are repeated with it too and reported on a line of their own: every import then compiles the
package's sources again (about 0.1 s here), which the floor does not pay.

Prints the machine, the times, the exit codes and the example's last output line; exits
with an error if the example fails (or imports a package from outside the clone).

Run:  python bench/cold_start.py [--runs N] [--worktree]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

EXAMPLE = "examples/heavy_top.py"

#: numba's own floor: import numba, load one trivial cached function, call it
FLOOR = """\
import numba


@numba.njit(cache=True)
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s


print(total(10))
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def clone(root: Path, dest: Path, worktree: bool) -> str:
    """Put the repository at ``root`` into ``dest``; returns a description of what was copied."""
    head = git(root, "rev-parse", "HEAD")
    if not worktree:
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(root), str(dest)], check=True)
        git(dest, "checkout", "--quiet", "--detach", head)
        return f"clone of HEAD {head[:12]}"
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"], check=True, capture_output=True
    ).stdout.decode()
    n = 0
    for rel in filter(None, listing.split("\0")):
        src = root / rel
        if not src.is_file():  # tracked but deleted in the working tree
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        n += 1
    dirty = " (uncommitted changes included)" if git(root, "status", "--porcelain") else ""
    return f"working tree of {head[:12]}, {n} files{dirty}"


def remove_pycache(dest: Path) -> None:
    for d in sorted(dest.rglob("__pycache__"), reverse=True):
        shutil.rmtree(d, ignore_errors=True)


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t, proc


def check(proc: subprocess.CompletedProcess, what: str) -> None:
    """Fail loudly, with the process's output, if it did not exit 0."""
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        sys.stdout.flush()
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"FAILED: {what} exited with code {proc.returncode}")


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="warm runs (and import runs), median reported (default 3)")
    parser.add_argument(
        "--worktree", action="store_true", help="copy the working tree (uncommitted changes) instead of cloning HEAD"
    )
    args = parser.parse_args()
    runs = max(1, args.runs)
    root = Path(git(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel"))

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="kynemapy-cold-") as tmp:
        tmp = Path(tmp)
        dest, numba_cache, xdg_cache = tmp / "repo", tmp / "numba-cache", tmp / "xdg-cache"
        numba_cache.mkdir()
        xdg_cache.mkdir()
        t = time.perf_counter()
        what = clone(root, dest, args.worktree)
        print(f"source: {root}, {what}, copied in {time.perf_counter() - t:.2f} s")
        remove_pycache(dest)

        env = dict(os.environ)
        no_bytecode = env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(PYTHONPATH=str(dest), NUMBA_CACHE_DIR=str(numba_cache), XDG_CACHE_HOME=str(xdg_cache))
        python = sys.executable
        example = [python, EXAMPLE]

        # cold: empty numba cache, no bytecode
        cold, proc = timed(example, dest, env)
        check(proc, f"cold run of {EXAMPLE}")
        codes, cold_output = [proc.returncode], proc.stdout
        written = {
            place: sum(1 for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))
            for place, folder in (("NUMBA_CACHE_DIR", numba_cache), ("XDG_CACHE_HOME", xdg_cache), ("clone", dest))
        }
        cache_note = ", ".join(f"{n} in {place}" for place, n in written.items() if n) or "none"

        # numba's floor: a trivial cached function (compiled once here, then loaded)
        floor_script = tmp / "numba_floor.py"
        floor_script.write_text(FLOOR)
        check(timed([python, str(floor_script)], dest, env)[1], "numba floor (compile)")

        # warm: cache filled; interleaved with the floor
        warm, floor = [], []
        for _ in range(runs):
            seconds, proc = timed(example, dest, env)
            check(proc, f"warm run of {EXAMPLE}")
            warm.append(seconds)
            codes.append(proc.returncode)
            seconds, floor_proc = timed([python, str(floor_script)], dest, env)
            check(floor_proc, "numba floor")
            floor.append(seconds)
        warm_output = proc.stdout
        # as the caller's environment had it: no bytecode written, sources compiled at each import
        unwritten = []
        if no_bytecode is not None:
            env_nb = dict(env, PYTHONDONTWRITEBYTECODE=no_bytecode)
            remove_pycache(dest)
            for _ in range(runs):
                seconds, proc = timed(example, dest, env_nb)
                check(proc, f"warm run of {EXAMPLE} with PYTHONDONTWRITEBYTECODE")
                unwritten.append(seconds)

        # bare import (warm) and the interpreter start alone
        seconds, proc = timed([python, "-c", "import kynemapy; print(kynemapy.__file__)"], dest, env)
        check(proc, "import kynemapy")
        imported = Path(proc.stdout.strip()).resolve()
        if not imported.is_relative_to(dest.resolve()):
            raise SystemExit(f"FAILED: kynemapy was imported from {imported}, not from the clone {dest}")
        imports, bare = [], []
        for _ in range(runs):
            imports.append(timed([python, "-c", "import kynemapy"], dest, env)[0])
            bare.append(timed([python, "-c", "pass"], dest, env)[0])

        print(f"python: {python}; kynemapy imported from the clone ({imported.parent.relative_to(dest.resolve())})")
        print(f"cold  python {EXAMPLE}: {cold:6.2f} s  (empty numba cache: compile; cache files written: {cache_note})")
        print(
            f"warm  python {EXAMPLE}: {statistics.median(warm):6.2f} s  median of {runs} "
            f"({', '.join(f'{s:.2f}' for s in warm)})"
        )
        print(
            f"numba floor (cached trivial fn):  {statistics.median(floor):6.2f} s  median of {runs} "
            f"({', '.join(f'{s:.2f}' for s in floor)}); warm - floor = "
            f"{statistics.median(warm) - statistics.median(floor):+.2f} s (target <= +0.25 s)"
        )
        if unwritten:
            print(
                f"warm, PYTHONDONTWRITEBYTECODE={no_bytecode} (as this environment had it; no bytecode, "
                f"sources compiled at every import): {statistics.median(unwritten):.2f} s  median of {runs}"
            )
        print(f"import kynemapy (warm):          {statistics.median(imports):6.2f} s  median of {runs}")
        print(f"python -c pass (interpreter):    {statistics.median(bare):6.2f} s  median of {runs}")
        print(f"exit codes: {codes}")
        print(f"example's last line (cold run): {last_line(cold_output)}")
        print(f"example's last line (warm run): {last_line(warm_output)}")


if __name__ == "__main__":
    main()
