// cpp-counter: card counting, a port of bots/counter/bot.py to the C++ SDK.
//
// The cards this seat has not seen (the deck, minus its hand, the discard pile since the
// last deal or reshuffle, and hands laid face up) are what the other hands are drawn from.
// For each legal card it estimates the chance that the next seat holds no playable card
// after it (a hypergeometric draw of that seat's hand size from the unseen cards) and
// plays the card most likely to make the next seat lose, keeping deflectors for owed pairs
// and, all else equal, the total low.
//
// --epsilon P (or $ONO99_EPSILON) plays a uniformly random legal card with probability P,
// as the Python counter does.
#include <ono99/bot.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using ono99::Card;
using ono99::EventKind;
using ono99::Rules;
using ono99::View;

namespace {

// How many of each card a deck holds, indexed by Card number.
using Counts = std::array<int, ono99::kCardKinds>;

Counts deck_of(bool modern) {
  Counts d{};
  if (modern) {  // 112 cards
    d[index_of(Card::N0)] = 8;
    for (int v = 1; v <= 9; ++v) d[index_of(ono99::number_card(v))] = 6;
    d[index_of(Card::N10)] = 10;
    d[index_of(Card::NinetyNine)] = 10;
    d[index_of(Card::Reverse)] = 10;
    d[index_of(Card::Minus10)] = 10;
    d[index_of(Card::Play2)] = 10;
  } else {  // classic rulesets: 54 cards
    for (int v = 2; v <= 9; ++v) d[index_of(ono99::number_card(v))] = 3;
    d[index_of(Card::N10)] = 10;
    d[index_of(Card::Hold)] = 4;
    d[index_of(Card::Reverse)] = 6;
    d[index_of(Card::Minus10)] = 4;
    d[index_of(Card::DoublePlay)] = 2;
    d[index_of(Card::NinetyNine)] = 4;
  }
  return d;
}

const Counts kModernDeck = deck_of(true);
const Counts kClassicDeck = deck_of(false);

bool is_forcing(Card c) { return c == Card::Play2 || c == Card::DoublePlay; }

class CounterBot : public ono99::Bot {
 public:
  explicit CounterBot(double epsilon) : Bot("cpp-counter"), epsilon_(epsilon) {}

  Card choose(const View& view) override {
    const std::vector<Card>& legal = view.legal;
    // Draw the coin and the pick every turn, whatever epsilon is: bots given the same seed
    // then make their random moves at the same moments (common random numbers).
    const double coin = random_unit();
    const double pick = random_unit();
    if (coin < epsilon_) return legal[static_cast<std::size_t>(pick * legal.size())];

    const Rules& rules = view.match->rules;
    const bool modern = rules.modern();
    const Card second_deflector = modern ? Card::Play2 : Card::Hold;
    auto is_deflector = [&](Card c) { return c == Card::Reverse || c == second_deflector; };
    if (view.owed == 2) {
      for (Card c : legal) {
        if (is_deflector(c)) return c;
      }
    }
    if (legal.size() == 1) return legal.front();

    const Counts unseen = unseen_cards(view, modern ? kModernDeck : kClassicDeck);
    int pool = 0;
    for (int n : unseen) pool += n;
    int in_round = 0;
    for (const auto& s : view.seats) in_round += s.in_round ? 1 : 0;

    Card best = legal.front();
    double best_p = 0;
    int best_total = 0;
    bool have_best = false;
    for (Card card : legal) {
      const int total = total_after(card, view.total, rules.ruleset);
      const int next = (card != Card::Reverse || in_round == 2) ? view.next_seat()
                                                                 : reverse_next(view);
      const int size = view.seats[next].hand_size ? view.seats[next].hand_size : 4;
      const bool owes_two = is_forcing(card) || (view.owed == 2 && is_deflector(card));
      int safe = 0;
      for (Card c : ono99::kAllCards) {
        const int n = unseen[index_of(c)];
        if (n > 0 && playable(c, total, rules, owes_two && c == Card::DoublePlay)) safe += n;
      }
      double p_stuck = pool >= size ? none_of_drawn(pool, safe, size) : 0.0;
      // a modern hand of four 99s is not stuck: its seat plays them together, draws four
      if (modern && size == 4 && pool >= size)
        p_stuck -= none_of_drawn(pool, pool - unseen[index_of(Card::NinetyNine)], 4);
      if (owes_two) p_stuck = 1 - std::pow(1 - p_stuck, 1.7);  // two cards to find: roughly
      const double keep =
          (is_deflector(card) || is_forcing(card) || card == Card::Minus10) ? 0.02 : 0.0;
      const double p = p_stuck - keep;
      // the Python bot's max over (p, -total), first best kept on a tie
      if (!have_best || p > best_p || (p == best_p && -total > -best_total)) {
        best = card;
        best_p = p;
        best_total = total;
        have_best = true;
      }
    }
    return best;
  }

 private:
  // The chance that `size` cards drawn from `pool`, of which `safe` are playable, hold no
  // playable card: C(pool - safe, size) / C(pool, size), as a product that never overflows.
  static double none_of_drawn(int pool, int safe, int size) {
    double p = 1.0;
    for (int i = 0; i < size; ++i) {
      const int bad = pool - safe - i;
      if (bad <= 0) return 0.0;
      p *= static_cast<double>(bad) / (pool - i);
    }
    return p;
  }

  static int total_after(Card card, int total, const std::string& ruleset) {
    if (ono99::is_number(card)) return total + ono99::number_value(card);
    if (card == Card::Minus10) return ruleset == "modern" ? std::max(0, total - 10) : total - 10;
    if (card == Card::NinetyNine && ruleset == "classic-set99") return 99;
    return total;
  }

  static bool playable(Card card, int total, const Rules& rules, bool opening_pair_dp) {
    if (ono99::is_number(card)) return total + ono99::number_value(card) <= rules.limit;
    if (card == Card::NinetyNine) {
      if (rules.ruleset == "classic-set99") return rules.limit >= 99;
      if (rules.ruleset == "classic") {
        return rules.option("ninety_nine_on_zero") == "true" && total % 10 == 0;
      }
      return false;
    }
    return !opening_pair_dp;  // a DP may not open an owed pair
  }

  // The seat after this one once a reverse has flipped the direction.
  static int reverse_next(const View& view) {
    const int n = static_cast<int>(view.seats.size());
    int s = view.seat;
    for (int i = 0; i < n; ++i) {
      s = ((s - view.direction) % n + n) % n;
      if (view.seats[s].in_round) return s;
    }
    return s;
  }

  static Counts unseen_cards(const View& view, const Counts& deck) {
    Counts counts = deck;
    for (Card c : view.hand) --counts[index_of(c) % ono99::kCardKinds];
    // the discard pile since the last deal or reshuffle
    Counts pile{};
    for (const ono99::Event& e : view.match->events) {
      switch (e.kind) {
        case EventKind::Deal:
        case EventKind::Reshuffle:
          pile.fill(0);
          break;
        case EventKind::Play:
          ++pile[index_of(e.card) % ono99::kCardKinds];
          break;
        case EventKind::Out:
          if (e.card != Card::Unspecified) ++pile[index_of(e.card) % ono99::kCardKinds];
          break;
        case EventKind::Four99:
          pile[index_of(Card::NinetyNine)] += 4;
          break;
        default:
          break;
      }
    }
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] -= pile[i];
    for (const auto& seat : view.seats) {
      for (Card c : seat.revealed) --counts[index_of(c) % ono99::kCardKinds];
    }
    counts[index_of(Card::Unspecified)] = 0;
    for (int& n : counts) n = n > 0 ? n : 0;
    return counts;
  }

  double epsilon_;
};

}  // namespace

int main(int argc, char** argv) {
  // --epsilon is this bot's own option; everything else goes to ono99::run.
  double epsilon = 0.0;
  if (const char* env = std::getenv("ONO99_EPSILON")) epsilon = std::atof(env);
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--epsilon" && i + 1 < argc) {
      epsilon = std::atof(argv[++i]);
    } else if (arg.rfind("--epsilon=", 0) == 0) {
      epsilon = std::atof(arg.c_str() + 10);
    } else {
      rest.push_back(argv[i]);
    }
  }
  CounterBot bot(epsilon);
  return ono99::run(bot, static_cast<int>(rest.size()), rest.data());
}
