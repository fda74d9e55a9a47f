#include "driver.hpp"

#include <algorithm>
#include <iostream>

#include "convert.hpp"

namespace ono99::detail {

v1::BotMessage Driver::hello(const std::string& token, const std::string& name,
                             const std::string& sdk, const std::string& resume_key) {
  welcome_.reset();
  refusal_.reset();
  finished_ = false;
  v1::BotMessage msg;
  v1::Hello* h = msg.mutable_hello();
  h->set_name(name.empty() ? bot_.name() : name);
  h->set_token(token);
  h->set_protocol_version(kProtocolVersion);
  h->set_sdk(sdk);
  h->set_resume_key(resume_key);
  return msg;
}

bool Driver::handle(const v1::RefereeMessage& msg, v1::BotMessage* answer) {
  switch (msg.kind_case()) {
    case v1::RefereeMessage::kTurn:
      turn(msg.turn(), answer);
      return true;
    case v1::RefereeMessage::kEvents:
      events(msg.events().match_id(), msg.events().events());
      return false;
    case v1::RefereeMessage::kRejected:
      return rejected(msg.rejected(), answer);
    case v1::RefereeMessage::kMatchStart: {
      const v1::MatchStart& start = msg.match_start();
      if (auto it = matches_.find(start.match_id()); it != matches_.end()) {
        // we reconnected mid-match: the same match goes on, told again from its start
        replayed_[start.match_id()] = it->second->events.size();
        return false;
      }
      auto& slot = matches_[start.match_id()];
      slot = std::make_unique<Match>(to_match(start));
      bot_.random.seed(start.bot_seed());
      bot_.on_match_start(*slot);
      return false;
    }
    case v1::RefereeMessage::kMatchEnd: {
      const v1::MatchEnd& end = msg.match_end();
      events(end.match_id(), end.events());
      std::unique_ptr<Match> match;
      if (auto it = matches_.find(end.match_id()); it != matches_.end()) {
        match = std::move(it->second);
        matches_.erase(it);
      }
      replayed_.erase(end.match_id());
      open_turn_.reset();  // its View points into the match about to go
      bot_.on_match_end(to_result(end), match.get());
      return false;
    }
    case v1::RefereeMessage::kWelcome:
      welcome_ = msg.welcome();
      return false;
    case v1::RefereeMessage::kRefusal:
      refusal_ = msg.refusal();
      finished_ = true;
      return false;
    case v1::RefereeMessage::kGoodbye:
      finished_ = true;
      return false;
    case v1::RefereeMessage::KIND_NOT_SET:  // a newer referee's message: nothing to do
      return false;
  }
  return false;
}

Match* Driver::events(const std::string& match_id,
                      const google::protobuf::RepeatedPtrField<v1::Event>& events) {
  auto it = matches_.find(match_id);
  if (it == matches_.end()) return nullptr;
  Match& match = *it->second;
  int first = 0;
  if (auto seen = replayed_.find(match_id); seen != replayed_.end()) {  // may span messages
    const std::size_t skip = std::min<std::size_t>(seen->second, events.size());
    seen->second -= skip;
    if (seen->second == 0) replayed_.erase(seen);
    first = static_cast<int>(skip);
  }
  for (int i = first; i < events.size(); ++i) {
    match.events.push_back(to_event(events[i]));
    bot_.on_event(match.events.back(), match);
  }
  return &match;
}

void Driver::turn(const v1::TurnRequest& turn, v1::BotMessage* answer) {
  Match* match = events(turn.match_id(), turn.events());
  if (match == nullptr) {  // a turn of a match we were never told of: answer anyway
    auto m = std::make_unique<Match>();
    m->match_id = turn.match_id();
    m->seat = turn.view().seat();
    m->rules.seats = turn.view().seats_size();
    m->move_ms = turn.move_ms();
    m->bank_ms = turn.bank_ms();
    match = m.get();
    matches_[turn.match_id()] = std::move(m);
  }
  open_turn_.reset();
  open_turn_.emplace(OpenTurn{to_view(turn, *match), {}});
  const Card card = bot_.choose(open_turn_->view);
  open_turn_->tried.insert(card);
  action(turn.turn_id(), card, answer);
}

bool Driver::rejected(const v1::ActionRejected& rejected, v1::BotMessage* answer) {
  std::cerr << "warning: action rejected (" << v1::ErrorCode_Name(rejected.code())
            << "): " << rejected.reason() << '\n';
  if (!open_turn_ || open_turn_->view.turn_id != rejected.turn_id()) return false;
  // Only a refusal of the card sent may be cured by another card (MALFORMED: no card or an
  // unknown one; the turn id was the open turn's). NOT_YOUR_TURN and STALE_TURN refuse any
  // card alike, and each refusal counts against the bot (too many in a match: an ILLEGAL
  // verdict), so no card is sent again after them, nor after a code this SDK does not know.
  switch (rejected.code()) {
    case v1::ERROR_CODE_NOT_IN_HAND:
    case v1::ERROR_CODE_ILLEGAL_PLAY:
    case v1::ERROR_CODE_MALFORMED:
      break;
    default:
      return false;
  }
  std::optional<Card> card = bot_.on_rejected(open_turn_->view, rejected.reason(), open_turn_->tried);
  if (!card) return false;
  open_turn_->tried.insert(*card);
  action(rejected.turn_id(), *card, answer);
  return true;
}

void Driver::action(std::uint64_t turn_id, Card card, v1::BotMessage* answer) {
  if (card == Card::Unspecified) {
    std::cerr << "error: the bot chose Card::Unspecified, which is not a card\n";
  }
  answer->Clear();
  v1::Action* a = answer->mutable_action();
  a->set_turn_id(turn_id);  // the referee's 64-bit id, unchanged
  a->set_card(static_cast<v1::Card>(card));
}

}  // namespace ono99::detail
