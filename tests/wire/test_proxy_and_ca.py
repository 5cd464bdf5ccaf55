"""What the client honours behind a corporate proxy or with a company's own certificate authority, as the how-to
page docs/how-to/proxy-and-ca.md says: ``HTTPS_PROXY`` (a CONNECT tunnel, so the proxy never sees the token),
``NO_PROXY``, ``SSL_CERT_FILE``, and an ``http_client=`` of the caller's own with ``proxy=`` and ``verify=``.

The service is the sandbox served over TLS on loopback, under a certificate of a certificate authority made for
the test (no system store trusts it), and the proxy a small CONNECT proxy on loopback that records what it is
asked and every byte it relays. Nothing leaves the machine.
"""

from __future__ import annotations

import datetime
import ipaddress
import select
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from storeframes.wire.http import lib

APPS = World(0).app_ids("ios")[:2]
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")


@dataclass
class Authority:
    """A certificate authority of the test's own and a server certificate it signed for ``localhost``."""

    ca: Path
    certificate: Path
    key: Path


def _authority(folder: Path) -> Authority:
    # cryptography comes with moto[server], a test dependency
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "storeframes test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    found = Authority(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    found.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    found.certificate.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    found.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return found


@pytest.fixture
def authority(tmp_path: Path) -> Authority:
    return _authority(tmp_path)


@pytest.fixture
def tls_sandbox(authority: Authority) -> Iterator[str]:
    """The sandbox over https on loopback, under the test authority's certificate: its base URL, by the name
    ``localhost`` (the certificate's)."""
    server = SandboxServer(port=0, today="2026-11-20")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(authority.certificate, authority.key)
    server._httpd.socket = context.wrap_socket(server._httpd.socket, server_side=True)
    with server:
        yield f"https://localhost:{server.port}/api/public/store"


@dataclass
class ConnectProxy:
    """A CONNECT proxy on loopback: ``asked`` holds each request line, ``relayed`` every byte it carried."""

    port: int = 0
    asked: list[str] = field(default_factory=list)
    relayed: bytearray = field(default_factory=bytearray)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _relay(client: socket.socket, upstream: socket.socket, proxy: ConnectProxy) -> None:
    sockets = [client, upstream]
    while True:
        readable, _, _ = select.select(sockets, [], [], 10)
        if not readable:
            return
        for each in readable:
            try:
                data = each.recv(65536)
                if data:
                    (upstream if each is client else client).sendall(data)
            except OSError:  # one side went away (a client that refused the certificate resets its connection)
                return
            if not data:
                return
            proxy.relayed += data


def _tunnel(client: socket.socket, proxy: ConnectProxy) -> None:
    with client:
        head = b""
        while b"\r\n\r\n" not in head:
            piece = client.recv(4096)
            if not piece:
                return
            head += piece
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        proxy.asked.append(line)
        method, target, _ = line.split(" ", 2)
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        host, _, port = target.rpartition(":")
        with socket.create_connection((host.strip("[]"), int(port))) as upstream:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            _relay(client, upstream, proxy)


@pytest.fixture
def connect_proxy() -> Iterator[ConnectProxy]:
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = ConnectProxy(port=listener.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            readable, _, _ = select.select([listener], [], [], 0.05)
            if readable:
                client, _ = listener.accept()
                threading.Thread(target=_tunnel, args=(client, proxy), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield proxy
    stop.set()
    thread.join()
    listener.close()


@pytest.fixture
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy or CA variable of this machine (in either case) reaches the test."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def _metadata(base_url: str, **options: object) -> int:
    with sf.Client(SANDBOX_KEY, base_url=base_url, cache_dir=False, progress=False, **options) as client:
        return client.metadata_frame(APPS).height


def test_https_proxy_tunnels_to_the_service_and_ssl_cert_file_is_trusted(
    tls_sandbox: str, authority: Authority, connect_proxy: ConnectProxy, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    clean_proxy_env.setenv("HTTPS_PROXY", connect_proxy.url)
    clean_proxy_env.setenv("SSL_CERT_FILE", str(authority.ca))
    assert _metadata(tls_sandbox) == len(APPS)
    port = tls_sandbox.split(":")[2].split("/")[0]
    assert connect_proxy.asked and all(line == f"CONNECT localhost:{port} HTTP/1.1" for line in connect_proxy.asked)
    # the proxy carried the request inside TLS: neither the token nor the path nor an app id crossed it in clear
    carried = bytes(connect_proxy.relayed)
    assert len(carried) > 1000
    assert SANDBOX_KEY.encode() not in carried and b"/apps/metadata.json" not in carried
    assert all(app.encode() not in carried for app in APPS)


def test_without_the_companys_ca_the_certificate_is_refused_as_a_tls_failure(
    tls_sandbox: str, connect_proxy: ConnectProxy, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    clean_proxy_env.setenv("HTTPS_PROXY", connect_proxy.url)
    with pytest.raises(sf.TransportError, match="the TLS handshake failed") as caught:
        _metadata(tls_sandbox, max_tries=1)
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert connect_proxy.asked  # it went through the proxy, and the certificate was refused at the end of the tunnel


def test_no_proxy_sends_to_the_named_host_directly(
    tls_sandbox: str, authority: Authority, connect_proxy: ConnectProxy, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    clean_proxy_env.setenv("HTTPS_PROXY", connect_proxy.url)
    clean_proxy_env.setenv("NO_PROXY", "localhost")
    clean_proxy_env.setenv("SSL_CERT_FILE", str(authority.ca))
    assert _metadata(tls_sandbox) == len(APPS)
    assert connect_proxy.asked == []


def test_an_http_client_of_ones_own_takes_its_proxy_and_ca_from_its_arguments(
    tls_sandbox: str, authority: Authority, connect_proxy: ConnectProxy, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    """No variable set: the proxy and the authority come from the client given as ``http_client=``, which the
    storeframes client sends through and leaves open."""
    own = lib.Client(proxy=connect_proxy.url, verify=ssl.create_default_context(cafile=str(authority.ca)))
    with own:
        assert _metadata(tls_sandbox, http_client=own) == len(APPS)
        assert not own.is_closed
    assert [line.split(" ")[0] for line in connect_proxy.asked] == ["CONNECT"] * len(connect_proxy.asked)
    assert connect_proxy.asked


def test_trust_env_false_ignores_the_variables(
    tls_sandbox: str, authority: Authority, connect_proxy: ConnectProxy, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    """A client of one's own built with ``trust_env=False`` reads neither the proxy nor the CA variables."""
    clean_proxy_env.setenv("HTTPS_PROXY", connect_proxy.url)
    clean_proxy_env.setenv("SSL_CERT_FILE", str(authority.ca))
    with lib.Client(trust_env=False) as own, pytest.raises(sf.TransportError, match="the TLS handshake failed"):
        _metadata(tls_sandbox, http_client=own, max_tries=1)
    assert connect_proxy.asked == []
