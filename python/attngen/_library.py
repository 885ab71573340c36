# SPDX-License-Identifier: MIT
"""Finding and loading the runtime's shared library (libattngen.so), and the prototypes of the functions used."""
import ctypes
import ctypes.util
import os
import threading

from . import _abi

# The source tree this package sits in, when it runs from one (python/attngen/ -> the repository).
SOURCE_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_TREE_LIBRARY = os.path.join(SOURCE_TREE, "build", "python", "libattngen.so")

_P = ctypes.c_void_p
_PROTOTYPES = {
    "attngen_cpu_isas": ([], ctypes.c_uint),
    "attngen_isa_name": ([ctypes.c_int], ctypes.c_char_p),
    "attngen_mask_name": ([ctypes.c_int], ctypes.c_char_p),
    "attngen_phase_name": ([ctypes.c_int], ctypes.c_char_p),
    "attngen_kv_dtype_name": ([ctypes.c_int], ctypes.c_char_p),
    "attngen_select": ([_P, ctypes.POINTER(_abi.Shape), ctypes.POINTER(_abi.Kernel)], ctypes.c_int),
    "attngen_select_generic": ([ctypes.POINTER(_abi.Shape), ctypes.c_int, ctypes.POINTER(_abi.Kernel)], ctypes.c_int),
    "attngen_select_specialized": ([_P, ctypes.POINTER(_abi.Shape), ctypes.c_int, ctypes.POINTER(_abi.Kernel)],
                                   ctypes.c_int),
    "attngen_run": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.Args)], ctypes.c_int),
    "attngen_run_parallel": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.Args), ctypes.c_int], ctypes.c_int),
    "attngen_kv_append": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.AppendArgs)], ctypes.c_int),
    "attngen_step": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.StepArgs)], ctypes.c_int),
    "attngen_step_parallel": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.StepArgs), ctypes.c_int],
                              ctypes.c_int),
    "attngen_merge_states": ([ctypes.POINTER(_abi.MergeArgs)], ctypes.c_int),
    "attngen_cascade_decode": ([ctypes.POINTER(_abi.Kernel), ctypes.POINTER(_abi.CascadeArgs), ctypes.c_int],
                               ctypes.c_int),
    "attngen_alibi_slopes": ([ctypes.c_int, ctypes.c_double, ctypes.c_void_p], ctypes.c_int),
    "attngen_kv_to_float": ([ctypes.c_int, _P, _P, ctypes.c_int, _P], ctypes.c_int),
    "attngen_last_error": ([], ctypes.c_char_p),
    "attngen_status_name": ([ctypes.c_int], ctypes.c_char_p),
}

_lock = threading.Lock()
_loaded = {}  # resolved path -> CDLL
_default = None
_default_path = None


def candidates(path=None):
    """(where, path) in search order: the explicit argument, $ATTNGEN_LIBRARY, the source tree's build, the system."""
    found = []
    if path:
        found.append(("argument", path))
    if os.environ.get("ATTNGEN_LIBRARY"):
        found.append(("ATTNGEN_LIBRARY", os.environ["ATTNGEN_LIBRARY"]))
    found.append(("source tree (make " + os.path.relpath(SOURCE_TREE_LIBRARY, SOURCE_TREE) + ")", SOURCE_TREE_LIBRARY))
    found.append(("system (ctypes.util.find_library('attngen'))", ctypes.util.find_library("attngen")))
    return found


def _open(path):
    lib = ctypes.CDLL(path)
    for name, (argtypes, restype) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    return lib


def load(path=None):
    """The runtime library: the first of candidates(path) that exists (an explicit path or $ATTNGEN_LIBRARY that does
    not exist is an error, not skipped). Loaded once per file. The first library loaded is the package's default,
    the one every call without library= uses: call load(path) before anything else to choose it."""
    global _default, _default_path
    from .errors import LibraryNotFound
    with _lock:
        if path is None and _default is not None:
            return _default
        tried = []
        for where, p in candidates(path):
            explicit = where in ("argument", "ATTNGEN_LIBRARY")
            if p and (os.path.exists(p) or where.startswith("system")):
                key = os.path.realpath(p) if os.path.exists(p) else p
                if key not in _loaded:
                    try:
                        _loaded[key] = _open(p)
                    except OSError as e:
                        raise LibraryNotFound(f"attngen: cannot load {p} ({where}): {e}") from None
                if _default is None:
                    _default, _default_path = _loaded[key], key
                return _loaded[key]
            tried.append(f"{where}: {p or 'not found'}")
            if explicit:
                break
        raise LibraryNotFound("attngen: no runtime library (libattngen.so); looked at " + "; ".join(tried) +
                              ". Build it with `make " + os.path.relpath(SOURCE_TREE_LIBRARY, SOURCE_TREE) +
                              "` in the source tree, or set ATTNGEN_LIBRARY.")


def loaded():
    """The default library if it is loaded already, else None (never loads it)."""
    return _default


def default_library_path():
    """The file the default library was (or would be) loaded from: where to look for the matching headers."""
    if _default_path:
        return _default_path
    for where, p in candidates():
        if p and os.path.exists(p):
            return os.path.realpath(p)
    return None
