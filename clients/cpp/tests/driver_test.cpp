// Unit tests of the library without a network: cards, the model, and the Driver fed with
// real protobuf messages (as the Python SDK's FakeReferee does). No test framework, to keep
// the build to the Debian packages the library already needs: each CHECK prints what
// failed (on std::clog: some tests capture std::cerr), and main() returns non-zero if any
// did. Run with `ctest` in a build of clients/cpp.
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "convert.hpp"
#include "driver.hpp"
#include "ono99/bot.hpp"

namespace {

int failures = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      ++failures;                                                                     \
      std::clog << __FILE__ << ':' << __LINE__ << ": CHECK failed: " #cond << '\n'; \
    }                                                                                 \
  } while (0)

using namespace ono99;

class Recorder : public Bot {
 public:
  Recorder() : Bot("recorder") {}
  Card choose(const View& view) override {
    views.push_back(view);
    first_random = random();
    return view.legal.back();
  }
  void on_match_start(const Match& m) override { starts.push_back(m.match_id); }
  void on_event(const Event& e, const Match& m) override {
    event_kinds.push_back(std::string(kind_name(e.kind)));
    events_seen_in_match = m.events.size();
  }
  void on_match_end(const MatchResult& r, const Match* m) override {
    results.push_back(r);
    ended_with_match = m != nullptr;
  }
  std::vector<View> views;
  std::vector<std::string> starts, event_kinds;
  std::vector<MatchResult> results;
  std::size_t events_seen_in_match = 0;
  bool ended_with_match = false;
  std::uint64_t first_random = 0;
};

v1::RefereeMessage match_start(const std::string& id, std::uint64_t seed) {
  v1::RefereeMessage msg;
  auto* s = msg.mutable_match_start();
  s->set_match_id(id);
  s->set_seat(1);
  s->add_seat_names("a");
  s->add_seat_names("b");
  s->add_seat_names("c");
  s->mutable_rules()->set_ruleset("classic");
  (*s->mutable_rules()->mutable_options())["ninety_nine_on_zero"] = "true";
  s->mutable_rules()->set_seats(3);
  s->mutable_rules()->set_limit(99);
  s->set_bot_seed(seed);
  return msg;
}

v1::RefereeMessage turn(const std::string& id, std::uint64_t turn_id) {
  v1::RefereeMessage msg;
  auto* t = msg.mutable_turn();
  t->set_match_id(id);
  t->set_turn_id(turn_id);
  auto* v = t->mutable_view();
  v->set_seat(1);
  v->add_hand(v1::CARD_MINUS_TEN);
  v->add_hand(v1::CARD_HOLD);
  v->add_hand(v1::CARD_7);
  v->set_total(42);
  v->set_direction(-1);
  v->set_owed(2);
  for (int i = 0; i < 3; ++i) {
    auto* s = v->add_seats();
    s->set_hand_size(4);
    s->set_in_game(true);
    s->set_in_round(i != 0);  // seat 0 is out of the round
  }
  t->add_legal(v1::CARD_MINUS_TEN);
  t->add_legal(v1::CARD_HOLD);
  t->add_legal(v1::CARD_7);
  auto* e = t->add_events()->mutable_card_played();
  e->set_seat(2);
  e->set_card(v1::CARD_DOUBLE_PLAY);
  e->set_total(42);
  t->add_events()->mutable_four_ninety_nines()->set_seat(0);
  return msg;
}

void test_cards() {
  CHECK(token(Card::N7) == "7");
  CHECK(token(Card::Minus10) == "-10");
  CHECK(token(Card::NinetyNine) == "99");
  CHECK(token(static_cast<Card>(40)) == "?");
  for (Card c : kAllCards) CHECK(card_from_token(token(c)) == c);
  CHECK(!card_from_token("11").has_value());
  CHECK(number_value(Card::N10) == 10 && number_value(Card::Hold) == -1);
  CHECK(number_card(3) == Card::N3);
  CHECK(static_cast<int>(Card::NinetyNine) == v1::CARD_99);  // the contract's numbers
  CHECK(static_cast<int>(Card::Play2) == v1::CARD_PLAY_TWO);
}

void test_a_match_through_the_driver() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;

  const v1::BotMessage hello = driver.hello("tok", "", "sdk/1");
  CHECK(hello.hello().name() == "recorder" && hello.hello().token() == "tok");
  CHECK(hello.hello().protocol_version() == 1);

  const std::uint64_t seed = 18446744073709551615ull;
  CHECK(!driver.handle(match_start("m", seed), &out));
  CHECK(bot.starts == std::vector<std::string>{"m"});

  const std::uint64_t id = 18446744073709551615ull;  // 2^64 - 1: echoed unchanged
  CHECK(driver.handle(turn("m", id), &out));
  CHECK(out.has_action() && out.action().turn_id() == id);
  CHECK(out.action().card() == v1::CARD_7);
  std::mt19937_64 expected(seed);
  CHECK(bot.first_random == expected());  // seeded from bot_seed at the match start

  const View& view = bot.views.at(0);
  CHECK(view.total == 42 && view.owed == 2 && view.limit() == 99);
  CHECK(view.hand.size() == 3 && view.is_legal(Card::Hold) && !view.is_legal(Card::N3));
  CHECK(view.next_seat() == 2);   // direction -1 from seat 1 skips seat 0 (out of the round)
  CHECK(view.next_seat(2) == 1);
  CHECK(view.match->rules.option("ninety_nine_on_zero") == "true");
  CHECK(view.match->rules.option("absent", "x") == "x");
  CHECK((bot.event_kinds == std::vector<std::string>{"play", "four99"}));
  CHECK(bot.events_seen_in_match == 2);  // on_event runs after the event is in match.events
  CHECK((view.match->played() == std::vector<Card>{Card::DoublePlay, Card::NinetyNine,
                                                    Card::NinetyNine, Card::NinetyNine,
                                                    Card::NinetyNine}));

  // a rejection: the default on_rejected answers the first legal card not tried yet
  v1::RefereeMessage rejected;
  rejected.mutable_rejected()->set_turn_id(id);
  rejected.mutable_rejected()->set_code(v1::ERROR_CODE_ILLEGAL_PLAY);
  CHECK(driver.handle(rejected, &out));
  CHECK(out.action().turn_id() == id && out.action().card() == v1::CARD_MINUS_TEN);
  CHECK(driver.handle(rejected, &out));
  CHECK(out.action().card() == v1::CARD_HOLD);
  CHECK(!driver.handle(rejected, &out));  // every legal card tried: nothing to send
  rejected.mutable_rejected()->set_turn_id(5);
  CHECK(!driver.handle(rejected, &out));  // not the open turn

  v1::RefereeMessage end;
  end.mutable_match_end()->set_match_id("m");
  end.mutable_match_end()->set_termination("last_standing");
  end.mutable_match_end()->add_ranking()->add_seats(2);
  auto* tie = end.mutable_match_end()->add_ranking();
  tie->add_seats(0);
  tie->add_seats(1);
  auto* verdict = end.mutable_match_end()->add_verdicts();
  verdict->set_seat(0);
  verdict->set_kind(v1::VERDICT_KIND_TIMEOUT);
  auto* hand = end.mutable_match_end()->add_hands();
  hand->set_seat(1);
  hand->add_cards(v1::CARD_REVERSE);
  CHECK(!driver.handle(end, &out));
  CHECK(bot.results.size() == 1 && bot.ended_with_match);
  const MatchResult& r = bot.results.at(0);
  CHECK(r.place_of(2) == 1 && r.place_of(0) == 2 && r.place_of(1) == 2);
  CHECK(r.verdicts.size() == 1 && r.verdicts[0].kind == "timeout");
  CHECK(r.hands.at(1) == std::vector<Card>{Card::Reverse});

  CHECK(!driver.finished());
  v1::RefereeMessage bye;
  bye.mutable_goodbye()->set_reason("done");
  driver.handle(bye, &out);
  CHECK(driver.finished() && !driver.refusal());
}

v1::RefereeMessage plays(const std::string& id, const std::vector<v1::Card>& cards) {
  v1::RefereeMessage msg;
  msg.mutable_events()->set_match_id(id);
  for (v1::Card c : cards) {
    auto* e = msg.mutable_events()->add_events()->mutable_card_played();
    e->set_seat(2);
    e->set_card(c);
  }
  return msg;
}

// After a reconnection the referee sends the match start again, then every event of the
// match from its start: the match goes on (no second on_match_start, no re-seeding), and no
// event is seen twice, even when the replay spans messages.
void test_a_reconnection_mid_match() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  driver.hello("tok", "", "sdk/1");
  v1::RefereeMessage welcome;
  welcome.mutable_welcome()->set_protocol_version(1);
  driver.handle(welcome, &out);
  driver.handle(match_start("m", 7), &out);
  driver.handle(plays("m", {v1::CARD_1, v1::CARD_2, v1::CARD_3}), &out);
  bot.random();  // the bot drew a number: a re-seeding would show
  const std::mt19937_64 state = bot.random;

  // the stream broke; the next session is refused once (the token still in use), then welcomed
  CHECK(driver.hello("tok", "", "sdk/1", "key-1").hello().resume_key() == "key-1");
  CHECK(!driver.welcome());
  v1::RefereeMessage in_use;
  in_use.mutable_refusal()->set_code(v1::REFUSAL_CODE_TOKEN_IN_USE);
  driver.handle(in_use, &out);
  CHECK(driver.finished() && driver.refusal());
  driver.hello("tok", "", "sdk/1");
  CHECK(!driver.finished() && !driver.refusal());
  driver.handle(welcome, &out);
  CHECK(driver.welcome());

  CHECK(!driver.handle(match_start("m", 7), &out));                   // the same match
  CHECK(bot.random == state);
  CHECK(!driver.handle(plays("m", {v1::CARD_1, v1::CARD_2}), &out));  // 2 of its 3 events
  CHECK(!driver.handle(match_start("m2", 8), &out));                  // a new match meanwhile
  v1::RefereeMessage t = turn("m", 9);
  t.mutable_turn()->clear_events();
  t.mutable_turn()->add_events()->mutable_card_played()->set_card(v1::CARD_3);  // the third
  t.mutable_turn()->add_events()->mutable_card_played()->set_card(v1::CARD_4);  // a new one
  CHECK(driver.handle(t, &out) && out.action().turn_id() == 9);
  CHECK((bot.starts == std::vector<std::string>{"m", "m2"}));
  const Match& m = *bot.views.at(0).match;
  CHECK(m.match_id == "m");
  CHECK((m.played() == std::vector<Card>{Card::N1, Card::N2, Card::N3, Card::N4}));
  CHECK(bot.event_kinds.size() == 4);
}

void test_refusal() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  v1::RefereeMessage msg;
  msg.mutable_refusal()->set_code(v1::REFUSAL_CODE_BAD_TOKEN);
  msg.mutable_refusal()->set_reason("unknown token");
  CHECK(!driver.handle(msg, &out));
  CHECK(driver.finished() && driver.refusal() && driver.refusal()->reason() == "unknown token");
}

// Every refusal counts against the bot: after one of the turn (over, or not its own) any
// card is refused alike, and another card sent wasted one more (they were resent).
void test_only_a_refusal_of_the_card_gets_another_card() {
  const std::vector<std::pair<int, bool>> cases = {
      {v1::ERROR_CODE_NOT_IN_HAND, true},   {v1::ERROR_CODE_ILLEGAL_PLAY, true},
      {v1::ERROR_CODE_MALFORMED, true},     {v1::ERROR_CODE_STALE_TURN, false},
      {v1::ERROR_CODE_NOT_YOUR_TURN, false}, {v1::ERROR_CODE_UNSPECIFIED, false},
      {42, false},  // a code newer than this SDK
  };
  for (const auto& [code, retried] : cases) {
    Recorder bot;
    detail::Driver driver(bot);
    v1::BotMessage out;
    driver.handle(match_start("m", 1), &out);
    CHECK(driver.handle(turn("m", 9), &out));
    v1::RefereeMessage rejected;
    rejected.mutable_rejected()->set_turn_id(9);
    rejected.mutable_rejected()->set_code(static_cast<v1::ErrorCode>(code));
    CHECK(driver.handle(rejected, &out) == retried);
  }
}

// What the driver prints on stderr while it lives.
class CapturedStderr {
 public:
  CapturedStderr() : saved_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedStderr() { std::cerr.rdbuf(saved_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* saved_;
};

void test_printable() {
  using detail::printable;
  CHECK(printable("plain text, é, 99") == "plain text, é, 99");
  // a terminal title, colour and line erase, and a fake line after a newline
  CHECK(printable("\x1b]0;T\x07\x1b[31mRED\r\n\tFAKE\x7f") ==
        "\\x1b]0;T\\x07\\x1b[31mRED\\x0d\\x0a\\x09FAKE\\x7f");
  CHECK(printable("a\xc2\x9b" "b") == "a\\x9bb");                // C1: U+009B, a CSI
  CHECK(printable("\xe2\x80\xae" "cba") == "\\u202ecba");       // U+202E reorders
  CHECK(printable("\xff\xc3") == "\\xff\\xc3");                 // not UTF-8
  CHECK(printable("\xf3\xa0\x80\x81") == "\\U000e0001");        // U+E0001, beyond U+FFFF
  const std::string mib(1 << 20, 'a');
  CHECK(printable(mib) == std::string(300, 'a') + "... (1048276 more characters)");
  std::string accents;
  for (int i = 0; i < 301; ++i) accents += "é";  // characters, not bytes
  CHECK(printable(accents) == accents.substr(0, 600) + "... (1 more characters)");
  CHECK(printable(std::string(300, 'a')) == std::string(300, 'a'));
}

// A card number Card cannot hold (negative, above 255) reads as "?", never as another card
// (-239 wrapped to 99).
void test_cards_the_sdk_does_not_know() {
  google::protobuf::RepeatedField<int> values;
  for (int v : {-239, -1, 40, 1 << 20, static_cast<int>(v1::CARD_7)}) values.Add(v);
  const std::vector<Card> cards = detail::cards_of(values);
  CHECK(to_string(cards) == "? ? ? ? 7");
  v1::Event msg;
  msg.mutable_card_played()->set_card(static_cast<v1::Card>(-239));
  CHECK(token(detail::to_event(msg).card) == "?");
}

v1::RefereeMessage rejection(std::uint64_t turn_id, const std::string& reason) {
  v1::RefereeMessage msg;
  msg.mutable_rejected()->set_turn_id(turn_id);
  msg.mutable_rejected()->set_code(v1::ERROR_CODE_STALE_TURN);
  msg.mutable_rejected()->set_reason(reason);
  return msg;
}

// A rejection of no turn the bot has open is not printed (a loop of them wrote GBs); one
// of the open turn is, its reason escaped and cut.
void test_only_a_rejection_of_the_open_turn_is_printed() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  CapturedStderr err;
  CHECK(!driver.handle(rejection(9, "no turn is open"), &out));
  driver.handle(match_start("m", 1), &out);
  driver.handle(turn("m", 9), &out);
  CHECK(!driver.handle(rejection(8, "not the open turn"), &out));
  CHECK(err.text().empty());
  CHECK(!driver.handle(rejection(9, "\x1b[2J" + std::string(1 << 20, 'x')), &out));
  CHECK(err.text() == "warning: action rejected (ERROR_CODE_STALE_TURN): \\x1b[2J" +
                          std::string(296, 'x') + "... (1048280 more characters)\n");
}

// A message that would take a match past kMaxMatchEvents breaks the session before the
// bot sees any of its events; the events kept stop there (a referee streaming events grew
// the bot to GBs).
void test_events_past_the_limit_break_the_session() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  driver.handle(match_start("m\x1b", 1), &out);
  v1::RefereeMessage many = plays("m\x1b", std::vector<v1::Card>(40000, v1::CARD_1));
  driver.handle(many, &out);
  driver.handle(many, &out);
  many.mutable_events()->mutable_events()->DeleteSubrange(0, 20000);
  driver.handle(many, &out);  // 100000: the most kept
  CHECK(bot.event_kinds.size() == detail::kMaxMatchEvents);
  std::string error;
  try {
    driver.handle(plays("m\x1b", {v1::CARD_2}), &out);
  } catch (const detail::ProtocolError& e) {
    error = e.what();
  }
  CHECK(error == "the referee sent more than 100000 events for match m\\x1b");
  CHECK(bot.event_kinds.size() == detail::kMaxMatchEvents);
  CHECK(bot.events_seen_in_match == detail::kMaxMatchEvents);
}

// The 65th match started and not ended drops the one heard of least recently: its state
// is forgotten, and its end reaches the bot as the end of a match never started.
void test_open_matches_are_bounded() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  for (std::size_t i = 0; i < detail::kMaxOpenMatches; ++i) {
    driver.handle(match_start("m" + std::to_string(i), i), &out);
  }
  CHECK(driver.open_matches() == 64);
  driver.handle(plays("m0", {v1::CARD_1}), &out);  // m0 heard of again: m1 is the oldest now
  driver.handle(match_start("m64", 64), &out);
  CHECK(driver.open_matches() == 64);
  CHECK(bot.starts.size() == 65 && bot.starts.back() == "m64");
  for (const std::string id : {"m1", "m0", "m64"}) {
    v1::RefereeMessage end;
    end.mutable_match_end()->set_match_id(id);
    driver.handle(end, &out);
    CHECK(bot.ended_with_match == (id != "m1"));
  }
  CHECK(driver.open_matches() == 62);
}

// A turn that offers no legal card, or puts the bot at a seat that is not one of its
// seats: choose() is not called (a bot's legal.front() was a SIGSEGV), nothing is sent,
// and one warning says why; the next turn is answered.
void test_a_turn_no_card_can_answer_is_not_answered() {
  Recorder bot;
  detail::Driver driver(bot);
  v1::BotMessage out;
  driver.handle(match_start("m", 1), &out);
  CapturedStderr err;
  v1::RefereeMessage no_card = turn("m", 7);
  no_card.mutable_turn()->clear_legal();
  CHECK(!driver.handle(no_card, &out));
  v1::RefereeMessage outside = turn("m", 8);
  outside.mutable_turn()->mutable_view()->set_seat(3);
  CHECK(!driver.handle(outside, &out));
  outside.mutable_turn()->mutable_view()->set_seat(-1);
  CHECK(!driver.handle(outside, &out));
  CHECK(bot.views.empty());
  CHECK(err.text() ==
        "warning: the referee's turn 7 of match m offers no legal card; not answered\n"
        "warning: the referee's turn 8 of match m puts the bot at seat 3 of 3; not answered\n"
        "warning: the referee's turn 8 of match m puts the bot at seat -1 of 3; not answered\n");
  CHECK(!driver.handle(rejection(8, "not open"), &out));  // no turn was opened by them
  CHECK(driver.handle(turn("m", 9), &out) && out.action().turn_id() == 9);
}

void test_random_helpers() {
  Recorder bot;
  bot.random.seed(7);
  for (int i = 0; i < 1000; ++i) {
    const double u = bot.random_unit();
    CHECK(u >= 0.0 && u < 1.0);
    CHECK(bot.random_index(3) < 3);
  }
  CHECK(bot.random_index(1) == 0);
}

}  // namespace

void test_forfeits_alone_and_together() {
  v1::Event msg;
  msg.mutable_seat_forfeited()->set_seat(2);
  Event alone = detail::to_event(msg);
  CHECK(alone.kind == EventKind::Forfeit && alone.seat == 2 && !alone.together);
  msg.mutable_seat_forfeited()->set_together(true);   // left with the forfeit before
  CHECK(detail::to_event(msg).together);
}

int main() {
  test_cards();
  test_forfeits_alone_and_together();
  test_a_match_through_the_driver();
  test_refusal();
  test_only_a_refusal_of_the_card_gets_another_card();
  test_a_reconnection_mid_match();
  test_random_helpers();
  test_printable();
  test_cards_the_sdk_does_not_know();
  test_only_a_rejection_of_the_open_turn_is_printed();
  test_events_past_the_limit_break_the_session();
  test_open_matches_are_bounded();
  test_a_turn_no_card_can_answer_is_not_answered();
  if (failures) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "all checks passed\n";
  return 0;
}
