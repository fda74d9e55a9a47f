// The parts of the model that do not touch protobuf (conversions live in convert.cpp).
#include "ono99/model.hpp"

#include <algorithm>

namespace ono99 {

std::string Rules::option(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

std::string_view kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Deal: return "deal";
    case EventKind::Play: return "play";
    case EventKind::Four99: return "four99";
    case EventKind::Draw: return "draw";
    case EventKind::Reshuffle: return "reshuffle";
    case EventKind::Lose: return "lose";
    case EventKind::Token: return "token";
    case EventKind::Out: return "out";
    case EventKind::Scores: return "scores";
    case EventKind::Eliminate: return "eliminate";
    case EventKind::Forfeit: return "forfeit";
    case EventKind::End: return "end";
    case EventKind::Unknown: break;
  }
  return "unknown";
}

std::vector<Card> Match::played(bool this_round) const {
  std::vector<Card> out;
  for (const Event& e : events) {
    switch (e.kind) {
      case EventKind::Deal:
        if (this_round) out.clear();
        break;
      case EventKind::Play:
        out.push_back(e.card);
        break;
      case EventKind::Out:  // a card played past the limit is on the discard pile too
        if (e.card != Card::Unspecified) out.push_back(e.card);
        break;
      case EventKind::Four99:
        out.insert(out.end(), 4, Card::NinetyNine);
        break;
      default:
        break;
    }
  }
  return out;
}

bool View::is_legal(Card card) const {
  return std::find(legal.begin(), legal.end(), card) != legal.end();
}

int View::next_seat(int from) const {
  const int n = static_cast<int>(seats.size());
  int s = from < 0 ? seat : from;
  if (n == 0) return s;
  for (int i = 0; i < n; ++i) {
    s = ((s + direction) % n + n) % n;  // C++'s % keeps the sign: fold back into 0..n-1
    if (seats[s].in_round) return s;
  }
  return s;
}

int MatchResult::place_of(int seat) const {
  if (ranking.empty()) return 0;
  int place = 1;
  for (const auto& group : ranking) {
    if (std::find(group.begin(), group.end(), seat) != group.end()) return place;
    place += static_cast<int>(group.size());
  }
  return place;
}

}  // namespace ono99
