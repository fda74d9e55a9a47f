"""``arena serve`` over TLS, with a certificate authority and a server certificate the
test makes: organiser commands and remote bots trust it with ``--tls-ca`` or
``ONO99_TLS_CA``; without it they fail at once with a clear message, and so does a client
that trusts another authority."""

from __future__ import annotations

import datetime
import ipaddress
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.serve import BOTS, ROOT, Served, command


def make_ca(folder: Path, name: str) -> tuple[Path, ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    path = folder / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, key, cert


def make_server_cert(folder: Path, ca_key, ca_cert) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, signed by the authority."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = folder / "server.pem", folder / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def tls_server(tmp_path, mark):
    ca, ca_key, ca_cert = make_ca(tmp_path, "test-ca")
    cert, key = make_server_cert(tmp_path, ca_key, ca_cert)
    served = Served(tmp_path / "tls.db", mark, "--tls-cert", cert, "--tls-key", key)
    yield served, ca
    served.stop()


def test_organizer_and_bots_speak_tls_to_the_server(tls_server, tmp_path):
    served, ca = tls_server
    assert re.search(r"arena server at \S+ \(TLS\)", served.output)
    # the spectators speak TLS too: the command printed for them says how to trust it (it
    # said 'arena watch ADDR --tv', which found no spectator service)
    text = served._wait_for(r"spectators at \S+: .*\n")
    watch = re.search(r"^spectators at (\S+): (arena watch .*)$", text, re.M)
    assert watch.group(2).startswith(f"arena watch {watch.group(1)} --tv --tls-ca CERT"), watch[0]
    listed = subprocess.run(command("watch", watch.group(1), "--tls-ca", ca), cwd=ROOT,
                            env=served.env(), capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    out = served.ok("bots", "add", "far", "--tls-ca", ca).stdout
    token = re.search(r"^bot token: (\S+)$", out, re.M).group(1)
    # the line that says how to run it says TLS too: run as it said, a bot waited 30 s
    assert re.search(r"run it anywhere with ONO99_REFEREE=\S+ ONO99_TOKEN=<the token> "
                     r"ONO99_TLS_CA=<the server's certificate>$", out, re.M), out
    served.ok("bots", "add", "greedy", "--dir", BOTS / "greedy", ONO99_TLS_CA=str(ca))
    bot = served.remote_bot("random/bot.py", token, ONO99_TLS_CA=str(ca))
    try:
        proc = served.ok("tournament", "far", "greedy", "--games", "3", "--tls-ca", ca)
        assert re.search(r"^3 matches played in .* faults: none$", proc.stdout, re.M), proc.stdout
    finally:
        bot.terminate()
        bot.wait(10)


def test_without_the_certificate_clients_fail_clearly(tls_server, tmp_path):
    served, ca = tls_server
    plain = served.arena("bots", "list", timeout=60)
    assert plain.returncode == 1 and "with TLS, give --tls or --tls-ca" in plain.stderr, plain.stderr
    other, _, _ = make_ca(tmp_path, "other-ca")
    wrong = served.arena("bots", "list", "--tls-ca", other, timeout=60)
    assert wrong.returncode == 1 and "no arena server answers" in wrong.stderr, wrong.stderr
    # one line each: gRPC's own log of every failed handshake ("I1205 ... Handshake
    # failed with error SSL_ERROR_SSL ...") came before it
    assert len(plain.stderr.splitlines()) == 1 and len(wrong.stderr.splitlines()) == 1, \
        plain.stderr + wrong.stderr
    spectators = re.search(r"spectators at (\S+):", served.output).group(1)
    watched = subprocess.run(command("watch", spectators, "--tls-ca", other),
                             cwd=ROOT, env=served.env(), capture_output=True, text=True,
                             timeout=60)
    assert watched.returncode == 1 and watched.stderr.startswith(
        "arena watch: error: no spectator service at "), watched.stderr
    assert len(watched.stderr.splitlines()) == 1, watched.stderr
    missing = served.arena("bots", "list", "--tls-ca", tmp_path / "nowhere.pem")
    assert missing.returncode == 2 and "cannot read the TLS certificate" in missing.stderr

    token = re.search(r"^bot token: (\S+)$", served.ok("bots", "add", "b", "--tls-ca", ca).stdout,
                      re.M).group(1)
    env = served.env(ONO99_REFEREE=served.address, ONO99_TOKEN=token)
    bot = subprocess.run([sys.executable, str(BOTS / "random" / "bot.py"), "--connect-timeout", "1"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert bot.returncode == 4 and "no referee reachable" in bot.stderr, bot.stderr
    bot = subprocess.run([sys.executable, str(BOTS / "random" / "bot.py"), "--connect-timeout", "1",
                          "--tls-ca", str(other)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=30)
    assert bot.returncode == 4 and "does it speak TLS, with that certificate?" in bot.stderr
    bot = subprocess.run([sys.executable, str(BOTS / "random" / "bot.py"), "--tls-ca",
                          str(tmp_path / "nowhere.pem")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=30)
    assert bot.returncode == 2 and "cannot read the TLS certificate" in bot.stderr


def test_serve_needs_both_the_certificate_and_the_key(tmp_path):
    proc = subprocess.run(command("serve", "--db", tmp_path / "x.db", "--tls-cert", tmp_path / "c"),
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "TLS needs both --tls-cert and --tls-key" in proc.stderr
