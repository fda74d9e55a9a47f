"""The web viewer in a real browser: a headless Chromium, driven by selenium, reads the
page the viewer serves while real matches are played into a real spectator service (and,
at the end, while a real `arena tournament --web` runs).

Screenshots of the live table and of a replay go to each test's tmp folder; with
``ONO99_SCREENSHOTS=docs/images`` they are also written where the docs show them
(watch-live.png, watch-replay.png)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from support.processes import env_for
from support.serve import BOTS, ROOT, command
from support.web import LiveArena, chromium

WAIT_S = 30


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def arena():
    live = LiveArena()
    live.serve_spectators()
    live.serve_web()
    yield live
    live.close()


def until(browser, check, what: str, timeout: float = WAIT_S):
    """Wait for ``check(browser)`` to be true-ish; its value. Fails naming ``what``."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(browser, timeout, 0.05, (StaleElementReferenceException,)).until(check)
    except TimeoutException:
        raise AssertionError(f"{what}: not seen in {timeout} s (browser log: "
                             f"{browser.get_log('browser')})") from None


def open_page(browser, url: str) -> None:
    """Load ``url`` afresh (a new address, not a hash change on the page loaded)."""
    browser.get("about:blank")
    browser.get(url)


def open_file(browser, path: Path) -> None:
    """Give the page's "open a file…" the file at ``path``, as a user picks it."""
    field = browser.find_element("id", "open-file")
    browser.execute_script("arguments[0].style.display = 'block'", field)
    field.send_keys(str(path))


# The page redraws a table in place: elements are read in one script, never found first
# and read after (by then they may be gone).

def text(browser, selector: str) -> str | None:
    """The text of the first element ``selector`` finds, as shown (None: no element)."""
    return browser.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : null", selector)


def shown(browser, selector: str) -> bool:
    return browser.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return !!e && e.getClientRects().length > 0", selector)


def count(browser, selector: str) -> int:
    return browser.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def turn(browser) -> tuple[int, int]:
    found = re.fullmatch(r"turn (\d+) / (\d+)", text(browser, "#turn"))
    return int(found.group(1)), int(found.group(2))


def thinking(browser) -> float:
    """How long the page says the seat to act has been thinking (s; -1: no such clock)."""
    found = re.fullmatch(r"thinking (\d+\.\d) s", text(browser, "#table .seat.to-act .thinking") or "")
    return float(found.group(1)) if found else -1.0


def log_lines(browser) -> int:
    return browser.execute_script(
        "return [...document.querySelectorAll('#log .frame-lines:not([hidden]) .line')].length")


def press(browser, *keys) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for key in keys:
        ActionChains(browser).send_keys(key).perform()


def screenshot(browser, tmp_path: Path, name: str) -> None:
    browser.save_screenshot(str(tmp_path / name))
    docs = os.environ.get("ONO99_SCREENSHOTS")
    if docs:
        browser.save_screenshot(str(ROOT / docs / name))


def record_of(arena: LiveArena, match_id: str) -> dict:
    with urllib.request.urlopen(f"{arena.url}api/record/{match_id}", timeout=10) as answer:
        return json.loads(answer.read())


def total_at(record: dict, index: int) -> int:
    return record["frames"][index]["state"].get("total", 0)


# ---------------------------------------------------------------- live


def test_the_match_list_shows_a_live_match(browser, arena):
    match_id = arena.play(["ann", "ben", "cat"], 0.2, seed=11)
    open_page(browser, arena.url)
    row = f"#matches tr[data-match='{match_id}']"
    until(browser, lambda b: shown(b, row), "the live match in the list")
    assert "live" in text(browser, row) and "ann vs ben vs cat" in text(browser, row)


def test_the_live_table_advances_then_shows_its_result(browser, arena, tmp_path):
    match_id = arena.play(["alice", "bob", "carol", "dave"], 0.15, seed=3)
    open_page(browser, f"{arena.url}#/match/{match_id}")
    until(browser, lambda b: turn(b)[1] >= 3, "the live table")
    assert text(browser, "#match-status") == "live"
    assert count(browser, "#table .seat") == 4
    assert shown(browser, "#table .seat.to-act")
    assert re.fullmatch(r"thinking \d+\.\d s", text(browser, "#table .seat.to-act .thinking"))
    before = (turn(browser), text(browser, "#total"), log_lines(browser))
    until(browser, lambda b: turn(b)[0] > before[0][0] + 2, "the table moving on")
    after = (turn(browser), text(browser, "#total"), log_lines(browser))
    assert after[2] > before[2], "the log did not grow"
    assert re.search(r"^\w+ plays \S+ -> -?\d+", text(browser, "#log"), re.M)
    until(browser, lambda b: turn(b)[0] >= 20 or shown(b, "#result"), "turn 20")
    screenshot(browser, tmp_path, "watch-live.png")   # a table well into its match
    result = arena.wait(match_id)
    until(browser, lambda b: shown(b, "#result"), "the result", timeout=60)
    winner = result.spec.names[result.ranking[0][0]]
    assert text(browser, "#result").startswith(f"1. {winner}")
    assert text(browser, "#match-status") == "finished"
    # every hand is shown at the end, face up
    assert count(browser, "#table .seat .hand .card:not(.back)")


def test_a_page_that_joins_late_shows_how_long_the_seat_has_been_thinking(browser, arena):
    """A second page on a match already watched joins the first's stream and is sent its
    catch-up at once: its turn clock counted from the catch-up's snapshot (or from the
    catch-up's arrival, after a frame), not from when the seat began to think, and a seat
    seconds into its turn showed a fraction of a second there (the first page showed the
    right time). The match's first move takes 30 s: the same turn all along."""
    match_id = arena.play(["slow-one", "slow-two"], 30.0, seed=17)
    url = f"{arena.url}#/match/{match_id}"
    first = browser.current_window_handle
    try:
        open_page(browser, url)
        until(browser, lambda b: thinking(b) >= 5.0, "a seat thinking for 5 s")
        browser.switch_to.new_window("tab")
        try:
            browser.get(url)
            until(browser, lambda b: thinking(b) >= 0, "the late page's clock")
            # the catch-up's age comes right after it: within a tick or two the clock is
            # past 5 s (counted from the catch-up's snapshot, it would be under 2 s)
            until(browser, lambda b: thinking(b) >= 5.0, "the late page's clock past 5 s",
                  timeout=1.5)
            assert turn(browser)[1] == 0, "a move was made: not the first turn"
        finally:
            browser.close()
            browser.switch_to.window(first)
    finally:
        arena.run(_cancelled(arena.results[match_id]))


async def _cancelled(task) -> None:
    task.cancel()


def test_tv_shows_a_live_match(browser, arena):
    match_id = arena.play(["tv-one", "tv-two"], 0.2, seed=12)
    open_page(browser, f"{arena.url}#/tv")
    until(browser, lambda b: text(b, "#match-status") == "live" and turn(b)[1] > 0,
          "a live match on TV")
    assert text(browser, "#match-title .label") == "TV"
    live = {m.summary.match_id for m in arena.hub.matches.values() if m.live}
    assert match_id in live
    assert re.fullmatch(r"match \S+", text(browser, "#match-meta").split(" · ")[1])


def test_tv_goes_on_to_a_match_shorter_than_the_one_it_showed(browser, arena):
    """TV's page, switching from a match it showed at turn 40 to one with fewer frames,
    drew the new match at the old turn before it moved there: a TypeError, the new match
    never drawn, its end never applied (live, and a clock "thinking" for two seconds,
    after every such switch on a busy arena)."""
    # TV of a tournament of its own: the module's other matches (live ones too) are not
    # shown
    open_page(browser, f"{arena.url}#/tv?tournament=switching")
    until(browser, lambda b: text(b, "#match-title") == "TV: waiting for a live match…",
          "TV waiting")
    first = arena.play(["long-one", "long-two"], 0.005, seed=5, tournament="switching")
    arena.wait(first)
    until(browser, lambda b: text(b, "#match-status") == "finished" and turn(b)[0] > 10,
          "the first match over on TV")
    second = arena.play(["short-one", "short-two"], 0.3, seed=6, tournament="switching")
    until(browser, lambda b: text(b, "#match-names") == "short-one vs short-two",
          "TV on the second match", timeout=30)
    assert text(browser, "#match-status") == "live" and turn(browser)[1] < 10
    arena.wait(second)
    until(browser, lambda b: text(b, "#match-status") == "finished", "its end", timeout=30)
    assert shown(browser, "#result")


def test_the_page_reconnects_and_resyncs_when_the_viewer_comes_back(browser, arena):
    match_id = arena.play(["re", "con"], 0.1, seed=13)
    open_page(browser, f"{arena.url}#/match/{match_id}")
    until(browser, lambda b: turn(b)[1] > 0, "the live match")
    port = arena.stop_web()
    try:
        until(browser, lambda b: shown(b, "#status"), "the page saying the viewer went away")
        seen = turn(browser)[1]
    finally:
        arena.serve_web(port)
    until(browser, lambda b: not shown(b, "#status") and turn(b)[1] > seen + 2,
          "the page back in sync with the match")


# ---------------------------------------------------------------- replays


def test_a_replay_steps_forward_and_back_and_its_address_holds_the_turn(browser, arena, tmp_path):
    match_id = arena.play(["north", "east", "south", "west"], 0.0, "modern", seed=21)
    arena.wait(match_id)
    record = record_of(arena, match_id)
    last = len(record["frames"]) - 1
    open_page(browser, f"{arena.url}#/match/{match_id}")
    until(browser, lambda b: turn(b) == (last, last), "the replay, at its end")
    assert shown(browser, "#result") and text(browser, "#match-status") == "finished"

    press(browser, "\ue011")                          # Home
    until(browser, lambda b: turn(b)[0] == 0, "turn 0")
    press(browser, "\ue014", "\ue014", "\ue014")      # three arrows right
    until(browser, lambda b: turn(b)[0] == 3, "turn 3")
    assert text(browser, "#total") == str(total_at(record, 3))
    assert browser.current_url.endswith(f"#/match/{match_id}?turn=3")
    press(browser, "\ue012")                          # arrow left
    until(browser, lambda b: turn(b)[0] == 2, "turn 2")
    assert text(browser, "#total") == str(total_at(record, 2))
    assert not shown(browser, "#result")

    press(browser, "+", "+")
    assert browser.find_element("id", "speed").get_attribute("value") == "5"
    press(browser, " ")                               # play, at 10 turns a second
    until(browser, lambda b: turn(b)[0] >= 6, "the replay playing")
    press(browser, " ")
    paused = turn(browser)[0]
    time.sleep(0.6)
    assert turn(browser)[0] == paused, "still playing after a pause"

    browser.execute_script("const s = document.getElementById('scrubber');"
                           "s.value = 9; s.dispatchEvent(new Event('input'));")
    until(browser, lambda b: turn(b)[0] == 9, "the scrubber's turn")
    assert text(browser, "#total") == str(total_at(record, 9))

    at = min(17, last)
    open_page(browser, f"{arena.url}#/match/{match_id}?turn={at}")
    until(browser, lambda b: turn(b) == (at, last), f"the address's turn {at}")
    assert text(browser, "#total") == str(total_at(record, at))
    screenshot(browser, tmp_path, "watch-replay.png")


def test_an_unknown_match_reached_from_another_says_so_without_the_other_s_controls(
        browser, arena):
    """Reached from a replay, an unknown match's page said why in its status line but kept
    "match ID: connecting…" as its heading and the replay's controls ("turn 17 / 39", its
    download link, "● live"), which the keys still played (the eleventh review)."""
    match_id = arena.play(["known", "one"], 0.0, seed=26)
    arena.wait(match_id)
    open_page(browser, f"{arena.url}#/match/{match_id}")
    until(browser, lambda b: shown(b, "#download") and shown(b, "#turn"), "the replay")
    browser.execute_script("window.location.hash = '#/match/nosuchmatch'")
    until(browser, lambda b: "nosuchmatch" in (text(b, "#status") or ""), "the reason")
    until(browser, lambda b: text(b, "#match-title") == "match nosuchmatch", "the heading")
    for control in ("#player", "#turn", "#live", "#download", "#permalink"):
        assert not shown(browser, control), control
    press(browser, "\ue011", " ")                   # Home, play: nothing to play
    time.sleep(0.3)
    assert not shown(browser, "#player") and text(browser, "#centre") == ""


def test_an_embedded_replay_shows_the_table_alone(browser, arena):
    match_id = arena.play(["em", "bed"], 0.0, seed=22)
    arena.wait(match_id)
    open_page(browser, f"{arena.url}#/match/{match_id}?turn=5&embed=1")
    until(browser, lambda b: turn(b)[0] == 5, "the embedded replay")
    assert not shown(browser, "#chrome") and shown(browser, "#table")


def test_a_downloaded_record_and_an_event_log_open_from_files(browser, arena, tmp_path):
    from arena.cli.match import write_log

    match_id = arena.play(["file", "log"], 0.0, seed=23)
    result = arena.wait(match_id)
    downloaded = tmp_path / f"{match_id}.json"
    downloaded.write_text(json.dumps(record_of(arena, match_id)))
    log = tmp_path / "game-1.jsonl"
    write_log(log, result)
    last = len(record_of(arena, match_id)["frames"]) - 1
    open_page(browser, arena.url)
    for path in (downloaded, log):
        browser.execute_script("window.location.hash = '#/'")
        open_file(browser, path)
        until(browser, lambda b: shown(b, "#match-view") and turn(b) == (last, last),
              f"the replay of {path.name}")
        assert text(browser, "#match-names") == "file vs log"
        assert shown(browser, "#result")


def test_a_file_that_cannot_be_opened_says_why_until_the_page_moves_on(browser, arena, tmp_path):
    """The reason went to the status line that the list's refresh (every 3 s) and a live
    stream's every message clear: on a live page it was gone before it could be read."""
    match_id = arena.play(["still", "live"], 0.3, seed=25)
    open_page(browser, f"{arena.url}#/match/{match_id}")
    until(browser, lambda b: text(b, "#match-status") == "live", "the live match")
    junk = tmp_path / "notes.jsonl"
    junk.write_text("not a match\n")
    open_file(browser, junk)
    said = "cannot open notes.jsonl: notes.jsonl is neither an arena match event log"
    until(browser, lambda b: (text(b, "#file-status") or "").startswith(said), "the reason")
    before = turn(browser)[1]
    until(browser, lambda b: turn(b)[1] >= before + 3, "the live match moving on")
    assert (text(browser, "#file-status") or "").startswith(said)   # still there
    browser.execute_script("window.location.hash = '#/'")
    until(browser, lambda b: not shown(b, "#file-status"), "the reason gone with the page")


def test_a_malformed_link_and_a_record_of_absurd_tokens_still_show_a_page(browser, arena,
                                                                          tmp_path):
    """A link with a broken escape threw out of the router (a blank page); a shared record
    saying a seat holds 400,000,000 tokens drew that many marks (the tab crashed)."""
    open_page(browser, f"{arena.url}#/match/%E0%A4%A")
    until(browser, lambda b: shown(b, "#match-view"), "the match view of a malformed link")
    match_id = arena.play(["rich", "poor"], 0.0, ruleset="classic", seed=24)
    arena.wait(match_id)
    record = record_of(arena, match_id)
    for frame in record["frames"]:
        for seat in frame["state"].get("seats", []):
            seat["tokens"] = 400_000_000
    absurd = tmp_path / "absurd.json"
    absurd.write_text(json.dumps(record))
    open_page(browser, arena.url)
    open_file(browser, absurd)
    until(browser, lambda b: shown(b, "#match-view") and text(b, ".tokens"), "the absurd record")
    assert text(browser, ".tokens") == "● × 400000000"


def test_a_record_s_invisible_characters_are_shown_as_escapes(browser, arena, tmp_path):
    """A record opened from a file reaches the page unchecked: a name with a bidi override
    turned its lines around ("\u202egnp.exe plays 9" read "9 syalp exe.png")."""
    match_id = arena.play(["ann", "bob"], 0.0, seed=26)
    arena.wait(match_id)
    record = record_of(arena, match_id)
    record["match"]["names"][1] = "\u202egnp.exe"
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(record))
    open_page(browser, arena.url)
    open_file(browser, shared)
    until(browser, lambda b: shown(b, "#match-view") and text(b, "#match-names"), "the record")
    assert text(browser, "#match-names") == "ann vs \\u202egnp.exe"
    page = browser.execute_script("return document.body.innerText + document.title")
    assert "\u202e" not in page and "\\u202egnp.exe" in page


def test_the_longest_names_a_server_takes_fit_the_page(browser, arena):
    """A server takes bot names of 64 characters: a match of two such (no space to break
    at) made its page wider than the window, which scrolled sideways."""
    longest = ["W" * 64, "M" * 64]
    arena.tournament("T" * 64, longest, 2)
    match_id = arena.play(longest, 0.0, seed=27, tournament="T" * 64)
    arena.wait(match_id)
    for page, seen in ((f"#/match/{match_id}", "#match-names"), ("#/", "#matches td"),
                       (f"#/tournament/{'T' * 64}", "#tournament-title")):
        open_page(browser, arena.url + page)
        until(browser, lambda b: text(b, seen), page)
        wide, window = browser.execute_script(
            "return [document.documentElement.scrollWidth, innerWidth]")
        assert wide <= window, f"{page} is {wide} px wide in a window of {window}"


def test_a_delay_of_part_of_a_turn_in_an_address_is_read_as_whole_turns(browser, arena):
    """The service takes whole turns: ?delay=1.5 was refused, and the page said the viewer
    did not answer, trying again for good."""
    match_id = arena.play(["half", "turn"], 0.0, seed=27)
    arena.wait(match_id)
    open_page(browser, f"{arena.url}#/match/{match_id}?delay=1.5")
    until(browser, lambda b: shown(b, "#result"), "the match shown")


# ---------------------------------------------------------------- tournaments


def test_a_field_too_big_for_a_crosstable_says_so(browser, arena):
    """40 bots: the standings list every bot; the crosstable (a cell per pair, sent for
    up to 32 bots) is replaced by a line saying why."""
    bots = [f"bot{i:02d}" for i in range(40)]
    arena.tournament("big", bots, 5)
    arena.wait(arena.play(("bot00", "bot01"), 0.0, seed=41, tournament="big"))
    open_page(browser, f"{arena.url}#/tournament/big")
    until(browser, lambda b: text(b, "#progress-text") == "1 of 5 matches", "the tournament")
    until(browser, lambda b: count(b, "#standings tbody tr") == 40, "the standings of every bot")
    assert text(browser, "#crosstable-note") == "40 bots: the crosstable is shown for up to 32."
    assert count(browser, "#crosstable tbody tr") == 0


def test_a_tournament_s_standings_and_crosstable_appear(browser, arena):
    bots = ["red", "green", "blue"]
    arena.tournament("cup", bots, 3)
    open_page(browser, f"{arena.url}#/tournament/cup")
    until(browser, lambda b: text(b, "#progress-text") == "0 of 3 matches", "the tournament")
    for i, pair in enumerate((("red", "green"), ("green", "blue"), ("blue", "red"))):
        arena.wait(arena.play(pair, 0.0, seed=30 + i, tournament="cup"))
    until(browser, lambda b: text(b, "#progress-text") == "3 of 3 matches", "the matches counted")
    until(browser, lambda b: set(b.execute_script(
        "return [...document.querySelectorAll('#standings tbody tr')].map(r => r.dataset.bot)"))
        == set(bots), "the standings of every bot")
    assert count(browser, "#crosstable tbody tr") == 3
    assert not browser.find_element("id", "crosstable-note").is_displayed()
    assert count(browser, "#tournament-matches tbody tr") == 3
    browser.find_element("id", "all-matches").click()   # the list of the cup's matches only
    until(browser, lambda b: count(b, "#matches tbody tr") == 3
          and text(b, "#list-title") == "Live and recent matches of cup", "the cup's matches")


def test_a_tournament_page_keeps_the_live_matches_and_the_newest_finished_ones(browser, arena):
    """A ladder's page kept every match its stream told of (900 after a minute of a busy
    ladder; the thirtieth review), each message filtering them all: its renderer took half
    a core, and a script on the page took seconds. It keeps the live matches and the 50
    newest finished ones, which are what it shows. The page's own TournamentView, fed a
    long tournament's messages."""
    open_page(browser, arena.url)
    kept = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/static/js/lists.js").then(({ TournamentView, FINISHED_KEPT }) => {
          const view = new TournamentView();
          view.apply({ snapshot: { name: "long", matches: [] } });
          const live = (id) => ({ match_id: id, status: "MATCH_STATUS_LIVE" });
          const over = (id) => ({ match_id: id, status: "MATCH_STATUS_FINISHED" });
          view.apply({ started: live("early") });          // live for the whole run
          for (let i = 0; i < 500; i++) {
            view.apply({ started: live(`m${i}`) });
            view.apply({ finished: over(`m${i}`) });
          }
          view.apply({ started: live("late") });
          done([FINISHED_KEPT, view.snapshot.done, view.snapshot.matches.map((m) => m.match_id)]);
        }, (error) => done(String(error)));""")
    assert isinstance(kept, list), kept
    most, done, ids = kept
    assert ids == ["late", "early", *(f"m{i}" for i in range(499, 449, -1))], len(ids)
    assert most == 50 and done == 500


def test_arena_tournament_web_shows_its_standings_and_matches(browser, tmp_path, mark):
    """The real command: `arena tournament ... --watch --web 0`, watched while it runs."""
    out = tmp_path / "out.log"
    proc = subprocess.Popen(command("tournament", BOTS / "random", BOTS / "greedy", "--games",
                                    "20000", "--watch", "127.0.0.1:0", "--web", "0", "--db",
                                    tmp_path / "t.db", "--logs", tmp_path / "logs", "-q"),
                            cwd=ROOT, env=env_for(mark), stdout=out.open("w"),
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (found := re.search(r"^web viewer at (\S+)$", out.read_text(), re.M)):
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.1)
        url = found.group(1)
        open_page(browser, f"{url}#/tournament")
        until(browser, lambda b: count(b, "#standings tbody tr") == 2,
              "the standings of random and greedy")
        done = int(re.match(r"(\d+) of 40000", text(browser, "#progress-text")).group(1))
        until(browser, lambda b: int(re.match(r"\d+", text(b, "#progress-text")).group()) > done,
              "the progress moving on")
        open_page(browser, url)
        until(browser, lambda b: count(b, "#matches tbody tr"), "the tournament's matches in the list")
        open_page(browser, f"{url}#/tv")
        until(browser, lambda b: set((text(b, "#match-names") or "").split(" vs ")) == {"random", "greedy"},
              "a match of the tournament on TV")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


# ---------------------------------------------------------------- the page's record


def test_frames_sent_together_are_had_as_if_each_came_alone(browser, arena):
    """The service sends the frames that piled up for a viewer that lags in one message
    (FrameBatch). The page's own MatchRecord, in the browser, takes a snapshot, a frame, a
    batch that repeats two frames it had, and the rest: every frame once, in order; and one
    verdict a seat."""
    match_id = arena.play(["bat", "ch"], 0.0, seed=24)
    arena.wait(match_id)
    record = record_of(arena, match_id)
    frames = record["frames"]
    stream = ([{"snapshot": {"match": record["match"], "frames": frames[:3]}}, {"frame": frames[3]},
               {"frames": {"frames": frames[2:9]}}] + [{"frame": f} for f in frames[9:]]
              + [{"verdict": {"seat": 1, "detail": "late"}}, {"verdict": {"seat": 1, "detail": "again"}}])
    open_page(browser, arena.url)
    seqs, verdicts, changed = browser.execute_async_script("""
        const [stream, done] = [arguments[0], arguments[arguments.length - 1]];
        import("/static/js/match.js").then(({ MatchRecord }) => {
          const record = new MatchRecord(stream[0].snapshot);
          const changed = stream.slice(1).map((message) => record.apply(message));
          done([record.frames.map((f) => Number(f.seq ?? 0)), record.verdicts.length, changed]);
        });""", stream)
    assert seqs == list(range(len(frames)))
    assert verdicts == 1
    assert changed[:2] == [True, True] and changed[-1] is False
