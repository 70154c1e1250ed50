"""``rocpy stub env|run|libdir``: outputs and failures."""
from __future__ import annotations

import io
import os
import sys

import pytest

from rocpy import cli
from rocpy.stub import dropin


def test_libdir_and_env():
    out = io.StringIO()
    from rocpy._cli import stub as stub_cli
    assert stub_cli.run(cli.build_parser().parse_args(["stub", "libdir"]), out) == 0
    folder = out.getvalue().strip()
    assert os.path.exists(os.path.join(folder, "libhsa-runtime64.so.1"))
    env = dropin.environment({"LD_LIBRARY_PATH": "/a:" + folder + ":/b", "ROCPY_PYTHON": "/py"})
    assert env == {"LD_LIBRARY_PATH": f"{folder}:/a:/b"}      # first, once; ROCPY_PYTHON kept
    # hipRTC's compiler driver runs under this interpreter, not whatever python3 PATH has
    assert dropin.environment({}) == {"LD_LIBRARY_PATH": folder, "ROCPY_PYTHON": sys.executable}
    assert all(os.path.basename(p).startswith(("libhsa-runtime64.so.", "libamdhip64.so.", "libhiprtc.so."))
               for p in dropin.libraries())


def test_not_built(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(dropin, "FOLDER", str(tmp_path))
    with pytest.raises(dropin.DropInMissing, match="drop-in libraries are not built"):
        dropin.libdir()
    for action in (["libdir"], ["env"], ["run", "--", "true"]):
        assert cli.main(["stub", *action]) == 1
        assert "rocpy stub: the stub's drop-in libraries are not built" in capsys.readouterr().err


def test_run_without_a_program(capsys):
    assert cli.main(["stub", "run"]) == 2
    assert "no program given" in capsys.readouterr().err
    assert cli.main(["stub", "run", "--"]) == 2


def test_run_a_missing_program(capsys):
    assert cli.main(["stub", "run", "--", "/nonexistent/prog"]) == 127
    assert "cannot run '/nonexistent/prog'" in capsys.readouterr().err


def test_an_action_is_required(capsys):
    with pytest.raises(SystemExit):
        cli.main(["stub"])
