#include "convert.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

namespace ono99::detail {

namespace {

template <typename Places>
std::vector<std::vector<int>> ranking_of(const Places& places) {
  std::vector<std::vector<int>> out;
  out.reserve(places.size());
  for (const auto& p : places) out.emplace_back(p.seats().begin(), p.seats().end());
  return out;
}

// VERDICT_KIND_TIMEOUT -> "timeout", as the Python SDK and the arena's results name them.
std::string verdict_name(int kind) {
  const std::string& full = v1::VerdictKind_Name(static_cast<v1::VerdictKind>(kind));
  static const std::string prefix = "VERDICT_KIND_";
  if (full.compare(0, prefix.size(), prefix) != 0) return "unknown";
  std::string out = full.substr(prefix.size());
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Unicode's format characters (category Cf): invisible, and some (U+202E) reorder the text
// after them on a terminal.
bool is_format(std::uint32_t c) {
  static constexpr std::uint32_t kRanges[][2] = {
      {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
      {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},
      {0x200b, 0x200f},   {0x202a, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
      {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
      {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
      {0xe0020, 0xe007f}};
  for (const auto& [first, last] : kRanges) {
    if (c >= first && c <= last) return true;
  }
  return false;
}

// The character at text[i] (UTF-8): its code point and length in bytes; a byte that does
// not start a well-formed sequence is a character of its own, with `valid` false.
struct Decoded {
  std::uint32_t code;
  std::size_t length;
  bool valid;
};

Decoded decode(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1, true};
  const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (length == 0 || lead > 0xf4 || i + length > text.size()) return {lead, 1, false};
  std::uint32_t code = lead & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return {lead, 1, false};
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr std::uint32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kShortest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return {lead, 1, false};  // overlong, beyond Unicode, or a surrogate
  }
  return {code, length, true};
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  std::size_t shown = 0;
  std::size_t i = 0;
  for (; i < text.size() && shown < kMaxShownChars; ++shown) {
    const Decoded c = decode(text, i);
    if (c.valid && c.code >= 0x20 && c.code != 0x7f && !(c.code >= 0x80 && c.code <= 0x9f) &&
        !is_format(c.code)) {
      out.append(text, i, c.length);
    } else {
      char code[12];
      // as Python's and Node's SDKs write it: \xNN, \uNNNN, or \UNNNNNNNN beyond U+FFFF
      std::snprintf(code, sizeof code,
                    c.code > 0xffff ? "\\U%08x" : c.code > 0xff ? "\\u%04x" : "\\x%02x",
                    static_cast<unsigned>(c.code));
      out += code;
    }
    i += c.length;
  }
  std::size_t more = 0;
  for (; i < text.size(); ++more) i += decode(text, i).length;
  if (more > 0) out += "... (" + std::to_string(more) + " more characters)";
  return out;
}

Match to_match(const v1::MatchStart& start) {
  Match m;
  m.match_id = start.match_id();
  m.seat = start.seat();
  m.names.assign(start.seat_names().begin(), start.seat_names().end());
  m.rules.ruleset = start.rules().ruleset();
  for (const auto& [key, value] : start.rules().options()) m.rules.options[key] = value;
  m.rules.seats = start.rules().seats();
  m.rules.limit = start.rules().limit();
  m.move_ms = start.time_control().move_ms();
  m.bank_ms = start.time_control().bank_ms();
  m.bot_seed = start.bot_seed();
  return m;
}

Event to_event(const v1::Event& msg) {
  Event e;
  switch (msg.kind_case()) {
    case v1::Event::kRoundStarted: {
      const auto& x = msg.round_started();
      e.kind = EventKind::Deal;
      e.round = x.round();
      e.dealer = x.dealer();
      e.first = x.first();
      e.total = x.total();
      break;
    }
    case v1::Event::kCardPlayed: {
      const auto& x = msg.card_played();
      e.kind = EventKind::Play;
      e.seat = x.seat();
      e.card = card_of(x.card());
      e.total = x.total();
      break;
    }
    case v1::Event::kFourNinetyNines:
      e.kind = EventKind::Four99;
      e.seat = msg.four_ninety_nines().seat();
      e.total = msg.four_ninety_nines().total();
      break;
    case v1::Event::kCardsDrawn:
      e.kind = EventKind::Draw;
      e.seat = msg.cards_drawn().seat();
      e.count = msg.cards_drawn().count();
      break;
    case v1::Event::kReshuffled:
      e.kind = EventKind::Reshuffle;
      e.draw_size = msg.reshuffled().draw_size();
      break;
    case v1::Event::kSeatLost:
      e.kind = EventKind::Lose;
      e.seat = msg.seat_lost().seat();
      break;
    case v1::Event::kTokenLost:
      e.kind = EventKind::Token;
      e.seat = msg.token_lost().seat();
      e.tokens_left = msg.token_lost().tokens_left();
      break;
    case v1::Event::kOutOfRound:
      e.kind = EventKind::Out;
      e.seat = msg.out_of_round().seat();
      e.card = card_of(msg.out_of_round().card());
      break;
    case v1::Event::kRoundScored:
      e.kind = EventKind::Scores;
      e.scores.assign(msg.round_scored().scores().begin(), msg.round_scored().scores().end());
      break;
    case v1::Event::kSeatEliminated:
      e.kind = EventKind::Eliminate;
      e.seat = msg.seat_eliminated().seat();
      e.hand = cards_of(msg.seat_eliminated().hand());
      break;
    case v1::Event::kSeatForfeited:
      e.kind = EventKind::Forfeit;
      e.seat = msg.seat_forfeited().seat();
      e.together = msg.seat_forfeited().together();
      break;
    case v1::Event::kGameEnded:
      e.kind = EventKind::End;
      e.ranking = ranking_of(msg.game_ended().ranking());
      e.termination = msg.game_ended().termination();
      break;
    case v1::Event::KIND_NOT_SET:
      break;
  }
  return e;
}

View to_view(const v1::TurnRequest& turn, const Match& match) {
  const v1::SeatView& sv = turn.view();
  View v;
  v.turn_id = turn.turn_id();
  v.legal = cards_of(turn.legal());
  v.over_limit = turn.over_limit();
  v.move_ms = turn.move_ms();
  v.bank_ms = turn.bank_ms();
  v.previous_latency_us = turn.previous_latency_us();
  v.seat = sv.seat();
  v.hand = cards_of(sv.hand());
  v.total = sv.total();
  v.direction = sv.direction();
  v.to_act = sv.to_act();
  v.owed = sv.owed();
  v.draw_size = sv.draw_size();
  v.discard_size = sv.discard_size();
  v.seats.reserve(sv.seats_size());
  for (const auto& s : sv.seats()) {
    SeatInfo info;
    info.hand_size = s.hand_size();
    info.in_game = s.in_game();
    info.in_round = s.in_round();
    info.tokens = s.tokens();
    info.score = s.score();
    info.revealed = cards_of(s.revealed());
    v.seats.push_back(std::move(info));
  }
  v.round = sv.round();
  v.dealer = sv.dealer();
  v.match = &match;
  return v;
}

MatchResult to_result(const v1::MatchEnd& end) {
  MatchResult r;
  r.match_id = end.match_id();
  r.ranking = ranking_of(end.ranking());
  r.termination = end.termination();
  for (const auto& v : end.verdicts()) {
    r.verdicts.push_back(Verdict{v.seat(), verdict_name(v.kind()), v.detail(), v.latency_us()});
  }
  for (const auto& h : end.hands()) r.hands[h.seat()] = cards_of(h.cards());
  return r;
}

}  // namespace ono99::detail
