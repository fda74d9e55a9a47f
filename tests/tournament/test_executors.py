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


def test_a_bot_with_no_folder_here_plays_on_the_local_executor_only():
    """A server's remote bot has no folder to launch in another process (it connects to
    the server's referee): the executors of other processes refuse it by name, auto keeps
    its tournament here, and the local one seats it as the setup says."""
    setup = ExecutorSetup([None], ["far"], 4, seats_here=lambda referee: [])
    assert isinstance(make_executor("local", setup), LocalExecutor)
    assert isinstance(make_executor("auto", setup), LocalExecutor)
    for name in ("multiprocess", "ray"):
        with pytest.raises(ConfigError, match="far cannot be launched in another process: "
                                              "no folder here"):
            make_executor(name, setup)
