"""Certificates made in the test run (``cryptography``): a CA, node and client certificates signed by it, written as
PEM files. Nothing private is checked in."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Issued:
    cert_path: str  # the certificate alone
    key_path: str  # the private key alone (PKCS#8, unencrypted)
    bundle_path: str  # key + certificate in one PEM file (Kafka's ssl.keystore.location form)
    cert_pem: str
    key_pem: str


class CA:
    def __init__(self, directory: str, name: str = "kraftwire-test-ca") -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.pem = self.cert.public_bytes(serialization.Encoding.PEM).decode()
        self.path = os.path.join(directory, f"{name}.pem")
        with open(self.path, "w", encoding="ascii") as f:
            f.write(self.pem)

    def issue(self, name: str, *, cn: str | None = None, ou: str | None = None, hosts=("localhost", "127.0.0.1"),
              expired: bool = False, key_password: bytes | None = None) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kraftwire")]
        if ou:
            attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn or name))
        now = datetime.datetime.now(datetime.timezone.utc)
        start, end = ((now - datetime.timedelta(days=10), now - datetime.timedelta(days=1)) if expired
                      else (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)))
        sans = []
        for h in hosts:
            try:
                import ipaddress

                sans.append(x509.IPAddress(ipaddress.ip_address(h)))
            except ValueError:
                sans.append(x509.DNSName(h))
        builder = (x509.CertificateBuilder().subject_name(x509.Name(attrs)).issuer_name(self.cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(end)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                         ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
        encryption = (serialization.BestAvailableEncryption(key_password) if key_password
                      else serialization.NoEncryption())
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption).decode()
        paths = [os.path.join(self.directory, f"{name}.{kind}.pem") for kind in ("cert", "key", "bundle")]
        for path, text in zip(paths, (cert_pem, key_pem, key_pem + cert_pem)):
            with open(path, "w", encoding="ascii") as f:
                f.write(text)
        return Issued(*paths, cert_pem=cert_pem, key_pem=key_pem)
