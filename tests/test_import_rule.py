"""The import-cycle rule (ARCHITECTURE.md, "One way to break import cycles"): no
module of rocpy assigns into another module's namespace.  An AST scan: an
attribute assignment, augmented assignment, deletion or ``setattr`` whose
object is a name bound to a module by an import."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _is_module(package: Path, root: Path, dotted: str) -> bool:
    """Whether ``dotted`` (relative to ``root``'s parent) names a module file or package."""
    path = root.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_names(tree: ast.AST, path: Path, root: Path) -> set[str]:
    """Names bound to modules by this file's imports (anywhere in it)."""
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            if node.level:
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                if _is_module(path.parent, root, f"{source}.{alias.name}"):
                    names.add(alias.asname or alias.name)
    return names


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def scan(root: Path) -> list[str]:
    """``file:line: what`` for every write into another module's namespace under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        modules = _module_names(tree, path, root)
        where = path.relative_to(root.parent)
        for node in ast.walk(tree):
            for target in _targets(node):
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                            and t.value.id in modules:
                        found.append(f"{where}:{node.lineno}: {t.value.id}.{t.attr} written")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("setattr", "delattr") and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in modules:
                found.append(f"{where}:{node.lineno}: {node.func.id}({node.args[0].id}, ...)")
    return found


def test_no_module_writes_into_another():
    assert scan(ROOT / "rocpy") == []


def test_the_scan_finds_each_kind(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "other.py").write_text("Stream = None\n")
    (pkg / "sub" / "leaf.py").write_text("x = 1\n")
    (pkg / "writer.py").write_text(textwrap.dedent("""
        import os
        from . import other as _other
        from .sub import leaf
        from .other import Stream

        class Local:
            pass

        def bind():
            from . import other
            other.Stream = Local          # a local import's module, written
            setattr(leaf, "x", 2)
            Stream.attr = 1               # a name from a module, not a module: allowed
            Local.attr = 1                # allowed

        _other.Stream = Local
        _other.count += 1
        del leaf.x
        os.environ_copy, y = {}, 1
    """))
    found = sorted(line.split(": ", 1)[1] for line in scan(pkg))
    assert found == ["_other.Stream written", "_other.count written", "leaf.x written",
                     "os.environ_copy written", "other.Stream written", "setattr(leaf, ...)"]
