"""Referee addresses for the SDKs' address check, one list for the Python and C++ SDKs'
tests (the Node.js SDK's tests, in JavaScript, keep theirs): the SDKs must agree."""

#: Addresses no referee can have, and what the error says of each. gRPC took each and said
#: only, at the end of the connect timeout (30 s), that no referee was reachable.
REFUSED = [
    ("localhost", "no port: gRPC would dial 443"), ("http://localhost:50051", "not a URL"),
    ("::1:50051", "IPv6 address in brackets"), ("localhost:99999", "not HOST:PORT"),
    ("localhost:0065536", "not HOST:PORT"), ("localhost:https", "not HOST:PORT"),
    ("localhost:\u00b2", "not HOST:PORT"),        # a digit to str.isdigit, not to gRPC
    ("localhost:" + "9" * 5000, "not HOST:PORT"),  # past Python's 4,300 digits of an int
    ("unix:", "unix:/PATH"), ("unix://relative.sock", "unix:/PATH"),
]

#: Addresses gRPC dials (nothing listens at them), with the bot's TLS flags.
TAKEN = [
    ("[::1]:1", ()), ("dns:///localhost:1", ()), ("ipv4:127.0.0.1:1", ()),
    ("unix-abstract:ono99-nobody", ()), ("unix:///nowhere/at-all.sock", ()),
    ("localhost", ("--tls",)), ("[::1]", ("--tls",)),   # port 443: behind an HTTPS proxy
    ("127.0.0.1:01", ()), ("127.0.0.1:000001", ()),
    ("127.0.0.1:1\n", ()), (" 127.0.0.1:1\r", ()),      # the blanks around it are not its
]

#: gRPC's schemes in upper case: Python's grpcio dials them (as lower case); Debian's gRPC
#: C++ (1.51) took `UNIX:/PATH` for a name to look up in DNS, so the C++ SDK refuses them.
UPPER_CASE = ["DNS:///localhost:1", "UNIX:/nowhere/at-all.sock", "IPv4:127.0.0.1:1"]
