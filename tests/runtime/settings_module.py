"""Module-level settings that tests/runtime/test_changing_values.py rebinds between calls."""

import numpy as np

SCALE = 2.0
FUNC = np.exp
WINDOW = (1, 4)
PICK = slice(0, 3)
MODE = "double"


class Config:
    offset = 1.5
    axis = 0
