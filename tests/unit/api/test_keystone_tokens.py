"""``serve --keystone``: Keystone's answers read field by field, the options checked before anything listens, and
a Keystone that does not answer is a 503 (retry), never a 401. The tokens themselves are checked against a real
Keystone in ``tests/integration/neutron/test_neutron_drivers.py``."""

from __future__ import annotations

import argparse
import asyncio
import socket
from pathlib import Path

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.keystone import KeystoneAccess, KeystoneBook, read_token
from srfabric.api.serve_options import add_parser, keystone_from
from srfabric.errors import SrfabricError

GOOD = {"token": {"expires_at": "2026-12-06T14:00:00.000000Z", "project": {"id": "p1"},
                  "roles": [{"name": "admin"}]}}


def test_an_admin_role_makes_an_admin_and_the_expiry_is_kept() -> None:
    principal, until = read_token(GOOD)
    assert principal.admin and principal.project == "p1" and until == 1796565600.0


@pytest.mark.parametrize(("document", "field"), [
    (None, "token"), ({"token": []}, "token"), ({"token": {"roles": []}}, "token.project"),
    ({"token": {"project": {"id": ""}, "roles": []}}, "token.project"),
    ({"token": {"project": {"id": "p"}, "roles": "admin"}}, "token.roles"),
    ({"token": {"project": {"id": "p"}, "roles": [{"id": 1}]}}, "token.roles"),
    ({"token": {"project": {"id": "p"}, "roles": [], "expires_at": "soon"}}, "token.expires_at"),
])
def test_a_reply_not_as_keystone_s_api_says_names_its_field(document: object, field: str) -> None:
    with pytest.raises(SrfabricError) as raised:
        read_token(document)
    assert raised.value.message.startswith(f"{field}:")


def parse(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(["serve", *words])


def test_the_options_are_checked_before_anything_listens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SRFABRIC_KEYSTONE_PASSWORD", raising=False)
    assert keystone_from(parse()) is None
    for words, option in [(("--keystone", "keystone:5000"), "--keystone"),
                          (("--keystone", "http://k/v3", "--no-auth"), "--keystone"),
                          (("--keystone", "http://k/v3"), "--keystone-password-file"),
                          (("--keystone", "http://k/v3", "--keystone-password-file", str(tmp_path / "none")),
                           "--keystone-password-file"),
                          (("--keystone", "http://k/v3", "--keystone-cache-s", "0"), "--keystone-cache-s")]:
        with pytest.raises(SrfabricError) as raised:
            keystone_from(parse(*words))
        assert raised.value.field == option, words
    (tmp_path / "password").write_text("s3cret\n")
    access = keystone_from(parse("--keystone", "http://k/v3", "--keystone-password-file", str(tmp_path / "password")))
    assert access == KeystoneAccess("http://k/v3", "srfabric", "s3cret", "service", "Default", 300.0)


def test_a_keystone_that_does_not_answer_is_a_503_and_the_static_token_still_works() -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v3"
    book = KeystoneBook(KeystoneAccess(url, "srfabric", "pw"), admin_token="operator")
    asyncio.run(book.learn(b"operator"))  # the static token never reaches Keystone
    assert book.who(b"operator").admin
    with pytest.raises(ApiError) as raised:
        asyncio.run(book.learn(b"a-keystone-token"))
    assert raised.value.status == 503
    with pytest.raises(ApiError) as refused:
        book.who(b"a-keystone-token")
    assert refused.value.status == 401
