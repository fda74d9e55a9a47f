#include "ono99/cards.hpp"

namespace ono99 {

namespace {
// Index = Card enum number, as in the proto's comments and the Python SDK's TOKENS.
constexpr std::array<std::string_view, kCardKinds> kTokens = {
    "", "-10", "R", "P2", "DP", "H", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "99"};
}  // namespace

std::string_view token(Card card) {
  auto i = index_of(card);
  return i < kTokens.size() ? kTokens[i] : std::string_view("?");
}

std::optional<Card> card_from_token(std::string_view text) {
  for (std::size_t i = 1; i < kTokens.size(); ++i) {
    if (kTokens[i] == text) return static_cast<Card>(i);
  }
  return std::nullopt;
}

std::string to_string(const std::vector<Card>& cards) {
  std::string out;
  for (Card c : cards) {
    if (!out.empty()) out += ' ';
    out += token(c);
  }
  return out;
}

}  // namespace ono99
