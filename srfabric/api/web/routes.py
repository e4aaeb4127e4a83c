"""The resource routes as the OpenAPI document describes them: Neutron's URLs, bodies and status codes.

``dispatch.ResourceApp`` serves these routes. FastAPI only reads the typed signatures below to
build ``/openapi.json``; the handlers are never called, so their bodies are empty.

No ``from __future__ import annotations`` here: FastAPI reads the body types, made at run time, from the
annotations of the handlers.
"""


from typing import Any

from fastapi import Query
from fastapi.responses import Response
from fastapi.routing import APIRoute

from srfabric.api.resources.kinds import KINDS, ResourceKind

# Collection path -> resource kind, as ``ResourceApp`` looks requests up.
RESOURCES: dict[str, ResourceKind] = {kind.path: kind for kind in KINDS.values()}


def _resource_routes(path: str, resource: ResourceKind) -> list[APIRoute]:
    """One resource's five operations, with the same names (and so operation ids) as when FastAPI served them."""
    collection, member = resource.collection, resource.member
    create_body, update_body = resource.create_body, resource.update_body

    async def list_items(fields: list[str] = Query(default=[])) -> None:  # noqa: B008
        """List; query parameters other than Neutron's paging and ``fields`` filter on equal field values."""

    async def show_item(ident: str, fields: list[str] = Query(default=[])) -> None:  # noqa: B008
        """Show one; ``fields`` selects fields."""

    async def create_item(payload: create_body) -> None:  # type: ignore[valid-type]
        """Create; the answer comes once the switches confirmed the change."""

    async def update_item(ident: str, payload: update_body) -> None:  # type: ignore[valid-type]
        """Update the fields networking-sfc lets a PUT change."""

    async def delete_item(ident: str) -> None:
        """Delete; 409 while another resource uses it."""

    common: dict[str, Any] = {"tags": [collection]}
    member_path = f"{path}/{{ident}}"
    return [
        APIRoute(path, list_items, methods=["GET"], name=f"list_{collection}", **common),
        APIRoute(path, create_item, methods=["POST"], status_code=201, name=f"create_{member}", **common),
        APIRoute(member_path, show_item, methods=["GET"], name=f"show_{member}", **common),
        APIRoute(member_path, update_item, methods=["PUT"], name=f"update_{member}", **common),
        APIRoute(member_path, delete_item, methods=["DELETE"], status_code=204, name=f"delete_{member}",
                 response_class=Response, **common),
    ]


def documented_routes() -> list[APIRoute]:
    """Every resource's operations, for FastAPI's OpenAPI document (the router checks the token itself)."""
    return [route for path, resource in RESOURCES.items() for route in _resource_routes(path, resource)]
