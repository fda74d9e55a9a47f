"""The public conformance vectors pass, the repository's copy matches the shared one, and
the runner reports failures and malformed vectors as FORMAT.md asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.conformance import find_vectors, run_file
from arena.rules.conformance import FAIL, MALFORMED, run_vector

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "conformance" / "vectors"
SHARED = ROOT.parent / "shared" / "conformance" / "vectors"
#: scenario vectors written from RULES.md's text in an audit of the engine (README.md there)
AUDIT = ROOT / "tests" / "rules" / "data" / "audit"


@pytest.mark.parametrize("path", sorted(VECTORS.glob("*.json")), ids=lambda p: p.stem)
def test_public_vector_passes(path):
    result = run_file(path)
    assert result.passed, result.line()


@pytest.mark.parametrize("path", sorted(AUDIT.glob("*.json")), ids=lambda p: p.stem)
def test_audit_vector_passes(path):
    result = run_file(path)
    assert result.passed, result.line()


def test_audit_vectors_are_there():
    """An empty or moved folder would leave the parametrized test above with no case."""
    assert len(list(AUDIT.glob("*.json"))) >= 70


def test_repository_copy_matches_shared_vectors():
    if not SHARED.is_dir():
        pytest.skip("no ../shared checkout beside this repository")
    ours = {p.name: p.read_bytes() for p in VECTORS.glob("*.json")}
    theirs = {p.name: p.read_bytes() for p in SHARED.glob("*.json")}
    assert sorted(ours) == sorted(theirs), "vector files differ: copy ../shared/conformance/vectors again"
    for name in theirs:
        assert ours[name] == theirs[name], f"{name} differs from ../shared"


def test_repository_copy_of_the_format_matches_the_shared_one():
    """docs/rules.md sends a vector's author to tests/conformance/FORMAT.md (it sent them to
    ../shared, which a clone does not have): the shared text, under a note that says so."""
    ours = (VECTORS.parent / "FORMAT.md").read_text()
    assert "A copy of the shared format" in ours.split("\n\n")[0]
    shared = SHARED.parent / "FORMAT.md"
    if shared.is_file():
        assert ours.endswith(shared.read_text()), "FORMAT.md differs from ../shared: copy it again"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli.main", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_cli_runs_the_vectors_and_closes_with_the_count():
    out = arena("conformance", str(VECTORS))
    lines = out.stdout.strip().splitlines()
    count = len(list(VECTORS.glob("*.json")))
    assert out.returncode == 0
    assert lines[-1] == f"{count} passed, 0 failed"
    assert all(line.startswith("PASS ") for line in lines[:-1])


def test_cli_says_why_when_it_finds_no_vector(tmp_path):
    """An empty folder gave '0 passed, 0 failed' and exit 1, with no word of why."""
    out = arena("conformance", str(tmp_path))
    assert out.returncode == 1 and out.stdout == "0 passed, 0 failed\n"
    assert out.stderr == f"arena conformance: no vector (*.json) found in {tmp_path}\n"


def test_cli_refuses_a_path_that_is_not_there_before_running_any(tmp_path):
    """A mistyped path is refused as the README's exit rule says (2, nothing done): it
    counted as a failed vector (exit 1) after the others had run."""
    out = arena("conformance", str(VECTORS), str(tmp_path / "nope.json"), str(tmp_path / "gone"))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (f"arena conformance: error: no such file or folder: "
                          f"{tmp_path / 'nope.json'} {tmp_path / 'gone'}\n")
    # nor is an empty one (an unset variable) the working folder, every file in it run
    out = arena("conformance", "")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "arena conformance: error: no such file or folder: ''\n"


BASE = {
    "name": "t/base", "ruleset": "modern", "seats": 2,
    "deals": [{"hands": [["1", "2", "3", "4"], ["5", "6", "7", "8"]], "draw": ["9"]}],
    "steps": [{"seat": 0, "play": "1", "expect": {"total": 1}}],
}


def variant(**changes):
    vector = json.loads(json.dumps(BASE))
    vector.update(changes)
    return vector


def test_a_wrong_expectation_fails_naming_the_step_and_fact():
    result = run_vector(variant(steps=[{"seat": 0, "play": "1", "expect": {"total": 2}}]))
    assert result.status == FAIL
    assert result.detail == "step 1: total is 1, expected 2"


ENDED = VECTORS / "modern__exactly-99-then-elimination.json"   # its step 4 ends the game


@pytest.mark.parametrize("key, wrong, words", [
    ("ranking", [[1], [0]], "step 4: ranking is [[0], [1]], expected [[1], [0]]"),
    ("hands", {"0": ["5", "99", "99", "2"]}, "step 4: hands: seat 0 holds "),
    ("hands", {"0": ["5", "99", "1"]}, "step 4: hands: seat 0 holds "),      # one 99 short
    ("hands", {"1": ["9", "8", "10", "7"]}, "step 4: hands: seat 1 has no hand (out of the game)"),
    ("hand_sizes", [4, 0], "step 4: hand_sizes is [4, null], expected [4, 0]"),
    ("in_game", [0, 1], "step 4: in_game is [0], expected [0, 1]"),
    ("finished", False, "step 4: finished is true, expected false"),
    ("to_act", 1, "step 4: to_act is null, expected 1"),
])
def test_each_kind_of_fact_expected_wrongly_fails(key, wrong, words):
    """The public vectors pass whatever facts the runner leaves unchecked: each kind of
    fact (the hands and the ranking compared their own way) must fail when it is wrong."""
    vector = json.loads(ENDED.read_text())
    assert run_vector(vector).passed
    vector["steps"][3]["expect"][key] = wrong
    result = run_vector(vector)
    assert result.status == FAIL and result.detail.startswith(words), result.line()


def test_an_unexpected_rejection_fails_with_its_code():
    result = run_vector(variant(steps=[{"seat": 1, "play": "5"}]))
    assert result.status == FAIL
    assert "not_your_turn" in result.detail


def test_a_missing_error_fails():
    result = run_vector(variant(steps=[{"seat": 0, "play": "1", "error": "illegal_play"}]))
    assert result.status == FAIL
    assert "expected error illegal_play" in result.detail


@pytest.mark.parametrize("changes, why", [
    ({"deals": [{"hands": [["1", "2", "3", "XX"], ["5", "6", "7", "8"]], "draw": ["9"]}]},
     "unknown card token 'XX'"),
    ({"deals": [{"hands": [["1", "2", "3", "4"], ["5", "6", "7", "8"]], "draw": []}]},
     "reshuffle"),
    ({"deals": [{"hands": [["1", "2", "3", "4"], ["5", "6", "7", "8"]], "draw": []}],
      "reshuffles": [["9"]]}, "not an order of the discard pile"),
    ({"ruleset": "uno"}, "unknown ruleset 'uno'"),
    ({"options": {"scoring": "points"}}, "no option 'scoring'"),
    ({"seats": 9}, "seats=9"),
    ({"deals": []}, "needs a deal"),
    ({"steps": [{"seat": 0}]}, "needs both"),
    ({"steps": [{"expect": {"colour": "red"}}]}, "unknown expect field"),
    ({"deals": [{"hands": [["1", "2", "3", "4"], ["P2", "6", "7", "8"]], "draw": ["9"]}],
      "ruleset": "classic"}, "not in this deck"),
])
def test_malformed_vectors_are_reported_as_such(changes, why):
    result = run_vector(variant(**changes))
    assert result.status == MALFORMED
    assert why in result.detail


@pytest.mark.parametrize("ruleset, seat, card, code", [
    ("classic", 0, "P2", "not_in_hand"), ("classic", 0, "0", "not_in_hand"),
    ("modern", 0, "H", "not_in_hand"), ("modern", 0, "DP", "not_in_hand"),
    ("classic", 1, "P2", "not_your_turn"), ("modern", 1, "H", "not_your_turn"),
])
def test_playing_a_card_of_another_deck_is_the_referees_rejection(ruleset, seat, card, code):
    """FORMAT.md: not_your_turn, then not_in_hand ("the seat holds no such card"): a known
    token the ruleset's deck lacks is a card no seat holds, not a malformed vector (as it
    is in a hand or a pile)."""
    hands = [["2", "3", "4", "5"], ["6", "7", "8", "9"]]
    vector = variant(ruleset=ruleset, deals=[{"hands": hands, "draw": ["9"]}],
                     steps=[{"seat": seat, "play": card, "error": code},
                            {"seat": 0, "play": "2", "expect": {"total": 2}}])
    assert run_vector(vector).passed, run_vector(vector).line()


def test_an_unknown_token_played_is_malformed():
    result = run_vector(variant(steps=[{"seat": 0, "play": "XX", "error": "not_in_hand"}]))
    assert result.status == MALFORMED and "unknown card token 'XX'" in result.detail


def test_cli_exits_non_zero_on_a_failing_or_malformed_vector(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps(variant(ruleset="uno")))
    (tmp_path / "wrong.json").write_text(json.dumps(
        variant(name="t/wrong", steps=[{"seat": 0, "play": "1", "expect": {"to_act": 0}}])))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "deep.json").write_text("[" * 100_000)   # a RecursionError that ended the run
    out = arena("conformance", str(tmp_path), str(VECTORS / "modern__deck.json"))
    assert out.returncode == 1
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "1 passed, 4 failed"
    assert any(line.startswith("FAIL t/wrong: step 1: to_act is 1, expected 0") for line in lines)
    assert sum("malformed" in line for line in lines) == 3
    assert any("deep.json" in line and "nests too deeply" in line for line in lines)


def test_find_vectors_walks_folders_in_order(tmp_path):
    for name in ("b.json", "a.json", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in find_vectors([tmp_path])] == ["a.json", "b.json"]


@pytest.mark.parametrize("hands, status, words", [
    ({"1": None}, "pass", ""),                                    # seat 1 is out: null says so
    ({"0": None}, FAIL, "step 4: hands: seat 0 holds "),          # seat 0 is still in
    ({"0": None, "1": None}, FAIL, "expected it out of the game"),
    ({"0": [5, 99]}, MALFORMED, "a list of card tokens or null"),
    ({"0": [["99"]]}, MALFORMED, "a list of card tokens or null"),
    ({"0": "5 99"}, MALFORMED, "a list of card tokens or null"),
])
def test_expected_hands_of_null_or_of_other_things_never_stop_the_run(hands, status, words):
    """A null hand (a seat out of the game, as a deal and hand_sizes write it) raised a
    TypeError in the runner, and so did a hand of non-tokens: the run stopped and printed
    no 'N passed, M failed' (FORMAT.md). Now null means out of the game; the rest is a
    malformed vector."""
    vector = json.loads(ENDED.read_text())
    vector["steps"][3]["expect"]["hands"] = hands
    result = run_vector(vector)
    assert result.status == status and words in result.detail, result.line()


@pytest.mark.parametrize("ranking", [[[0], 1], [[None], [1]], [[{"0": 1}], [1]], 0, [[True], [1]]])
def test_a_ranking_not_of_groups_of_seats_is_malformed(ranking):
    """It raised a TypeError (sorting a group that is no list of seats) and stopped the run."""
    vector = json.loads(ENDED.read_text())
    vector["steps"][3]["expect"]["ranking"] = ranking
    result = run_vector(vector)
    assert result.status == MALFORMED and "a list of groups" in result.detail, result.line()
