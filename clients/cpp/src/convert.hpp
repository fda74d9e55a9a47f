// Conversions from the referee's protobuf messages to the SDK's plain model.
#pragma once

#include <string>

#include "ono99/model.hpp"
#include "ono99/v1/referee.pb.h"

namespace ono99::detail {

// Card numbers are the protocol's; one this SDK does not know keeps its number (token "?"),
// unless Card cannot hold it (negative, above 255): cast, it would wrap to another card
// (-239 to 99), so it becomes 255, a number no card has.
inline Card card_of(int value) {
  return static_cast<Card>(value >= 0 && value <= 0xff ? value : 0xff);
}

template <typename Repeated>
std::vector<Card> cards_of(const Repeated& values) {
  std::vector<Card> out;
  out.reserve(values.size());
  for (int v : values) out.push_back(card_of(v));
  return out;
}

// The most characters of a referee's string printed: a hostile referee's 1 MiB reasons in
// a loop wrote gigabytes of stderr.
inline constexpr std::size_t kMaxShownChars = 300;

// `text` (a string from the referee, UTF-8) as it may reach the bot author's terminal: a
// character that is not printable (C0 and C1 controls, DEL, Unicode format characters such
// as U+202E, which reorders what follows; a byte that is not UTF-8) as \xNN, \uNNNN above
// 0xff or \UNNNNNNNN above 0xffff, so that no escape sequence spoofs the terminal; cut
// after kMaxShownChars characters, with how many more there were.
std::string printable(const std::string& text);

Match to_match(const v1::MatchStart& start);
Event to_event(const v1::Event& event);
// The view of a turn; `match` must outlive it.
View to_view(const v1::TurnRequest& turn, const Match& match);
MatchResult to_result(const v1::MatchEnd& end);

}  // namespace ono99::detail
