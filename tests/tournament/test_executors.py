"""The executor registry: one constructor shape, chosen by name, with precise refusals."""

from __future__ import annotations

import os

import pytest

from arena.rules.errors import ConfigError
from arena.tournament.executor import LocalExecutor
from arena.tournament.executors import EXECUTORS, ExecutorSetup, make_executor
from arena.tournament.multiprocess import MultiProcessExecutor


def test_every_entry_is_made_from_the_same_setup():
    assert list(EXECUTORS) == ["local", "multiprocess", "ray", "auto"]
    setup = ExecutorSetup([], [], 2)
    assert isinstance(make_executor("local", setup), LocalExecutor)
    assert isinstance(make_executor("multiprocess", setup), MultiProcessExecutor)
    assert type(make_executor("ray", setup)).__name__ == "RayExecutor"


def test_auto_spreads_over_cores_only_when_there_is_something_to_spread():
    assert isinstance(make_executor("auto", ExecutorSetup([], [], 1)), LocalExecutor)
    many = make_executor("auto", ExecutorSetup([], [], 4))
    expected = MultiProcessExecutor if (os.cpu_count() or 1) > 1 else LocalExecutor
    assert isinstance(many, expected)
    # in-process listeners need the matches here
    assert isinstance(make_executor("auto", ExecutorSetup([], [], 4, listeners=[object()])),
                      LocalExecutor)


def test_an_unknown_name_and_listeners_that_cannot_follow_are_refused():
    with pytest.raises(ConfigError, match=r"no executor called 'nope' \(known: local, "
                                          r"multiprocess, ray, auto\)"):
        make_executor("nope", ExecutorSetup([], [], 2))
    for name in ("multiprocess", "ray"):
        with pytest.raises(ConfigError, match="in-process listeners follow matches of this "
                                              "process only"):
            make_executor(name, ExecutorSetup([], [], 2, listeners=[object()]))
