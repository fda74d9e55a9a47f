// The bot's side of the protocol, independent of the transport (as the Python SDK's
// ono99.bot.driver): it takes each message the referee sends and gives the answer to send
// back, if any. The gRPC client (client.cpp) and the unit tests drive a bot through it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "ono99/bot.hpp"
#include "ono99/v1/referee.pb.h"

namespace ono99::detail {

inline constexpr int kProtocolVersion = 1;

// What a hostile or broken referee may make the bot keep: a referee that streamed events
// without end grew the bot to GBs in 30 s, and match starts never ended grew the matches.
// The events kept for one match (a real match has a few thousand):
inline constexpr std::size_t kMaxMatchEvents = 100000;
// The matches started and not ended that are kept (a real referee never has 64 open with
// one bot process):
inline constexpr std::size_t kMaxOpenMatches = 64;

// The referee broke the protocol in a way the session cannot go on from: the client ends
// the session as if the connection had dropped.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
  // pass through; throws ProtocolError when a message would take a match past
  // kMaxMatchEvents events (before the bot sees any of them).
  bool handle(const v1::RefereeMessage& msg, v1::BotMessage* answer);

  // A goodbye or a refusal arrived: the session is over.
  bool finished() const { return finished_; }
  // Set when the hello was refused: the refusal.
  const std::optional<v1::Refusal>& refusal() const { return refusal_; }
  const std::optional<v1::Welcome>& welcome() const { return welcome_; }
  // How many matches the driver keeps: those started and not ended (at most kMaxOpenMatches).
  std::size_t open_matches() const { return matches_.size(); }

 private:
  Match* events(const std::string& match_id,
                const google::protobuf::RepeatedPtrField<v1::Event>& events);
  // Keeps `match` as `match_id`'s, first forgetting the match heard of least recently if
  // kMaxOpenMatches are kept already.
  Match& open(const std::string& match_id, std::unique_ptr<Match> match);
  bool turn(const v1::TurnRequest& turn, v1::BotMessage* answer);
  bool rejected(const v1::ActionRejected& rejected, v1::BotMessage* answer);
  static void action(std::uint64_t turn_id, Card card, v1::BotMessage* answer);

  Bot& bot_;
  struct OpenMatch {
    // unique_ptr: a View points at its Match, which must not move when the map grows
    std::unique_ptr<Match> match;
    std::uint64_t heard;  // the number of the message last heard of it (messages_)
  };
  std::map<std::string, OpenMatch> matches_;
  std::uint64_t messages_ = 0;  // the messages handled
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
