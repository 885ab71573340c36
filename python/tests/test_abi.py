# SPDX-License-Identifier: MIT
"""The ctypes mirror (attngen/_abi.py) against the C compiler: sizeof and offsetof of every mirrored structure and
field, and the value of every mirrored constant, printed by a C program compiled against runtime/attngen.h. An API
change makes this fail instead of mis-laying memory."""
import ctypes
import os
import shutil
import subprocess
import tempfile
import unittest

from attngen import _abi, _library


def c_program():
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "attngen.h"', 'int main(void)', '{']
    for struct in _abi.STRUCTS:
        c = struct._c_name
        lines.append(f'  printf("{c} %zu\\n", sizeof({c}));')
        for field, _ in struct._fields_:
            lines.append(f'  printf("{c}.{field} %zu\\n", offsetof({c}, {field}));')
    for name in _abi.CONSTANTS:
        lines.append(f'  printf("{name} %lld\\n", (long long)({name}));')
    lines.append('  printf("enum %zu\\n", sizeof(attngen_mask));')
    return "\n".join(lines + ["  return 0;", "}", ""])


def mirrored():
    got = {}
    for struct in _abi.STRUCTS:
        got[struct._c_name] = ctypes.sizeof(struct)
        for field, _ in struct._fields_:
            got[f"{struct._c_name}.{field}"] = getattr(struct, field).offset
    got.update(_abi.CONSTANTS)
    got["enum"] = ctypes.sizeof(_abi.c_enum)
    return got


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class AbiMirror(unittest.TestCase):
    def test_layout_and_constants_match_the_c_headers(self):
        tree = _library.SOURCE_TREE
        includes = ["-I" + os.path.join(tree, "runtime"), "-I" + os.path.join(tree, "generated", "runtime")]
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "abi.c"), os.path.join(tmp, "abi")
            with open(src, "w") as f:
                f.write(c_program())
            subprocess.run([os.environ.get("CC", "cc"), "-std=c99", *includes, src, "-o", exe], check=True)
            printed = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
        c_values = {name: int(value) for name, value in (line.split() for line in printed.splitlines())}
        py_values = mirrored()
        self.assertEqual(set(c_values), set(py_values))
        wrong = {n: (py_values[n], c_values[n]) for n in c_values if py_values[n] != c_values[n]}
        self.assertEqual(wrong, {}, "name: (ctypes, C) for every mismatch")

    def test_names_match_the_runtime(self):
        lib = _library.load()
        for names, fn in ((_abi.ISAS, lib.attngen_isa_name), (_abi.MASKS, lib.attngen_mask_name),
                          (_abi.PHASES, lib.attngen_phase_name), (_abi.KV_DTYPES, lib.attngen_kv_dtype_name)):
            self.assertEqual([fn(i).decode() for i in range(len(names))], list(names))


if __name__ == "__main__":
    unittest.main()
