"""Hand-written kernels on every context (``ctx.build_kernels``): one source
over a particle struct array runs on the CPU (the system C compiler, through
cffi) and on PoCL with identical results, and compiles for CUDA through NVRTC
to PTX that ``ptxas`` assembles (no GPU needed); compile errors carry the
user's line numbers; bad arguments fail before anything runs."""

import gc
import subprocess
import weakref

import numpy as np
import pytest

import ckernels
from ckernels import capi, errors
from ckernels.user_kernels import source as kernel_source
from ckernels.user_kernels import build as ck
from ckernels.user_kernels import args as ka
from ckernels.user_kernels import compile as kc

from cuda_tools import assemble_or_skip

VEC3 = np.dtype([("x", "f8"), ("y", "f8"), ("z", "f8")], align=True)
PARTICLE = np.dtype([("pos", VEC3), ("vel", VEC3), ("mass", "f8"), ("charge", "i4"),
                     ("alive", "?"), ("hits", "i4", (4,))], align=True)
TYPES = {"Vec3": VEC3, "Particle": PARTICLE}

SOURCE = r"""
/* push every live particle through a uniform field; count hits per quadrant */
CK_FUNC int quadrant(CK_GLOBAL const Vec3 *v) {
  return (Vec3_get_x(v) >= 0) + 2 * (Vec3_get_y(v) >= 0);
}

CK_KERNEL void push(CK_GLOBAL Particle *p, int64_t n, double dt,
                    CK_GLOBAL const double *field, bool only_alive) {
  //vectorize_over i n
  CK_GLOBAL Particle *q = p + i;
  if (only_alive && !Particle_get_alive(q)) continue;
  double k = Particle_get_charge(q) / Particle_get_mass(q);
  CK_GLOBAL Vec3 *v = Particle_getp_vel(q);
  Vec3_set_x(v, Vec3_get_x(v) + k * field[0] * dt);
  Vec3_set_y(v, Vec3_get_y(v) + k * field[1] * dt);
  Particle_set_pos_x(q, Particle_get_pos_x(q) + Particle_get_vel_x(q) * dt);
  Particle_set_pos_y(q, Particle_get_pos_y(q) + Particle_get_vel_y(q) * dt);
  int h = quadrant(Particle_getp_pos(q));
  Particle_set_hits(q, h, Particle_get_hits(q, h) + 1);
  //end_vectorize
}

CK_KERNEL void total_mass(CK_GLOBAL const Particle *p, int64_t n, CK_GLOBAL double *out) {
  /* no annotation: one call (one work item) */
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += Particle_get_mass(p + i);
  out[0] = s;
}
"""
KERNELS = {"push": {"p": "Particle[n]", "n": "int64", "dt": "float64",
                    "field": "const float64[2]", "only_alive": "bool"},
           "total_mass": {"p": "const Particle[]", "n": "int64", "out": "float64[]"}}


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CKERNELS_CACHE_DIR", str(tmp_path_factory.mktemp("ckernels-cache")))
    yield
    mp.undo()


def particles(n=37):
    rng = np.random.default_rng(3)
    a = np.zeros(n, PARTICLE)
    # dyadic values: every result is exact, so compilers that contract a*b+c
    # into an FMA (OpenCL C allows it) still agree bit for bit
    for part in ("pos", "vel"):
        for c in "xyz":
            a[part][c] = rng.integers(-64, 64, n) / 8
    a["mass"] = 2.0 ** rng.integers(-2, 3, n)
    a["charge"] = rng.integers(-3, 4, n)
    a["alive"] = rng.random(n) < 0.7
    return a


@pytest.fixture(scope="module")
def cpu():
    ctx = ckernels.Context("cpu")
    ctx.build_kernels(SOURCE, KERNELS, types=TYPES)
    return ctx


@pytest.fixture(scope="module")
def ocl(new_opencl_context):
    ctx = new_opencl_context()
    ctx.build_kernels(SOURCE, KERNELS, types=TYPES)
    return ctx


def same(a, b) -> bool:
    """Field for field equality (padding bytes are not data: NumPy copies
    structured arrays field by field)."""
    if a.dtype != b.dtype:
        return False
    if a.dtype.names is None:
        return np.array_equal(a, b)
    return all(same(a[n], b[n]) for n in a.dtype.names)


def run(ctx, host, dt=0.5, field=(0.25, -1.0), only_alive=True, steps=3):
    a = host.copy() if not ctx.is_device else ctx.to(host)
    f = np.array(field) if not ctx.is_device else ctx.to(np.array(field))
    for _ in range(steps):
        ctx.kernels.push(p=a, n=len(host), dt=dt, field=f, only_alive=only_alive)
    return a if not ctx.is_device else a.to_numpy()


def reference(host, dt=0.5, field=(0.25, -1.0), only_alive=True, steps=3):
    a = host.copy()
    for _ in range(steps):
        for q in a:
            if only_alive and not q["alive"]:
                continue
            k = q["charge"] / q["mass"]
            q["vel"]["x"] += k * field[0] * dt
            q["vel"]["y"] += k * field[1] * dt
            q["pos"]["x"] += q["vel"]["x"] * dt
            q["pos"]["y"] += q["vel"]["y"] * dt
            q["hits"][int(q["pos"]["x"] >= 0) + 2 * int(q["pos"]["y"] >= 0)] += 1
    return a


# ------------------------------------------------------------- behaviour --
def test_cpu_kernel_matches_python(cpu):
    host = particles()
    got = run(cpu, host)
    assert same(got, reference(host))
    got = run(cpu, host, only_alive=False, steps=1)
    assert same(got, reference(host, only_alive=False, steps=1))
    # a ckernels.Array of the same type works the same as the NumPy array
    arr = ckernels.asarray(host.copy())
    cpu.kernels.push(arr, len(host), 0.5, np.array([0.25, -1.0]), True)
    assert same(np.asarray(arr).view(PARTICLE), reference(host, steps=1))
    out = np.zeros(1)
    cpu.kernels.total_mass(p=host, n=len(host), out=out)
    assert out[0] == host["mass"].sum()


def test_same_source_on_cpu_and_opencl(cpu, ocl):
    host = particles()
    want = run(cpu, host)
    got = run(ocl, host)
    assert same(got, want) and not same(want, host)
    out = ocl.to(np.zeros(1))
    ocl.kernels.total_mass(p=ocl.to(host), n=len(host), out=out)
    assert out.to_numpy()[0] == host["mass"].sum()
    # n = 0 launches nothing (a launch over 0 work items would be an error)
    for ctx in (cpu, ocl):
        empty = ctx.to(host[:0])
        ctx.kernels.push(p=empty, n=0, dt=1.0, field=ctx.to(np.ones(2)), only_alive=False)


def test_same_source_compiles_for_cuda(tmp_path):
    prog = kernel_source.kernel_program(SOURCE, KERNELS, TYPES, target="cuda")
    assert 'extern "C" __global__ void ck_kernel_push(char *ck_p, uint64_t ck_p_offset' in prog.text
    assert "blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x" in prog.text
    try:
        ptx = {arch: ck.compile_ptx(prog, arch) for arch in ("sm_80", "sm_90")}
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    files = []
    for arch, text in ptx.items():
        assert f".target {arch}" in text and ".entry ck_kernel_push(" in text
        (tmp_path / f"{arch}.ptx").write_text(text)
        files.append((arch, tmp_path / f"{arch}.ptx"))
    assemble_or_skip(files)


def test_loop_annotation_per_target():
    progs = {t: kernel_source.kernel_program(SOURCE, KERNELS, TYPES, target=t).text
             for t in ("c", "opencl", "cuda")}
    assert ("  for (int64_t ck_i = 0; ck_i < (int64_t)(n); ck_i++) { const int64_t i = ck_i;"
            in progs["c"])
    assert ("  for (int64_t ck_i = (int64_t)(get_global_id(0)); ck_i < (int64_t)(n); "
            "ck_i = (int64_t)(n)) { const int64_t i = ck_i;" in progs["opencl"])
    for text in progs.values():
        # the user's source starts at line 1 of its own name, annotations become one line
        user = text.split('#line 1 "kernels.c"\n', 1)[1].split("\n#line 1 ", 1)[0]
        assert len(user.split("\n")) == len(SOURCE.split("\n"))
        assert "vectorize_over" not in user


# ----------------------------------------------------------- compile errors --
BROKEN = """
CK_KERNEL void scale(CK_GLOBAL double *x, int64_t n, double f) {
  //vectorize_over i n
  x[i] = f * y[i];
  //end_vectorize
}
"""


def test_compile_errors_name_the_users_line(cpu, ocl):
    spec = {"scale": {"x": "float64[]", "n": "int64", "f": "float64"}}
    for ctx in (cpu, ocl):
        with pytest.raises(errors.CompileError) as info:
            ctx.build_kernels(BROKEN, spec, filename="scale.c")
        msg = str(info.value)
        assert msg.startswith("scale.c: the ") and "rejected the kernels" in msg
        assert "scale.c:4:" in msg and "'y'" in msg                  # the user's line
        assert "    4 |   x[i] = f * y[i];" in msg                   # and its text
        assert info.value.target == ("c" if ctx is cpu else "opencl")
        assert isinstance(info.value, errors.BackendError)
    prog = kernel_source.kernel_program(BROKEN, spec, target="cuda", filename="scale.c")
    try:
        ck.compile_ptx("__global__ void k(void) {}")
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    with pytest.raises(errors.CompileError, match=r'scale.c\(4\): error: identifier "y" is '
                                                  r'undefined'):
        ck.compile_ptx(prog)


def test_prototype_mismatch_is_reported_at_the_definition(cpu):
    src = "CK_KERNEL void f(CK_GLOBAL float *x) { x[0] = 1; }\n"
    with pytest.raises(errors.CompileError, match=r"kernels.c:1:.*conflicting types for 'f'"):
        cpu.build_kernels(src, {"f": {"x": "float64[]"}})


@pytest.mark.parametrize("source, message", [
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over i n\n}\n",
     r"kernels.c:2: vectorize_over without end_vectorize"),
    ("CK_KERNEL void k(int64_t n) {\n//end_vectorize\n}\n",
     r"kernels.c:2: end_vectorize without a vectorize_over"),
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over i\n//end_vectorize\n}\n",
     r"kernels.c:2: write the annotation as"),
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over i m\n//end_vectorize\n}\n",
     r"kernels.c:2: the bound 'm' must be an integer argument of kernel 'k'"),
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over n n\n//end_vectorize\n}\n",
     r"the index 'n' is also an argument"),
    ("//vectorize_over i n\n//end_vectorize\nCK_KERNEL void k(int64_t n) {}\n",
     r"kernels.c:1: vectorize_over outside the kernels' bodies"),
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over i n\nif (n) return;\n//end_vectorize\n}\n",
     r"kernels.c:3: return inside a vectorize_over block"),
    ("CK_KERNEL void k(int64_t n) {\nn++; //vectorize_over i n\n}\n",
     r"kernels.c:2: a loop annotation must be alone on its line"),
    ("CK_KERNEL void k(int64_t n) {\n//vectorize_over i n\n//vectorize_over j n\n}\n",
     r"kernels.c:3: vectorize_over inside the vectorize_over block of line 2"),
    ("void k(int64_t n) {}\n", r"kernel 'k' is not defined: write 'CK_KERNEL void k"),
    ("CK_KERNEL void k(int64_t n) {}\nCK_KERNEL void other(void) {}\n",
     r"kernels.c:2: CK_KERNEL function 'other' is not listed in kernels="),
])
def test_source_structure_errors(source, message):
    with pytest.raises(errors.CompileError, match=message):
        kernel_source.kernel_program(source, {"k": {"n": "int64"}})


def test_spec_errors():
    src = "CK_KERNEL void k(double x) {}\n"
    for spec, exc, message in [
        ({"k": {"x": "float65"}}, errors.InvalidArgumentError, "unknown type 'float65'"),
        ({"k": {"x": "Particle"}}, errors.NotSupportedError, r"passed as arrays \('Particle"),
        ({"k": {"x": "const float64"}}, errors.InvalidArgumentError, "'const' applies to arrays"),
        ({"k": {"x": "float64[-1]"}}, errors.InvalidArgumentError, "cannot read the spec"),
        ({"k": {"x": "float64[m]"}}, errors.InvalidArgumentError,
         "the size 'm' of 'float64.m.' must name an integer argument"),
        ({"k": {"x": "float64[y]", "y": "float64"}}, errors.InvalidArgumentError,
         "must name an integer argument"),
        ({"k": {"x": "complex128"}}, errors.NotSupportedError, "pass a one-element array"),
        ({"k": {"x": 3}}, errors.InvalidArgumentError, "the spec must be a string"),
        ({"k": {"ck_x": "float64"}}, errors.InvalidArgumentError, "reserved"),
        ({}, errors.InvalidArgumentError, "non-empty mapping"),
    ]:
        with pytest.raises(exc, match=message):
            kernel_source.kernel_program(src, spec, TYPES)


# ----------------------------------------------------------- arguments --
def test_argument_errors_before_launch(cpu, ocl):
    host = particles(4)
    f2 = np.zeros(2)
    push = cpu.kernels.push
    good = dict(p=host.copy(), n=4, dt=0.5, field=f2, only_alive=True)
    for change, exc, message in [
        (dict(p=np.zeros(4)), errors.CKTypeError,
         r"argument 'p' \(Particle\[n\]\): elements of type 'float64', the kernel takes "
         r"'Particle' = \{pos:"),
        (dict(p=host.copy()[:3]), errors.InvalidArgumentError,
         r"argument 'p' \(Particle\[n\]\) has 3 elements, it must have n = 4"),
        (dict(field=np.zeros(3)), errors.InvalidArgumentError,
         r"'field' \(const float64\[2\]\) has 3 elements, it must have 2"),
        (dict(p=[1, 2]), errors.CKTypeError, "must be an array .* not list"),
        (dict(p=host.copy()[::2]), errors.InvalidArgumentError, "is not C-contiguous"),
        (dict(p=ocl.to(host)), errors.InvalidArgumentError, "is a device array of .* runs on the "
                                                            "CPU"),
        (dict(field=np.zeros(2, np.float32)), errors.CKTypeError,
         "elements of type 'float32', the kernel takes float64"),
        (dict(n=2.0), errors.CKTypeError, "'n' .* takes an integer, not float"),
        (dict(n=True), errors.CKTypeError, "takes an integer, not bool"),
        (dict(n=2**63), errors.CKOverflowError, "out of range for int64"),
        (dict(dt="x"), errors.CKTypeError, "takes a real number, not str"),
        (dict(only_alive=1), errors.CKTypeError, "takes a bool, not int"),
    ]:
        with pytest.raises(exc, match=message):
            push(**{**good, **change})
    ro = host.copy()
    ro.flags.writeable = False
    with pytest.raises(errors.InvalidArgumentError, match="'p' .* is read-only; declare it "
                                                          r"'const Particle\[\]'"):
        push(**{**good, "p": ro})
    with pytest.raises(errors.InvalidArgumentError, match="has 4 elements, it must have n = 2"):
        ocl.kernels.push(p=ocl.to(host), n=2, dt=0.5, field=ocl.to(f2), only_alive=True)
    cpu.kernels.total_mass(p=ro, n=4, out=np.zeros(1))      # const: read-only is fine
    with pytest.raises(errors.CKTypeError, match=r"push\(\) is missing 'only_alive'"):
        push(host.copy(), 4, 0.5, f2)
    with pytest.raises(errors.CKTypeError, match=r"push\(\) has no argument 'm'"):
        push(**good, m=1)
    with pytest.raises(errors.CKTypeError, match="got argument 'p' twice"):
        push(host.copy(), **good)
    with pytest.raises(errors.CKTypeError, match="takes 5 arguments"):
        push(*range(6))
    opush = ocl.kernels.push
    ogood = dict(p=ocl.to(host), n=4, dt=0.5, field=ocl.to(f2), only_alive=True)
    for change, exc, message in [
        (dict(p=host), errors.InvalidArgumentError, "must be a device array of .* ctx.to"),
        (dict(p=ocl.to(np.zeros(4))), errors.CKTypeError, "elements of type 'float64'"),
        (dict(field=ckernels.Context("opencl").to(f2)), errors.InvalidArgumentError,
         "lives in another context"),
    ]:
        with pytest.raises(exc, match=message):
            opush(**{**ogood, **change})


def test_element_layout_check():
    """Elements whose arrmeta puts fields elsewhere than the type (views) are
    refused: the C API addresses them by the type's layout."""
    ffi, lib = ckernels.lowlevel.ffi, ckernels.lowlevel.lib
    t = ckernels.types.Type(PARTICLE)
    am = ffi.new("char[]", t.arrmeta_size)
    assert lib.ck_type_arrmeta_construct(t.c_type, am, ffi.NULL, 0) == 0
    addr = int(ffi.cast("uintptr_t", am))
    assert ka._non_default(t, addr) is None
    offsets = ffi.cast("uintptr_t *", am)
    offsets[2] += 8
    assert ka._non_default(t, addr) == "field 'mass' at data offset 56, not 48"
    offsets[2] -= 8
    hits = ffi.cast("ck_dim_arrmeta *", addr + 6 * ffi.sizeof("uintptr_t") +
                    2 * 3 * ffi.sizeof("uintptr_t"))
    assert hits.size == 4 and hits.stride == 4
    hits.stride = 8
    assert ka._non_default(t, addr) == "hits: a fixed dim with stride 8, not 4"
    lib.ck_type_arrmeta_destruct(t.c_type, am)


def test_struct_device_arrays(ocl):
    host = particles(5)
    d = ocl.to(host)
    assert d.dtype == PARTICLE and d.shape == (5,)
    assert d.element.type == ckernels.types.Type(PARTICLE)
    assert same(d.to_numpy(), host) and same(d.copy().to_numpy(), host)
    with pytest.raises(errors.CKTypeError, match="align=True"):
        ocl.to(np.zeros(3, [("a", "i1"), ("b", "f8")]))


# --------------------------------------------------------- the namespace --
def test_namespace_and_display(cpu):
    assert "push" in cpu.kernels and "total_mass" in dir(cpu.kernels)
    assert len(cpu.kernels) >= 2
    k = cpu.kernels.push
    assert k.name == "push" and k.signature == (
        "push(p: Particle[n], n: int64, dt: float64, field: const float64[2], "
        "only_alive: bool)")
    assert repr(k).startswith("<ckernels kernel push(") and "(kernels.c:7)" in repr(k)
    assert "one index per i < n" in repr(k)
    assert "ck_kernel_push" in k.source and "<span" in k._repr_html_()
    with pytest.raises(AttributeError, match="no kernel 'nope'"):
        cpu.kernels.nope
    ks = cpu.build_kernels("CK_KERNEL void one(CK_GLOBAL int32_t *x) { x[0] = 1; }",
                           {"one": {"x": "int32[]"}})
    assert list(k.name for k in ks) == ["one"] and ks.header.types == {}
    assert "one" in cpu.kernels and "push" in cpu.kernels      # both remain
    assert "<details><summary>source</summary>" in ks._repr_html_()


def test_context_is_not_kept_alive_by_its_kernels():
    ctx = ckernels.Context("cpu")
    ctx.build_kernels("CK_KERNEL void one(CK_GLOBAL int32_t *x) { x[0] = 1; }",
                      {"one": {"x": "int32[]"}})
    x = np.zeros(1, np.int32)
    ctx.kernels.one(x)
    assert x[0] == 1
    ref = weakref.ref(ctx)
    del ctx
    gc.collect()
    assert ref() is None


def test_cpu_libraries_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("CKERNELS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kc.HostLibrary, "_loaded", {})
    src = "CK_KERNEL void two(CK_GLOBAL int64_t *x) { x[0] = 2; }"
    ckernels.Context("cpu").build_kernels(src, {"two": {"x": "int64[]"}})
    (lib_path,) = (tmp_path / "kernels").glob("ck_*.so")
    stamp = lib_path.stat().st_mtime_ns
    monkeypatch.setattr(kc.HostLibrary, "_loaded", {})     # as in a new process
    monkeypatch.setenv("CC", "/nonexistent-cc")              # nothing may be compiled
    kc._compiler.cache_clear()
    try:
        with pytest.raises(errors.CompileError, match="no C compiler found"):
            ckernels.Context("cpu").build_kernels(src, {"two": {"x": "int64[]"}})
    finally:
        kc._compiler.cache_clear()
    monkeypatch.delenv("CC")
    calls = []
    run = subprocess.run
    monkeypatch.setattr(kc.subprocess, "run", lambda cmd, **kw: calls.append(cmd) or run(cmd, **kw))
    x = np.zeros(1, np.int64)
    ckernels.Context("cpu").build_kernels(src, {"two": {"x": "int64[]"}}).two(x)
    assert not [c for c in calls if "-shared" in c]         # loaded, not compiled
    assert x[0] == 2 and lib_path.stat().st_mtime_ns == stamp
    assert list((tmp_path / "kernels").glob("ck_*.so")) == [lib_path]
