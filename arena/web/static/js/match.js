// A match as the page holds it (the frames so far, verdicts, its end), and the player
// that chooses which frame is shown: the newest while following a live match, any
// frame in a replay.

import { num } from "./text.js";

export class MatchRecord {
  // ``snapshot``: a MatchSnapshot (from a stream, a record download, or a file).
  // ``fromServer``: the viewer has it (it can be linked to and downloaded).
  constructor(snapshot, fromServer = false) {
    this.fromServer = fromServer;
    this.summary = snapshot.match ?? {};
    this.frames = snapshot.frames ?? [];
    this.verdicts = snapshot.verdicts ?? [];
    this.over = snapshot.over ?? null;
    this.delayed = num(snapshot.delayed);
    // When the seat to act began thinking, on this page's clock.
    this.turnStarted = performance.now() - num(snapshot.open_turn_ms);
  }

  get id() {
    return this.summary.match_id ?? "";
  }

  get names() {
    return this.summary.names ?? [];
  }

  get last() {
    return this.frames.length - 1;
  }

  // A message of a match stream (after its snapshot); false if it changes nothing. A
  // frame a snapshot already brought is not taken twice, nor a second verdict for a seat
  // (a seat gets one a match), as arena.watch.viewer does for the terminal.
  apply(message) {
    if (message.frame || message.frames) {
      // frames that came faster than this page read them arrive together (FrameBatch)
      const frames = message.frame ? [message.frame] : message.frames.frames ?? [];
      const fresh = frames.filter((f) => num(f.seq) > num(this.frames.at(-1)?.seq ?? -1));
      if (!fresh.length) return false;
      this.frames.push(...fresh);
      this.turnStarted = performance.now();
    } else if (message.verdict) {
      if (this.verdicts.some((v) => num(v.seat) === num(message.verdict.seat))) return false;
      this.verdicts.push(message.verdict);
    } else if (message.over) {
      this.over = message.over;
      this.delayed = 0;
    } else if (message.catch_up_age_ms !== undefined) {
      // this page joined a stream under way: the last frame it was sent came this long ago
      this.turnStarted -= num(message.catch_up_age_ms);
      return false;
    } else {
      return false;
    }
    return true;
  }

  // The last card on the discard pile at frame ``index``, and who played it.
  topCard(index) {
    for (let i = index; i >= 0; i--) {
      const events = this.frames[i].events ?? [];
      for (let j = events.length - 1; j >= 0; j--) {
        const e = events[j];
        if (e.card_played) return { card: e.card_played.card, seat: num(e.card_played.seat) };
        if (e.four_ninety_nines) return { card: "CARD_99", seat: num(e.four_ninety_nines.seat) };
        if (e.out_of_round?.card) return { card: e.out_of_round.card, seat: num(e.out_of_round.seat) };
        if (e.round_started) return null;   // a new round starts on an empty pile
      }
    }
    return null;
  }
}

// as `arena replay` steps: a frame every half second at 1x, the same speeds
export const SPEEDS = [0.25, 0.5, 1, 2, 5, 10];
const TURN_MS = 500;

// Which frame of a record is shown. ``following``: the newest, as it arrives (a live
// match); otherwise ``cursor``, moved by the controls or by playing at ``speed``.
export class Player {
  constructor(onChange) {
    this.onChange = onChange;
    this.record = null;
    this.cursor = 0;
    this.following = false;
    this.playing = false;
    this.speed = 1;
    this.timer = null;
  }

  // Show ``record``: at ``turn`` if given, else following it if it is live, else at its end.
  load(record, turn = null) {
    this.pause();   // (it draws: the record and cursor it draws are changed together below)
    this.record = record;
    if (turn !== null) {
      this.following = false;
      this.cursor = clamp(turn, 0, record.last);
    } else {
      this.following = !record.over;
      this.cursor = record.last;
    }
    this.onChange();
  }

  // The same match again (a resync): the place in it is kept, unless following.
  reload(record) {
    this.record = record;
    this.cursor = this.following ? record.last : clamp(this.cursor, 0, record.last);
    this.onChange();
  }

  // The record grew (a frame, a verdict, its end).
  grew() {
    if (this.following) this.cursor = this.record.last;
    this.onChange();
  }

  get atLiveEdge() {
    return this.following && !this.record.over;
  }

  // Show frame ``index``; at the newest frame of a live match, follow it again.
  seek(index) {
    if (!this.record) return;
    this.cursor = clamp(index, 0, this.record.last);
    this.following = !this.record.over && this.cursor === this.record.last;
    this.onChange();
  }

  step(delta) {
    this.seek(this.cursor + delta);
  }

  follow() {
    if (!this.record) return;
    this.pause();
    this.following = !this.record.over;
    this.cursor = this.record.last;
    this.onChange();
  }

  toggle() {
    this.playing ? this.pause() : this.play();
  }

  play() {
    if (!this.record) return;
    if (this.cursor >= this.record.last) this.cursor = 0;   // from the start again
    this.following = false;
    this.playing = true;
    this.schedule();
    this.onChange();
  }

  pause() {
    this.playing = false;
    clearTimeout(this.timer);
    this.onChange?.();
  }

  faster(direction) {
    const i = SPEEDS.indexOf(this.speed);
    this.setSpeed(SPEEDS[clamp(i + direction, 0, SPEEDS.length - 1)]);
  }

  setSpeed(speed) {
    this.speed = speed;
    if (this.playing) this.schedule();
    this.onChange();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), TURN_MS / this.speed);
  }

  tick() {
    if (!this.playing) return;
    if (this.cursor < this.record.last) {
      this.cursor += 1;
      this.schedule();
    } else {   // the end of what there is: a live match is followed from here
      this.playing = false;
      this.following = !this.record.over;
    }
    this.onChange();
  }
}

function clamp(value, low, high) {
  return Math.max(low, Math.min(high, value));
}
