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
  ++messages_;
  switch (msg.kind_case()) {
    case v1::RefereeMessage::kTurn:
      return turn(msg.turn(), answer);
    case v1::RefereeMessage::kEvents:
      events(msg.events().match_id(), msg.events().events());
      return false;
    case v1::RefereeMessage::kRejected:
      return rejected(msg.rejected(), answer);
    case v1::RefereeMessage::kMatchStart: {
      const v1::MatchStart& start = msg.match_start();
      if (auto it = matches_.find(start.match_id()); it != matches_.end()) {
        // we reconnected mid-match: the same match goes on, told again from its start
        it->second.heard = messages_;
        replayed_[start.match_id()] = it->second.match->events.size();
        return false;
      }
      Match& match = open(start.match_id(), std::make_unique<Match>(to_match(start)));
      bot_.random.seed(start.bot_seed());
      bot_.on_match_start(match);
      return false;
    }
    case v1::RefereeMessage::kMatchEnd: {
      const v1::MatchEnd& end = msg.match_end();
      events(end.match_id(), end.events());
      std::unique_ptr<Match> match;
      if (auto it = matches_.find(end.match_id()); it != matches_.end()) {
        match = std::move(it->second.match);
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

Match& Driver::open(const std::string& match_id, std::unique_ptr<Match> match) {
  if (matches_.size() >= kMaxOpenMatches) {
    const auto oldest = std::min_element(
        matches_.begin(), matches_.end(),
        [](const auto& a, const auto& b) { return a.second.heard < b.second.heard; });
    if (open_turn_ && open_turn_->view.match == oldest->second.match.get()) {
      open_turn_.reset();  // its View points into the match about to go
    }
    replayed_.erase(oldest->first);
    matches_.erase(oldest);
  }
  OpenMatch& slot = matches_[match_id];
  slot = OpenMatch{std::move(match), messages_};
  return *slot.match;
}

Match* Driver::events(const std::string& match_id,
                      const google::protobuf::RepeatedPtrField<v1::Event>& events) {
  auto it = matches_.find(match_id);
  if (it == matches_.end()) return nullptr;
  it->second.heard = messages_;
  Match& match = *it->second.match;
  auto seen = replayed_.find(match_id);  // a replay may span messages
  const std::size_t skip =
      seen == replayed_.end() ? 0 : std::min<std::size_t>(seen->second, events.size());
  if (match.events.size() + (events.size() - skip) > kMaxMatchEvents) {
    throw ProtocolError("the referee sent more than " + std::to_string(kMaxMatchEvents) +
                        " events for match " + printable(match_id));
  }
  if (skip > 0) {
    seen->second -= skip;
    if (seen->second == 0) replayed_.erase(seen);
  }
  const int first = static_cast<int>(skip);
  for (int i = first; i < events.size(); ++i) {
    match.events.push_back(to_event(events[i]));
    bot_.on_event(match.events.back(), match);
  }
  return &match;
}

bool Driver::turn(const v1::TurnRequest& turn, v1::BotMessage* answer) {
  Match* match = events(turn.match_id(), turn.events());
  open_turn_.reset();
  // No card can answer these, and a bot's choose would crash on them (legal.front(),
  // seats[seat]): a referee that sends one gets no answer, and the bot plays on.
  const v1::SeatView& view = turn.view();
  if (turn.legal().empty() || view.seat() < 0 || view.seat() >= view.seats_size()) {
    std::cerr << "warning: the referee's turn " << turn.turn_id() << " of match "
              << printable(turn.match_id())
              << (turn.legal().empty() ? " offers no legal card"
                                       : " puts the bot at seat " + std::to_string(view.seat()) +
                                             " of " + std::to_string(view.seats_size()))
              << "; not answered\n";
    return false;
  }
  if (match == nullptr) {  // a turn of a match we were never told of: answer anyway
    auto m = std::make_unique<Match>();
    m->match_id = turn.match_id();
    m->seat = turn.view().seat();
    m->rules.seats = turn.view().seats_size();
    m->move_ms = turn.move_ms();
    m->bank_ms = turn.bank_ms();
    match = &open(turn.match_id(), std::move(m));
  }
  open_turn_.emplace(OpenTurn{to_view(turn, *match), {}});
  const Card card = bot_.choose(open_turn_->view);
  open_turn_->tried.insert(card);
  action(turn.turn_id(), card, answer);
  return true;
}

bool Driver::rejected(const v1::ActionRejected& rejected, v1::BotMessage* answer) {
  // A rejection of no turn the bot has open says nothing the bot author can act on, and a
  // referee that sent them in a loop filled the disk with stderr: the verbose log has them.
  if (!open_turn_ || open_turn_->view.turn_id != rejected.turn_id()) return false;
  std::cerr << "warning: action rejected (" << v1::ErrorCode_Name(rejected.code())
            << "): " << printable(rejected.reason()) << '\n';
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
