"""Header codecs: write a list of egress ports into packet header fields and read it back."""

from srfabric.codecs.base import CODEC_NAMES, Codec, get_codec
from srfabric.codecs.mac_nibble import MacNibbleCodec, NibbleHeader
from srfabric.codecs.mac_vlan_mpls import MacVlanMplsCodec, MplsHeader

__all__ = [
    "CODEC_NAMES",
    "Codec",
    "MacNibbleCodec",
    "MacVlanMplsCodec",
    "MplsHeader",
    "NibbleHeader",
    "get_codec",
]
