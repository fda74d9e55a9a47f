// The page: which view the address asks for, and the streams behind it.
//
//   #/                          the live and recent matches (refreshed every few seconds)
//   #/?tournament=NAME          ... of one tournament ("ladder": the server's ladder)
//   #/match/ID                  a match: live, followed; finished, a replay at its end
//   #/match/ID?turn=17          ... at turn 17 (frame 17: 0 is the deal)
//   #/tv                        TV: the most interesting live match, then the next
//   #/tournament[/NAME]         a tournament's (the running one's) standings, crosstable, matches
//   #/file                      a record opened from a file
// Any of them with &embed=1 (or ?embed=1) shows the view alone, for an iframe; with
// &delay=N, a live match is shown N turns behind.

import { $, el, fill, printable } from "./dom.js";
import { Feed } from "./feed.js";
import { MatchRecord, Player, SPEEDS } from "./match.js";
import { TournamentView, renderMatches } from "./lists.js";
import { MatchView } from "./table.js";

const LIST_EVERY_MS = 3000;

const view = new MatchView();
const player = new Player(() => {
  view.render(player);
  keepTurnInAddress();
});
view.log.onPick = (index) => player.seek(index);

let route = null;        // the parsed address
let feed = null;         // the stream of the view shown
let listTimer = null;
let fileRecord = null;   // the record last opened from a file

// a link's part as its text (a malformed escape, as in "%E0%A4%A", is left as it is)
function decodedOrAsIs(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

// A delay the service takes: whole turns, at most MAX_DELAY_TURNS (arena.watch.hub); 1.5
// is 1, and what is no number of turns is none. Refused, the page tried again for good.
const MAX_DELAY_TURNS = 100_000;

function wholeTurns(text) {
  const turns = Math.floor(Number(text ?? 0));
  return Number.isFinite(turns) && turns > 0 ? Math.min(turns, MAX_DELAY_TURNS) : 0;
}

function parseRoute() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean).map(decodedOrAsIs);
  const turn = params.get("turn");
  return {
    view: parts[0] ?? "list",
    id: parts.slice(1).join("/"),
    turn: turn === null || turn === "" || isNaN(turn) ? null : Number(turn),
    embed: params.get("embed") === "1" || new URLSearchParams(location.search).get("embed") === "1",
    delay: wholeTurns(params.get("delay")),
    tournament: params.get("tournament") ?? "",
  };
}

function show(section) {
  for (const id of ["list-view", "match-view", "tournament-view"]) $(`#${id}`).hidden = id !== section;
  document.querySelectorAll("nav a[data-view]").forEach((a) =>
    a.classList.toggle("here", a.dataset.view === route.view));
}

function trouble(text) {
  const box = $("#status");
  box.hidden = !text;
  fill(box, text ?? "");
}

// A file that could not be opened: its own line, until the page goes elsewhere or another
// file opens (the stream's and the list's status lines come and go every few seconds,
// and took this one with them).
function fileTrouble(text) {
  const box = $("#file-status");
  box.hidden = !text;
  fill(box, text ?? "");
}

function stopAll() {
  feed?.stop();
  feed = null;
  clearTimeout(listTimer);
  player.record = null;
  player.pause();
}

function navigate() {
  stopAll();
  trouble(null);
  fileTrouble(null);
  route = parseRoute();
  document.body.classList.toggle("embed", route.embed);
  if (route.view === "match" && route.id) openMatch(route.id, route.turn, route.delay);
  else if (route.view === "tv") openTV(route.tournament, route.delay);
  else if (route.view === "tournament") openTournament(route.id);
  else if (route.view === "file" && fileRecord) openFile(fileRecord);
  else openList(route.tournament);
}

// ---------------------------------------------------------------- the match list

function openList(tournament) {
  show("list-view");
  document.title = "ONO 99 Arena: matches";
  fill($("#list-title"), tournament ? `Live and recent matches of ${tournament}` : "Live and recent matches");
  const query = tournament ? `?tournament=${encodeURIComponent(tournament)}` : "";
  const shown = route;   // refreshed while the page still shows this list, and only then
  const refresh = async () => {
    try {
      const answer = await fetch(`/api/matches${query}`).catch(() => {
        throw new Error("the web viewer does not answer");
      });
      const body = await answer.json().catch(() => ({}));
      if (!answer.ok) throw new Error(body.error ?? `the web viewer answered ${answer.status}`);
      const matches = body.matches ?? [];
      renderMatches($("#matches"), matches);
      $("#no-matches").hidden = matches.length > 0;
      trouble(null);
    } catch (error) {
      trouble(`${error.message}; trying again every ${LIST_EVERY_MS / 1000} s`);
    }
    if (route === shown) listTimer = setTimeout(refresh, LIST_EVERY_MS);
  };
  refresh();
}

// ---------------------------------------------------------------- a match, TV

// A stream of match feed messages. ``endsWithMatch``: it ends when its match does (a
// match's; TV's goes on to the next). ``title``: the heading once the stream has said,
// before any snapshot, that it will not come (an unknown match), in place of
// "connecting…".
function matchFeed(path, endsWithMatch, onSnapshot, title = null) {
  let record = null;
  feed = new Feed(path, {
    onTrouble: (text, retry) => {
      trouble(text);
      if (text && retry === false && !record && title !== null) fill($("#match-title"), title);
    },
    onMessage: (message) => {
      if (message.snapshot) {
        const before = record;
        record = new MatchRecord(message.snapshot, true);   // what follows applies to it
        onSnapshot(record, before);
        if (record.over && endsWithMatch) feed.finish();
      } else if (record && record.apply(message)) {
        if (message.over && endsWithMatch) feed.finish();
        player.grew();
      }
    },
  });
}

function openMatch(id, turn, delay) {
  show("match-view");
  view.label = "";
  document.title = printable(`ONO 99 Arena: match ${id}`);
  view.clear(`match ${id}: connecting…`);
  let first = true;
  matchFeed(`/ws/match/${encodeURIComponent(id)}${delay ? `?delay=${delay}` : ""}`, true, (record) => {
    if (first) player.load(record, turn);   // the first snapshot: where the address says
    else player.reload(record);             // a resync: where the viewer was
    first = false;
  }, `match ${id}`);
}

function openTV(tournament, delay) {
  show("match-view");
  view.label = "TV";
  document.title = "ONO 99 Arena: TV";
  const query = new URLSearchParams();
  if (tournament) query.set("tournament", tournament);
  if (delay) query.set("delay", delay);
  view.clear("TV: waiting for a live match…");
  matchFeed(`/ws/tv?${query}`, false, (record, before) => {
    if (before && before.id === record.id) player.reload(record);
    else player.load(record);   // TV switched: follow the new match
  });
}

function openFile(record) {
  show("match-view");
  view.label = "file";
  view.clear("");
  document.title = printable(`ONO 99 Arena: ${record.names.join(" vs ")} (file)`);
  player.load(record, route.turn);
}

// The address of a replay says where it is: a copied link opens at that turn.
function keepTurnInAddress() {
  const record = player.record;
  const link = $("#permalink");
  link.hidden = !record?.fromServer;
  if (!record?.fromServer) return;
  const query = new URLSearchParams(route.view === "match" ? location.hash.split("?")[1] ?? "" : "");
  if (player.following) query.delete("turn");
  else query.set("turn", String(player.cursor));
  const rest = query.toString();
  const address = `#/match/${encodeURIComponent(record.id)}${rest ? `?${rest}` : ""}`;
  link.href = address;
  fill(link, player.following ? "link to this match" : `link to turn ${player.cursor}`);
  if (route.view === "match" && route.id === record.id && location.hash !== address) {
    history.replaceState(null, "", address);
  }
}

// ---------------------------------------------------------------- a tournament

function openTournament(name) {
  show("tournament-view");
  document.title = printable(`ONO 99 Arena: ${name || "tournament"}`);
  const tournament = new TournamentView();
  fill($("#tournament-title"), name || "waiting for a tournament…");
  feed = new Feed(`/ws/tournament${name ? `?name=${encodeURIComponent(name)}` : ""}`, {
    onTrouble: (text) => trouble(text),
    onMessage: (message) => {
      tournament.apply(message);
      if (message.over) feed.finish();
    },
  });
}

// ---------------------------------------------------------------- files

async function readFile(file) {
  const text = await file.text();
  let snapshot = null;
  try {
    const data = JSON.parse(text);
    if (data && Array.isArray(data.frames)) snapshot = data;   // a record, as downloaded
  } catch {
    // not one JSON object: an event log, which the viewer replays from its seed
  }
  if (!snapshot) {
    const answer = await fetch(`/api/record?name=${encodeURIComponent(file.name)}`,
                               { method: "POST", body: text, headers: { "X-Ono99-Upload": "1" } });
    snapshot = await answer.json();
    if (!answer.ok) throw new Error(snapshot.error ?? answer.statusText);
  }
  const record = new MatchRecord(snapshot);
  if (!record.frames.length) throw new Error(`${file.name} holds no frames to replay`);
  return record;
}

$("#open-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (!file) return;
  try {
    fileRecord = await readFile(file);
    if (location.hash === "#/file") navigate();
    else location.hash = "#/file";
  } catch (error) {
    fileTrouble(`cannot open ${file.name}: ${error.message}`);
  }
  event.target.value = "";
});

// ---------------------------------------------------------------- controls and keys

fill($("#speed"), SPEEDS.map((s) => el("option", { value: String(s) }, `${s}x`)));
$("#speed").value = "1";
$("#speed").addEventListener("change", (event) => player.setSpeed(Number(event.target.value)));
$("#first").addEventListener("click", () => player.seek(0));
$("#back").addEventListener("click", () => player.step(-1));
$("#play").addEventListener("click", () => player.toggle());
$("#forward").addEventListener("click", () => player.step(1));
$("#last").addEventListener("click", () => player.follow());
$("#live").addEventListener("click", () => player.follow());
$("#scrubber").addEventListener("input", (event) => {
  const index = Number(event.target.value);   // read before a redraw puts the old one back
  player.pause();
  player.seek(index);
});

const KEYS = {
  " ": () => player.toggle(),
  ArrowLeft: () => player.step(-1),
  ArrowRight: () => player.step(1),
  Home: () => player.seek(0),
  End: () => player.follow(),
  "+": () => player.faster(1),
  "=": () => player.faster(1),
  "-": () => player.faster(-1),
};

document.addEventListener("keydown", (event) => {
  if ($("#match-view").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.matches("select, input:not([type=range]), textarea")) return;
  const action = KEYS[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});

setInterval(() => view.tick(), 100);
window.addEventListener("hashchange", navigate);
navigate();
