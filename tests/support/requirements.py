"""Tests that need a tool beyond Python (the C++ toolchain, node, bubblewrap) or a Python
package of the dev extra that may be absent (ray, rlcard): skipped where it is missing,
except where ``ONO99_TEST_ALL`` is set (CI sets it, after installing them), so that a
machine without them cannot pass by skipping."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

ENV = "ONO99_TEST_ALL"


def missing(reason: str, module_level: bool = False) -> None:
    """Skip the test with ``reason`` (what is missing, how to install it), or fail it
    under ``ONO99_TEST_ALL``. ``module_level``: the whole module, at its import."""
    if os.environ.get(ENV):
        pytest.fail(f"{reason} ({ENV} is set: nothing may be skipped)", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def needs_module(name: str, module_level: bool = False) -> ModuleType:
    """``name`` imported, as ``pytest.importorskip`` does, but through :func:`missing`:
    a dev dependency that does not import fails the run under ``ONO99_TEST_ALL``."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} does not import ({exc}): pip install -e '.[dev]'", module_level)
        raise   # not reached: missing() raises
