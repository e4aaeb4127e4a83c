"""HTTP routes: Neutron's URLs, body wrappers and status codes over ``SfcService``.

No ``from __future__ import annotations`` here: FastAPI reads the body types, made at run time, from the
annotations of the handlers.
"""


from typing import Any

from fastapi import Depends, FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from srfabric.api import schemas
from srfabric.api.service import LIST_PARAMETERS, SfcService

# (collection, member, create schema, update schema, URL prefix)
RESOURCES: list[tuple[str, str, type[BaseModel], type[BaseModel], str]] = [
    ("ports", "port", schemas.PortCreate, schemas.PortUpdate, "/v2.0"),
    ("flow_classifiers", "flow_classifier", schemas.FlowClassifierCreate, schemas.FlowClassifierUpdate, "/v2.0/sfc"),
    ("port_pairs", "port_pair", schemas.PortPairCreate, schemas.PortPairUpdate, "/v2.0/sfc"),
    ("port_pair_groups", "port_pair_group", schemas.PortPairGroupCreate, schemas.PortPairGroupUpdate, "/v2.0/sfc"),
    ("port_chains", "port_chain", schemas.PortChainCreate, schemas.PortChainUpdate, "/v2.0/sfc"),
    ("service_graphs", "service_graph", schemas.ServiceGraphCreate, schemas.ServiceGraphUpdate, "/v2.0/sfc"),
]


def _filters(request: Request) -> dict[str, list[str]]:
    filters: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        if key not in LIST_PARAMETERS:
            filters.setdefault(key, []).append(value)
    return filters


def add_resource_routes(app: FastAPI, service: SfcService, collection: str, member: str, create: type[BaseModel],
                        update: type[BaseModel], prefix: str, auth: Any) -> None:
    """One resource's five routes, added to ``app`` itself: a request then meets one flat list of routes (an
    included router would be matched again, level by level, on every request)."""
    create_body = schemas.body(member, create)
    update_body = schemas.body(member, update)

    # Records are plain JSON already: they go out as they are, without a second pass through pydantic.
    async def list_items(request: Request, fields: list[str] = Query(default=[])) -> JSONResponse:  # noqa: B008
        return JSONResponse({collection: service.find_all(collection, _filters(request), fields)})

    async def show_item(ident: str, fields: list[str] = Query(default=[])) -> JSONResponse:  # noqa: B008
        return JSONResponse({member: service.show(collection, ident, fields)})

    async def create_item(payload: create_body) -> JSONResponse:  # type: ignore[valid-type]
        body = getattr(payload, member).model_dump(exclude_unset=True)
        return JSONResponse({member: await service.create(collection, body)}, status_code=201)

    async def update_item(ident: str, payload: update_body) -> JSONResponse:  # type: ignore[valid-type]
        body = getattr(payload, member).model_dump(exclude_unset=True)
        return JSONResponse({member: await service.update(collection, ident, body)})

    async def delete_item(ident: str) -> Response:
        await service.delete(collection, ident)
        return Response(status_code=204)

    path = f"{prefix}/{collection}"
    common: dict[str, Any] = {"tags": [collection], "dependencies": [Depends(auth)]}
    app.add_api_route(path, list_items, methods=["GET"], name=f"list_{collection}", **common)
    app.add_api_route(path, create_item, methods=["POST"], status_code=201, name=f"create_{member}", **common)
    app.add_api_route(f"{path}/{{ident}}", show_item, methods=["GET"], name=f"show_{member}", **common)
    app.add_api_route(f"{path}/{{ident}}", update_item, methods=["PUT"], name=f"update_{member}", **common)
    app.add_api_route(f"{path}/{{ident}}", delete_item, methods=["DELETE"], status_code=204,
                      name=f"delete_{member}", response_class=Response, **common)
