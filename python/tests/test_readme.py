# SPDX-License-Identifier: MIT
"""python/README.md's examples, run as written: the NumPy one always, the torch comparison when torch is importable
(with q, k, v torch tensors it names; its result checked against float64 within reference.TOL); otherwise it is
compiled, so at least its syntax is checked."""
import importlib.util
import os
import re
import unittest

import numpy as np

from reference import TOL, sdpa64

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def blocks():
    with open(README) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


class Readme(unittest.TestCase):
    def test_has_both_examples(self):
        self.assertEqual(len(blocks()), 2)

    def test_numpy_example_runs(self):
        scope = {"print": lambda *a: None}
        exec(compile(blocks()[0], README, "exec"), scope)
        ref = sdpa64(scope["q"], scope["k"], scope["v"], causal=True)[0]
        err = np.abs(scope["out"] - ref).max() / max(1, np.abs(ref).max())
        self.assertLessEqual(err, TOL)
        self.assertEqual(scope["cache"].lengths.tolist(), [17])

    def test_torch_comparison(self):
        code = compile(blocks()[1], README, "exec")
        if importlib.util.find_spec("torch") is None:
            self.skipTest("torch is not importable (the example was compiled only)")
        import torch
        import attngen
        g = torch.Generator().manual_seed(1)
        scope = {"torch": torch, "attngen": attngen, "print": lambda *a: None}
        scope.update(q=torch.rand(1, 32, 8, 64, generator=g) * 2 - 1, k=torch.rand(1, 32, 2, 64, generator=g) * 2 - 1,
                     v=torch.rand(1, 32, 2, 64, generator=g) * 2 - 1)
        exec(code, scope)
        ref = sdpa64(scope["q"].numpy(), scope["k"].numpy(), scope["v"].numpy(), causal=True)[0]
        for name in ("out", "ref"):
            self.assertLessEqual(np.abs(scope[name].numpy() - ref).max(), TOL, name)


if __name__ == "__main__":
    unittest.main()
