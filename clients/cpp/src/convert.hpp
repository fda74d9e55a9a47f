// Conversions from the referee's protobuf messages to the SDK's plain model.
#pragma once

#include "ono99/model.hpp"
#include "ono99/v1/referee.pb.h"

namespace ono99::detail {

template <typename Repeated>
std::vector<Card> cards_of(const Repeated& values) {
  std::vector<Card> out;
  out.reserve(values.size());
  // Card numbers are the protocol's; one this SDK does not know keeps its number (token "?").
  for (int v : values) out.push_back(static_cast<Card>(v));
  return out;
}

Match to_match(const v1::MatchStart& start);
Event to_event(const v1::Event& event);
// The view of a turn; `match` must outlive it.
View to_view(const v1::TurnRequest& turn, const Match& match);
MatchResult to_result(const v1::MatchEnd& end);

}  // namespace ono99::detail
