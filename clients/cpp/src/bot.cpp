#include "ono99/bot.hpp"

#include <limits>
#include <utility>

namespace ono99 {

Bot::Bot(std::string name) : name_(std::move(name)) {}
Bot::~Bot() = default;

void Bot::on_match_start(const Match&) {}
void Bot::on_event(const Event&, const Match&) {}
void Bot::on_match_end(const MatchResult&, const Match*) {}

std::optional<Card> Bot::on_rejected(const View& view, const std::string&,
                                     const std::set<Card>& tried) {
  for (Card c : view.legal) {
    if (!tried.count(c)) return c;
  }
  return std::nullopt;
}

double Bot::random_unit() {
  return static_cast<double>(random() >> 11) * 0x1.0p-53;
}

std::size_t Bot::random_index(std::size_t n) {
  // Rejection sampling: draws in the top 2^64 mod n values are re-drawn, so every
  // result is equally likely; plain arithmetic, so the same on every platform.
  const std::uint64_t m = n;
  const std::uint64_t rem = (std::numeric_limits<std::uint64_t>::max() % m + 1) % m;
  std::uint64_t x = random();
  while (rem != 0 && x >= 0 - rem) x = random();
  return static_cast<std::size_t>(x % m);
}

}  // namespace ono99
