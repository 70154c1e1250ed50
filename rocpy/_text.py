"""Text output of rocpy's tools: headings, lines and tables through rich where it is
installed and the output is a terminal, else plain text (`Printer`); the one plain
table formatter (`format_table`); byte counts for people (`fmt_bytes`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO


def fmt_bytes(n: Any) -> str:
    """``68719476736`` -> ``'64.0 GiB'``; ``4096`` -> ``'4 KiB'``; None -> ``'-'``."""
    if n is None:
        return "-"
    n = int(n)
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) and v < 1000 else f"{v:.1f} {unit}"
    return f"{n} B"


def use_rich(out: TextIO, plain: bool) -> bool:
    """Whether to render with rich: installed, not refused, and writing to a terminal."""
    if plain:
        return False
    try:
        import rich  # noqa: F401  (is it installed?)
    except ImportError:
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


class Printer:
    """Headings, key/value lines and tables; rich when `use_rich` says so, else plain text."""

    def __init__(self, out: TextIO, plain: bool = False) -> None:
        self.out = out
        self.blank: bool = True          # whether the last thing printed ends with a blank line
        self.console: Any = None   # a rich Console where rich draws
        if use_rich(out, plain):
            from rich.console import Console
            self.console = Console(file=out, highlight=False)

    def gap(self) -> None:
        """A blank line, unless one was just printed."""
        if not self.blank:
            self.line()

    def line(self, text: str = "", style: str | None = None) -> None:
        self.blank = not text
        if self.console is not None:
            self.console.print(text, style=style, markup=False)
        else:
            print(text, file=self.out)

    def heading(self, text: str, warning: bool = False) -> None:
        self.gap()
        self.blank = False
        if self.console is not None:
            self.console.print(text, style="bold red" if warning else "bold", markup=False)
        else:
            print(text, file=self.out)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None,
              left: int = 1, align: str | None = None) -> None:
        """A table; the first `left` columns are left-aligned, the rest right-aligned
        (or ``align``: one ``l``/``r`` per column)."""
        cells = [[str(c) for c in r] for r in rows]
        self.blank = True          # rich's SIMPLE_HEAD box and the plain table end with one
        align = align or "l" * left + "r" * (len(header) - left)
        if self.console is not None:
            from rich import box
            from rich.table import Table
            t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold")
            for i, h in enumerate(header):
                t.add_column(h, justify="left" if align[i] == "l" else "right",
                             overflow="fold")
            for r in cells:
                t.add_row(*r)
            self.console.print(t)
            return
        if title:
            print(title, file=self.out)
        print(format_table(header, cells, align=align), file=self.out)
        print(file=self.out)


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1,
                 indent: str = "  ", align: str | None = None) -> str:
    """Plain-text columns: a header, a rule, the rows (alignment as in `Printer.table`)."""
    align = align or "l" * left + "r" * (len(header) - left)
    all_rows = [list(header)] + [list(r) for r in rows]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in all_rows) for i in range(len(header))]
    lines = []
    for r in all_rows:
        cells = [(c.ljust(w) if align[i] == "l" else c.rjust(w))
                 for i, (c, w) in enumerate(zip(r, widths))]
        lines.append((indent + "  ".join(cells)).rstrip())
    lines.insert(1, indent + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)
