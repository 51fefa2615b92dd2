"""Direct links (codegen/link.py): a module linked by ld.gold itself computes what the
driver's link computes, calling the same versions of the C library's functions; what they
need is learnt from the first driver link, and a record that is damaged, or that makes a
link or a load fail, is not used again."""

import ctypes
import ctypes.util
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from codegen import build, cache, elf, link
from tests import processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(shutil.which("ld.gold") is None, reason="direct links are gold's")

# what the driver links besides the module's own libraries: libgcc's half-precision and
# complex helpers, libm, and OpenMP's runtime (with -fopenmp)
SOURCE = """
double tanh(double);
double log(double);
float logf(float);
double fabs(double);
int tracer_run(char **args) {
    const double *x = (const double *)args[0];
    double *out = (double *)args[1];
    _Float16 h = (_Float16)x[0];
    out[0] = (double)h;
    _Complex double z = __builtin_complex(x[1], x[2]) * __builtin_complex(x[2], x[%d]);
    out[1] = __real__ z;
    out[2] = __imag__ z;
    out[3] = tanh(x[3]);
    out[68] = log(-fabs(x[4]) - 1);
    out[69] = logf(-2.0f);
    #pragma omp parallel for
    for (int i = 0; i < 64; i++) out[4 + i] = 2 * x[4 + i];
    return 0;
}
"""


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache, and no module loaded in this process before: each test builds."""
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_loaded", {})
    monkeypatch.setattr(build, "_UNLOADABLE", set())
    return tmp_path / "cache"


def _libm_log(x):
    """The C library's current `log`, the one a driver link binds."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.log.restype, libm.log.argtypes = ctypes.c_double, [ctypes.c_double]
    return libm.log(x)


def built(variant):
    """Build (or load) SOURCE's module `variant` (a different module for each), run it on
    numbers, check every value against numpy; returns its metadata."""
    module, meta = build.load(SOURCE % variant, uses_blas=False)
    x = np.random.default_rng(variant).standard_normal(68)
    out = np.zeros(70)
    ffi = module.ffi
    args = ffi.new("char *[2]", [ffi.cast("char *", a.ctypes.data) for a in (x, out)])
    assert module.run(args) == 0
    z = complex(x[1], x[2]) * complex(x[2], x[variant])
    assert out[0] == float(np.float16(x[0]))
    # libgcc's product may round its two sums with one multiply-add each
    np.testing.assert_allclose(out[1:3], [z.real, z.imag], rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(out[3], np.tanh(x[3]), rtol=1e-15)
    np.testing.assert_array_equal(out[4:68], 2 * x[4:])
    # glibc's log of a negative number is -NaN; its old version (bound where a link does not
    # read the library's versions) gives +NaN. numpy's own SIMD log is no reference: it gives
    # +NaN on some processors
    assert np.signbit(out[68]) == np.signbit(_libm_log(-1.0)) == np.signbit(out[69])
    return meta


def key():
    return build._link_key(uses_blas=False)


def test_the_first_module_links_through_the_driver_and_later_ones_directly(
    fresh_cache, monkeypatch
):
    first = built(1)
    assert first["link"] == "driver"
    record = link.record(key())
    assert record is not None and os.path.isabs(record["libgcc"])
    # what the driver linked, every library named (--no-as-needed): C's, its maths, OpenMP's;
    # those that define symbol versions read by gold from the files the loader found
    library = fresh_cache / first["key"] / first["library"]
    assert elf.names(library)[1] == record["needed"]
    libm = next(name for name in record["needed"] if name.startswith("libm."))
    assert elf.names(record["files"][libm])[0] == libm
    second = built(3)
    assert second["link"] == "direct"
    direct = fresh_cache / second["key"] / second["library"]
    assert not (fresh_cache / second["key"] / "stubs").exists()
    # it names the libraries it calls, in the order the compiler's own link names them
    monkeypatch.setenv("TRACER_CACHE_DIR", str(fresh_cache.parent / "compilers"))
    monkeypatch.setattr(build, "_loaded", {})
    monkeypatch.setattr(build, "_gold", lambda: None)
    third = built(3)
    assert third["link"] == "driver"
    by_compiler = fresh_cache.parent / "compilers" / third["key"] / third["library"]
    assert elf.names(direct)[1] == elf.names(by_compiler)[1]
    assert libm in elf.names(direct)[1]


def test_a_module_compiles_the_entry_points_where_their_object_is_not_used(
    fresh_cache, monkeypatch
):
    """Without the OpenMP entry points' object (not built, or older than its header), each
    unit compiles them: the modules compute the same, linked by the driver and directly."""
    monkeypatch.setattr(build, "entries_object", lambda: [])
    assert "-include" in build._flags()
    assert built(1)["link"] == "driver"
    assert built(3)["link"] == "direct"


def test_a_stub_is_a_library_of_that_name_that_defines_nothing(tmp_path):
    built_object = tmp_path / "empty.o"
    (tmp_path / "empty.c").write_text("int tracer_empty;\n")
    assert (
        build.run_compiler(
            [build.compiler(), "-fPIC", "-c", str(tmp_path / "empty.c"), "-o", str(built_object)]
        )[0]
        == 0
    )
    stub = tmp_path / "libfound.so.7"
    stub.write_bytes(elf.stub(built_object.read_bytes()[:20], "libfound.so.7"))
    assert elf.names(stub) == ("libfound.so.7", [], False)
    linked = tmp_path / "linked.so"
    gold = [shutil.which("ld.gold"), "-shared", "-o", str(linked), str(built_object)]
    assert build.run_compiler([*gold, "--no-as-needed", str(stub)])[0] == 0
    assert elf.names(linked)[:2] == (None, ["libfound.so.7"])
    with pytest.raises(ValueError, match="not an ELF file"):
        elf.names(tmp_path / "empty.c")


def damaged(record):
    """Ways a sealed record may be wrong (a cache written by hand, or by another version)."""
    libm = next(name for name in record["needed"] if name.startswith("libm."))
    return [
        dict(record, needed=["../../elsewhere/libm.so.6"]),  # a path, not a name
        dict(record, needed=[".."]),
        dict(record, needed=["."]),
        dict(record, needed=["l" * 300]),
        dict(record, needed="libm.so.6"),
        dict(record, needed=record["needed"] * (link.MAX_LIBRARIES + 1)),  # a stub per name
        dict(record, libgcc="relative/libgcc.a"),
        dict(record, libgcc="/dev/null"),  # not a regular file
        dict(record, files={libm: record["files"][next(n for n in record["files"] if n != libm)]}),
        dict(record, files={"libnot.so.1": record["files"][libm]}),  # a name not needed
        dict(record, extra=1),
    ]


def test_a_record_that_is_not_sound_is_not_used(fresh_cache):
    built(1)
    for variant, damage in enumerate(damaged(link.record(key())), start=10):
        cache.write_sealed(str(fresh_cache / "links.json"), {key(): damage})
        assert link.record(key()) is None, damage
        assert built(variant)["link"] == "driver", damage
        assert "needed" in link.record(key())  # learnt again from that link


def test_a_pipe_in_place_of_the_record_does_not_hold_a_build(fresh_cache):
    built(1)
    os.remove(fresh_cache / "links.json")
    os.mkfifo(fresh_cache / "links.json")
    program = f"import sys; sys.path.insert(0, {str(REPO)!r}); from tests.test_link import built; built(3)"
    # no records beside the installation
    env = dict(os.environ, PYTHONPYCACHEPREFIX=processes.with_bytecode(fresh_cache / ".pycache"))
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "needed" in link.record(key())


@pytest.mark.parametrize("size", [2**64 - 1, 2**40])
def test_a_library_whose_headers_point_outside_it_is_refused(tmp_path, size):
    """elf.names reads no more than the file holds, whatever a header says."""
    library = tmp_path / "libodd.so"
    shutil.copy(os.path.realpath(sys.executable), library)  # an ELF file with a dynamic section
    data = bytearray(library.read_bytes())
    if data[4:6] != b"\x02\x01":
        pytest.skip("the offsets below are a 64-bit little-endian file's")
    offset, entry, count = (
        struct.unpack_from("<Q", data, 0x28)[0],
        *struct.unpack_from("<HH", data, 0x3A),
    )
    sections = [offset + i * entry for i in range(count)]
    dynamic = next(
        at for at in sections if struct.unpack_from("<I", data, at + 4)[0] == elf.SHT_DYNAMIC
    )
    strings = sections[struct.unpack_from("<I", data, dynamic + 40)[0]]
    struct.pack_into("<Q", data, strings + 32, size)  # the string table's size
    library.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="outside the file"):
        elf.names(library)


def test_a_direct_link_that_fails_falls_back_to_the_driver_and_is_not_tried_again(fresh_cache):
    built(1)
    record = link.record(key())
    not_an_archive = fresh_cache / "not-an-archive.a"
    not_an_archive.write_text("not an archive\n")
    cache.write_sealed(
        str(fresh_cache / "links.json"), {key(): dict(record, libgcc=str(not_an_archive))}
    )
    assert built(3)["link"] == "driver"
    assert cache.read_sealed(str(fresh_cache / "links.json"))[key()] == {"direct": False}
    assert built(5)["link"] == "driver"


def test_a_directly_linked_module_that_does_not_load_is_linked_again_by_the_driver(fresh_cache):
    built(1)
    record = link.record(key())
    missing = dict(record, needed=[*record["needed"], "libtracer_no_such_library.so.9"])
    cache.write_sealed(str(fresh_cache / "links.json"), {key(): missing})
    assert built(3)["link"] == "driver"
    assert link.record(key()) == {"direct": False}
    assert built(5)["link"] == "driver"
    assert cache.read_sealed(str(fresh_cache / "links.json"))[key()] == {"direct": False}


def fake_blas(lib, name, file_name):
    """Make the folder `lib` holding a library `file_name` whose DT_SONAME is
    lib`name`.so.0 and which defines `name`_nothing, found by -l`name`; returns its path."""
    lib.mkdir()
    source = lib / "blas.c"
    source.write_text(f"void {name}_nothing(void) {{}}\n")
    real = lib / file_name
    command = [build.compiler(), "-shared", "-fPIC", f"-Wl,-soname,lib{name}.so.0"]
    assert build.run_compiler([*command, "-o", str(real), str(source)])[0] == 0
    if file_name != f"lib{name}.so.0":
        os.symlink(file_name, lib / f"lib{name}.so.0")
    os.symlink(f"lib{name}.so.0", lib / f"lib{name}.so")
    return real


def test_a_module_that_loads_no_way_leaves_direct_links_on(fresh_cache, monkeypatch):
    """Where no module loads (a cache on a noexec mount), the direct link is not what failed:
    the error reaches the caller, this process links through the compiler alone from then
    on (one build a module), and the record stays for processes where modules load."""
    built(1)
    record = link.record(key())

    def refused(path, uses_blas):
        raise build.LoadError(f"the compiled module {path} could not be loaded: noexec")

    builds = []
    monkeypatch.setattr(build, "_build", _counted(build._build, builds))
    loads = build.Library
    monkeypatch.setattr(build, "Library", refused)
    for variant in (3, 5):
        builds.clear()
        with pytest.raises(build.LoadError, match="noexec"):
            build.load(SOURCE % variant, uses_blas=False)
        assert builds == (["direct", "driver"] if variant == 3 else ["driver"])
    assert link.record(key()) == record
    monkeypatch.setattr(build, "Library", loads)
    monkeypatch.setattr(build, "_UNLOADABLE", set())  # another process
    assert built(7)["link"] == "direct"


def test_a_module_missing_a_symbol_of_its_own_leaves_direct_links_on(fresh_cache):
    """A module that does not load because it calls a function no library defines is its
    own fault, not the process's: later modules still link directly."""
    built(1)
    missing = "void tr_no_such_function(void);\nint tracer_run(char **a) { tr_no_such_function(); return 0; }\n"
    with pytest.raises(build.LoadError, match="undefined symbol"):
        build.load(missing, uses_blas=False)
    assert not build._UNLOADABLE
    assert built(3)["link"] == "direct"


def _counted(build_function, links):
    """`build_function` (codegen.build._build), noting in `links` how each build linked."""

    def counted(*args, **kwargs):
        meta = build_function(*args, **kwargs)
        links.append(meta["link"])
        return meta

    return counted


def test_a_library_loaded_by_a_name_it_does_not_carry_turns_direct_links_off(
    fresh_cache, tmp_path, monkeypatch
):
    """A library built without a DT_SONAME is never found among the mapped files by the name
    the module needs: learnt once as "no direct links", not at every build."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "blas.c").write_text("void trnos_nothing(void) {}\n")
    command = [build.compiler(), "-shared", "-fPIC", "-o", str(lib / "libtrnos.so")]
    assert build.run_compiler([*command, str(lib / "blas.c")])[0] == 0
    monkeypatch.setattr(build, "blas", lambda: (str(tmp_path), str(lib), "trnos"))
    source = (
        "void trnos_nothing(void);\nint tracer_run(char **args) { trnos_nothing(); return %d; }\n"
    )
    assert build.load(source % 1, uses_blas=True)[1]["link"] == "driver"
    assert link.record(build._link_key(True)) == {"direct": False}


def test_a_library_replaced_since_it_was_loaded_is_learnt_again_later(
    fresh_cache, tmp_path, monkeypatch
):
    """The loader maps a library this process loaded before its file was replaced (a package
    upgraded meanwhile: "(deleted)" in the mappings): nothing is recorded, and a later build
    learns the link again rather than turning direct links off."""
    import ctypes

    lib = tmp_path / "lib"
    real = fake_blas(lib, "trrep", "libtrrep.so.0")
    ctypes.CDLL(str(real))
    replacement = real.read_bytes()
    real.unlink()
    real.write_bytes(replacement)
    monkeypatch.setattr(build, "blas", lambda: (str(tmp_path), str(lib), "trrep"))
    source = (
        "void trrep_nothing(void);\nint tracer_run(char **args) { trrep_nothing(); return %d; }\n"
    )
    assert build.load(source % 1, uses_blas=True)[1]["link"] == "driver"
    assert link.record(build._link_key(True)) is None
    assert build.load(source % 2, uses_blas=True)[1]["link"] == "driver"


@pytest.mark.skipif(build.blas() is None, reason="no BLAS installed")
def test_a_module_calling_the_blas_links_directly_and_finds_it(fresh_cache):
    import tracer as tt

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((30, 10))
    for power in (1, 2):  # the first learns, the second links directly

        @tt.function(backend="c")
        def f(a, b):
            return tt.tanh(a @ b) ** power

        got = f(tt.constant(a), tt.constant(b)).numpy()
        np.testing.assert_allclose(got, np.tanh(a @ b) ** power, rtol=1e-12)
        meta = f.get_concrete_function(tt.constant(a), tt.constant(b))._executable.meta
        assert meta["link"] == ("driver" if power == 1 else "direct")


def test_a_library_whose_file_is_not_named_after_it_is_found_by_its_name(
    fresh_cache, tmp_path, monkeypatch
):
    """The loader maps libtrblas.so.0 from libtrblasp-r0.1.so (as Debian's OpenBLAS, or
    glibc's libm-2.31.so before 2.34): the link is learnt all the same."""
    lib = tmp_path / "lib"
    fake_blas(lib, "trblas", "libtrblasp-r0.1.so")
    monkeypatch.setattr(build, "blas", lambda: (str(tmp_path), str(lib), "trblas"))
    source = (
        "void trblas_nothing(void);\nint tracer_run(char **args) { trblas_nothing(); return %d; }\n"
    )
    links = [build.load(source % v, uses_blas=True)[1]["link"] for v in range(3)]
    assert links == ["driver", "direct", "direct"]
    assert "libtrblas.so.0" in link.record(build._link_key(True))["needed"]


def test_the_learning_build_counts_its_units_before_it_asks_the_compiler(fresh_cache, monkeypatch):
    """The first build under a key asks the compiler where libgcc.a is after the module is
    built: asked beside it, that compiler was a busy core when the units were counted
    (codegen/units.py's `free_cores` reads the machine's ready threads), and the module was
    compiled as one unit (B24's first call in a venv with no records 0.60-0.90 s, 0.40-0.50
    in two)."""
    events = []
    start, count = build._start_compiler, build.module_units.count

    def started(command):
        events.extend(["libgcc asked"] if "-print-libgcc-file-name" in command else [])
        return start(command)

    def counted(source):
        events.append("units counted")
        return count(source)

    monkeypatch.setattr(build, "_start_compiler", started)
    monkeypatch.setattr(build.module_units, "count", counted)
    assert built(5)["link"] == "driver"
    assert events == ["units counted", "libgcc asked"]
    assert os.path.isabs(link.record(key())["libgcc"])
