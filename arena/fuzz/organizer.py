"""Fuzzing the Organizer service: every call, with and without the token, with names and
settings of every shape, raw bytes, uploads that are not bots.

The machine enters bots of its own (remote ones, and hosted uploads that fail before
check-bot would run) and keeps a model of the versions it entered: their numbers, kinds,
statuses. Each call's answer is predicted from the model and organizer.proto: the code
(OK, UNAUTHENTICATED, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION) and, for an
answer, what it must say. Tournaments it starts are of its own bots only (never the fuzz
or healthy ones), short, and end when the machine withdraws its bots at its teardown.
"""

from __future__ import annotations

import io
import math
import re
import secrets
import tarfile
import zlib

from google.protobuf.message import DecodeError
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as opb

from arena.bots.manifest import read_alike
from arena.fuzz import values
from arena.fuzz.client import Outcome
from arena.fuzz.machine import Broken, FuzzMachine, expect, only_if, step
from arena.fuzz.target import FUZZ_BOTS, HEALTHY, ServedArena

ORG = "/ono99.v1.Organizer/"
#: organizer.proto: "Letters, digits, '.', '_' and '-', at most 64, starting with a letter
#: or digit" (written from the proto, not taken from the server)
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: the longest clock a tournament may ask for (arena.referee.results.MAX_CLOCK_S)
MAX_CLOCK_MS = 86_400_000
#: the most matches a tournament on a server may have (organizer.proto)
MAX_MATCHES = 100_000
RULESETS = ("modern", "classic", "classic-set99")
REQUESTS = {
    "AddRemoteBot": opb.AddRemoteBotRequest, "UploadBot": opb.UploadChunk,
    "ListBots": opb.ListBotsRequest, "RemoveBot": opb.RemoveBotRequest,
    "BotLogs": opb.BotLogsRequest, "RunTournament": opb.TournamentRequest,
    "Standings": opb.StandingsRequest, "CancelTournament": opb.CancelTournamentRequest,
}
OK = grpc.StatusCode.OK


class Version:
    """A bot version the machine entered."""

    def __init__(self, base: str, number: int, kind: str, status: str) -> None:
        self.base, self.number, self.kind, self.status = base, number, kind, status

    @property
    def display(self) -> str:
        return self.base if self.number == 1 else f"{self.base} v{self.number}"


def bot_names() -> st.SearchStrategy[str]:
    """Valid names (kept apart from the fuzz's and healthy bots': they start with 'o'),
    two that differ only in case, and anything at all."""
    valid = st.from_regex(r"[A-Za-z0-9_.-]{0,20}", fullmatch=True).map(lambda n: "o" + n)
    return st.one_of(valid, valid, values.texts(),
                     st.sampled_from(["o" * 64, "o" * 65, "-o", ".o", "o o", "o/o", "o\n", "ø",
                                      "ocase", "oCase", "o0", "oo", "orn", "om", "oIa", "oia"]))


def archives() -> st.SearchStrategy[bytes]:
    """Uploads that are never a bot (check-bot never runs): not gzip, gzip of no tar, and
    tars with links, paths out of the folder, no bot.toml, a bot.toml that is not one."""
    def tar(members: list[tuple[str, bytes | None]]) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            for name, data in members:
                info = tarfile.TarInfo(name)
                if data is None:
                    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                    t.addfile(info)
                else:
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    manifests = st.sampled_from([b"", b"name = ", b"[[[", b'name = "x"',
                                 b'name = "x"\ncommand = "no-such-program-anywhere"',
                                 b'name = "x"\ncommand = "/bin/sh"\nweird = 1'])
    return st.one_of(
        st.binary(max_size=200),
        st.binary(max_size=200).map(lambda b: zlib.compress(b)),
        manifests.map(lambda m: tar([("bot.toml", m)])),
        st.sampled_from([tar([("notes.txt", b"hello")]), tar([("../escape", b"x")]),
                         tar([("/abs", b"x")]), tar([("bot.toml", None)]),
                         tar([("link", None), ("bot.toml", b'name = "x"')])]))


class OrganizerMachine(FuzzMachine):
    """The organiser, and whoever else reaches the Organizer service."""

    def __init__(self, target: ServedArena) -> None:
        super().__init__(target)
        self.mine: list[Version] = []               # in the order entered
        self.tournaments: list[str] = []            # started by this machine
        self.versions = target.versions   # base name -> its last version number
        self.reserved = set(FUZZ_BOTS) | set(HEALTHY) | {"fuzz-gone"}

    # ---------------------------------------------------------------- plumbing

    def call(self, method: str, request, token: str | None = "good") -> Outcome:
        """A unary call. One over the port's 64 KiB ends with RESOURCE_EXHAUSTED, and the
        step with it."""
        data = request if isinstance(request, bytes) else request.SerializeToString()
        outcome = self.unary(self.t.hostile, ORG + method, data, self._metadata(token))
        self._not_too_big(outcome, len(data), method)
        return outcome

    def _not_too_big(self, outcome: Outcome, size: int, what: str) -> None:
        """A message over the port's limit ends the call (RESOURCE_EXHAUSTED), whatever
        it holds: checked here, and the step goes no further."""
        if size > values.MAX_RECEIVE:
            expect(outcome, grpc.StatusCode.RESOURCE_EXHAUSTED, f"{what} of {size} bytes")
            only_if(False)

    def _metadata(self, token: str | None):
        if token is None:
            return None
        if token == "good":
            return self.t.auth
        return (("authorization", token),)

    def _live(self) -> list[Version]:
        return [v for v in self.mine if v.status != "removed"]

    def _find(self, name: str) -> Version | None:
        """The version RemoveBot and BotLogs act on: the display name, else the latest
        version of the base name (organizer.proto), among those not removed."""
        live = self._live()
        found = [v for v in live if v.display == name] or [v for v in live if v.base == name]
        return found[-1] if found else None

    def _case_twin(self, name: str) -> bool:
        """Whether a name entered on the server differs from ``name`` but reads the same
        (in case, or look-alike characters): the server refuses it
        (arena/server/registry.py)."""
        return any(n != name and read_alike(n, name)
                   for n in (*self.versions, *self.reserved))

    def _enter(self, base: str, kind: str, status: str) -> Version:
        number = self.versions.get(base, 0) + 1
        self.versions[base] = number
        version = Version(base, number, kind, status)
        self.mine.append(version)
        return version

    # ---------------------------------------------------------------- bots

    @rule(name=bot_names())
    @step
    def add_remote_bot(self, name: str) -> None:
        only_if(name not in self.reserved)
        outcome = self.call("AddRemoteBot", opb.AddRemoteBotRequest(name=name))
        if not BOT_NAME.fullmatch(name) or self._case_twin(name):
            return expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, f"AddRemoteBot({name!r:.80})")
        expect(outcome, OK, f"AddRemoteBot({name!r})")
        version = self._enter(name, "remote", "active")
        reply = opb.AddRemoteBotResponse.FromString(outcome.reply)
        if (reply.name, reply.version) != (version.display, version.number) or len(reply.token) < 32:
            raise Broken(f"AddRemoteBot({name!r}) answered {reply.name!r} v{reply.version}, token "
                         f"of {len(reply.token)} characters; expected {version.display!r}")

    @rule(name=bot_names(), archive=archives(),
          shape=st.sampled_from(["header first", "header first", "no header", "data first",
                                 "two headers", "header only"]),
          chunk=st.sampled_from([1, 7, 2**20]))
    @step
    def upload_bot(self, name: str, archive: bytes, shape: str, chunk: int) -> None:
        """An upload that is never a bot: refused, and (when it got as far as unpacking)
        entered as a failed version."""
        only_if(name not in self.reserved)
        header = opb.UploadChunk(header=opb.UploadHeader(name=name)).SerializeToString()
        data = [opb.UploadChunk(data=archive[i:i + chunk]).SerializeToString()
                for i in range(0, len(archive), chunk)] or [opb.UploadChunk(data=b"").SerializeToString()]
        chunks = {"header first": [header, *data], "no header": data,
                  "data first": [data[0], header, *data[1:]], "two headers": [header, header, *data],
                  "header only": [header]}[shape]
        outcome = self.client_stream(self.t.hostile, ORG + "UploadBot", chunks, self.t.auth)
        what = f"UploadBot({name!r:.80}, {shape}, {len(archive)} bytes)"
        if shape not in ("no header", "data first"):   # the header comes first
            self._not_too_big(outcome, len(header), what)
        if shape in ("no header", "data first", "two headers") or not BOT_NAME.fullmatch(name):
            return expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, what)
        expect(outcome, grpc.StatusCode.INVALID_ARGUMENT, what)
        if not self._case_twin(name):
            self._enter(name, "hosted", "failed")

    @rule()
    @step
    def list_bots(self) -> None:
        outcome = self.call("ListBots", opb.ListBotsRequest())
        expect(outcome, OK, "ListBots")
        listed = {b.name: b for b in opb.ListBotsResponse.FromString(outcome.reply).bots}
        for v in self.mine:
            got = listed.get(v.display)
            if v.status == "removed":
                if got is not None:
                    raise Broken(f"ListBots lists {v.display!r}, which was removed")
                continue
            if got is None or (got.kind, got.version, got.status) != (v.kind, v.number, v.status):
                raise Broken(f"ListBots: {v.display!r} should be {v.kind} v{v.number} {v.status}, "
                             f"listed as {got}")

    @rule(data=st.data())
    @step
    def remove_bot(self, data) -> None:
        name = self._pick_name(data)
        outcome = self.call("RemoveBot", opb.RemoveBotRequest(name=name))
        found = self._find(name)
        if found is None:
            return expect(outcome, grpc.StatusCode.NOT_FOUND, f"RemoveBot({name!r:.80})")
        expect(outcome, OK, f"RemoveBot({name!r})")
        reply = opb.RemoveBotResponse.FromString(outcome.reply)
        if reply.name != found.display:
            raise Broken(f"RemoveBot({name!r}) removed {reply.name!r}, expected {found.display!r}")
        found.status = "removed"

    @rule(data=st.data())
    @step
    def bot_logs(self, data) -> None:
        name = self._pick_name(data)
        outcome = self.call("BotLogs", opb.BotLogsRequest(name=name))
        found = self._find(name)
        what = f"BotLogs({name!r:.80})"
        if found is None:
            return expect(outcome, grpc.StatusCode.NOT_FOUND, what)
        if found.kind == "remote":
            return expect(outcome, grpc.StatusCode.FAILED_PRECONDITION, what, "remote bot")
        expect(outcome, OK, what)
        if len(opb.BotLogsResponse.FromString(outcome.reply).text) > 64 * 1024:
            raise Broken(f"{what}: more than 64 KiB of logs")

    def _pick_name(self, data) -> str:
        """A name the machine entered (its display or base name), or anything."""
        mine = [v.display for v in self.mine] + [v.base for v in self.mine]
        choices = [bot_names()] + ([st.sampled_from(mine)] * 3 if mine else [])
        name = data.draw(st.one_of(*choices))
        only_if(name not in self.reserved)
        return name

    # ---------------------------------------------------------------- tournaments

    def _ready(self) -> list[Version]:
        return [v for v in self._live() if v.kind == "remote"]

    @precondition(lambda self: len(self._ready()) >= 2)
    @rule(data=st.data(), fault=st.sampled_from(
        ["none", "none", "games", "table", "move", "bank", "ruleset", "option key",
         "option value", "bots unknown", "bots twice", "bots one", "bots none", "bots removed",
         "name", "name again", "no token"]))
    @step
    def run_tournament(self, data, fault: str) -> None:
        """A tournament of the machine's bots, with one fault or none."""
        ready = [v.display for v in self._ready()]
        bots = data.draw(st.lists(st.sampled_from(ready), min_size=2, max_size=3, unique=True))
        request = opb.TournamentRequest(
            name=f"org-{secrets.token_hex(4)}", bots=bots, games=data.draw(st.integers(0, 3)),
            table_size=data.draw(st.sampled_from([0, 2])),
            ruleset=data.draw(st.sampled_from(("",) + RULESETS)),
            move_ms=data.draw(st.sampled_from([0, 1, 500, MAX_CLOCK_MS])),
            bank_ms=data.draw(st.sampled_from([0, 1, 10_000])),
            no_duplicate=data.draw(st.booleans()), seed=data.draw(values.uint64s()))
        if data.draw(st.booleans()):
            request.options.update({"max_plays": "200"} if request.ruleset in ("", "modern") else {})
        code, words = OK, None
        if fault == "games":
            request.games = data.draw(st.one_of(st.integers(-(2**31), -1),
                                                st.integers(MAX_MATCHES + 1, 2**31 - 1)))
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "table":
            request.table_size = data.draw(st.one_of(st.integers(-(2**31), -1), st.just(1),
                                                     st.integers(len(bots) + 1, 2**31 - 1)))
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault in ("move", "bank"):   # a day at most (MAX_CLOCK_S), as arena match's
            setattr(request, f"{fault}_ms", data.draw(st.one_of(
                st.integers(-(2**31), -1), st.integers(MAX_CLOCK_MS + 1, 2**31 - 1))))
            code, words = grpc.StatusCode.INVALID_ARGUMENT, f"{fault}_ms"
        elif fault == "ruleset":
            request.ruleset = data.draw(values.texts(big=False))
            only_if(request.ruleset not in RULESETS + ("",))
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "option key":
            request.options["zz" + data.draw(st.text(max_size=10))] = "1"
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "option value":
            request.ruleset = "modern"
            request.options["max_plays"] = data.draw(
                st.sampled_from(["", "abc", "1e3", "9" * 5000, "-5", "0x10"]))
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "bots unknown":
            request.bots.append(data.draw(bot_names()))
            only_if(self._find(request.bots[-1]) is None and request.bots[-1] not in self.reserved)
            code = grpc.StatusCode.NOT_FOUND
        elif fault == "bots twice":
            request.bots.append(bots[0])
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "bots one":
            del request.bots[1:]
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "bots none":
            # organizer.proto: no bots with a name follows that tournament, NOT_FOUND where
            # there is none (this name is new); with no name, a new one has too few bots
            del request.bots[:]
            if data.draw(st.booleans()):
                request.name = ""
                code = grpc.StatusCode.INVALID_ARGUMENT
            else:
                code = grpc.StatusCode.NOT_FOUND
        elif fault == "bots removed":
            removed = [v.display for v in self.mine if v.status == "removed" and v.kind == "remote"]
            only_if(removed and all(self._find(r) is None for r in removed))
            request.bots.append(data.draw(st.sampled_from(removed)))
            code = grpc.StatusCode.NOT_FOUND
        elif fault == "name":
            # arena.tournament.tournament.name_problem: no control or format character, no
            # blank at either end, no '-' first (a name is printed in commands to copy)
            request.name = data.draw(st.one_of(st.just("ladder"), st.just("x" * 65),
                                               st.text(min_size=1, max_size=3).map(lambda t: "a\x00" + t),
                                               st.sampled_from(["evil\u202eeman", "a\u200bb", " ",
                                                                " a", "a ", "-x"]),
                                               st.integers(65, 100_000).map(lambda n: "n" * n)))
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif fault == "name again":
            only_if(self.tournaments)
            request.name = data.draw(st.sampled_from(self.tournaments))
        elif fault == "no token":
            code = grpc.StatusCode.UNAUTHENTICATED
        data = request.SerializeToString()
        outcome = self.server_stream(self.t.hostile, ORG + "RunTournament", data,
                                     None if fault == "no token" else self.t.auth, limit=1, wait=10)
        what = f"RunTournament({fault}: {str(request)[:300]!r})"
        self._not_too_big(outcome, len(data), what)
        if code != OK:
            return expect(outcome, code, what, words)
        if outcome.code not in (OK, grpc.StatusCode.CANCELLED) or not outcome.replies:
            raise Broken(f"{what}: expected a stream, got {outcome.code.name}: {outcome.details[:300]!r}")
        first = opb.TournamentProgress.FromString(outcome.replies[0])
        if not first.HasField("started") or first.started.name != request.name:
            raise Broken(f"{what}: first message {first}")
        if fault != "name again":
            tables = math.comb(len(bots), request.table_size or 2)
            total = tables * (request.games or 10)
            if list(first.started.bots) != list(bots) or first.started.total != total:
                raise Broken(f"{what}: started {first.started}")
            self.tournaments.append(request.name)

    @rule(name=st.one_of(st.just(""), st.just("ladder"), values.texts(), st.just("healthy-1")),
          mine=st.booleans())
    @step
    def standings(self, name: str, mine: bool) -> None:
        if mine and self.tournaments:
            name = self.tournaments[-1]
        outcome = self.call("Standings", opb.StandingsRequest(name=name))
        if name == "":
            only_if(self.t.with_healthy or self.tournaments)   # else: no tournament yet
        known = name == "" or name == "healthy-1" and self.t.with_healthy or name in self.tournaments
        if not known:
            only_if(not name.startswith(("healthy-", "fuzz-", "org-")))
            return expect(outcome, grpc.StatusCode.NOT_FOUND, f"Standings({name!r:.80})")
        expect(outcome, OK, f"Standings({name!r})")

    @rule(name=st.one_of(st.just(""), st.just("ladder"), values.texts()), mine=st.booleans())
    @step
    def cancel_tournament(self, name: str, mine: bool) -> None:
        """One of the machine's tournaments (its bots never connect: running, or over
        already), the ladder, or a name that is none."""
        if mine and self.tournaments:
            name = self.tournaments[-1]
        # another example's tournament (or a healthy one) is not for this one to stop
        only_if(name in self.tournaments or name == "ladder"
                or not name.startswith(("healthy-", "fuzz-", "org-")))
        outcome = self.call("CancelTournament", opb.CancelTournamentRequest(name=name))
        what = f"CancelTournament({name!r:.80})"
        if name in self.tournaments:
            if outcome.code == OK:
                reply = opb.CancelTournamentResponse.FromString(outcome.reply)
                if reply.name != name or not 0 <= reply.played <= reply.total:
                    raise Broken(f"{what} answered {reply}")
                return
            return expect(outcome, grpc.StatusCode.FAILED_PRECONDITION, what, "is not running")
        if name == "ladder":
            return expect(outcome, grpc.StatusCode.FAILED_PRECONDITION, what, "the ladder")
        expect(outcome, grpc.StatusCode.NOT_FOUND, what)

    # ---------------------------------------------------------------- strangers

    @rule(method=st.sampled_from(sorted(REQUESTS)),
          token=st.sampled_from([None, "Bearer wrong", "Basic abc", "Bearer ", "bearer"]))
    @step
    def without_the_token(self, method: str, token) -> None:
        """Every call without the organiser's token: UNAUTHENTICATED, whatever it asks."""
        if method == "UploadBot":
            outcome = self.client_stream(self.t.hostile, ORG + method, [
                opb.UploadChunk(header=opb.UploadHeader(name="ox")).SerializeToString()],
                self._metadata(token))
        elif method == "RunTournament":
            outcome = self.server_stream(self.t.hostile, ORG + method, opb.TournamentRequest(
                bots=[v.display for v in self._ready()]).SerializeToString(), self._metadata(token))
        else:
            outcome = self.call(method, REQUESTS[method](), token)
        expect(outcome, grpc.StatusCode.UNAUTHENTICATED, f"{method} with {token!r}")

    @rule(method=st.sampled_from(sorted(REQUESTS)),
          payload=st.one_of(values.raw_bytes(), values.other_messages()),
          token=st.booleans())
    @step
    def raw_bytes(self, method: str, payload: bytes, token: bool) -> None:
        """Bytes that may not be the method's message: INVALID_ARGUMENT when protobuf
        cannot parse them (before the token is looked at, for unary calls)."""
        try:
            REQUESTS[method].FromString(payload)
        except DecodeError:
            parsed = False
        else:
            parsed = True
        only_if(not parsed or method in ("ListBots",))
        metadata = self.t.auth if token else None
        if method == "UploadBot":
            outcome = self.client_stream(self.t.hostile, ORG + method, [payload], metadata)
            want = grpc.StatusCode.INVALID_ARGUMENT if token else grpc.StatusCode.UNAUTHENTICATED
        elif method == "RunTournament":
            outcome = self.server_stream(self.t.hostile, ORG + method, payload, metadata)
            want = grpc.StatusCode.INVALID_ARGUMENT
        else:
            outcome = self.unary(self.t.hostile, ORG + method, payload, metadata)
            want = grpc.StatusCode.INVALID_ARGUMENT if not parsed else OK if token else \
                grpc.StatusCode.UNAUTHENTICATED
        expect(outcome, want, f"{method} of {payload!r:.100} with{'' if token else 'out'} the token")

    # ---------------------------------------------------------------- the end

    def teardown(self) -> None:
        """Withdraw every version the machine entered (its tournaments then end)."""
        for v in self._live():
            outcome = self.call("RemoveBot", opb.RemoveBotRequest(name=v.display))
            if not self.failed and outcome.code != OK:
                raise Broken(f"RemoveBot({v.display!r}) at the end: {outcome.code.name} {outcome.details}")
            v.status = "removed"
