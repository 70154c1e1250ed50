"""Every code example in README.md and docs/ runs (issue 24).

One mechanism for all documentation: each fenced ```python block of README.md,
ARCHITECTURE.md (included in the docs) and docs/**/*.md runs in a fresh interpreter, in a temporary directory, on the
stub; a ```sh block runs under bash, from the checkout, only when the line before its fence is
``<!-- docs-test: run -->`` (most shell blocks install packages or need a GPU or
Docker).  ``<!-- docs-test: skip REASON -->`` before a block skips it with that
reason (a GPU, Docker: the test is reported skipped); nothing else skips.  ``<!-- docs-test: pytest -->`` before a
```python block runs it as a test file under pytest with rocpy's plugin (every test
in it must pass).  Blocks whose first line is a
``>>>`` prompt run their prompt lines.  reStructuredText pages hold no code
blocks (test_rst_pages_have_no_code_blocks), so nothing escapes this.
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(?:<!-- docs-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```",
                   re.S | re.M)


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    lang: str
    mark: str
    body: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[str]:
    found = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "ARCHITECTURE.md")] + found


def examples(path: str) -> list[Example]:
    text = open(path, encoding="utf-8").read()
    rel = os.path.relpath(path, ROOT)
    return [Example(rel, text.count("\n", 0, m.start("body")), m["lang"], (m["mark"] or "").strip(), m["body"])
            for m in FENCE.finditer(text)]


def runnable() -> list[Example]:
    out = []
    for page in pages():
        out += [e for e in examples(page)
                if e.lang == "python" or (e.lang == "sh" and (e.mark == "run" or e.mark.startswith("skip ")))]
    return out


def python_source(body: str) -> str:
    lines = body.splitlines()
    if lines and lines[0].startswith(">>>"):   # an interactive session: its input lines
        return "\n".join(line[4:] for line in lines if line.startswith((">>> ", "... ")))
    return body


def test_marks_are_known_and_examples_exist():
    every = [e for page in pages() for e in examples(page)]
    assert len(runnable()) >= 15
    for e in every:
        assert e.mark in ("", "run", "pytest") or e.mark.startswith("skip "), f"{e.id}: unknown mark {e.mark!r}"
        assert e.mark != "run" or e.lang == "sh", f"{e.id}: only sh blocks take 'run' (python ones always run)"
        assert e.mark != "pytest" or e.lang == "python", f"{e.id}: only python blocks take 'pytest'"


def test_rst_pages_have_no_code_blocks():
    for path in glob.glob(os.path.join(ROOT, "docs", "**", "*.rst"), recursive=True):
        text = open(path, encoding="utf-8").read()
        assert not re.search(r"^\.\. (code-block|code|sourcecode)::|^(?!\.\. ).*::\s*$", text, re.M), \
            f"{path}: write examples in a .md page, where tests/test_docs_examples.py runs them"


def test_the_extraction_reads_marks_and_lines(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n<!-- docs-test: skip needs a GPU -->\n```python\nx = 1\n```\n\n```sh {x}\nls\n```\n")
    got = examples(str(page))
    assert [(e.line, e.lang, e.mark, e.body) for e in got] == [
        (3, "python", "skip needs a GPU", "x = 1\n"), (7, "sh", "", "ls\n")]
    assert python_source(">>> import os\n>>> os.sep\n'/'\n") == "import os\nos.sep"


@pytest.mark.parametrize("example", runnable(), ids=lambda e: e.id)
def test_example_runs(example, tmp_path):
    if example.mark.startswith("skip "):
        pytest.skip(f"{example.id}: {example.mark[5:]}")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ROCPY_STUB_BUILTINS", "ROCPY_STUB_DEVICES", "ROCPY_STUB_ARCH")}
    bindir = tmp_path / "bin"            # `rocpy` and `python` as installed: this interpreter
    bindir.mkdir()
    for name, run in (("rocpy", f'exec "{sys.executable}" -m rocpy "$@"'), ("python", f'exec "{sys.executable}" "$@"')):
        (bindir / name).write_text(f"#!/bin/sh\n{run}\n")
        (bindir / name).chmod(0o755)
    env.update(ROCPY_BACKEND="stub", PYTHONPATH=ROOT, PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}")
    if example.mark == "pytest":
        (tmp_path / "work").mkdir()
        (tmp_path / "work" / "test_example.py").write_text(example.body)
        # the plugin by its pytest11 entry point where rocpy is installed, else by name
        # (both at once: "Plugin already registered under a different name")
        from importlib.metadata import entry_points
        installed = any(ep.value.startswith("rocpy.testing") for ep in entry_points(group="pytest11"))
        plugin = [] if installed else ["-p", "rocpy.testing.plugin"]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin,
               "-rs", "test_example.py"]
    elif example.lang == "python":
        cmd = [sys.executable, "-c", python_source(example.body)]
    else:
        cmd = ["bash", "-euo", "pipefail", "-c", example.body]
    work = tmp_path / "work"            # python blocks in a temporary directory, sh ones in the
    work.mkdir(exist_ok=True)            # checkout (as the README's commands are run)
    done = subprocess.run(cmd, cwd=work if example.lang == "python" else ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"{example.id} failed:\n{done.stdout}\n{done.stderr}"
    if example.mark == "pytest":          # the tests ran and passed (none skipped or left out)
        assert re.search(r"^\d+ passed in ", done.stdout.splitlines()[-1]), done.stdout
