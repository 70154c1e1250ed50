"""Microseconds per kernel argument pack (`KernargLayout.pack`): a thin wrapper over
``rocpy bench --only kernargs`` (the cases live in `rocpy.bench.cases.kernargs`:
the generated packer, the generic one, the compiled launcher's, each against a
bare ``struct.pack`` of the same values, interleaved).

    python benchmarks/bench_kernargs.py [--json FILE] [--repeat N] [--quick] [--plain]

Every other argument is passed to ``rocpy bench`` as it is.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocpy.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", "--only", "kernargs", "--no-progress", *sys.argv[1:]]))
