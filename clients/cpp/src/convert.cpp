#include "convert.hpp"

#include <cctype>

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

}  // namespace

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
      e.card = static_cast<Card>(x.card());
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
      e.card = static_cast<Card>(msg.out_of_round().card());
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
