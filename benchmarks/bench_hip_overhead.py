"""What rocpy.hip adds over raw ``rocpy.hip.lib`` calls: a thin wrapper over
``rocpy bench --only overhead`` (the cases live in `rocpy.bench.cases.overhead`:
launches, events, async copies, each ``raw`` against ``rocpy``, interleaved; on
the stub a gate kernel holds the stream so the timed calls only enqueue).

    python benchmarks/bench_hip_overhead.py [--json FILE] [--repeat N] [--quick] [--plain]

Every other argument is passed to ``rocpy bench`` as it is.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocpy.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", "--only", "overhead", "--no-progress", *sys.argv[1:]]))
