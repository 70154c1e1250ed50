"""Code object readers, executables, loading for an agent, symbols and their
attributes checked against llvm-readelf's view of the same code object."""
from __future__ import annotations

import os

import pytest

from kernels.readelf import find_readelf
from kernels.symbols import object_symbols

from hsa_raw import (Kernel, bundle_entry, check, ffi, lib, pointer_info, readelf_kernels,
                     run_python)

NULL = ffi.NULL


def reader_from_memory(data: bytes):
    buf = ffi.from_buffer(data)
    r = ffi.new("hsa_code_object_reader_t*")
    check(lib.hsa_code_object_reader_create_from_memory(buf, len(data), r))
    return r[0], buf


def new_executable(profile=None):
    e = ffi.new("hsa_executable_t*")
    check(lib.hsa_executable_create_alt(profile if profile is not None else lib.HSA_PROFILE_FULL,
                                        lib.HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, e))
    return e[0]


def load(exe, gpu, reader):
    return lib.hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL)


def test_reader_from_file(gpu, kernel_path):
    fd = os.open(kernel_path("vadd"), os.O_RDONLY)
    try:
        r = ffi.new("hsa_code_object_reader_t*")
        check(lib.hsa_code_object_reader_create_from_file(fd, r))
    finally:
        os.close(fd)                                   # the reader keeps the contents
    exe = new_executable()
    check(load(exe, gpu, r[0]))
    check(lib.hsa_executable_destroy(exe))
    check(lib.hsa_code_object_reader_destroy(r[0]))
    check(lib.hsa_code_object_reader_destroy(r[0]), lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)


def test_reader_bad_input(rt, tmp_path):
    r = ffi.new("hsa_code_object_reader_t*")
    check(lib.hsa_code_object_reader_create_from_file(-1, r), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    check(lib.hsa_code_object_reader_create_from_file(fd, r), lib.HSA_STATUS_ERROR_INVALID_FILE)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    fd = os.open(empty, os.O_RDONLY)
    check(lib.hsa_code_object_reader_create_from_file(fd, r), lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    check(lib.hsa_code_object_reader_create_from_file(fd, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    os.close(fd)
    data = ffi.new("char[16]")
    check(lib.hsa_code_object_reader_create_from_memory(NULL, 16, r), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_code_object_reader_create_from_memory(data, 0, r), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_code_object_reader_create_from_memory(data, 16, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    bogus = ffi.new("hsa_code_object_reader_t*", {"handle": 42})[0]
    check(lib.hsa_code_object_reader_destroy(bogus), lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)


def test_executable_create_bad_input(rt):
    e = ffi.new("hsa_executable_t*")
    check(lib.hsa_executable_create_alt(7, 0, NULL, e), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_create_alt(lib.HSA_PROFILE_FULL, 9, NULL, e), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_create_alt(lib.HSA_PROFILE_FULL, 0, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_create(lib.HSA_PROFILE_BASE, lib.HSA_EXECUTABLE_STATE_FROZEN, NULL, e))
    state = ffi.new("hsa_executable_state_t*")
    check(lib.hsa_executable_get_info(e[0], lib.HSA_EXECUTABLE_INFO_STATE, state))
    assert state[0] == lib.HSA_EXECUTABLE_STATE_FROZEN
    check(lib.hsa_executable_destroy(e[0]))
    check(lib.hsa_executable_destroy(e[0]), lib.HSA_STATUS_ERROR_INVALID_EXECUTABLE)


def test_load_rules(gpu, cpu, kernel_path):
    data = open(kernel_path("vadd"), "rb").read()
    reader, _buf = reader_from_memory(data)
    exe = new_executable()
    bogus_exe = ffi.new("hsa_executable_t*", {"handle": 1})[0]
    bogus_reader = ffi.new("hsa_code_object_reader_t*", {"handle": 1})[0]
    check(load(bogus_exe, gpu, reader), lib.HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    check(load(exe, gpu, bogus_reader), lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
    check(load(exe, ffi.new("hsa_agent_t*", {"handle": 3})[0], reader), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(load(exe, cpu, reader), lib.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    check(load(exe, gpu, reader))
    check(load(exe, gpu, reader), lib.HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED)
    check(lib.hsa_executable_freeze(exe, NULL))
    check(lib.hsa_executable_freeze(exe, NULL), lib.HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
    check(load(exe, gpu, reader), lib.HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
    result = ffi.new("uint32_t*", 99)
    check(lib.hsa_executable_validate(exe, result))
    assert result[0] == 0
    check(lib.hsa_executable_validate(exe, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_destroy(exe))
    check(lib.hsa_code_object_reader_destroy(reader))


def test_load_rejects_what_is_not_for_the_agent(gpu, kernel_path):
    exe = new_executable()
    for data, expected in [(b"\x7fELF" + b"\0" * 60, lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
                           (b"garbage" * 10, lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
                           (open(kernel_path("vadd", ("gfx908",)), "rb").read(),
                            lib.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS),
                           (bundle_entry(kernel_path("vadd", ("gfx908",)), "gfx908"),
                            lib.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)]:
        reader, _buf = reader_from_memory(data)
        check(load(exe, gpu, reader), expected)
        check(lib.hsa_code_object_reader_destroy(reader))
    check(lib.hsa_executable_destroy(exe))


@pytest.mark.parametrize("source", ["two-target bundle", "bare ELF"])
def test_load_picks_the_agent_entry(gpu, kernel_path, source):
    if source == "bare ELF":
        data = bundle_entry(kernel_path("vadd"), "gfx90a")
    else:
        data = open(kernel_path("vadd", ("gfx908", "gfx90a")), "rb").read()
    reader, _buf = reader_from_memory(data)
    exe = new_executable()
    check(load(exe, gpu, reader))
    sym = ffi.new("hsa_executable_symbol_t*")
    check(lib.hsa_executable_get_symbol_by_name(exe, b"vadd.kd", ffi.new("hsa_agent_t*", gpu), sym))
    check(lib.hsa_executable_destroy(exe))
    check(lib.hsa_code_object_reader_destroy(reader))


def symbols_of(exe, gpu=None):
    out = []
    if gpu is None:
        @ffi.callback("hsa_status_t(hsa_executable_t, hsa_executable_symbol_t, void*)")
        def cb(e, s, data):
            out.append(s.handle)
            return lib.HSA_STATUS_SUCCESS
        check(lib.hsa_executable_iterate_symbols(exe, cb, NULL))
    else:
        @ffi.callback("hsa_status_t(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, void*)")
        def cb(e, a, s, data):
            out.append(s.handle)
            return lib.HSA_STATUS_SUCCESS
        check(lib.hsa_executable_iterate_agent_symbols(exe, gpu, cb, NULL))
    return [ffi.new("hsa_executable_symbol_t*", {"handle": h})[0] for h in out]


def sym_info(sym, attribute, ctype):
    v = ffi.new(ctype)
    check(lib.hsa_executable_symbol_get_info(sym, attribute, v))
    return v[0]


def sym_name(sym) -> str:
    n = sym_info(sym, lib.HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, "uint32_t*")
    buf = ffi.new("char[]", n + 1)
    check(lib.hsa_executable_symbol_get_info(sym, lib.HSA_EXECUTABLE_SYMBOL_INFO_NAME, buf))
    return ffi.buffer(buf, n)[:].decode()


@pytest.fixture
def scale(gpu, kernel_path):
    k = Kernel(kernel_path("scale"), gpu, "scale")
    yield k
    k.close()


def test_symbols_and_variables(gpu, scale, kernel_path):
    by_name = {sym_name(s): s for s in symbols_of(scale.executable)}
    # every global or weak STT_OBJECT is a symbol, as in ROCr's loader: also what the
    # compiler adds (HIP 5.2's hipcc: weak __HIP_Coordinates<...>::x objects; clang 17: none)
    expected = object_symbols(bundle_entry(kernel_path("scale"), "gfx90a"))
    assert {"scale.kd", "counter", "table"} <= expected
    assert set(by_name) == expected
    assert [sym_name(s) for s in symbols_of(scale.executable, gpu)] == list(by_name)
    kernel = by_name["scale.kd"]
    assert sym_info(kernel, lib.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "hsa_symbol_kind_t*") == lib.HSA_SYMBOL_KIND_KERNEL
    assert sym_info(kernel, lib.HSA_EXECUTABLE_SYMBOL_INFO_AGENT, "hsa_agent_t*").handle == gpu.handle
    assert sym_info(kernel, lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, "uint32_t*") == 16
    assert not sym_info(kernel, lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK, "bool*")
    kobj = sym_info(kernel, lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "uint64_t*")
    assert kobj % 64 == 0
    info = pointer_info(ffi.cast("void*", kobj))           # the code lives in the agent's memory
    assert info.type == lib.HSA_EXT_POINTER_TYPE_HSA and info.agentOwner.handle == gpu.handle
    counter, table = by_name["counter"], by_name["table"]
    assert sym_info(counter, lib.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "hsa_symbol_kind_t*") == lib.HSA_SYMBOL_KIND_VARIABLE
    assert sym_info(counter, lib.HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, "uint32_t*") == 4
    assert sym_info(table, lib.HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, "uint32_t*") == 64
    value = ffi.new("int*")
    check(lib.hsa_memory_copy(value, ffi.cast("void*", sym_info(counter, lib.HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                                                "uint64_t*")), 4))
    assert value[0] == 7                                 # initialised from the code object
    zeros = ffi.new("float[16]", [1.0] * 16)
    check(lib.hsa_memory_copy(zeros, ffi.cast("void*", sym_info(table, lib.HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                                                "uint64_t*")), 64))
    assert list(zeros) == [0.0] * 16                     # .bss
    check(lib.hsa_executable_symbol_get_info(counter, lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                             ffi.new("uint32_t*")), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


@pytest.mark.skipif(find_readelf() is None, reason="llvm-readelf is not installed")
@pytest.mark.parametrize("name", ["vadd", "scale", "empty", "fill"])
def test_kernel_attributes_match_llvm_readelf(gpu, kernel_path, tmp_path, name):
    elf = tmp_path / f"{name}.elf"
    elf.write_bytes(bundle_entry(kernel_path(name), "gfx90a"))
    expected = readelf_kernels(str(elf))[name]
    k = Kernel(kernel_path(name), gpu, name)
    got = {
        "kernarg_segment_size": k.info(lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, "uint32_t*"),
        "group_segment_fixed_size": k.info(lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, "uint32_t*"),
        "private_segment_fixed_size": k.info(lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, "uint32_t*"),
    }
    assert got == {key: expected[key] for key in got}
    if name == "scale":
        assert got["group_segment_fixed_size"] == 256     # the __shared__ tile
    assert sym_name(k.symbol) == f"{name}.kd"
    k.close()


def test_symbol_lookup_rules(gpu, scale):
    sym = ffi.new("hsa_executable_symbol_t*")
    agent = ffi.new("hsa_agent_t*", gpu)
    get = lib.hsa_executable_get_symbol_by_name
    check(get(scale.executable, b"scale", agent, sym), lib.HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)   # the .kd is the symbol
    check(get(scale.executable, b"scale.kd", NULL, sym), lib.HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)  # no program symbols
    check(get(scale.executable, b"scale.kd", ffi.new("hsa_agent_t*", {"handle": 5}), sym),
          lib.HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    check(get(scale.executable, NULL, agent, sym), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(get(scale.executable, b"scale.kd", agent, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(get(ffi.new("hsa_executable_t*", {"handle": 3})[0], b"scale.kd", agent, sym),
          lib.HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    check(lib.hsa_executable_get_symbol(scale.executable, NULL, b"scale.kd", gpu, 0, sym))
    assert sym[0].handle == scale.symbol.handle
    bogus = ffi.new("hsa_executable_symbol_t*", {"handle": 64})[0]
    check(lib.hsa_executable_symbol_get_info(bogus, lib.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, ffi.new("int*")),
          lib.HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)
    check(lib.hsa_executable_symbol_get_info(scale.symbol, lib.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, NULL),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_iterate_agent_symbols(scale.executable, ffi.new("hsa_agent_t*", {"handle": 5})[0],
                                                   ffi.cast("void*", 1), NULL), lib.HSA_STATUS_ERROR_INVALID_AGENT)


def test_symbols_die_with_their_executable(gpu, kernel_path):
    k = Kernel(kernel_path("empty"), gpu, "empty")
    before = lib.rocpy_stub_live_allocations()
    k.close()
    assert lib.rocpy_stub_live_allocations() == before - 1    # the loaded code object's memory
    check(lib.hsa_executable_symbol_get_info(k.symbol, lib.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, ffi.new("int*")),
          lib.HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)


def test_executable_info(gpu):
    exe = new_executable(lib.HSA_PROFILE_BASE)
    profile = ffi.new("hsa_profile_t*")
    check(lib.hsa_executable_get_info(exe, lib.HSA_EXECUTABLE_INFO_PROFILE, profile))
    assert profile[0] == lib.HSA_PROFILE_BASE
    check(lib.hsa_executable_get_info(exe, 99, profile), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_get_info(exe, lib.HSA_EXECUTABLE_INFO_PROFILE, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_executable_destroy(exe))


def test_same_code_object_on_two_gpus(kernel_path):
    proc = run_python("""
        g0, g1 = gpu_agents()
        k0, k1 = Kernel({path!r}, g0, "vadd"), Kernel({path!r}, g1, "vadd")
        print(k0.object != k1.object)
    """.format(path=kernel_path("vadd")), env={"ROCPY_STUB_DEVICES": "2"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"]
