"""Tests that need a tool beyond Python (the C++ toolchain, node): skipped where it is
missing, except where ``ONO99_TEST_ALL`` is set (CI sets it, after installing them), so
that a machine without them cannot pass by skipping."""

from __future__ import annotations

import os

import pytest

ENV = "ONO99_TEST_ALL"


def missing(reason: str) -> None:
    """Skip the test with ``reason`` (what is missing, how to install it), or fail it
    under ``ONO99_TEST_ALL``."""
    if os.environ.get(ENV):
        pytest.fail(f"{reason} ({ENV} is set: nothing may be skipped)", pytrace=False)
    pytest.skip(reason)
