# SPDX-License-Identifier: MIT
"""A model's kernels: generate its tables from a config (the Lua generator), compile them into a shared object with
the C compiler, load it. Importing needs none of these tools; generate() needs Lua or the installed `attngen`
command, compile_model() a C compiler."""
import collections
import ctypes
import filecmp
import glob
import os
import shlex
import shutil
import subprocess
import tempfile

from . import _abi, _library, dtypes
from .errors import BuildError, check, refuse
from .kernel import Kernel, feature_names, make_shape, rope_of

SOURCE_GENERATOR = os.path.join(_library.SOURCE_TREE, "gen", "attngen.lua")


def generator_command():
    """The generator: the source tree's gen/attngen.lua under $LUA (default lua5.4), else `attngen` on PATH."""
    if os.path.exists(SOURCE_GENERATOR):
        return [os.environ.get("LUA", "lua5.4"), SOURCE_GENERATOR]
    installed = shutil.which("attngen")
    if installed:
        return [installed]
    raise BuildError(f"attngen: no generator: neither {SOURCE_GENERATOR} nor an `attngen` command on PATH")


def _run(command, what):
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise BuildError(f"attngen: {what} could not start ({shlex.join(command)}): {e}") from None
    if done.returncode != 0:
        raise BuildError(f"attngen: {what} failed ({shlex.join(command)}):\n{done.stderr.strip() or done.stdout.strip()}")


def generate(config_path, out_dir):
    """Writes attngen_<name>.c/.h for a config into out_dir (created if missing) and returns the .c path. A file whose
    text did not change is left untouched, so compile_model() does not rebuild it."""
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".generate-") as tmp:
        _run(generator_command() + [config_path, "-o", tmp], "the generator")
        sources = glob.glob(os.path.join(tmp, "attngen_*.c"))
        if len(sources) != 1:
            raise BuildError(f"attngen: the generator wrote {len(sources)} .c files for {config_path}, expected 1")
        for name in os.listdir(tmp):
            target = os.path.join(out_dir, name)
            if not (os.path.exists(target) and filecmp.cmp(os.path.join(tmp, name), target, shallow=False)):
                os.replace(os.path.join(tmp, name), target)
        return os.path.join(out_dir, os.path.basename(sources[0]))


def include_dirs():
    """The runtime headers: the source tree's, else <prefix>/include/attngen next to the loaded library."""
    tree = [os.path.join(_library.SOURCE_TREE, d) for d in ("runtime", os.path.join("generated", "runtime"))]
    if all(os.path.exists(os.path.join(d, h)) for d, h in zip(tree, ("attngen.h", "attngen_spec.h"))):
        return tree
    lib = _library.default_library_path()
    installed = lib and os.path.join(os.path.dirname(os.path.dirname(lib)), "include", "attngen")
    if installed and os.path.exists(os.path.join(installed, "attngen.h")):
        return [installed]
    raise BuildError(f"attngen: no runtime headers (attngen.h) in {tree[0]} or next to the library ({lib}); "
                     "pass include_dirs=")


def compile_model(c_path, cc=None, cflags=None, include=None):
    """Compiles a generated .c into <same name>.so next to it (the tables and kernels only: the runtime stays in
    libattngen.so) and returns its path; skipped when the .so is newer than the .c and .h."""
    so_path = c_path[:-2] + ".so"
    sources = [c_path, c_path[:-2] + ".h"]
    if os.path.exists(so_path) and all(os.path.getmtime(so_path) >= os.path.getmtime(s) for s in sources):
        return so_path
    cc = shlex.split(cc or os.environ.get("CC", "cc"))
    flags = shlex.split(cflags if cflags is not None else os.environ.get("CFLAGS", "-O2"))
    includes = ["-I" + d for d in (include or include_dirs())]
    tmp = so_path + ".tmp"
    _run(cc + flags + ["-std=c99", "-fPIC", "-shared"] + includes + [c_path, "-o", tmp, "-lm"], "the C compiler")
    os.replace(tmp, so_path)
    return so_path


def load(so_path, library=None, kind=None):
    """A Model from a compiled table attngen_<cname>.so (its table is attngen_table_<cname>; for a config with kinds
    of layers, the kind's table attngen_table_<cname>_<kind>)."""
    stem = os.path.basename(so_path)
    if not (stem.startswith("attngen_") and stem.endswith(".so")):
        raise BuildError(f"attngen: {so_path} is not a compiled table attngen_<name>.so")
    symbol = "attngen_table_" + stem[len("attngen_"):-len(".so")]
    return Model(so_path, symbol + ("_" + kind if kind else ""), library)


def build(config_path, out_dir, cc=None, cflags=None, include=None, library=None, kind=None):
    """generate, compile and load a config's tables (kind: which kind of layer's, for a config with kinds): the
    Model, ready to select kernels from."""
    return load(compile_model(generate(config_path, out_dir), cc, cflags, include), library, kind)


# One kernel of a table.
KernelInfo = collections.namedtuple("KernelInfo", "name heads kv_heads head_dim mask phase isa kv_dtype page_size")


class Model:
    """A loaded table of generated kernels: name, heads, kv_heads, head_dim, kernels (KernelInfo list); select()
    picks one for a shape on the best ISA here, or the generic kernel when the table has none."""

    def __init__(self, so_path, table_symbol, library=None):
        self._lib = _library.load(library)
        self.path = so_path
        try:
            self._so = ctypes.CDLL(os.path.abspath(so_path))
            self._table = _abi.Table.in_dll(self._so, table_symbol)
        except (OSError, ValueError) as e:
            raise BuildError(f"attngen: cannot load table {table_symbol} from {so_path}: {e}") from None
        t = self._table
        if t.abi != _abi.CONSTANTS["ATTNGEN_ABI"]:
            raise refuse("ATTNGEN_ERR_UNSUPPORTED", f"attngen: {so_path} has table ABI {t.abi}, this package "
                                                    f"{_abi.CONSTANTS['ATTNGEN_ABI']}: regenerate and rebuild it")
        self.name, self.generator_version = t.model.decode(), t.generator_version.decode()
        self.heads, self.kv_heads, self.head_dim = t.heads, t.kv_heads, t.head_dim
        self.rope = rope_of(t.params)
        self.kernels = [KernelInfo(k.name.decode(), k.heads, k.kv_heads, k.head_dim, _abi.MASKS[k.mask],
                                    _abi.PHASES[k.phase], _abi.ISAS[k.isa], _abi.KV_DTYPES[k.kv_dtype], k.page_size)
                        for k in t.kernels[:t.count]]
        # the attention features of the table's kernels (every kernel of a table has the same), and their values
        self.features = feature_names(t.kernels[0].features) if t.count else ()
        f = t.params.features
        self.feature_values = dict(window=f.window, sink_tokens=f.sink_tokens, softcap=f.softcap)

    def __repr__(self):
        return (f"<attngen.Model {self.name} heads={self.heads} kv_heads={self.kv_heads} head_dim={self.head_dim} "
                f"kernels={len(self.kernels)}>")

    def has(self, heads=None, kv_heads=None, head_dim=None, mask="none", phase="prefill", kv_dtype="f32", page_size=0):
        """Whether the table has a specialized kernel for the shape (on any ISA; page_size: paged for it)."""
        want = (heads or self.heads, kv_heads or self.kv_heads, head_dim or self.head_dim, mask, phase, kv_dtype,
                page_size)
        return any(k[1:6] + (k.kv_dtype, k.page_size) == want for k in self.kernels)

    @property
    def page_sizes(self):
        """The page sizes the table has paged kernels for (the config's page_size), ascending."""
        return sorted({k.page_size for k in self.kernels} - {0})

    def select(self, heads=None, kv_heads=None, head_dim=None, mask="none", phase="prefill", kv_dtype="f32",
               isa=None, features=None, page_size=0):
        """The kernel for a shape (heads, kv_heads, head_dim default to the model's; features: attention feature
        names, default the model's; page_size: a paged kernel for a PagedKVCache of that page size): attngen_select,
        which falls back to the generic kernel (kernel.generic) when the table has none; with isa, exactly that
        specialized kernel (attngen_select_specialized; refused if the table or the CPU has none)."""
        shape = make_shape(heads or self.heads, kv_heads or self.kv_heads, head_dim or self.head_dim, mask, phase,
                           kv_dtype, self.features if features is None else features, page_size)
        out, table, lib = _abi.Kernel(), ctypes.byref(self._table), self._lib
        if isa is None:
            check(lib, lib.attngen_select(table, ctypes.byref(shape), ctypes.byref(out)), "attngen_select")
        else:
            isa_id = dtypes.check_name("isa", isa, _abi.ISAS)
            check(lib, lib.attngen_select_specialized(table, ctypes.byref(shape), isa_id, ctypes.byref(out)),
                  "attngen_select_specialized")
        return Kernel(lib, out, owner=self)
