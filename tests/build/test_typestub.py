"""The ``.pyi`` the build writes next to each backend module (rocpy/_build/typestub.py).

It must name exactly what the compiled ``lib`` exports, with each function's C
arity, and translate C types into the Python types cffi takes and returns.
"""
from __future__ import annotations

import ast
import os

import pytest
from cffi import FFI

from built_modules import backend_modules
from rocpy._build import typestub


def _stub_lib(path: str) -> dict[str, ast.stmt]:
    """The members of ``class _Lib`` in the stub at ``path``: name -> its statement."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    lib = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "_Lib")
    out: dict[str, ast.stmt] = {}
    for node in lib.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


@pytest.mark.parametrize("mod", backend_modules())
def test_stub_covers_every_name_the_module_exports(mod):
    path = os.path.splitext(os.path.splitext(mod.__file__)[0])[0] + ".pyi"   # _lib_X.abi3.so
    assert os.path.exists(path), f"build_ext did not write {path}"
    members = _stub_lib(path)
    exported = {n for n in dir(mod.lib) if not (n.startswith("__") and n.endswith("__"))}
    assert exported, "the module exports nothing"
    assert sorted(exported - set(members)) == []
    assert sorted(set(members) - exported) == []
    # each function with the arity of its compiled C type
    for name, node in members.items():
        if isinstance(node, ast.FunctionDef):
            ctype = mod.ffi.typeof(getattr(mod.lib, name))
            assert len(node.args.posonlyargs) == 1 + len(ctype.args), name   # self
            assert (node.args.vararg is not None) == ctype.ellipsis, name


def test_c_types_become_the_python_types_cffi_uses():
    ffi = FFI()
    ffi.cdef("""
        typedef enum { E_A, E_B, ... } e_t;
        typedef void (*cb_t)(int);
        #define LIMIT ...
        static const double SCALE;
        extern int counter;
        extern "Python" int on_event(int);
        struct pair { int a; };
        int f(int *p, double d, e_t e, const char *s, ...);
        void *g(cb_t callback, struct pair value, _Bool flag, unsigned long long n);
        float h(void);
        _Bool b(char c);
        struct pair by_value(void);
    """)
    ffi.set_source("rocpy._lib_probe", "")
    text = typestub.render(ffi, "rocpy._lib_probe", {"f": ["p", "d", "e", "s"]})
    compile(text, "<stub>", "exec")   # valid Python
    lines = {ln.strip() for ln in text.splitlines()}
    assert ("def f(self, p: _CData | None, d: float, e: int, s: _CData | bytes | None, /, "
            "*args: Any) -> int: ...") in lines
    assert ("def g(self, arg0: _CData | None, arg1: _CData, arg2: bool | int, arg3: int, /) "
            "-> _CData: ...") in lines
    assert "def h(self, /) -> float: ..." in lines
    assert "def b(self, arg0: bytes, /) -> bool: ..." in lines
    assert "def by_value(self, /) -> _CData: ..." in lines
    assert {"E_A: Final[int]", "E_B: Final[int]", "LIMIT: Final[int]",
            "SCALE: Final[float]", "counter: int", "on_event: Final[_CData]"} <= lines
    assert "from _cffi_backend import FFI" in lines and "lib: _Lib" in lines


def test_parameter_names_that_are_python_keywords_are_renamed():
    ffi = FFI()
    ffi.cdef("int k(int lambda, int from, int self);")
    text = typestub.render(ffi, "m", {"k": ["lambda", "from", "self"]})
    compile(text, "<stub>", "exec")
    assert "def k(self, lambda_: int, from_: int, self_: int, /) -> int: ..." in text


def test_functions_libffi_cannot_describe_take_varargs_as_cffi_reports(tmp_path, monkeypatch):
    """cffi builds a function passing a union, a struct holding one (ROCr 7.x's
    hsa_amd_ais_file_handle_t) or bit fields by value with no call interface, and its
    ctype then says ``ellipsis`` as a vararg function's does: the stub follows."""
    decls = """
        typedef struct { union { void *h; int fd; }; } anon_t;
        typedef union { int i; float f; } u_t;
        typedef struct { int a : 3; int b; } bits_t;
        typedef struct { int a; anon_t inner; } nested_t;
        typedef struct { int a; } plain_t;
        int f_anon(anon_t h, int x);
        int f_union(u_t u);
        int f_bits(bits_t b);
        int f_nested(nested_t n);
        u_t f_returns_union(void);
        int f_plain(plain_t p);
        int f_ptr(anon_t *p);
        int f_var(int x, ...);
    """
    ffi = FFI()
    ffi.cdef(decls)
    ffi.set_source("_memx_typestub_probe", _definitions(decls))
    ffi.compile(tmpdir=str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = __import__("_memx_typestub_probe")
    members = {n.name: n for n in ast.parse(typestub.render(ffi, "m")).body[-2].body
               if isinstance(n, ast.FunctionDef)}
    for name, node in members.items():
        ellipsis = mod.ffi.typeof(getattr(mod.lib, name)).ellipsis
        assert (node.args.vararg is not None) == ellipsis, name
    assert [n for n, node in sorted(members.items()) if node.args.vararg] == \
        ["f_anon", "f_bits", "f_nested", "f_returns_union", "f_union", "f_var"]


def _definitions(decls: str) -> str:
    """The probe's C: the typedefs as written, each function with a body."""
    out = []
    for line in decls.strip().splitlines():
        line = line.strip()
        if line.startswith("typedef"):
            out.append(line)
        elif line.startswith("u_t "):
            out.append(line[:-1] + " { u_t u = {0}; return u; }")
        else:
            out.append(line[:-1] + " { return 0; }")
    return "\n".join(out)
