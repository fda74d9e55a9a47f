// {{NAME}}: an ONO 99 bot on the arena's C++ client library. Start here.
//
// choose(view) gets what this seat may know at its turn and returns one of view.legal.
// This one: owing two cards, it deflects them when it can; otherwise it plays its highest
// number card (the next seat has less room), and keeps the special cards for when nothing
// else fits. The library's include/ono99/*.hpp describe the View, the Match and the hooks.
#include <ono99/bot.hpp>

#include <algorithm>

using ono99::Card;

namespace {

class StarterBot : public ono99::Bot {
 public:
  StarterBot() : Bot("{{NAME}}") {}

  Card choose(const ono99::View& view) override {
    const bool modern = view.match->rules.modern();
    if (view.owed == 2) {  // the first card of an owed pair: pass the pair on if we can
      for (Card card : {Card::Reverse, modern ? Card::Play2 : Card::Hold}) {
        if (view.is_legal(card)) return card;
      }
    }
    Card best = Card::Unspecified;
    for (Card card : view.legal) {
      if (ono99::is_number(card) &&
          (best == Card::Unspecified || ono99::number_value(card) > ono99::number_value(best))) {
        best = card;
      }
    }
    if (best != Card::Unspecified) return best;
    for (Card card : {Card::Play2, Card::DoublePlay, Card::Reverse, Card::Hold, Card::NinetyNine,
                      Card::Minus10}) {
      if (view.is_legal(card)) return card;
    }
    return view.legal.front();
  }
};

}  // namespace

int main(int argc, char** argv) {
  StarterBot bot;
  return ono99::run(bot, argc, argv);
}
