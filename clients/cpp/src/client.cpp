// Connect a bot to a referee over gRPC and play until the referee says goodbye.
//
// One thread and the synchronous bidi stream: read a message, hand it to the driver, write
// the answer if there is one. A bot has nothing else to do while it waits, so there is no
// hand-off between threads on the turn's path. A stream that breaks after the welcome is
// dialled again (a referee keeps a remote bot's seat for a grace window), with the same
// driver, so the bot's matches go on; so is a first stream that breaks before its welcome,
// or that the referee refuses as one of too many (for now).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/sync_stream.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "convert.hpp"
#include "driver.hpp"
#include "ono99/bot.hpp"
#include "ono99/v1/referee.grpc.pb.h"

#ifndef ONO99_SDK_VERSION
#define ONO99_SDK_VERSION "0.0.0"
#endif

namespace ono99 {

namespace {

constexpr const char* kEnvReferee = "ONO99_REFEREE";
constexpr const char* kEnvToken = "ONO99_TOKEN";
constexpr const char* kEnvName = "ONO99_BOT_NAME";
constexpr const char* kEnvTls = "ONO99_TLS";
constexpr const char* kEnvTlsCa = "ONO99_TLS_CA";
constexpr const char* kEnvReconnectTimeout = "ONO99_RECONNECT_TIMEOUT";

// Seconds between attempts to reconnect: the first soon (a referee that has not yet noticed
// the old stream died refuses the token as in use for a moment), then doubling, capped so
// that a referee back late in the window is found quickly; each pause drawn within 20% of
// that (as gRPC's own connection backoff), so that bots turned away together do not come
// back together.
constexpr double kFirstReconnectPause = 0.2;
constexpr double kMaxReconnectPause = 2.0;
constexpr double kReconnectJitter = 0.2;
// The shortest wait for a welcome: a try at the end of a reconnect window has little time
// left, and the referee's answer (a refusal the bot reports as the last failure) must not
// be cut off by a wait of a few milliseconds.
constexpr double kMinWelcomeWait = 1.0;
// A session that breaks sooner than this (s) after its welcome counts against the running
// reconnect window: a referee that welcomes the bot and fails at once is not tried forever.
// A session that lasted longer gets a fresh window, as a first break does: a bot that came
// back late in its window and broke again seconds later had no time left, and gave up
// without a single try though its seat was still kept. As the Python SDK's QUICK_BREAK.
constexpr double kQuickBreak = 1.0;

// `pause` seconds, give or take kReconnectJitter of it, from a generator of the SDK's own
// (not the bot's `random`, which replays its matches).
double jittered(double pause) {
  static std::mt19937_64 engine{std::random_device{}()};
  std::uniform_real_distribution<double> factor(1 - kReconnectJitter, 1 + kReconnectJitter);
  return pause * factor(engine);
}

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// "%g" of Python, enough for the timeouts in messages: 0.5 -> "0.5", 30 -> "30".
std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// `text` as a number of seconds (finite, not negative), or nothing.
std::optional<double> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return seconds;
}

// A deadline `seconds` from now, clamped so that the conversion to microseconds cannot
// overflow (a year is "forever").
std::chrono::system_clock::time_point deadline_after(double seconds) {
  const double s = std::min(std::max(seconds, 0.0), 365 * 86400.0);
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(static_cast<std::int64_t>(s * 1e6));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A unix socket is always plaintext: it never leaves the machine (arena match gives its
// bots one, whatever TLS settings they inherit).
bool is_unix_address(const std::string& referee) {
  return referee.rfind("unix:", 0) == 0 || referee.rfind("unix-abstract:", 0) == 0;
}

bool is_ipv6(const std::string& text) {
  in6_addr address;
  const std::string bare = text.substr(0, text.find('%'));  // a zone: fe80::1%eth0
  return bare.find(':') != std::string::npos && inet_pton(AF_INET6, bare.c_str(), &address) == 1;
}

// Why `address` cannot name a referee, or nothing if it may: HOST:PORT, unix:PATH,
// unix-abstract:NAME, a form gRPC resolves itself (dns:, ipv4:, ipv6:), each scheme in lower
// case, or with `tls` a HOST alone (port 443 to gRPC: a referee behind an HTTPS proxy). gRPC
// takes any string and fails only at the connect timeout: a plaintext `localhost` or
// `http://host:port` was 30 s of silence, then "no referee reachable". Other schemes of
// gRPC's (vsock:, xds:) and named ports (`:https`) are refused: not a referee's.
std::optional<std::string> address_problem(const std::string& address, bool tls) {
  const auto colon = address.find(':');
  const std::string scheme = colon == std::string::npos ? "" : address.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : address.substr(colon + 1);
  // gRPC C++ as Debian builds it (1.51) reads a scheme in lower case only: `UNIX:/path` was
  // a name for DNS, and 30 s of silence (Python's grpcio takes any case)
  std::string lower = scheme;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != scheme && (lower == "unix" || lower == "unix-abstract" || lower == "dns" ||
                          lower == "ipv4" || lower == "ipv6")) {
    return "write its scheme in lower case (" + lower + ":): gRPC C++ reads no other";
  }
  if (scheme == "unix" || scheme == "unix-abstract") {
    const bool authority = rest.rfind("//", 0) == 0 && rest.rfind("///", 0) != 0;
    if (rest.find_first_not_of('/') == std::string::npos || authority) {
      return "a unix socket is unix:/PATH (or unix-abstract:NAME)";
    }
    return std::nullopt;
  }
  if (scheme == "dns" || scheme == "ipv4" || scheme == "ipv6") return std::nullopt;
  if (address.find("://") != std::string::npos) return "not a URL: HOST:PORT, e.g. localhost:50051";
  const auto last = address.rfind(':');
  const std::string host = last == std::string::npos ? "" : address.substr(0, last);
  const std::string port = last == std::string::npos ? "" : address.substr(last + 1);
  if (is_ipv6(host) || is_ipv6(address)) {
    return "write an IPv6 address in brackets, with a port: [::1]:50051";
  }
  const bool bracketed_alone = !address.empty() && address.front() == '[' && address.back() == ']';
  if (last == std::string::npos || bracketed_alone) {  // a host alone
    const bool blank_or_slash = std::any_of(address.begin(), address.end(), [](char c) {
      return c == '/' || std::isspace(static_cast<unsigned char>(c));
    });
    if (tls && !address.empty() && !blank_or_slash) return std::nullopt;
    return "no port: gRPC would dial 443, TLS's port; write HOST:PORT (e.g. localhost:50051), "
           "or give --tls for a referee that speaks TLS on 443";
  }
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  // the port's value, its leading zeros aside (043 is 43); 0 where it is not a number of at
  // most 5 digits
  const bool digits = !port.empty() && port.find_first_not_of("0123456789") == std::string::npos;
  const auto significant = port.find_first_not_of('0');
  const std::string value = significant == std::string::npos ? "0" : port.substr(significant);
  const int number = digits && value.size() <= 5 ? std::stoi(value) : 0;
  if (host.empty() || (host.find(':') != std::string::npos && !bracketed) || number < 1 ||
      number > 65535) {
    return "not HOST:PORT (e.g. localhost:50051), unix:/PATH or unix-abstract:NAME";
  }
  return std::nullopt;
}

// `text` with its blanks around it taken off: they are not the address's (a secret mounted
// from a file ends with a newline), as gRPC's C core reads it.
std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n\v\f");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n\v\f") - first + 1);
}

// `text` as one line: a control character as \xNN.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char code[5];
      std::snprintf(code, sizeof code, "\\x%02x", static_cast<unsigned char>(c));
      out += code;
    } else {
      out += c;
    }
  }
  return out;
}

// The PEM certificates in `path`, or nothing after saying on stderr why they cannot be used.
std::optional<std::string> read_certificates(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  std::string pem;
  int error = file == nullptr ? errno : 0;
  if (file != nullptr) {
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) pem.append(buffer, n);
    if (std::ferror(file)) error = errno;
    std::fclose(file);
  }
  if (error != 0) {
    std::cerr << "error: cannot read the TLS certificate " << path << ": " << std::strerror(error)
              << '\n';
    return std::nullopt;
  }
  // gRPC takes any bytes here and fails only when connecting, like an absent referee
  if (pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    std::cerr << "error: " << path
              << " holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)\n";
    return std::nullopt;
  }
  return pem;
}

// A plaintext bot and a TLS referee (or the reverse) never connect: say what to check.
const char* unreachable_hint(const std::string& referee, bool secure) {
  if (is_unix_address(referee)) return "";
  return secure ? " over TLS (is its certificate the one trusted? --tls-ca FILE names it)"
                : " (a referee that speaks TLS needs --tls-ca FILE or --tls)";
}

const char* status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN_STATUS";
  }
}

// A message for the verbose log, its secrets (the token, the resume key) hidden: stderr
// goes to a log file.
std::string shown(v1::BotMessage msg) {
  if (msg.has_hello()) {
    v1::Hello* hello = msg.mutable_hello();
    if (!hello->token().empty()) hello->set_token("<hidden>");
    if (!hello->resume_key().empty()) hello->set_resume_key("<hidden>");
  }
  return msg.ShortDebugString();
}

std::string shown(v1::RefereeMessage msg) {
  if (msg.has_welcome() && !msg.welcome().resume_key().empty()) {
    msg.mutable_welcome()->set_resume_key("<hidden>");
  }
  return msg.ShortDebugString();
}

void log_message(const std::string& bot, const char* direction, const std::string& text) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      now.time_since_epoch()).count() % 1000;
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&t));
  std::cerr << stamp << '.' << (ms < 100 ? (ms < 10 ? "00" : "0") : "") << ms << ' ' << bot
            << ' ' << direction << ' ' << text << '\n';
}

const char* kUsage =
    "usage: BOT [--referee ADDR] [--token TOKEN] [--name NAME] [--tls | --tls-ca FILE]\n"
    "           [--connect-timeout SECONDS] [--reconnect-timeout SECONDS] [-v]\n"
    "\n"
    "An ONO 99 bot: connects to a referee and plays until told to stop.\n"
    "\n"
    "  --referee ADDR        referee address, e.g. localhost:50051 or unix:/path ($ONO99_REFEREE)\n"
    "  --token TOKEN         the secret token this bot was given ($ONO99_TOKEN)\n"
    "  --name NAME           name to announce ($ONO99_BOT_NAME or the bot's own)\n"
    "  --tls                 speak TLS, trusting the system's certificates ($ONO99_TLS=1)\n"
    "  --tls-ca FILE         speak TLS, trusting the PEM certificate(s) in FILE, e.g. a\n"
    "                        self-signed referee's ($ONO99_TLS_CA); unix: is always plaintext\n"
    "  --connect-timeout S   seconds to keep retrying the connection, then to wait for the\n"
    "                        referee's welcome (default: 30)\n"
    "  --reconnect-timeout S seconds to try to reconnect when the connection drops or the\n"
    "                        referee refuses the bot as one of too many\n"
    "                        ($ONO99_RECONNECT_TIMEOUT, default: 10; 0: never)\n"
    "  -v, --verbose         log every message on stderr\n"
    "\n"
    "exit codes: 0 goodbye, 1 the bot's code threw, 2 usage, 3 refused, 4 unreachable,\n"
    "5 the connection broke (and reconnecting failed)\n";

// How one Play stream ended.
struct SessionEnd {
  int exit = kExitOk;     // kExitOk (goodbye), kExitBotError, kExitRefused or kExitBroken
  std::string error;      // what went wrong, for stderr
  bool welcomed = false;  // the referee had accepted the hello
  bool retry = false;     // worth another try while reconnecting: a broken stream, the
                          // token still in use (the referee has not noticed the drop), the
                          // referee shutting down (it may be restarting), or too many bots
                          // at once
  bool first_retry = false;  // worth another try even at the first connection: a broken
                             // stream, or too many bots at once; any other refusal the
                             // referee sent is final
};

// Cancels a call (a gRPC context) unless settle() is called within a time limit. A
// synchronous Read cannot be given a deadline of its own, so a thread of its own waits.
class Watchdog {
 public:
  Watchdog(grpc::ClientContext& context, double seconds)
      : thread_([this, &context, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!settled_changed_.wait_for(lock, std::chrono::duration<double>(seconds),
                                         [this] { return settled_; })) {
            fired_ = true;
            context.TryCancel();
          }
        }) {}
  ~Watchdog() {
    settle();
    thread_.join();
  }
  void settle() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      settled_ = true;
    }
    settled_changed_.notify_all();
  }
  bool fired() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fired_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable settled_changed_;
  bool settled_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: it starts once the rest is ready
};

// One Play stream on `channel`: hello, then answer every message until goodbye. Calls
// `on_welcome` when the referee accepts the hello. The referee's first message (its
// welcome, or a refusal) is awaited for up to `welcome_timeout` seconds: a referee answers
// at once, and a server that takes the stream and says nothing must not hold the bot.
SessionEnd run_session(const std::shared_ptr<grpc::Channel>& channel, detail::Driver& driver,
                       const Options& options, const std::string& resume_key,
                       const std::string& who, double welcome_timeout,
                       const std::function<void()>& on_welcome) {
  auto stub = v1::Referee::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>> stream =
      stub->Play(&context);
  Watchdog no_welcome(context, welcome_timeout);

  // Ends the call without waiting for the referee: after a goodbye or a refusal it closes
  // the stream anyway, and after a failure of our own there is nothing left to say.
  auto cancel = [&] {
    context.TryCancel();
    stream->Finish();
  };

  v1::BotMessage out = driver.hello(options.token, options.name, sdk_name(), resume_key);
  if (options.verbose) log_message(who, "->", shown(out));
  // A failed write means the call is over, but what the referee wrote before it ended (a
  // match_end, its goodbye) is still to be read: it goes to the driver all the same, and
  // the reading ends with how the stream ended.
  bool writable = stream->Write(out);
  v1::RefereeMessage in;
  try {
    while (!driver.finished() && stream->Read(&in)) {
      no_welcome.settle();
      if (options.verbose) log_message(who, "<-", shown(in));
      const bool answered = driver.handle(in, &out);
      if (in.has_welcome()) on_welcome();
      if (answered && writable) {
        if (options.verbose) log_message(who, "->", shown(out));
        writable = stream->Write(out);
      }
    }
  } catch (const detail::ProtocolError& e) {
    // The referee's fault, not the bot's: as a dropped connection (reconnect, then exit 5).
    cancel();
    return {kExitBroken, e.what(), driver.welcome().has_value(), true, true};
  } catch (const std::exception& e) {
    // As an uncaught exception ends a Python bot: the referee sees the stream end.
    cancel();
    return {kExitBotError, std::string("the bot failed: ") + e.what()};
  } catch (...) {
    cancel();
    return {kExitBotError, "the bot failed: an exception that is not a std::exception"};
  }

  if (const auto& refusal = driver.refusal()) {
    cancel();
    const bool too_many = refusal->code() == v1::REFUSAL_CODE_TOO_MANY;
    // once trying again, also wait out a referee that has not yet noticed the old stream
    // is gone, or that is stopping and may be back in a moment (`arena serve` restarting):
    // as the Python SDK's _TRANSIENT
    const bool transient = too_many || refusal->code() == v1::REFUSAL_CODE_TOKEN_IN_USE ||
                           refusal->code() == v1::REFUSAL_CODE_SHUTTING_DOWN;
    return {kExitRefused,
            "referee refused the connection (" + v1::RefusalCode_Name(refusal->code()) +
                "): " + detail::printable(refusal->reason()),
            false, transient, too_many};
  }
  if (driver.finished()) {  // goodbye
    cancel();
    return {};
  }
  // The stream ended before a goodbye: Finish() tells why.
  const grpc::Status status = stream->Finish();
  const bool welcomed = driver.welcome().has_value();
  if (no_welcome.fired()) {
    return {kExitBroken,
            "no welcome from the referee within " + seconds_text(welcome_timeout) +
                " s of the hello",
            welcomed, true, true};
  }
  if (status.ok()) {
    return {kExitBroken, "the referee closed the stream without a goodbye", welcomed, true, true};
  }
  return {kExitBroken,
          std::string("connection to the referee broke: ") + status_name(status.error_code()) +
              ": " + detail::printable(status.error_message()),
          welcomed, true, true};
}

}  // namespace

const char* sdk_name() { return "ono99-cpp/" ONO99_SDK_VERSION; }

int run(Bot& bot, int argc, char** argv) {
  Options options;
  std::optional<std::string> referee = env(kEnvReferee);
  std::optional<std::string> token = env(kEnvToken);
  options.name = env(kEnvName).value_or("");
  options.tls_ca = env(kEnvTlsCa).value_or("");
  const std::string tls = env(kEnvTls).value_or("");
  options.tls = !tls.empty() && tls != "0";  // as the Python SDK: any value but 0 or empty
  if (const auto text = env(kEnvReconnectTimeout); text && !text->empty()) {
    const auto seconds = parse_seconds(*text);
    if (!seconds) {
      std::cerr << "error: $" << kEnvReconnectTimeout << ": not a number of seconds: '" << *text
                << "'\n";
      return kExitUsage;
    }
    options.reconnect_timeout = *seconds;
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;  // --flag=value
    if (arg.rfind("--", 0) == 0) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    auto value = [&]() -> std::optional<std::string> {
      if (inline_value) return inline_value;
      if (i + 1 < argc) return std::string(argv[++i]);
      std::cerr << "error: argument " << arg << " expects a value\n" << kUsage;
      return std::nullopt;
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return kExitOk;
    } else if (arg == "-v" || arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--referee") {
      if (!(referee = value())) return kExitUsage;
    } else if (arg == "--token") {
      if (!(token = value())) return kExitUsage;
    } else if (arg == "--name") {
      auto v = value();
      if (!v) return kExitUsage;
      options.name = *v;
    } else if (arg == "--tls") {
      options.tls = true;
    } else if (arg == "--tls-ca") {
      auto v = value();
      if (!v) return kExitUsage;
      options.tls_ca = *v;
    } else if (arg == "--connect-timeout" || arg == "--reconnect-timeout") {
      auto v = value();
      if (!v) return kExitUsage;
      const auto seconds = parse_seconds(*v);
      if (!seconds) {
        std::cerr << "error: " << arg << ": not a number of seconds: '" << *v << "'\n";
        return kExitUsage;
      }
      (arg == "--connect-timeout" ? options.connect_timeout : options.reconnect_timeout) = *seconds;
    } else {
      std::cerr << "error: unrecognized argument: " << argv[i] << '\n' << kUsage;
      return kExitUsage;
    }
  }
  // As in the Python SDK: an empty token is sent (and refused by the referee), an
  // absent one is a usage error.
  if (referee) referee = trimmed(*referee);
  if (!referee || referee->empty() || !token) {
    std::cerr << "error: give the referee address and token (--referee/--token or $"
              << kEnvReferee << "/$" << kEnvToken << ")\n";
    return kExitUsage;
  }
  if (const auto problem =
          address_problem(*referee, options.tls || !options.tls_ca.empty())) {
    std::cerr << "error: the referee address '" << one_line(*referee) << "' (--referee or $" << kEnvReferee
              << "): " << *problem << '\n';
    return kExitUsage;
  }
  options.referee = *referee;
  options.token = *token;
  return play(bot, options);
}

int play(Bot& bot, const Options& options) {
  const std::string& who = options.name.empty() ? bot.name() : options.name;
  const bool secure =
      (options.tls || !options.tls_ca.empty()) && !is_unix_address(options.referee);
  grpc::SslCredentialsOptions ssl;  // no pem_root_certs: the system's roots
  if (secure && !options.tls_ca.empty()) {
    std::optional<std::string> pem = read_certificates(options.tls_ca);
    if (!pem) return kExitUsage;
    ssl.pem_root_certs = *pem;
  }
  const std::shared_ptr<grpc::ChannelCredentials> credentials =
      secure ? grpc::SslCredentials(ssl) : grpc::InsecureChannelCredentials();
  // gRPC's reconnect backoff grows to 120 s by default; a bot started before its referee
  // should notice the referee within a fraction of a second, so retry at least every 1 s.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A connection whose packets stop arriving (a NAT that forgot it, a route that died)
  // gives no error: without pings the bot waited for its next message forever. gRPC pings
  // the referee every 10 s and drops the connection if no answer comes within 10 s; the bot
  // then reconnects. The referee accepts a ping every 5 s (arena/referee/server.py
  // MIN_PING_INTERVAL_MS), so a bot waiting minutes between matches is not cut for pinging;
  // max pings without data 0: gRPC would stop pinging after two pings with nothing written.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt("grpc.http2.ping_timeout_ms", 10000);  // newer gRPCs wait 60 s for an ack else
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  detail::Driver driver(bot);

  // While reconnecting: since when, the next pause, the last try's failure (if it got that
  // far), the broken session's resume key, to take its place (empty if none was welcomed),
  // whether a session was welcomed, and the exit code to give up with.
  struct Lost {
    std::chrono::steady_clock::time_point since;
    double pause;
    std::string last;
    std::string resume_key;
    bool welcomed;
    int exit;
  };
  std::optional<Lost> lost;
  // When the reconnect window of the last welcome began (none: it was the first
  // connection's). A session that breaks within kQuickBreak of its welcome counts against
  // the same window: a referee that welcomes the bot and fails at once is not tried
  // forever, as when each welcome restarted the window.
  std::optional<std::chrono::steady_clock::time_point> window;
  std::chrono::steady_clock::time_point welcomed_at;
  for (;;) {
    auto channel = grpc::CreateCustomChannel(options.referee, credentials, args);
    const double wait =
        lost ? options.reconnect_timeout - seconds_since(lost->since) : options.connect_timeout;
    if (!channel->WaitForConnected(deadline_after(wait))) {
      if (!lost) {
        std::cerr << "error: no referee reachable at " << options.referee << " within "
                  << seconds_text(options.connect_timeout) << " s"
                  << unreachable_hint(options.referee, secure) << '\n';
        return kExitUnreachable;
      }
      std::cerr << "error: could not " << (lost->welcomed ? "reconnect" : "connect")
                << " to the referee within " << seconds_text(options.reconnect_timeout)
                << " s (last: "
                << (lost->last.empty() ? "no referee reachable at " + options.referee : lost->last)
                << ")\n";
      return lost->exit;
    }
    const std::string resume_key = lost ? lost->resume_key : "";
    const double welcome_wait = std::max(wait, kMinWelcomeWait);
    const SessionEnd end = run_session(channel, driver, options, resume_key, who, welcome_wait, [&] {
      welcomed_at = std::chrono::steady_clock::now();
      if (!lost) return;
      std::ostringstream took;
      took << std::fixed << std::setprecision(1) << seconds_since(lost->since);
      std::cerr << (lost->welcomed ? "re" : "") << "connected to the referee after " << took.str()
                << " s\n";
      window = lost->since;
      lost.reset();
    });
    if (end.exit == kExitOk) return kExitOk;
    if (end.exit == kExitBroken && end.welcomed && options.reconnect_timeout > 0 && window &&
        seconds_since(welcomed_at) < kQuickBreak) {
      // broke soon after a welcome in a reconnect window: the same window goes on
      lost = Lost{*window, kFirstReconnectPause, end.error, driver.welcome()->resume_key(), true,
                  kExitBroken};
    } else if (end.exit == kExitBroken && end.welcomed && options.reconnect_timeout > 0) {
      // the stream we played on broke
      std::cerr << "warning: " << end.error << "; reconnecting for up to "
                << seconds_text(options.reconnect_timeout) << " s\n";
      lost = Lost{std::chrono::steady_clock::now(), kFirstReconnectPause, "",
                  driver.welcome()->resume_key(), true, kExitBroken};
    } else if (!lost && end.first_retry && options.reconnect_timeout > 0) {
      // the first stream broke before its welcome, or the referee has too many bots at once
      std::cerr << "warning: " << end.error << "; trying again for up to "
                << seconds_text(options.reconnect_timeout) << " s\n";
      lost = Lost{std::chrono::steady_clock::now(), kFirstReconnectPause, "", "", false, end.exit};
    } else if (lost && end.retry) {
      lost->last = end.error;
    } else {
      std::cerr << "error: " << end.error << '\n';
      return end.exit;
    }
    const double left = options.reconnect_timeout - seconds_since(lost->since);
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::max(0.0, std::min(jittered(lost->pause), left))));
    lost->pause = std::min(lost->pause * 2, kMaxReconnectPause);
  }
}

}  // namespace ono99
