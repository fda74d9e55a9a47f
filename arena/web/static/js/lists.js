// The lists of the page: the matches (live, then recent), and a tournament's standings,
// crosstable and matches.

import { $, el, fill } from "./dom.js";
import { clockTime, describeRanking, num, status } from "./text.js";

function matchLink(summary, text) {
  return el("a", { href: `#/match/${encodeURIComponent(summary.match_id)}` }, text);
}

// A table of match summaries: its head and rows. ``full``: with each match's tournament,
// rules and start (a tournament's own list leaves them out).
export function renderMatches(table, matches, full = true) {
  const heads = full ? ["", "players", "tournament", "rules", "turns", "started", "result"]
                     : ["", "players", "turns", "result"];
  fill(table.tHead, el("tr", {}, heads.map((h) => el("th", {}, h))));
  fill(table.tBodies[0], matches.map((m) => {
    const state = status(m.status);
    const names = m.names ?? [];
    const tournament = m.tournament
      ? el("a", { href: `#/tournament/${encodeURIComponent(m.tournament)}` }, m.tournament) : "";
    return el("tr", { class: state, dataset: { match: m.match_id } },
      el("td", {}, el("span", { class: `badge ${state}` }, state === "live" ? "● live" : state)),
      el("td", { class: "name" }, matchLink(m, names.join(" vs "))),
      full ? el("td", { class: "name" }, tournament) : null,
      full ? el("td", {}, `${m.rules?.ruleset ?? "modern"}, ${num(m.rules?.seats)} seats`) : null,
      el("td", { class: "number" }, String(num(m.turns))),
      full ? el("td", {}, clockTime(m.started_at)) : null,
      el("td", { class: "name" }, m.ranking?.length ? `${describeRanking(m.ranking, names)} (${m.termination})` : ""));
  }));
}

// The finished matches a tournament's page keeps (and shows), newest first, beside the
// live ones: a ladder's page kept every match it heard of, and slowed as it grew (900
// after a minute at 40 matches a second, each message filtering all of them).
export const FINISHED_KEPT = 50;

// A tournament as its stream tells it; ``apply`` takes each message.
export class TournamentView {
  constructor() {
    this.snapshot = null;
    this.drawing = false;
  }

  apply(message) {
    if (message.snapshot || message.over) {
      this.snapshot = message.snapshot ?? message.over;
      if (message.over) this.snapshot.finished = true;
    } else if (!this.snapshot) {
      return;
    } else if (message.started || message.finished) {
      const news = message.started ?? message.finished;
      if (message.finished) this.snapshot.done = num(this.snapshot.done) + 1;
      const others = (this.snapshot.matches ?? []).filter((m) => m.match_id !== news.match_id);
      const all = [news, ...others];   // live ones first, then the newest finished
      this.snapshot.matches = [...all.filter((m) => status(m.status) === "live"),
                               ...all.filter((m) => status(m.status) !== "live").slice(0, FINISHED_KEPT)];
    } else if (message.standings) {
      this.snapshot.standings = message.standings;
    }
    // A tournament may finish hundreds of matches a second: drawn once a frame at most.
    if (!this.drawing) {
      this.drawing = true;
      requestAnimationFrame(() => {
        this.drawing = false;
        this.render();
      });
    }
  }

  render() {
    const t = this.snapshot;
    const total = num(t.total);
    const done = num(t.done);
    fill($("#tournament-title"), t.name ?? "", t.finished ? el("span", { class: "badge finished" }, "finished") : null);
    $("#progress .fill").style.width = total ? `${(100 * done / total).toFixed(1)}%` : "100%";
    fill($("#progress-text"), total ? `${done} of ${total} matches` : `${done} matches (the ladder never ends)`);
    const standings = t.standings ?? {};
    const rows = standings.rows ?? [];
    // a ladder's rows may be marked "provisional", "absent" or "removed" (rank 0: not ranked)
    const marked = rows.some((r) => r.mark);
    fill($("#standings thead"), el("tr", {},
      ["rank", "bot", "Elo", "±95%", "matches", "wins", "avg place", "faults", ...(marked ? ["mark"] : [])]
        .map((h) => el("th", {}, h))));
    fill($("#standings tbody"), rows.map((r) => el("tr", { dataset: { bot: r.bot } },
      el("td", { class: "number" }, num(r.rank) ? String(num(r.rank)) : "-"),
      el("td", { class: "name" }, r.bot),
      el("td", { class: "number" }, num(r.elo).toFixed(0)),
      el("td", { class: "number" }, num(r.ci95).toFixed(0)),
      el("td", { class: "number" }, String(num(r.matches))),
      el("td", { class: "number" }, String(num(r.wins))),
      el("td", { class: "number" }, num(r.matches) ? num(r.average_place).toFixed(2) : "-"),
      el("td", {}, Object.entries(r.faults ?? {}).map(([k, n]) => `${n} ${k}`).join(", ") || "0"),
      marked ? el("td", {}, r.mark ?? "") : null)));
    // the server sends the crosstable for fields of up to 32 bots (hub.CROSSTABLE_BOTS)
    const shown = (standings.crosstable ?? []).length > 0 || rows.length < 2;
    const note = $("#crosstable-note");
    note.hidden = shown;
    note.textContent = shown ? "" : `${rows.length} bots: the crosstable is shown for up to 32.`;
    const bots = shown ? rows.map((r) => r.bot) : [];
    const cells = new Map((standings.crosstable ?? []).map((row) =>
      [row.bot, new Map((row.cells ?? []).map((c) => [c.opponent, c]))]));
    fill($("#crosstable thead"), el("tr", {}, el("th", {}, "ahead–behind (–level)"), bots.map((b) => el("th", { class: "name" }, b))));
    fill($("#crosstable tbody"), bots.map((bot) => el("tr", {}, el("th", { class: "name" }, bot), bots.map((other) => {
      const c = cells.get(bot)?.get(other);
      if (bot === other || !c) return el("td", { class: "number self" }, "");
      const level = num(c.level) ? `–${num(c.level)}` : "";
      return el("td", { class: "number", title: `${bot} ahead of ${other} ${num(c.ahead)} times, behind ${num(c.behind)}, level ${num(c.level)}` },
                `${num(c.ahead)}–${num(c.behind)}${level}`);
    }))));
    renderMatches($("#tournament-matches"), (t.matches ?? []).slice(0, FINISHED_KEPT), false);
    $("#all-matches").href = `#/?tournament=${encodeURIComponent(t.name ?? "")}`;
  }
}
