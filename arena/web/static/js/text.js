// What the page says: card tokens, event lines, results. Lines are worded as the
// terminal's (`arena match`'s live log, arena.rules.events.describe_event), so a line
// seen in a browser reads as the one in a log.
//
// Messages come as protobuf JSON with the proto's field names: a field at its default
// (0, false, "") is absent, and 64-bit numbers are strings; num() reads both.

export const num = (value) => Number(value ?? 0);

const SPECIAL = {
  CARD_MINUS_TEN: "-10", CARD_REVERSE: "R", CARD_PLAY_TWO: "P2", CARD_DOUBLE_PLAY: "DP",
  CARD_HOLD: "H", CARD_99: "99",
};

// "CARD_7" -> "7", "CARD_PLAY_TWO" -> "P2".
export function token(card) {
  return SPECIAL[card] ?? String(card ?? "").replace(/^CARD_/, "");
}

export function describeRanking(ranking, names) {
  return (ranking ?? []).map((place) => (place.seats ?? []).map((s) => who(names, s)).join("=")).join(" > ");
}

export function who(names, seat) {
  return names?.[seat] ?? `seat ${seat}`;
}

// The lines of one frame: [{text, bad}], draws left out (the hand sizes show them). The
// decision's time, as the referee measured it, follows the card its seat played.
export function frameLines(frame, names) {
  const lines = [];
  const actor = frame.seat ?? 0;
  for (const event of frame.events ?? []) {
    const [kind, e] = Object.entries(event)[0] ?? [];
    const seat = num(e?.seat);
    const name = who(names, seat);
    switch (kind) {
      case "card_played": {
        const took = frame.latency_us !== undefined && seat === actor
          ? `  ${(num(frame.latency_us) / 1000).toFixed(1)} ms` : "";
        lines.push({ text: `${name} plays ${token(e.card)} -> ${num(e.total)}${took}` });
        break;
      }
      case "round_started":
        lines.push({ text: `round ${num(e.round)}: ${who(names, num(e.dealer))} deals, ` +
                           `${who(names, num(e.first))} acts first (total ${num(e.total)})` });
        break;
      case "four_ninety_nines":
        lines.push({ text: `${name} plays four 99s together (total ${num(e.total)})` });
        break;
      case "reshuffled":
        lines.push({ text: `discards reshuffled into a draw pile of ${num(e.draw_size)}` });
        break;
      case "seat_lost":
        lines.push({ text: `${name} has no playable card and loses`, bad: true });
        break;
      case "token_lost":
        lines.push({ text: `${name} gives up a token (${num(e.tokens_left)} left)` });
        break;
      case "out_of_round":
        lines.push({ text: `${name} is out of the round ` + (e.card && e.card !== "CARD_UNSPECIFIED"
          ? `after playing ${token(e.card)} past the limit` : "without playing") });
        break;
      case "round_scored":
        lines.push({ text: "scores: " + (e.scores ?? []).map(num).join(" ") });
        break;
      case "seat_eliminated": {
        const shown = (e.hand ?? []).length ? " showing " + e.hand.map(token).join(" ") : "";
        lines.push({ text: `${name} is eliminated${shown}`, bad: true });
        break;
      }
      case "seat_forfeited":
        lines.push({ text: `${name} forfeits`, bad: true });
        break;
      case "game_ended":
        lines.push({ text: `game over (${e.termination}): ${describeRanking(e.ranking, names)}` });
        break;
      default:   // cards_drawn, and kinds this page does not know yet
        break;
    }
  }
  return lines;
}

export function verdictKind(kind) {
  return String(kind ?? "").replace(/^VERDICT_KIND_/, "").toLowerCase();
}

export function verdictLine(verdict, names) {
  return `verdict ${who(names, num(verdict.seat))}: ${verdictKind(verdict.kind)} (${verdict.detail ?? ""})`;
}

export function status(value) {
  return String(value ?? "MATCH_STATUS_LIVE").replace(/^MATCH_STATUS_/, "").toLowerCase();
}

// Each seat's place (a Map), 1 the best: tied seats share the best place of their group,
// and the next group's place counts them (1, 2, 2, 4), as arena.rules.game.places_of.
export function placesOf(ranking) {
  const places = new Map();
  let place = 1;
  for (const group of ranking ?? []) {
    for (const seat of group.seats ?? []) places.set(seat, place);
    place += (group.seats ?? []).length;
  }
  return places;
}

// "1. alice   2. bob = carol   [last_standing, 42 turns, 0.31 s]", as `arena match` ends a game.
export function resultLine(over, names) {
  const places = placesOf(over.ranking);
  const groups = (over.ranking ?? []).map((group) =>
    `${places.get(group.seats?.[0])}. ` + (group.seats ?? []).map((s) => who(names, s)).join(" = "));
  if (!groups.length) return `${status(over.status)} after ${num(over.turns)} turns`;
  return `${groups.join("   ")}   [${over.termination}, ${num(over.turns)} turns, ` +
         `${num(over.duration_s).toFixed(2)} s]`;
}

// "classic (tokens), 3 seats; 1 s/move + 10 s bank".
export function rulesLine(summary) {
  const rules = summary.rules ?? {};
  const tc = summary.time_control ?? {};
  const scoring = rules.options?.scoring ? ` (${rules.options.scoring})` : "";
  return `${rules.ruleset ?? "modern"}${scoring}, ${num(rules.seats)} seats; ` +
         `${num(tc.move_ms) / 1000} s/move + ${num(tc.bank_ms) / 1000} s bank`;
}

export function seconds(ms) {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

export function clockTime(epochSeconds) {
  if (!epochSeconds) return "";
  return new Date(epochSeconds * 1000).toLocaleTimeString();
}
