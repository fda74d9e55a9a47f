// What a bot is told: the rules, the public events, its view at a turn, and results.
//
// Plain C++ values converted from the referee's protobuf messages (no protobuf type shows
// here), so a bot's sources need no generated headers. They mirror the Python SDK's
// ono99.bot model: same names, same meanings (docs/bots.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ono99/cards.hpp"

namespace ono99 {

// The rules a match is played under.
struct Rules {
  std::string ruleset;                         // "modern", "classic" or "classic-set99"
  std::map<std::string, std::string> options;  // every option, defaults included, as text
  int seats = 0;                               // seats at the table, 2 to 8
  int limit = 0;                               // the highest total a play may reach

  // The option's text, or `fallback` when the referee did not list it.
  std::string option(const std::string& name, const std::string& fallback = "") const;
  bool modern() const { return ruleset == "modern"; }
};

// The kinds of public event; kind_name() gives the Python SDK's name of each.
enum class EventKind {
  Unknown,    // an event this SDK does not know (a newer referee)
  Deal,       // "deal": a round starts: round, dealer, first, total
  Play,       // "play": seat played card, the total is now total
  Four99,     // "four99": seat played its four 99s together (+0): seat, total
  Draw,       // "draw": seat drew count cards
  Reshuffle,  // "reshuffle": the discards became the draw pile: draw_size
  Lose,       // "lose": seat had no playable card
  Token,      // "token": seat lost a token: seat, tokens_left
  Out,        // "out": points scoring: seat left the round after playing card past the
              //   limit, or without playing (card == Card::Unspecified)
  Scores,     // "scores": a round was scored: scores, one per seat
  Eliminate,  // "eliminate": seat left the game; hand laid face up (modern), else empty
  Forfeit,    // "forfeit": the referee removed seat (its bot failed)
  End,        // "end": the game is over: ranking, termination
};

std::string_view kind_name(EventKind kind);

// One public event. Fields a kind does not use keep their defaults (-1 for seat, 0, empty).
struct Event {
  EventKind kind = EventKind::Unknown;
  int seat = -1;
  Card card = Card::Unspecified;
  int total = 0;
  int count = 0;
  std::vector<Card> hand;
  std::vector<int> scores;
  std::vector<std::vector<int>> ranking;  // best first; tied seats share a group
  std::string termination;
  int round = 0;
  int dealer = -1;
  int first = -1;
  int tokens_left = 0;
  int draw_size = 0;
  bool together = false;  // forfeit: it left with the seat of the forfeit before (one place)
};

// Public facts about one seat.
struct SeatInfo {
  int hand_size = 0;
  bool in_game = false;
  bool in_round = false;  // differs from in_game only in "points" scoring
  int tokens = 0;         // "tokens" scoring
  int score = 0;          // "points" scoring; lower is better
  std::vector<Card> revealed;  // the hand laid face up on elimination (modern)
};

// A match this bot plays in, and the public history seen so far.
struct Match {
  std::string match_id;
  int seat = -1;                   // this bot's seat
  std::vector<std::string> names;  // every seat's bot name, by seat
  Rules rules;
  int move_ms = 0;                 // the clock at the start
  int bank_ms = 0;
  std::uint64_t bot_seed = 0;      // Bot::random is seeded from it
  std::vector<Event> events;       // every public event so far, in order

  // Cards played so far, in order (four 99s played together count as four 99s); with
  // this_round, only since the current round's deal.
  std::vector<Card> played(bool this_round = false) const;
};

// What this seat may know at its turn.
struct View {
  std::uint64_t turn_id = 0;       // echoed in the answer; the library does it for you
  std::vector<Card> legal;         // the distinct cards you may play now; never empty
  bool over_limit = false;         // points scoring: nothing is playable within the limit;
                                   // the card played takes the seat out of the round
  int move_ms = 0;                 // this move's allowance, and the bank left
  int bank_ms = 0;
  std::int64_t previous_latency_us = 0;  // the referee's timing of your previous answer

  int seat = -1;                   // your seat
  std::vector<Card> hand;          // your hand, in Card enum order
  int total = 0;                   // the running total
  int direction = 1;               // 1 clockwise (seat numbers increasing), -1 counter
  int to_act = -1;                 // the seat to act (you)
  int owed = 1;                    // cards still to play this turn: 1, or 2 before the
                                   // first card of an owed pair
  int draw_size = 0;
  int discard_size = 0;
  std::vector<SeatInfo> seats;     // one per seat
  int round = 0;
  int dealer = -1;

  const Match* match = nullptr;    // the match this turn belongs to (never null in choose)

  // The highest total a play may reach (the match's rules.limit).
  int limit() const { return match ? match->rules.limit : 0; }
  // Whether `card` is among the legal cards.
  bool is_legal(Card card) const;
  // The seat acting after `from` (default: this seat) in the current direction, skipping
  // seats no longer in the round.
  int next_seat(int from = -1) const;
};

// A verdict: what the referee decided about a seat whose bot failed.
struct Verdict {
  int seat = -1;
  std::string kind;  // "timeout", "disconnected", "crashed", "illegal", "aborted", "retired", "absent"
  std::string detail;
  std::int64_t latency_us = 0;
};

// How a match ended, as the referee told this bot.
struct MatchResult {
  std::string match_id;
  std::vector<std::vector<int>> ranking;  // best first; tied seats share a group
  std::string termination;  // "last_standing", "target_reached", "max_plays", "aborted"
  std::vector<Verdict> verdicts;
  std::map<int, std::vector<Card>> hands;  // every seat's hand at the end

  // seat's place, 1 = best (tied seats share the best place of their group); 0 when the
  // match has no ranking (it was aborted).
  int place_of(int seat) const;
};

}  // namespace ono99
