"""Request bodies of the networking-sfc API: one create and one update schema per resource.

Field names, defaults and which fields a PUT may change follow networking-sfc
(``extensions/sfc.py``, ``flowclassifier.py``, ``servicegraph.py``). Unknown
fields are refused. Checks that need other resources (ports exist, a pair is
in one group, ...) are the service's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

Name = Field(default="", max_length=255)
PortNumber = Field(default=None, ge=0, le=65535)
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
Uuid = Field(pattern=UUID_PATTERN, max_length=36)
OptionalUuid = Field(default=None, pattern=UUID_PATTERN, max_length=36)


def _storable(value: Any) -> Any:
    """Text a database can keep: no NUL character, no lone UTF-16 surrogate (checked inside lists and dicts)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("contains a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("is not valid UTF-8 text") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key)
            _storable(item)
    elif isinstance(value, list):
        for item in value:
            _storable(item)
    return value


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _text_is_storable(cls, value: Any) -> Any:
        return _storable(value)


class Owned(Strict):
    # srfabric's own: a creator may choose the id (the Neutron driver keeps Neutron's), unique per kind.
    id: str | None = OptionalUuid
    name: str = Name
    project_id: str | None = Field(default=None, max_length=255)
    tenant_id: str | None = Field(default=None, max_length=255)


class Described(Owned):
    description: str = Name


class Renamed(Strict):
    """What a PUT may change on most resources."""

    name: str | None = Field(default=None, max_length=255)
    description: str | None = Field(default=None, max_length=255)


# -- ports ---------------------------------------------------------------------------
class FixedIp(Strict):
    ip_address: str = Field(max_length=45)
    subnet_id: str | None = Field(default=None, max_length=36)


class PortCreate(Owned):
    mac_address: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
    fixed_ips: list[FixedIp] = Field(default_factory=list, max_length=8)
    device_owner: str = Name
    device_id: str = Name
    binding_profile: dict[str, Any] = Field(default_factory=dict, alias="binding:profile")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PortUpdate(Strict):
    name: str | None = Field(default=None, max_length=255)
    device_owner: str | None = Field(default=None, max_length=255)
    device_id: str | None = Field(default=None, max_length=255)
    binding_profile: dict[str, Any] | None = Field(default=None, alias="binding:profile")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# -- flow classifiers ----------------------------------------------------------------
class FlowClassifierCreate(Described):
    ethertype: str | None = Field(default=None, max_length=8)
    protocol: str | None = Field(default=None, max_length=8)
    source_port_range_min: int | None = PortNumber
    source_port_range_max: int | None = PortNumber
    destination_port_range_min: int | None = PortNumber
    destination_port_range_max: int | None = PortNumber
    source_ip_prefix: str | None = Field(default=None, max_length=64)
    destination_ip_prefix: str | None = Field(default=None, max_length=64)
    logical_source_port: str | None = OptionalUuid
    logical_destination_port: str | None = OptionalUuid
    l7_parameters: dict[str, Any] | None = None


class FlowClassifierUpdate(Renamed):
    pass


# -- port pairs and groups -----------------------------------------------------------
class ServiceFunctionParameters(Strict):
    """``correlation`` None (networking-sfc's default) is an SR-unaware function: the fabric's SR proxy strips
    the header before it and writes the rest of the path after it; ``mpls`` or ``nsh``, an SR-aware one that
    returns the header untouched. ``rewrites`` (srfabric's) names the flow fields an SR-unaware function may
    change (a source NAT: ``ip_src``), which the proxy then no longer uses to tell chains apart."""

    correlation: Literal["mpls", "nsh"] | None = None
    weight: int = Field(default=1, ge=0, le=0xFFFF)
    rewrites: list[Literal["ip_src", "ip_dst", "l4_src", "l4_dst"]] = Field(default_factory=list, max_length=4)


class PortPairCreate(Described):
    ingress: str = Uuid
    egress: str = Uuid
    service_function_parameters: ServiceFunctionParameters | None = None


class PortPairUpdate(Renamed):
    pass


LbField = Literal["eth_src", "eth_dst", "ip_src", "ip_dst", "tcp_src", "tcp_dst", "udp_src", "udp_dst"]
NTupleKey = Literal["source_ip_prefix", "destination_ip_prefix", "source_port_range_min", "source_port_range_max",
                    "destination_port_range_min", "destination_port_range_max"]


class NTupleMapping(Strict):
    ingress_n_tuple: dict[NTupleKey, Any] = Field(default_factory=dict)
    egress_n_tuple: dict[NTupleKey, Any] = Field(default_factory=dict)


class PortPairGroupParameters(Strict):
    lb_fields: list[LbField] = Field(default_factory=list, max_length=8)
    ppg_n_tuple_mapping: NTupleMapping = Field(default_factory=NTupleMapping)


class PortPairGroupCreate(Described):
    port_pairs: list[str] = Field(default_factory=list, max_length=64)
    port_pair_group_parameters: PortPairGroupParameters | None = None
    tap_enabled: bool = False


class PortPairGroupUpdate(Renamed):
    port_pairs: list[str] | None = Field(default=None, max_length=64)


# -- port chains and service graphs --------------------------------------------------
class ChainParameters(Strict):
    correlation: Literal["mpls", "nsh"] = "mpls"
    symmetric: bool = False


class PortChainCreate(Described):
    chain_id: int = Field(default=0, ge=0, le=65535)
    port_pair_groups: list[str] = Field(max_length=64)
    flow_classifiers: list[str] = Field(default_factory=list, max_length=64)
    chain_parameters: ChainParameters | None = None


class PortChainUpdate(Renamed):
    port_pair_groups: list[str] | None = Field(default=None, max_length=64)
    flow_classifiers: list[str] | None = Field(default=None, max_length=64)


class ServiceGraphCreate(Described):
    port_chains: dict[str, list[str]] = Field(max_length=64)


class ServiceGraphUpdate(Renamed):
    pass


# -- time-sensitive streams (srfabric's own, in the spirit of 802.1Qcc's centralised model) ------
SwitchName = Field(min_length=1, max_length=255)


class StreamCreate(Described):
    """A talker's periodic stream to a listener; priority 7 is scheduled in slots, lower ones are pinned only."""

    talker: str = Uuid
    listener: str = Uuid
    period_ns: int = Field(default=1_000_000, gt=0, le=10**12)
    size_bytes: int = Field(default=100, ge=1, le=9000)
    max_latency_ns: int | None = Field(default=None, gt=0, le=10**12)
    priority: int = Field(default=7, ge=0, le=7)
    udp_source_port: int | None = PortNumber
    udp_destination_port: int | None = PortNumber
    path: list[Annotated[str, SwitchName]] | None = Field(default=None, min_length=1, max_length=32)
    # IEEE 802.1CB: 2 sends every frame along two paths that share no link (the talker writes the R-TAG).
    num_seamless_trees: int = Field(default=1, ge=1, le=2)
    second_path: list[Annotated[str, SwitchName]] | None = Field(default=None, min_length=1, max_length=32)


class StreamUpdate(Renamed):
    """A re-route: the switches the stream crosses, talker's first (only its ingress edge changes)."""

    path: list[Annotated[str, SwitchName]] | None = Field(default=None, min_length=1, max_length=32)


class ScheduleUpdate(Strict):
    """A re-schedule: the time-triggered class open for this share of every base period on every gated port
    (the coupling paper's duty cycle, X:Y), or null for gates open in the streams' slots only."""

    duty_percent: int | None = Field(ge=1, le=99)


def body(name: str, schema: type[BaseModel]) -> type[BaseModel]:
    """The Neutron wrapper ``{"<name>": {...}}`` around a schema."""
    wrapper: type[BaseModel] = create_model(f"{schema.__name__}Body", __config__=ConfigDict(extra="forbid"),
                                            **{name: (schema, ...)})  # type: ignore[call-overload]
    return wrapper


class BridgeManagement(Strict):
    """A TSN bridge's NETCONF server (``--gates netconf``): address, SSH user, and a password or a key file on
    the controller's machine (neither is ever shown again)."""

    host: str = Field(min_length=1, max_length=255)
    port: int = Field(default=830, ge=1, le=65535)
    username: str = Field(min_length=1, max_length=64)
    password: str | None = Field(default=None, min_length=1, max_length=4096)
    key_file: str | None = Field(default=None, min_length=1, max_length=4096)
    timeout_s: float = Field(default=5.0, gt=0, le=120)
