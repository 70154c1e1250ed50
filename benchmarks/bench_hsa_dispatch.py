"""What rocpy.hsa adds to an AQL dispatch, producer only (the queue held while timed),
Python against C on the same queue: a thin wrapper over ``rocpy bench --only
hsa_submit`` (the cases live in `rocpy.bench.cases.hsa_submit`).

    python benchmarks/bench_hsa_dispatch.py [--json FILE] [--repeat N] [--warmup N]

Every other argument is passed to ``rocpy bench`` as it is; ``--repeat`` is 20
unless given (every packet a case writes waits in the held queue).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocpy.cli import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    repeat = [] if any(a == "--repeat" or a.startswith("--repeat=") for a in args) else \
        ["--repeat", "20"]
    sys.exit(main(["bench", "--only", "hsa_submit", "--no-progress", *repeat, *args]))
