// A match drawn at one frame: the seats around the table (names, hands as card backs,
// tokens or scores, clocks, whose turn), the piles, the total against the limit, the
// direction; the log of events beside it; the result, verdicts and every hand at the end.

import { $, el, fill } from "./dom.js";
import {
  frameLines, num, placesOf, resultLine, rulesLine, seconds, status, token, verdictKind,
  verdictLine, who,
} from "./text.js";

const MAX_BACKS = 12;   // card backs drawn for a hand; more are counted

// tokens as marks, as a number past a handful (a shared record may say anything)
const MAX_TOKEN_MARKS = 12;
function tokenMarks(tokens) {
  if (!(tokens > 0)) return "no tokens";
  return tokens <= MAX_TOKEN_MARKS ? "●".repeat(tokens) : `● × ${tokens}`;
}

export function card(tokenText, small = false) {
  const kind = /^\d+$/.test(tokenText) && tokenText !== "99" ? "number" : `special-${tokenText}`;
  return el("span", { class: `card ${kind}${small ? " small" : ""}`, dataset: { card: tokenText } },
            el("span", { class: "face" }, tokenText));
}

export function cardBack(small = true) {
  return el("span", { class: `card back${small ? " small" : ""}` });
}

export class MatchView {
  constructor() {
    this.table = $("#table");
    this.log = new LogView($("#log"));
    this.clocks = null;   // what the clock ticks update, at the live edge only
    this.label = "";      // what the view is, before its title: "TV", "file"
  }

  // An empty table, titled ``title``, until a record comes.
  clear(title) {
    this.clocks = null;
    this.log.show(null, 0);
    this.table.querySelectorAll(".seat").forEach((node) => node.remove());
    $("#centre").replaceChildren();
    fill($("#match-title"), title);
    fill($("#match-meta"));
    $("#match-status").className = "badge";
    fill($("#match-status"));
    $("#result").hidden = true;
    fill($("#verdicts"));
    // the controls of the match shown before (its turn count, its download, "live") go
    // until this one has a frame to draw
    $("#player").hidden = true;
    $("#download").hidden = true;
    $("#permalink").hidden = true;
  }

  // Draw ``player``'s record at its cursor.
  render(player) {
    const record = player.record;
    if (!record || !record.frames.length) return;
    const index = player.cursor;
    const frame = record.frames[index];
    const state = frame.state ?? {};
    const atEnd = index === record.last && record.over;
    this.header(record);
    this.seats(record, frame, state, atEnd, player.atLiveEdge);
    this.centre(record, index, state, atEnd);
    this.log.show(record, index);
    this.controls(player);
    this.result(record, atEnd);
    this.tick();
  }

  header(record) {
    const summary = record.summary;
    fill($("#match-title"), this.label ? el("span", { class: "badge label" }, this.label) : null,
         el("span", { id: "match-names" }, record.names.join(" vs ")));
    const state = record.over ? status(record.over.status) : "live";
    const badge = $("#match-status");
    badge.className = `badge ${state}`;
    fill(badge, state + (record.delayed ? ` (${record.delayed} turns behind)` : ""));
    const tournament = summary.tournament
      ? el("a", { href: `#/tournament/${encodeURIComponent(summary.tournament)}` }, summary.tournament) : null;
    fill($("#match-meta"), rulesLine(summary), " · match ", record.id,
         tournament ? [" · ", tournament] : null);
  }

  seats(record, frame, state, atEnd, live) {
    const seats = state.seats ?? [];
    const n = seats.length;
    const actor = frame.seat ?? -1;
    const toAct = state.to_act ?? 0;
    const hands = atEnd ? handsBySeat(record.over) : null;
    const places = atEnd ? placesOf(record.over.ranking) : null;
    const faults = new Map(record.verdicts.map((v) => [num(v.seat), verdictKind(v.kind)]));
    const scoring = record.summary.rules?.options?.scoring;
    const nodes = [];
    this.clocks = null;
    seats.forEach((seat, i) => {
      const angle = Math.PI / 2 + (2 * Math.PI * i) / n;   // seat 0 at the bottom, clockwise
      const classes = ["seat"];
      if (!seat.in_game) classes.push("out");
      else if (!seat.in_round) classes.push("sitting-out");
      if (i === toAct && !atEnd) classes.push("to-act");
      if (i === actor) classes.push("acted");
      const handSize = num(seat.hand_size);
      const faceUp = hands?.get(i) ?? seat.revealed ?? [];
      const hand = faceUp.length
        ? faceUp.map((c) => card(token(c), true))
        : [...Array(Math.min(handSize, MAX_BACKS))].map(() => cardBack());
      const bank = frame.bank_ms?.[i];
      const bankNode = bank !== undefined ? el("span", { class: "bank" }, `bank ${seconds(num(bank))}`) : null;
      const thinking = i === toAct && live ? el("span", { class: "thinking" }) : null;
      const took = i === actor && frame.latency_us !== undefined
        ? el("span", { class: "took" }, `took ${(num(frame.latency_us) / 1000).toFixed(1)} ms`) : null;
      const node = el("div", {
        class: classes.join(" "), dataset: { seat: i },
        style: `left:${50 + 38 * Math.cos(angle)}%;top:${50 + 38 * Math.sin(angle)}%`,
      },
        el("div", { class: "seat-head" },
          places?.has(i) ? el("span", { class: "place" }, `${places.get(i)}.`) : null,
          el("span", { class: "name" }, who(record.names, i)),
          faults.has(i) ? el("span", { class: "badge fault" }, faults.get(i)) : null,
          i === toAct && num(state.owed) > 1 && !atEnd
            ? el("span", { class: "badge owed" }, `owes ${num(state.owed)}`) : null),
        el("div", { class: "hand" }, hand,
          handSize > MAX_BACKS && !faceUp.length ? el("span", { class: "more" }, `+${handSize - MAX_BACKS}`) : null),
        el("div", { class: "seat-info" },
          el("span", { class: "hand-size" }, `${handSize} card${handSize === 1 ? "" : "s"}`),
          scoring === "tokens" ? el("span", { class: "tokens", title: `${num(seat.tokens)} tokens` },
            tokenMarks(num(seat.tokens))) : null,
          scoring === "points" ? el("span", { class: "score" }, `score ${num(seat.score)}`) : null),
        el("div", { class: "clock" }, bankNode, thinking, took));
      if (thinking) this.clocks = { record, seat: i, bank: bank === undefined ? null : num(bank), thinking, bankNode };
      nodes.push(node);
    });
    this.table.querySelectorAll(".seat").forEach((node) => node.remove());
    this.table.append(...nodes);
  }

  centre(record, index, state, atEnd) {
    const limit = num(record.summary.rules?.limit) || 99;
    const total = num(state.total);
    const top = record.topCard(index);
    const ratio = Math.max(0, Math.min(1, total / limit));
    const level = ratio >= 0.9 ? "danger" : ratio >= 0.7 ? "warn" : "calm";
    const clockwise = num(state.direction) >= 0;
    fill($("#centre"),
      el("div", { class: "piles" },
        el("div", { class: "pile" }, cardBack(false), el("span", { class: "pile-label" }, `draw ${num(state.draw_size)}`)),
        el("div", { class: "pile" }, top ? card(token(top.card)) : el("span", { class: "card empty" }),
          el("span", { class: "pile-label" }, top ? `by ${who(record.names, top.seat)}` : "discard"))),
      el("div", { class: "total-line" },
        el("span", { id: "total", class: "total" }, String(total)),
        el("span", { class: "limit" }, ` / ${limit}`)),
      el("div", { id: "total-bar", class: `bar ${level}`, title: `${total} of ${limit}` },
        el("div", { class: "fill", style: `width:${(ratio * 100).toFixed(1)}%` })),
      el("div", { class: "centre-info" },
        el("span", { id: "direction", title: clockwise ? "clockwise" : "counter-clockwise" },
          clockwise ? "↻ clockwise" : "↺ counter-clockwise"),
        num(state.round) > 1 || record.summary.rules?.ruleset !== "modern"
          ? el("span", {}, `round ${num(state.round)}`) : null,
        num(state.owed) > 1 && !atEnd ? el("span", { class: "badge owed" }, `owes ${num(state.owed)}`) : null));
  }

  controls(player) {
    const record = player.record;
    $("#player").hidden = false;
    const scrubber = $("#scrubber");
    scrubber.max = String(record.last);
    scrubber.value = String(player.cursor);
    fill($("#turn"), `turn ${player.cursor} / ${record.last}`);
    fill($("#play"), player.playing ? "pause" : "play");
    $("#play").title = player.playing ? "pause (space)" : "play (space)";
    $("#speed").value = String(player.speed);
    const live = $("#live");
    live.hidden = !!record.over;
    live.classList.toggle("on", player.atLiveEdge);
    const download = $("#download");
    download.hidden = !record.over || !record.fromServer;
    download.href = `/api/record/${encodeURIComponent(record.id)}`;
    download.setAttribute("download", `${record.id || "match"}.json`);
  }

  result(record, atEnd) {
    const box = $("#result");
    box.hidden = !atEnd;
    if (atEnd) {
      fill(box, el("span", { class: "result-line" }, resultLine(record.over, record.names)));
    }
    fill($("#verdicts"), record.verdicts.map((v) => el("li", {}, verdictLine(v, record.names))));
  }

  // The clock of the seat to act: how long it has been thinking, and its bank as it
  // drains once the move time is spent (a few times a second, at the live edge only).
  tick() {
    const clocks = this.clocks;
    if (!clocks) return;
    const elapsed = performance.now() - clocks.record.turnStarted;
    fill(clocks.thinking, `thinking ${seconds(elapsed)}`);
    if (clocks.bank !== null) {
      const moveMs = num(clocks.record.summary.time_control?.move_ms);
      fill(clocks.bankNode, `bank ${seconds(clocks.bank - Math.max(0, elapsed - moveMs))}`);
    }
  }
}

// Each seat's hand at the end (MatchOver.hands), by seat.
function handsBySeat(over) {
  return new Map((over.hands ?? []).map((hand) => [num(hand.seat), hand.cards ?? []]));
}

// The log beside the table: every frame's lines, built once as frames arrive; a step
// shows or hides only the frames between the old place and the new.
class LogView {
  constructor(node) {
    this.node = node;
    this.record = null;
    this.groups = [];
    this.cursor = -1;
    this.verdicts = 0;
  }

  // Show ``record`` (null: nothing) up to frame ``index``.
  show(record, index) {
    if (record !== this.record || (record && this.groups.length > record.frames.length)) {
      this.record = record;
      this.groups = [];
      this.cursor = -1;
      this.verdicts = 0;
      this.node.replaceChildren();
    }
    if (!record) return;
    for (let i = this.groups.length; i < record.frames.length; i++) {
      const lines = frameLines(record.frames[i], record.names);
      const group = el("div", { class: "frame-lines", dataset: { seq: i }, hidden: i > index },
        lines.map((line) => el("div", { class: line.bad ? "line bad" : "line" }, line.text)));
      group.addEventListener("click", () => this.onPick?.(i));
      this.groups.push(group);
      this.node.append(group);
    }
    for (; this.verdicts < record.verdicts.length; this.verdicts++) {   // live: where they came
      const v = record.verdicts[this.verdicts];
      this.groups.at(-1)?.append(el("div", { class: "line bad verdict" }, verdictLine(v, record.names)));
    }
    const [low, high] = [Math.min(this.cursor, index), Math.max(this.cursor, index)];
    for (let i = Math.max(0, low); i <= high && i < this.groups.length; i++) {
      this.groups[i].hidden = i > index;
      this.groups[i].classList.toggle("current", i === index);
    }
    this.groups[this.cursor]?.classList.toggle("current", this.cursor === index);
    this.cursor = index;
    this.reveal(this.groups[index]);
  }

  // Scroll the log (not the page) so that ``group`` is in sight.
  reveal(group) {
    if (!group) return;
    const node = this.node;
    const top = group.offsetTop;
    const bottom = top + group.offsetHeight;
    if (bottom > node.scrollTop + node.clientHeight) node.scrollTop = bottom - node.clientHeight;
    if (top < node.scrollTop) node.scrollTop = top;
  }
}
