// The C++ bot SDK for ONO 99 Arena: subclass Bot, implement choose(), call run().
//
//   #include <ono99/bot.hpp>
//
//   class Lowest : public ono99::Bot {
//    public:
//     Lowest() : Bot("lowest") {}
//     ono99::Card choose(const ono99::View& view) override { return view.legal.front(); }
//   };
//
//   int main(int argc, char** argv) {
//     Lowest bot;
//     return ono99::run(bot, argc, argv);
//   }
//
// The shape is the Python SDK's (docs/bots.md): choose(view) returns a card, optional
// hooks see match starts, public events, rejections and match ends, and run() connects,
// plays every match the referee gives, and returns an exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "ono99/cards.hpp"
#include "ono99/model.hpp"

namespace ono99 {

class Bot {
 public:
  explicit Bot(std::string name = "bot");
  virtual ~Bot();

  // The card to play: one of view.legal. Called once per turn, on the thread that reads
  // the stream. An exception thrown here ends the session (run() returns 1).
  virtual Card choose(const View& view) = 0;

  // A match begins: seat, names, rules, clock. `random` has just been re-seeded.
  virtual void on_match_start(const Match& match);
  // One public event of `match` (already appended to match.events).
  virtual void on_event(const Event& event, const Match& match);
  // A match ended: ranking, verdicts, every hand revealed. `match` is null for a match
  // this bot was never told of.
  virtual void on_match_end(const MatchResult& result, const Match* match);
  // The referee refused the card just sent (`reason` says why); the turn is still open.
  // Return another card, or nothing to send nothing. `tried` holds every card sent for
  // this turn. By default: the first legal card not tried yet.
  virtual std::optional<Card> on_rejected(const View& view, const std::string& reason,
                                          const std::set<Card>& tried);

  // The name sent in the Hello (--name or $ONO99_BOT_NAME override it).
  const std::string& name() const { return name_; }

  // Re-seeded from MatchStart.bot_seed at every match start: draw all randomness from it
  // and a match replays exactly from its seed. mt19937_64's output is fixed by the C++
  // standard, unlike the std:: distributions, so use the helpers below to stay portable.
  std::mt19937_64 random{0};
  // A uniform double in [0, 1), from 53 bits of `random`.
  double random_unit();
  // A uniform integer in [0, n) (n > 0), from `random`, unbiased.
  std::size_t random_index(std::size_t n);

 private:
  std::string name_;
};

// Exit codes of run() and play(), the Python SDK's.
enum ExitCode : int {
  kExitOk = 0,           // the referee said goodbye
  kExitBotError = 1,     // the bot's own code threw (choose or a hook)
  kExitUsage = 2,        // no referee address or no token given, a bad argument, or a TLS
                         // certificate file that cannot be used
  kExitRefused = 3,      // the referee refused the hello (code and reason on stderr)
  kExitUnreachable = 4,  // no referee reachable within the connect timeout
  kExitBroken = 5,       // the connection broke, or the stream ended without a goodbye,
                         // and reconnecting failed
};

struct Options {
  std::string referee;             // "host:port" or "unix:/path"
  std::string token;
  std::string name;                // empty: the bot's own name
  bool tls = false;                // speak TLS, trusting the system's certificates
  std::string tls_ca;              // speak TLS, trusting the PEM certificate(s) in this file
                                   // (a "unix:" referee is always plaintext)
  double connect_timeout = 30.0;   // seconds to keep retrying the connection, then to wait
                                   // for the referee's welcome
  double reconnect_timeout = 10.0; // seconds to try to reconnect after the stream breaks
                                   // (before its welcome or after), or the referee refuses
                                   // the bot as one of too many; 0: never
  bool verbose = false;            // log every message on stderr
};

// Reads --referee ADDR, --token T, --name N, --tls, --tls-ca FILE, --connect-timeout SECONDS,
// --reconnect-timeout SECONDS and -v/--verbose, falling back to $ONO99_REFEREE, $ONO99_TOKEN,
// $ONO99_BOT_NAME, $ONO99_TLS (any value but 0 or empty), $ONO99_TLS_CA and
// $ONO99_RECONNECT_TIMEOUT, then plays. Arguments it does not know are a usage error: parse
// your bot's own options first and pass the rest (see bots/cpp-counter). Returns an
// ExitCode; main() should return it.
int run(Bot& bot, int argc, char** argv);

// Connects to options.referee and plays until goodbye; returns an ExitCode as run(). A
// stream that breaks after the referee's welcome is dialled again with the same token for
// up to options.reconnect_timeout seconds: a referee keeps the seat of a remote bot that
// comes back within its grace window, and the bot's matches go on. So is a first stream
// that breaks before its welcome, or that the referee refuses as one of too many (for now;
// past the window that is exit 3). While trying again, a refusal of the token as still in
// use, or by a referee shutting down (it may be restarting), is waited out too; any other
// refusal is final.
int play(Bot& bot, const Options& options);

// "ono99-cpp/<version>", sent in the Hello.
const char* sdk_name();

}  // namespace ono99
