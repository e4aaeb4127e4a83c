"""Keystone for the stack (keystone 30 from the package index, in the Neutron venv, on the stack's MariaDB), so that
Neutron's projects and policy apply as in a cloud: Neutron takes Keystone tokens (``auth_strategy = keystone``,
keystonemiddleware), its policy gives a project's members their own ports and chains only, and an admin sees all.

``setup`` writes keystone.conf, migrates its database, makes the Fernet keys and bootstraps the admin; ``populate``
makes the service project with Neutron's service user and a ``nova`` user of the service role (the ``compute``
cloud, which binds ports as Nova does), two demo projects with a member each, and the network
service's endpoint, and returns the credentials for a ``clouds.yaml``."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

KEYSTONE_CONF = """[DEFAULT]
log_file = {state}/keystone.log
[database]
connection = {db}
[token]
provider = fernet
[fernet_tokens]
key_repository = {state}/fernet-keys
[fernet_receipts]
key_repository = {state}/fernet-keys
[credential]
key_repository = {state}/credential-keys
"""
AUTHTOKEN = """[keystone_authtoken]
www_authenticate_uri = {url}
auth_url = {url}
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = neutron
password = {password}
"""
# The demo's projects and their members (user -> project); each has the member role in its project only.
MEMBERS = {"alice": "project-a", "bob": "project-b"}


def manage(state: Path, *words: str) -> None:
    done = subprocess.run([str(Path(sys.prefix) / "bin" / "keystone-manage"), "--config-file",
                           str(state / "keystone.conf"), *words], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"keystone-manage {words[0]}: {done.stderr.strip()[-1500:]}")


def setup(state: Path, db: str, url: str, admin_password: str) -> None:
    """keystone.conf in ``state``, the database migrated, the keys made and the admin bootstrapped (each step is
    one Keystone does again harmlessly)."""
    (state / "keystone.conf").write_text(KEYSTONE_CONF.format(state=state, db=db))
    for keys in ("fernet-keys", "credential-keys"):
        (state / keys).mkdir(mode=0o700, exist_ok=True)
    manage(state, "db_sync")
    manage(state, "fernet_setup", "--keystone-user", "root", "--keystone-group", "root")
    manage(state, "credential_setup", "--keystone-user", "root", "--keystone-group", "root")
    # One word with "=": a generated password may start with "-", which would read as the next option.
    manage(state, "bootstrap", f"--bootstrap-password={admin_password}", "--bootstrap-admin-url", f"{url}/v3",
           "--bootstrap-internal-url", f"{url}/v3", "--bootstrap-public-url", f"{url}/v3",
           "--bootstrap-region-id", "RegionOne")


def populate(url: str, admin_password: str, neutron_url: str, neutron_password: str) -> dict[str, dict[str, str]]:
    """The service users, the demo projects and members, and Neutron's endpoint; the clouds' credentials (by
    cloud name: admin, compute, alice, bob)."""
    from keystoneauth1 import session
    from keystoneauth1.identity import v3
    from keystoneclient.v3 import client

    admin = client.Client(session=session.Session(auth=v3.Password(
        auth_url=f"{url}/v3", username="admin", password=admin_password, project_name="admin",
        user_domain_id="default", project_domain_id="default")))
    roles = {role.name: role for role in admin.roles.list()}
    for name in ("admin", "member", "service"):
        if name not in roles:
            roles[name] = admin.roles.create(name)

    def project(name: str) -> Any:
        return next(iter(admin.projects.list(name=name)), None) or admin.projects.create(name, "default")

    def user(name: str, password: str) -> Any:
        found = next(iter(admin.users.list(name=name)), None)
        if found is not None:
            return admin.users.update(found, password=password)
        return admin.users.create(name, domain="default", password=password)

    admin.roles.grant(roles["admin"], user=user("neutron", neutron_password), project=project("service"))
    clouds = {"admin": {"username": "admin", "password": admin_password, "project_name": "admin"}}
    # Nova's part: the service role binds ports to a compute host and fills their binding:profile (the fabric
    # switch and port of a service function), which Neutron's policy leaves to services alone.
    nova_password = secrets.token_hex(12)
    admin.roles.grant(roles["service"], user=user("nova", nova_password), project=project("service"))
    clouds["compute"] = {"username": "nova", "password": nova_password, "project_name": "service"}
    for name, project_name in MEMBERS.items():
        password = secrets.token_hex(12)
        admin.roles.grant(roles["member"], user=user(name, password), project=project(project_name))
        clouds[name] = {"username": name, "password": password, "project_name": project_name}
    service = next(iter(admin.services.list(type="network")), None) or admin.services.create("neutron", "network")
    for interface in ("public", "internal", "admin"):
        if not admin.endpoints.list(service=service, interface=interface):
            admin.endpoints.create(service, neutron_url, interface=interface, region="RegionOne")
    return clouds


def clouds_yaml(url: str, clouds: dict[str, dict[str, str]]) -> str:
    """``clouds.yaml`` for the openstack client: ``openstack --os-cloud alice ...``."""
    lines = ["clouds:"]
    for name, credentials in clouds.items():
        lines += [f"  {name}:", "    auth:", f"      auth_url: {url}/v3",
                  *(f"      {key}: {value}" for key, value in credentials.items()),
                  "      user_domain_name: Default", "      project_domain_name: Default",
                  "    region_name: RegionOne", "    identity_api_version: 3"]
    return "\n".join(lines) + "\n"
