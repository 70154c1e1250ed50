"""The progress display of a benchmark run (`rocpy bench`): a bar on a terminal,
one line per case in a log.  (`rocpy.bench.harness.Progress` is the record a
run passes to its hook; this shows it.)"""
from __future__ import annotations

import sys
from typing import Any


class ProgressDisplay:
    """Where a run is, on stderr: a bar over the cases (rich, else tqdm) advanced by
    repetitions where stderr is a terminal (``bar``); else, with ``lines``, one line
    per case (``[3/40] name``) so a log shows progress; else nothing."""

    def __init__(self, total: int, bar: bool, lines: bool = False) -> None:
        self.kind: str | None = None
        self.done = 0
        self.total = total
        if total == 0:
            return
        if not bar:
            self.kind = "lines" if lines else None
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
            self.bar: Any = Progress(TextColumn("{task.description:<36}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(file=sys.stderr), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("rocpy bench", total=total)
            self.kind = "rich"
            return
        except ImportError:
            pass
        try:
            from tqdm import tqdm  # pyright: ignore[reportMissingModuleSource]  # optional
            self.bar = tqdm(total=total, file=sys.stderr, unit="case", leave=False,
                            bar_format="{desc:<36} {bar} {n:.0f}/{total} [{elapsed}]")
            self.kind = "tqdm"
        except ImportError:
            pass

    def case(self, name: str) -> None:
        if self.kind == "lines":
            print(f"[{self.done + 1}/{self.total}] {name}", file=sys.stderr, flush=True)
        elif self.kind == "rich":
            self.bar.update(self.task, description=name[:36], completed=self.done)
        elif self.kind == "tqdm":
            self.bar.set_description_str(name[:36])

    def hook(self, p: Any, total: int) -> None:
        if self.kind == "rich":
            self.bar.update(self.task, completed=self.done + p.done / total)
        elif self.kind == "tqdm":
            self.bar.n = self.done + p.done / total
            self.bar.refresh()

    def finish_case(self) -> None:
        self.done += 1
        if self.kind == "rich":
            self.bar.update(self.task, completed=self.done)
        elif self.kind == "tqdm":
            self.bar.n = self.done
            self.bar.refresh()

    def close(self) -> None:
        if self.kind is not None:
            if self.kind != "lines":
                (self.bar.stop if self.kind == "rich" else self.bar.close)()
            self.kind = None
