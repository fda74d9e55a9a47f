// The bot's side of the protocol, independent of the transport (as the Python SDK's
// ono99.bot.driver): it takes each message the referee sends and gives the answer to send
// back, if any. The gRPC client (client.cpp) and the unit tests drive a bot through it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "ono99/bot.hpp"
#include "ono99/v1/referee.pb.h"

namespace ono99::detail {

inline constexpr int kProtocolVersion = 1;

class Driver {
 public:
  explicit Driver(Bot& bot) : bot_(bot) {}

  // The first message of a session; an empty name sends the bot's own. A session after a
  // reconnection starts afresh (no welcome, refusal or goodbye yet) and keeps the matches;
  // its hello carries `resume_key`, the one the broken session was welcomed with, which
  // lets it replace that session even if the referee has not noticed it is gone.
  v1::BotMessage hello(const std::string& token, const std::string& name,
                       const std::string& sdk, const std::string& resume_key = "");

  // Feeds `msg` to the bot; returns true and fills `answer` when something must be sent
  // (an action for a turn, or a retry after a rejection). Exceptions from the bot's code
  // pass through.
  bool handle(const v1::RefereeMessage& msg, v1::BotMessage* answer);

  // A goodbye or a refusal arrived: the session is over.
  bool finished() const { return finished_; }
  // Set when the hello was refused: the refusal.
  const std::optional<v1::Refusal>& refusal() const { return refusal_; }
  const std::optional<v1::Welcome>& welcome() const { return welcome_; }

 private:
  Match* events(const std::string& match_id,
                const google::protobuf::RepeatedPtrField<v1::Event>& events);
  void turn(const v1::TurnRequest& turn, v1::BotMessage* answer);
  bool rejected(const v1::ActionRejected& rejected, v1::BotMessage* answer);
  static void action(std::uint64_t turn_id, Card card, v1::BotMessage* answer);

  Bot& bot_;
  // unique_ptr: a View points at its Match, which must not move when the map grows
  std::map<std::string, std::unique_ptr<Match>> matches_;
  // After a reconnection the referee sends a match's events again from its start:
  // match id -> how many of the coming events the bot has already seen.
  std::map<std::string, std::size_t> replayed_;
  struct OpenTurn {
    View view;
    std::set<Card> tried;
  };
  std::optional<OpenTurn> open_turn_;  // the last turn answered, until it is superseded
  std::optional<v1::Welcome> welcome_;
  std::optional<v1::Refusal> refusal_;
  bool finished_ = false;
};

}  // namespace ono99::detail
