// Cards: an enum whose numbers are the protocol's (ono99.v1.Card), and their tokens.
//
// Why an enum rather than token strings (which the Python SDK uses): a misspelt card is a
// compile error instead of a malformed action at run time, a switch over cards is checked
// for missing cases by the compiler, and comparing or counting cards costs nothing.
// token() gives the text form ("7", "P2", "99") for logs and for code ported from Python;
// card_from_token() goes the other way.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ono99 {

enum class Card : std::uint8_t {
  Unspecified = 0,  // never a valid card; an action carrying it is refused as malformed
  Minus10 = 1,      // "-10": subtracts 10 (modern: never below 0)
  Reverse = 2,      // "R": +0, flips the direction (not with two seats left)
  Play2 = 3,        // "P2" (modern): +0, the next seat owes two cards
  DoublePlay = 4,   // "DP" (classic rulesets): +0, the next seat owes two cards
  Hold = 5,         // "H" (classic rulesets): +0
  N0 = 6,           // "0"
  N1 = 7,
  N2 = 8,
  N3 = 9,
  N4 = 10,
  N5 = 11,
  N6 = 12,
  N7 = 13,
  N8 = 14,
  N9 = 15,
  N10 = 16,         // "10"
  NinetyNine = 17,  // "99": depends on the ruleset (docs/rules.md)
};

// Every card, in enum order (Unspecified excluded).
inline constexpr std::array<Card, 17> kAllCards = {
    Card::Minus10, Card::Reverse, Card::Play2, Card::DoublePlay, Card::Hold,
    Card::N0,      Card::N1,      Card::N2,    Card::N3,         Card::N4,
    Card::N5,      Card::N6,      Card::N7,    Card::N8,         Card::N9,
    Card::N10,     Card::NinetyNine};

// Number of distinct values of Card, Unspecified included: size of a per-card table
// indexed by index_of(card).
inline constexpr std::size_t kCardKinds = 18;

constexpr std::size_t index_of(Card c) { return static_cast<std::size_t>(c); }

// "0".."10", "-10", "R", "P2", "DP", "H", "99"; "" for Unspecified, "?" for a number this
// SDK does not know (a newer referee's card).
std::string_view token(Card card);

// The card of a token, or nothing if the text is not one.
std::optional<Card> card_from_token(std::string_view token);

// Whether the card is a number card, 0 to 10.
constexpr bool is_number(Card c) { return c >= Card::N0 && c <= Card::N10; }

// The face value of a number card (0..10); -1 for any other card.
constexpr int number_value(Card c) {
  return is_number(c) ? static_cast<int>(c) - static_cast<int>(Card::N0) : -1;
}

// The number card of value 0..10.
constexpr Card number_card(int value) {
  return static_cast<Card>(static_cast<int>(Card::N0) + value);
}

// Tokens of a list of cards, space-separated: for logs.
std::string to_string(const std::vector<Card>& cards);

}  // namespace ono99
