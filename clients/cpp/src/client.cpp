// Connect a bot to a referee over gRPC and play until the referee says goodbye.
//
// One thread and the synchronous bidi stream: read a message, hand it to the driver, write
// the answer if there is one. A bot has nothing else to do while it waits, so there is no
// hand-off between threads on the turn's path.
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/sync_stream.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

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

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// "%g" of Python, enough for the connect timeout in messages: 0.5 -> "0.5", 30 -> "30".
std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// A unix socket is always plaintext: it never leaves the machine (arena match gives its
// bots one, whatever TLS settings they inherit).
bool is_unix_address(const std::string& referee) {
  return referee.rfind("unix:", 0) == 0 || referee.rfind("unix-abstract:", 0) == 0;
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

void log_message(const std::string& bot, const char* direction,
                 const google::protobuf::Message& msg) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      now.time_since_epoch()).count() % 1000;
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&t));
  std::cerr << stamp << '.' << (ms < 100 ? (ms < 10 ? "00" : "0") : "") << ms << ' ' << bot
            << ' ' << direction << ' ' << msg.ShortDebugString() << '\n';
}

const char* kUsage =
    "usage: BOT [--referee ADDR] [--token TOKEN] [--name NAME] [--tls | --tls-ca FILE]\n"
    "           [--connect-timeout SECONDS] [-v]\n"
    "\n"
    "An ONO 99 bot: connects to a referee and plays until told to stop.\n"
    "\n"
    "  --referee ADDR      referee address, e.g. localhost:50051 or unix:/path ($ONO99_REFEREE)\n"
    "  --token TOKEN       the secret token this bot was given ($ONO99_TOKEN)\n"
    "  --name NAME         name to announce ($ONO99_BOT_NAME or the bot's own)\n"
    "  --tls               speak TLS, trusting the system's certificates ($ONO99_TLS=1)\n"
    "  --tls-ca FILE       speak TLS, trusting the PEM certificate(s) in FILE, e.g. a\n"
    "                      self-signed referee's ($ONO99_TLS_CA); unix: is always plaintext\n"
    "  --connect-timeout S seconds to keep retrying the connection (default: 30)\n"
    "  -v, --verbose       log every message on stderr\n"
    "\n"
    "exit codes: 0 goodbye, 1 the bot's code threw, 2 usage, 3 refused, 4 unreachable,\n"
    "5 the connection broke\n";

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
    } else if (arg == "--connect-timeout") {
      auto v = value();
      if (!v) return kExitUsage;
      char* end = nullptr;
      const double seconds = std::strtod(v->c_str(), &end);
      if (v->empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) {
        std::cerr << "error: --connect-timeout: not a number of seconds: '" << *v << "'\n";
        return kExitUsage;
      }
      options.connect_timeout = seconds;
    } else {
      std::cerr << "error: unrecognized argument: " << argv[i] << '\n' << kUsage;
      return kExitUsage;
    }
  }
  // As in the Python SDK: an empty token is sent (and refused by the referee), an
  // absent one is a usage error.
  if (!referee || referee->empty() || !token) {
    std::cerr << "error: give the referee address and token (--referee/--token or $"
              << kEnvReferee << "/$" << kEnvToken << ")\n";
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
  auto channel = grpc::CreateCustomChannel(options.referee, credentials, args);
  // clamped so that the conversion to microseconds cannot overflow (a year is "forever")
  const double wait_s = std::min(std::max(options.connect_timeout, 0.0), 365 * 86400.0);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::microseconds(static_cast<std::int64_t>(wait_s * 1e6));
  if (!channel->WaitForConnected(deadline)) {
    std::cerr << "error: no referee reachable at " << options.referee << " within "
              << seconds_text(options.connect_timeout) << " s"
              << unreachable_hint(options.referee, secure) << '\n';
    return kExitUnreachable;
  }

  auto stub = v1::Referee::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>> stream =
      stub->Play(&context);
  detail::Driver driver(bot);

  // Ends the call without waiting for the referee: after a goodbye or a refusal it closes
  // the stream anyway, and after a failure of our own there is nothing left to say.
  auto cancel = [&] {
    context.TryCancel();
    stream->Finish();
  };

  v1::BotMessage out = driver.hello(options.token, options.name, sdk_name());
  if (options.verbose) {  // the token is a secret, and stderr goes to a log file
    v1::BotMessage shown = out;
    shown.mutable_hello()->set_token(options.token.empty() ? "" : "<hidden>");
    log_message(who, "->", shown);
  }
  bool writable = stream->Write(out);
  v1::RefereeMessage in;
  try {
    while (writable && !driver.finished() && stream->Read(&in)) {
      if (options.verbose) log_message(who, "<-", in);
      if (driver.handle(in, &out)) {
        if (options.verbose) log_message(who, "->", out);
        writable = stream->Write(out);
      }
    }
  } catch (const std::exception& e) {
    // As an uncaught exception ends a Python bot: the referee sees the stream end.
    std::cerr << "error: the bot failed: " << e.what() << '\n';
    cancel();
    return kExitBotError;
  } catch (...) {
    std::cerr << "error: the bot failed: an exception that is not a std::exception\n";
    cancel();
    return kExitBotError;
  }

  if (const auto& refusal = driver.refusal()) {
    std::cerr << "error: referee refused the connection ("
              << v1::RefusalCode_Name(refusal->code()) << "): " << refusal->reason() << '\n';
    cancel();
    return kExitRefused;
  }
  if (driver.finished()) {  // goodbye
    cancel();
    return kExitOk;
  }
  // The stream ended, or a write failed, before a goodbye: Finish() tells why.
  // A failed write means the call is over; what is left to read arrives at once, and
  // Finish() wants it read first.
  if (!writable) {
    while (stream->Read(&in)) {
    }
  }
  const grpc::Status status = stream->Finish();
  if (status.ok()) {
    std::cerr << "error: the referee closed the stream without a goodbye\n";
  } else {
    std::cerr << "error: connection to the referee broke: " << status_name(status.error_code())
              << ": " << status.error_message() << '\n';
  }
  return kExitBroken;
}

}  // namespace ono99
