"""The certificates of the grading cluster: ``make dask-certs`` (``python -m autograder.pipeline.dask_tls``).

Grading over Dask (:mod:`autograder.pipeline.dask_cluster`) needs a cluster whose every connection is TLS
with mutual authentication: the scheduler, each worker and the instructor's client each show a
certificate signed by the course's own certificate authority, and nothing else is let in. This
module writes, into one folder (``autograder/.dask-tls/`` by default, git-ignored):

- ``ca.pem``: the certificate of the course's authority (public; every machine needs it);
- ``scheduler.pem`` / ``scheduler-key.pem``: the scheduler's certificate and key;
- ``worker.pem`` / ``worker-key.pem``: the workers' certificate and key (one pair for all);
- ``client.pem`` / ``client-key.pem``: the instructor's (what ``make grade --scheduler`` shows).

Keys are written with mode 600, the folder with 700. The authority's own key is never written:
no certificate can be added later, and a new set (``--force``) replaces the whole cluster's.
Dask does not tell roles apart: whoever holds any of these keys can run code on the workers, so
give the worker key only to machines that grade, and the client key to nobody.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
from pathlib import Path

from autograder.errors import RefusedInput, command_line

#: where ``make grade --scheduler tls://...`` looks for the client's files unless told otherwise
DEFAULT_DIR = Path(__file__).resolve().parents[1] / ".dask-tls"
ROLES = ("scheduler", "worker", "client")
CA = "ca.pem"


def cert_file(folder: Path, role: str) -> Path:
    return folder / f"{role}.pem"


def key_file(folder: Path, role: str) -> Path:
    return folder / f"{role}-key.pem"


def _name(common: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "selfattn grading"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(subject: str, key, issuer: str, issuer_key, days: int, authority: bool):
    """One X.509 certificate for ``key``'s public half, signed by ``issuer_key``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=authority, path_length=0 if authority else None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                              critical=False))
    if authority:
        usage = x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                              encipher_only=False, decipher_only=False)
    else:  # every member of a Dask cluster both listens and connects
        usage = x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=True, key_cert_sign=False, crl_sign=False,
                              encipher_only=False, decipher_only=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                               ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(f"dask-{subject}")]),
                                        critical=False)
    return builder.add_extension(usage, critical=True).sign(issuer_key, hashes.SHA256())


def _write(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` with ``mode`` from the start (a key is never readable by others, not even briefly)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, mode)  # whatever the umask took away


def write(folder: Path = DEFAULT_DIR, days: int = 365, force: bool = False) -> list[Path]:
    """Write a new authority and a certificate and key per role into ``folder``; return the files.

    Raises ``GradingError`` (one line) when ``folder`` already holds certificates and not ``force``.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    names = [CA] + [p for r in ROLES for p in (cert_file(Path(), r).name, key_file(Path(), r).name)]
    present = [n for n in names if os.path.lexists(folder / n)]
    if present and not force:
        raise RefusedInput(f"refused: {folder} already holds the cluster's certificates ({', '.join(present)}); "
                         "pass --force to replace them (then restart the scheduler and workers with the new ones)")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    for n in present:
        (folder / n).unlink()
    ca_key = ec.generate_private_key(ec.SECP256R1())
    pem = serialization.Encoding.PEM
    ca = _certificate("grading-ca", ca_key, "grading-ca", ca_key, days, authority=True)
    _write(folder / CA, ca.public_bytes(pem), 0o644)
    written = [folder / CA]
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(role, key, "grading-ca", ca_key, days, authority=False)
        _write(cert_file(folder, role), cert.public_bytes(pem), 0o644)
        _write(key_file(folder, role), key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()), 0o600)
        written += [cert_file(folder, role), key_file(folder, role)]
    return written


def cluster_security(folder: Path = DEFAULT_DIR):
    """A ``distributed.security.Security`` holding every role's files of ``folder``, encryption
    required: for a program that starts the whole cluster (dask-jobqueue's ``SLURMCluster``)."""
    from distributed.security import Security

    roles = {f"tls_{role}_{part}": str(path) for role in ROLES
             for part, path in (("cert", cert_file(folder, role)), ("key", key_file(folder, role)))}
    return Security(tls_ca_file=str(folder / CA), require_encryption=True, **roles)


def tls_options(folder: Path, role: str) -> list[str]:
    """The options of ``dask scheduler`` / ``dask worker`` that make it use ``role``'s files."""
    return ["--tls-ca-file", str(folder / CA), "--tls-cert", str(cert_file(folder, role)),
            "--tls-key", str(key_file(folder, role))]


def instructions(folder: Path) -> str:
    """How to start the scheduler and the workers with the files in ``folder`` and grade on them."""
    def cmd(*words: str) -> str:
        return " ".join(shlex.quote(w) for w in words)

    grade_args = "--scheduler tls://SCHEDULER:8786"
    if folder.resolve() != DEFAULT_DIR:
        grade_args += " " + cmd("--tls-ca", str(folder / CA), "--tls-cert", str(cert_file(folder, "client")),
                                "--tls-key", str(key_file(folder, "client")))
    return "\n".join([
        f"Wrote the grading cluster's certificates to {folder} (keys: mode 600).",
        "Start the scheduler (on one machine; it needs ca.pem, scheduler.pem, scheduler-key.pem; its web pages,"
        " plain HTTP, stay on that machine):",
        "  " + cmd(".venv/bin/dask", "scheduler", "--protocol", "tls", "--host", "0.0.0.0", "--port", "8786",
                   "--dashboard-address", "127.0.0.1:8787", *tls_options(folder, "scheduler")),
        "Start a worker (on each grading machine; copy ca.pem, worker.pem, worker-key.pem there, mode 600):",
        "  " + cmd(".venv/bin/dask", "worker", "tls://SCHEDULER:8786", "--nthreads", "2",
                   *tls_options(folder, "worker")),
        "Grade (on your machine, which keeps client.pem and client-key.pem to itself):",
        f"  make grade GRADE_ARGS=\"{grade_args}\"",
    ])


@command_line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where to write them (default: %(default)s)")
    p.add_argument("--days", type=int, default=365, help="how long the certificates are valid (default: 365)")
    p.add_argument("--force", action="store_true", help="replace the certificates already in --dir")
    a = p.parse_args(argv)
    write(a.dir, a.days, a.force)
    shown = a.dir.resolve()
    try:  # the commands are meant to run from the repository's root
        shown = shown.relative_to(Path.cwd())
    except ValueError:
        pass
    print(instructions(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
