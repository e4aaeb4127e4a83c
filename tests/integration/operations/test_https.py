"""The API and the web view over HTTPS (``serve --api-tls DIR``): srfabric's client checks the certificate against
the fabric's CA (``SRFABRIC_CACERT``), a client without that CA is refused by TLS, plain HTTP gets no answer, and
the web view's cookie is marked Secure. A real ``srfabric serve``."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from srfabric.cli.client import CACERT_ENV, SfcClient
from srfabric.errors import SrfabricError
from srfabric.security.pki import make_ca, make_certificate
from srfabric_tools.testbed.api_lab import ServeProcess


def test_the_api_over_https(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    with ServeProcess(f"sqlite:///{tmp_path}/api.db", extra_args=("--api-tls", str(tmp_path))) as serve:
        assert "API on https://" in serve.output()
        url = f"https://127.0.0.1:{serve.port}"
        monkeypatch.setenv(CACERT_ENV, str(ca.cert))
        with SfcClient(url, serve.token) as client:
            assert client.list("ports") == []
        monkeypatch.delenv(CACERT_ENV)
        with pytest.raises((SrfabricError, ssl.SSLError, OSError)), SfcClient(url, serve.token) as client:
            client.list("ports")  # the system's CAs do not know the fabric's
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{serve.port}/v2.0/ports", timeout=5)
        login = httpx.post(f"{url}/ui/", data={"token": serve.token}, follow_redirects=False,
                           verify=ssl.create_default_context(cafile=str(ca.cert)))
        assert login.status_code == 303
        cookie = login.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie
