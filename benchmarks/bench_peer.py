"""Peer copy bandwidth between two devices, rocpy against raw ``hipMemcpyPeerAsync``:
a thin wrapper over ``rocpy bench --only peer`` (the cases live in
`rocpy.bench.cases.peer`).  On the stub it asks for two devices
(``ROCPY_STUB_DEVICES=2``) unless the environment says otherwise.

    python benchmarks/bench_peer.py [--json FILE] [--sizes 65536,1048576,...] [--repeat N]

Every other argument is passed to ``rocpy bench`` as it is.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ROCPY_STUB_DEVICES", "2")   # read by the stub only, at its first use

from rocpy.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", "--only", "peer", "--no-progress", *sys.argv[1:]]))
