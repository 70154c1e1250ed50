"""The published JSON Schemas (rocpy/schemas) describe what ``info --json`` and
``bench --json`` write; ``--json -`` writes stdout; progress lines when stdout is a log;
``rocpy info``'s vertical per-device and per-agent blocks."""
from __future__ import annotations

import json

import pytest

from rocpy import schemas

from .conftest import BACKEND, needs_compiler

jsonschema = pytest.importorskip("jsonschema")
TINY = ["--repeat", "3", "--warmup", "0", "--plain", "--only", "overhead"]


def _validate(data, name):
    schema = schemas.load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_info_json_matches_its_schema(cli):
    status, out, err = cli(["info", "--json"])
    assert status == 0, err
    _validate(json.loads(out), "info")


def test_the_schema_catches_a_wrong_document(cli):
    status, out, _ = cli(["info", "--json"])
    data = json.loads(out)
    data["hip"]["devices"][0]["index"] = "zero"
    with pytest.raises(jsonschema.ValidationError, match="'zero' is not of type 'integer'"):
        _validate(data, "info")
    del data["errors"]
    with pytest.raises(jsonschema.ValidationError, match="'errors' is a required property"):
        jsonschema.validate(data, schemas.load("info"))


def test_unknown_schema_is_refused():
    with pytest.raises(ValueError, match="no schema 'nope'; one of info, bench"):
        schemas.load("nope")


@needs_compiler
def test_bench_json_dash_writes_stdout_matching_the_schema(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = cli(["bench", *TINY, "--no-progress", "--json", "-"])
    assert status == 0, err
    data = json.loads(out)             # stdout is the JSON alone: the tables went to stderr
    _validate(data, "bench")
    assert data["cases"] and "Per-call overhead" in err
    assert not (tmp_path / "-").exists()


@needs_compiler
def test_progress_lines_on_stderr_when_stdout_is_not_a_terminal(cli):
    status, out, err = cli(["bench", *TINY])
    assert status == 0, err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert lines and lines[0].startswith("[1/") and all("/" in line for line in lines)
    total = int(lines[0].split("/")[1].split("]")[0])
    assert len(lines) == total
    status, out, err = cli(["bench", *TINY, "--no-progress"])
    assert status == 0 and not [line for line in err.splitlines() if line.startswith("[")]


def test_info_lays_out_each_device_and_agent_vertically(subprocess_cli):
    env = {"ROCPY_STUB_DEVICES": "3"} if BACKEND == "stub" else {}
    proc = subprocess_cli(["info", "--plain"], env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    count = 3 if BACKEND == "stub" else json.loads(subprocess_cli(["info", "--json"]).stdout)[
        "hip"]["device_count"]
    for i in range(count):
        at = lines.index(f"  Device {i}")
        assert lines[at + 1].split()[0] == "name" and lines[at + 2].startswith("    target ID ")
    assert "  Agent 0" in lines
    assert not any(line.lstrip().startswith("property") for line in lines)
