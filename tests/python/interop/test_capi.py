"""``ckernels.c_api``: the generated C API of named struct types.

The layout comes from the C library and is checked by the generated static
assertions, so a layout the generator got wrong cannot compile (the
self-check is tested by feeding the renderer a wrong offset); every kind of
accessor is exercised by one hand-written CPU kernel over records with nested
structs, fixed dims, strings and var dims, compared with the values read from
Python."""

import contextlib
import io
import pathlib
import pickle
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ckernels
from ckernels import capi, errors, types

VEC3 = types.parse("{x: float64, y: float64, z: float64}")
REC = types.struct({
    "id": "int32", "pos": VEC3, "hist": "2 * 3 * float64", "pts": "2 * {a: int32, b: int8}",
    "name": "string", "tags": "var * int32", "words": "2 * string",
    "rows": "var * var * float32", "flag": "bool", "z": "complex128", "h": "float16",
})
POD = np.dtype([("pos", np.dtype([("x", "f8"), ("y", "f8"), ("z", "f8")], align=True)),
                ("mass", "f4"), ("alive", "?"), ("hist", "i4", (4,))], align=True)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CKERNELS_CACHE_DIR", str(tmp_path_factory.mktemp("ckernels-cache")))
    yield
    mp.undo()


def _cc_syntax(text, tmp_path):
    """Compile C text with the system compiler (syntax and constraints only)."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "h.c"
    src.write_text(text)
    return subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                           str(src)], capture_output=True, text=True)


# ------------------------------------------------------------------ text --
def test_typedefs_follow_the_library_layout():
    h = ckernels.c_api({"Vec3": VEC3, "Rec": REC})
    text = str(h)
    assert isinstance(h, str) and h.target == "c" and list(h.types) == ["Vec3", "Rec"]
    # every field's offset is the library's (the NumPy view of the same type agrees)
    offsets = {}
    for i, (name, _) in enumerate(REC.fields):
        off = ckernels.lowlevel.ffi.new("size_t *")
        ckernels.lowlevel.lib.ck_struct_field(REC.c_type, i, ckernels.lowlevel.ffi.NULL,
                                              ckernels.lowlevel.ffi.NULL, off,
                                              ckernels.lowlevel.ffi.NULL)
        offsets[name] = off[0]
        assert (f'_Static_assert(offsetof(Rec, {name}) == {off[0]}, '
                f'"ckernels layout: Rec.{name} is at offset {off[0]}");') in text
    assert f'_Static_assert(sizeof(Rec) == {REC.data_size}' in text
    assert f'_Static_assert(_Alignof(Rec) == {REC.data_alignment}' in text
    pod = ckernels.c_api({"P": POD})
    for name in POD.names:
        assert f"offsetof(P, {name}) == {POD.fields[name][1]}" in str(pod)
    # members: the named nested type by name, a derived name for the unnamed one,
    # C arrays for fixed dims, views for strings and var dims
    for member in ("Vec3 pos;", "double hist[2][3];", "Rec_pts pts[2];", "ck_str name;",
                   "ck_var_int32 tags;", "ck_str words[2];", "ck_var_var_float32 rows;",
                   "uint8_t flag;", "ck_complex128 z;", "uint16_t h;"):
        assert member in text, member
    assert "typedef struct ck_var_var_float32 {\n  ck_var_float32 *data;\n  size_t size;" in text
    assert "typedef struct ck_str {\n  const char *begin;\n  const char *end;" in text
    assert h.typedefs == ("Vec3", "Rec_pts", "ck_var_int32", "ck_var_float32",
                          "ck_var_var_float32", "Rec")


def test_accessor_names_and_prototypes():
    f = ckernels.c_api({"Vec3": VEC3, "Rec": REC}).functions
    want = {
        "Vec3_get_x": "static inline double Vec3_get_x(const Vec3 *obj)",
        "Rec_set_pos_y": "static inline void Rec_set_pos_y(Rec *obj, double value)",
        "Rec_getp_pos": "static inline Vec3 *Rec_getp_pos(Rec *obj)",
        "Rec_len_hist": "static inline int64_t Rec_len_hist(const Rec *obj)",
        "Rec_len1_hist": "static inline int64_t Rec_len1_hist(const Rec *obj, int64_t i0)",
        "Rec_getp_hist": "static inline double *Rec_getp_hist(Rec *obj)",
        "Rec_get_hist": "static inline double Rec_get_hist(const Rec *obj, int64_t i0, "
                        "int64_t i1)",
        "Rec_getp2_hist": "static inline double *Rec_getp2_hist(Rec *obj, int64_t i0, "
                          "int64_t i1)",
        "Rec_getp1_pts": "static inline Rec_pts *Rec_getp1_pts(Rec *obj, int64_t i0)",
        "Rec_set_pts_b": "static inline void Rec_set_pts_b(Rec *obj, int64_t i0, "
                         "int8_t value)",
        "Rec_get_name": "static inline ck_str Rec_get_name(const Rec *obj)",
        "Rec_len_name": "static inline int64_t Rec_len_name(const Rec *obj)",
        "Rec_getp_tags": "static inline ck_var_int32 *Rec_getp_tags(Rec *obj)",
        "Rec_get_rows": "static inline float Rec_get_rows(const Rec *obj, int64_t i0, "
                        "int64_t i1)",
        "Rec_len1_words": "static inline int64_t Rec_len1_words(const Rec *obj, int64_t i0)",
        "Rec_get_flag": "static inline bool Rec_get_flag(const Rec *obj)",
        "Rec_set_z": "static inline void Rec_set_z(Rec *obj, ck_complex128 value)",
    }
    for name, proto in want.items():
        assert f[name] == proto, name
    # no setters for strings or var dims (their bytes live in an arena), no get of a dim
    assert not {"Rec_set_name", "Rec_set_words", "Rec_get_tags_view", "Rec_get_pos",
                "Rec_get_pts"} & set(f)


def test_device_targets():
    ocl = ckernels.c_api({"P": POD}, target="opencl")
    cuda = ckernels.c_api({"P": POD}, target="cuda")
    assert ocl.functions["P_get_mass"] == "static inline float P_get_mass(__global const P *obj)"
    assert ocl.functions["P_getp_pos_x"] == \
        "static inline __global double *P_getp_pos_x(__global P *obj)"
    assert cuda.functions["P_set_alive"] == \
        "__device__ inline void P_set_alive(P *obj, bool value)"
    assert "#define CK_GLOBAL __global" in ocl and "typedef long int64_t;" in ocl
    assert "#define CK_KERNEL static __device__" in cuda
    assert "typedef long long int64_t;" in cuda
    assert f"static_assert(sizeof(P) == {POD.itemsize}" in cuda
    assert f"typedef char ck_layout_P_size[(sizeof(P) == {POD.itemsize}) ? 1 : -1];" in ocl
    for t in ("opencl", "cuda"):
        with pytest.raises(errors.NotSupportedError,
                           match=r"Rec.name is a string .* host arena, which a device"):
            ckernels.c_api({"Rec": REC}, target=t)
    with pytest.raises(errors.NotSupportedError, match="Q.v is a var dim"):
        ckernels.c_api({"Q": "{v: var * int8}"}, target="opencl")


def test_naming_rules_and_errors():
    # equal types: the first name serves fields; each name gets its own typedef
    h = ckernels.c_api([("Pos", VEC3), ("Vel", VEC3), ("B", types.struct({"p": VEC3}))])
    assert "Pos p;" in h and "typedef struct Vel {" in h and "Vel_get_x" in h.functions
    cases = [
        ({"A": "{'a b': int8}"}, errors.InvalidArgumentError, "not a C identifier"),
        ({"A": "{int: int8}"}, errors.InvalidArgumentError, "reserved"),
        ({"int": "{a: int8}"}, errors.InvalidArgumentError, "reserved"),
        ({"ck_A": "{a: int8}"}, errors.InvalidArgumentError, "reserved for the generated"),
        ({"A": "{a_b: int8, a: {b: int8}}"}, errors.InvalidArgumentError,
         "two parts of A would get the accessor A_get_a_b"),
        ({"A": "{x: {y: int8}}", "A_x": "{z: int8}"}, errors.InvalidArgumentError,
         "the name 'A_x' would stand for two types"),
        ({"A": "3 * float64"}, errors.NotSupportedError, "not a struct type"),
        ({"A": "{e: {}}"}, errors.NotSupportedError, "empty struct"),
        ({"A": "{z: 0 * int8}"}, errors.NotSupportedError, "size 0"),
        ({"A": "{p: pointer[int8]}"}, errors.NotSupportedError, "pointer types have no C API"),
        ({"A": "{a: int8}"}, None, None),
    ]
    for types_, exc, match in cases:
        if exc is None:
            ckernels.c_api(types_)
            continue
        with pytest.raises(exc, match=match):
            ckernels.c_api(types_)
    with pytest.raises(errors.InvalidArgumentError, match="unknown target 'metal'"):
        ckernels.c_api({}, target="metal")
    with pytest.raises(errors.InvalidArgumentError, match="mapping"):
        ckernels.c_api(VEC3)
    with pytest.raises(errors.CKTypeError, match="type 'A'"):
        ckernels.c_api({"A": "{a: int33}"})


def test_header_object():
    h = ckernels.c_api({"Vec3": VEC3})
    assert repr(h).startswith("<ckernels.CHeader for C: Vec3 (") and "9 accessors" in repr(h)
    assert str(h) == h and type(str(h)) is str
    html = h._repr_html_()
    assert "Vec3_get_x" in html and "<span" in html       # highlighted by Pygments
    assert h._repr_markdown_().startswith("```c\n/* C API of ckernels types for C")
    back = pickle.loads(pickle.dumps(h))
    assert back == h and back.functions == h.functions and back.types == h.types
    assert ckernels.c_api({"Vec3": VEC3}, target="cuda")._repr_markdown_().startswith("```cuda")


# ------------------------------------------------------- compiled checks --
def test_header_compiles_cleanly(tmp_path):
    h = ckernels.c_api({"Vec3": VEC3, "Rec": REC, "P": POD})
    res = _cc_syntax(str(h) + "\nint main(void) { return 0; }\n", tmp_path)
    # unused static inline functions are not warned about, nor is anything else
    assert res.returncode == 0, res.stderr


def test_layout_self_check_rejects_a_wrong_offset(tmp_path):
    """The renderer trusts nothing: an offset that is not where C puts the
    member fails to compile, naming the field."""
    lay = capi.layout({"P": POD})
    node = lay.structs["P"]
    name, off, child = node.fields[1]
    node.fields[1] = (name, off + 4, child)
    res = _cc_syntax(str(lay.render()), tmp_path)
    assert res.returncode != 0
    assert f"ckernels layout: P.mass is at offset {off + 4}" in res.stderr


def test_layout_self_check_on_devices(new_opencl_context):
    """On devices the size of each typedef is checked (OpenCL C: a negative
    array size; CUDA C++: static_assert)."""
    lay = capi.layout({"P": POD}, "opencl")
    lay.structs["P"].size += 8
    ctx = new_opencl_context()
    with pytest.raises(errors.BackendError, match="ck_layout_P_size"):
        ctx.build_program(str(lay.render()))
    lay = capi.layout({"P": POD}, "cuda")
    lay.structs["P"].size += 8
    from ckernels.user_kernels.build import compile_ptx
    try:
        compile_ptx("__global__ void k(void) {}")
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    with pytest.raises(errors.BackendError,
                       match=f"ckernels layout: P has {POD.itemsize + 8} bytes"):
        compile_ptx(str(lay.render()) + '\nextern "C" __global__ void k(P *p) { p->mass = 1; }')


PROBE = r"""
/* every kind of accessor, read into out[20 * i + k], then written */
CK_FUNC double sum_tags(const Rec *r) {
  double s = 0;
  for (int64_t j = 0; j < Rec_len_tags(r); j++) s += Rec_get_tags(r, j);
  return s;
}

CK_KERNEL void probe(Rec *recs, double *out, int64_t n) {
  //vectorize_over i n
  Rec *r = recs + i;
  double *o = out + 20 * i;
  o[0] = Rec_get_id(r);
  o[1] = Rec_get_pos_y(r);
  o[2] = Rec_get_hist(r, 1, 2);
  o[3] = Rec_len_hist(r) * 10 + Rec_len1_hist(r, 0);
  o[4] = Rec_getp_hist(r)[5];
  o[5] = Rec_get_pts_a(r, 1) + Rec_get_pts_b(r, 0);
  o[6] = Rec_len_name(r);
  o[7] = Rec_len_name(r) ? (unsigned char)Rec_get_name(r).begin[0] : -1;
  o[8] = Rec_len_tags(r);
  o[9] = sum_tags(r);
  o[10] = Rec_len_words(r) * 100 + Rec_len1_words(r, 0) * 10 + Rec_len1_words(r, 1);
  o[11] = Rec_len_rows(r);
  double cells = 0, total = 0;
  for (int64_t j = 0; j < Rec_len_rows(r); j++) {
    cells += Rec_len1_rows(r, j);
    for (int64_t k = 0; k < Rec_len1_rows(r, j); k++) total += Rec_get_rows(r, j, k);
  }
  o[12] = cells;
  o[13] = total;
  o[14] = Rec_get_flag(r);
  o[15] = Rec_get_z(r).im;
  o[16] = (double)Rec_getp_tags(r)->size;
  o[17] = Rec_get_h(r);
  o[18] = Rec_getp1_pts(r, 1)->a;
  o[19] = Vec3_get_x(Rec_getp_pos(r));
  Rec_set_id(r, Rec_get_id(r) * 10);
  Vec3_set_z(Rec_getp_pos(r), -1.5);
  Rec_set_hist(r, 0, 0, 7.5);
  if (Rec_len_tags(r) > 0) Rec_set_tags(r, 0, -7);
  if (Rec_len_rows(r) > 0 && Rec_len1_rows(r, 0) > 0) *Rec_getp2_rows(r, 0, 0) = 0.25f;
  Rec_set_flag(r, !Rec_get_flag(r));
  ck_complex128 z = {1.0, 2.0};
  Rec_set_z(r, z);
  Rec_set_pts_b(r, 1, 5);
  //end_vectorize
}
"""

RECORDS = [
    {"id": 1, "pos": {"x": 0.5, "y": 1.5, "z": 2.5}, "hist": [[1, 2, 3], [4, 5, 6]],
     "pts": [{"a": 10, "b": 1}, {"a": 20, "b": 2}], "name": "alpha", "tags": [1, 2, 3],
     "words": ["to", "be"], "rows": [[1.0, 2.0], [], [3.5]], "flag": True,
     "z": 1 + 4j, "h": 1.5},
    {"id": -3, "pos": {"x": -1.0, "y": 0.0, "z": 0.0}, "hist": [[0, 0, 0], [0, 0, -2]],
     "pts": [{"a": 0, "b": -1}, {"a": 7, "b": 0}], "name": "", "tags": [],
     "words": ["", "héllo"], "rows": [], "flag": False, "z": 0j, "h": -2.0},
]


def _expected(rec):
    rows = rec["rows"]
    return [rec["id"], rec["pos"]["y"], rec["hist"][1][2], 2 * 10 + 3, rec["hist"][1][2],
            rec["pts"][1]["a"] + rec["pts"][0]["b"], len(rec["name"].encode()),
            rec["name"].encode()[0] if rec["name"] else -1, len(rec["tags"]), sum(rec["tags"]),
            200 + 10 * len(rec["words"][0].encode()) + len(rec["words"][1].encode()),
            len(rows), sum(map(len, rows)), sum(sum(r) for r in rows), float(rec["flag"]),
            rec["z"].imag, len(rec["tags"]), int(np.float16(rec["h"]).view(np.uint16)),
            rec["pts"][1]["a"], rec["pos"]["x"]]


def test_every_accessor_in_a_cpu_kernel():
    ctx = ckernels.Context("cpu")
    ks = ctx.build_kernels(PROBE, {"probe": {"recs": "Rec[]", "out": "float64[]",
                                             "n": "int64"}},
                           types={"Vec3": VEC3, "Rec": REC})
    recs = ckernels.array(RECORDS, type=f"strided * {REC}")
    out = np.zeros(20 * len(RECORDS))
    ks.probe(recs=recs, out=out, n=len(RECORDS))
    got = out.reshape(len(RECORDS), 20)
    for row, rec in zip(got, RECORDS):
        assert row.tolist() == _expected(rec)
    after = recs.to_list()
    for new, old in zip(after, RECORDS):
        assert new["id"] == old["id"] * 10
        assert new["pos"] == {**old["pos"], "z": -1.5}
        assert new["hist"][0][0] == 7.5 and new["hist"][1] == old["hist"][1]
        assert new["tags"] == ([-7] + old["tags"][1:] if old["tags"] else [])
        if old["rows"] and old["rows"][0]:
            assert new["rows"][0][0] == 0.25 and new["rows"][1:] == old["rows"][1:]
        assert new["flag"] is (not old["flag"]) and new["z"] == 1 + 2j
        assert new["pts"][1] == {"a": old["pts"][1]["a"], "b": 5}
        assert new["name"] == old["name"] and new["words"] == old["words"]


# ------------------------------------------------------------------ docs --
DOC = pathlib.Path(__file__).parents[3] / "docs" / "c-api.md"


def _doc_block(marker: str) -> str:
    m = re.search(rf"<!-- test: {marker} -->\n```\w+\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert m is not None, marker
    return m.group(1)


def test_docs_example_header_is_current():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_doc_block("header source"), {})
    assert out.getvalue() == _doc_block("header output")


def test_docs_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(_doc_block("runs"))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("name", ["NULL", "INT64_MAX", "NAN", "sqrt", "isnan", "M_PI",
                                  "int_fast8_t", "linux", "lgammaf_r", "UINT8_C", "FP_NAN"])
def test_names_the_included_headers_define_are_refused(name):
    with pytest.raises(errors.InvalidArgumentError, match=rf"field A\.{name}: name '{name}' is "
                                                          "defined by the headers"):
        ckernels.c_api({"A": f"{{{name}: int8}}"})
    with pytest.raises(errors.InvalidArgumentError, match=rf"type name '{name}' is defined"):
        ckernels.c_api({name: "{a: int8}"})


def test_every_name_the_system_headers_define_is_refused(tmp_path):
    """Grounded in the system compiler: every macro, function and typedef that
    <math.h>, <stdbool.h>, <stddef.h>, <stdint.h> declare in gnu11 mode."""
    import re
    import shutil
    import subprocess
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "h.c"
    src.write_text("".join(f"#include <{h}>\n" for h in ("math.h", "stdbool.h", "stddef.h",
                                                          "stdint.h")))
    macros = subprocess.run([cc, "-std=gnu11", "-dM", "-E", str(src)], capture_output=True,
                            text=True, check=True).stdout
    names = {re.match(r"#define (\w+)", line).group(1) for line in macros.splitlines()}
    text = subprocess.run([cc, "-std=gnu11", "-E", str(src)], capture_output=True, text=True,
                          check=True).stdout
    text = " ".join(line for line in text.splitlines() if not line.startswith("#"))
    names |= set(re.findall(r"(\w+)\s*\(", text))                       # functions
    names |= set(re.findall(r"typedef[^;]*?(\w+)\s*;", text))           # typedefs
    keywords = {"sizeof", "typeof", "if", "return", "int", "double", "float", "long", "char",
                "void", "unsigned", "signed", "short", "const", "extern", "struct", "union"}
    names = {n for n in names if not n.startswith("_") and n not in keywords}
    assert {"NULL", "INT64_MAX", "NAN", "sqrt", "int64_t"} <= names
    accepted = []
    for n in sorted(names):
        try:
            ckernels.c_api({"A": f"{{{n}: int8}}"})
            accepted.append(n)
        except errors.InvalidArgumentError:
            pass
    assert accepted == []
