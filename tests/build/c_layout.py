"""Ask the C compiler itself for sizes, alignments and offsets (the reference)."""
from __future__ import annotations

import os
import subprocess
import tempfile

from rocpy._build.preprocess import compiler, wrapper_source


def c_values(include_dir: str, headers: list[str], defines: list[str],
             expressions: list[str]) -> list[int]:
    """Compile and run a program printing each integer C expression."""
    body = "".join(f'  printf("%llu\\n", (unsigned long long)({e}));\n' for e in expressions)
    src = ("#include <stdio.h>\n#include <stddef.h>\n" + wrapper_source(headers) +
           "int main(void) {\n" + body + "  return 0;\n}\n")
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(c, "w") as f:
            f.write(src)
        cmd = [*compiler().split(), "-w", "-o", exe, c, f"-I{include_dir}"]
        cmd += [f"-D{d}" for d in defines]
        subprocess.run(cmd, check=True, capture_output=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]
