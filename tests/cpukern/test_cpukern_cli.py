"""``rocpy cpukern build``: a combined file from a source file, loaded by Module.load."""
from __future__ import annotations

import numpy as np
import pytest

from rocpy import cli

SRC = '#include "op.h"\n' \
      'extern "C" __global__ void k(int *p) { p[threadIdx.x] = OP(threadIdx.x); }\n'


@pytest.fixture
def files(tmp_path):
    (tmp_path / "k.hip").write_text(SRC)
    (tmp_path / "op.h").write_text("#define OP(x) ((x) * SCALE)\n")
    return tmp_path


def test_build_writes_a_file_module_load_runs(dev, compiler, stub_only, files):
    from rocpy import cpukern, hip
    out = files / "k.hsaco"
    rc = cli.main(["cpukern", "build", str(files / "k.hip"), "-o", str(out),
                   f"--offload-arch={dev.target_id}", "--offload-arch", "gfx1030", "-DSCALE=3"])
    assert rc == 0
    data = out.read_bytes()
    assert cpukern.carries_cpu_build(data)
    from rocpy.codeobject.bundle import read_bundle
    ids = {e.id for e in read_bundle(data)[1]}
    assert {f"hipv4-amdgcn-amd-amdhsa--{dev.target_id}", "hipv4-amdgcn-amd-amdhsa--gfx1030",
            cpukern.BUNDLE_ID} <= ids
    mod = hip.Module.load(str(out))
    buf = dev.context.alloc(64 * 4)
    try:
        mod["k"].launch(1, 64, (buf,))
        got = np.empty(64, np.int32)
        buf.copy_to(got)
    finally:
        buf.close()
        mod.close()
    assert (got == np.arange(64) * 3).all()


def test_build_without_a_target_is_refused(files, capsys):
    assert cli.main(["cpukern", "build", str(files / "k.hip"), "-o", str(files / "k.co")]) == 2
    assert "give at least one --offload-arch" in capsys.readouterr().err
    assert not (files / "k.co").exists()


def test_build_of_a_missing_file_names_it(tmp_path, capsys):
    missing = tmp_path / "nope.hip"
    assert cli.main(["cpukern", "build", str(missing), "-o", str(tmp_path / "o"),
                     "--offload-arch=gfx90a"]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "nope.hip" in err


def test_build_of_what_the_cpu_cannot_provide_fails_naming_it(files, capsys, compiler):
    (files / "bad.hip").write_text('extern "C" __global__ void k(int *p) {\n'
                                   '    asm volatile("s_nop 0");\n}\n')
    out = files / "bad.co"
    assert cli.main(["cpukern", "build", str(files / "bad.hip"), "-o", str(out),
                     "--offload-arch=gfx90a"]) == 1
    err = capsys.readouterr().err
    assert "bad.hip:2" in err and "inline assembly" in err
    assert not out.exists()


def test_help_lists_the_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "cpukern" in capsys.readouterr().out
