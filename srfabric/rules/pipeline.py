"""The table layout every switch shares.

0 PORT_IN   sort frames by the role of the port they came in on
1 HOST_IN   frames from hosts: drop forged headers, ARP to the controller,
            classify chains and default routes, write the header
2 DECODE    frames from the fabric or a service function: read the next port
3 TERMINATE header exhausted at an edge: write the next pathlet's header or restore
4 DELIVER   hand the restored frame to a local host
5 NEW_FLOW  reactive setup only: a frame no entry knows, sent to the controller by the table-miss entry, so that
            the switch reports it as a table miss (``OFPR_NO_MATCH``): an instance that holds the switch as SLAVE
            hears the topology's frames (``OFPR_ACTION``) but not the new flows its MASTER sets up
"""

PORT_IN = 0
HOST_IN = 1
DECODE = 2
TERMINATE = 3
DELIVER = 4
NEW_FLOW = 5

LLDP_ETHERTYPE = 0x88CC
RESERVED_MULTICAST = (0x0180C2000000, 0xFFFFFFFFFFF0)  # IEEE 802.1Q Table 8-1: a bridge forwards none of them
ARP_ETHERTYPE = 0x0806
IPV4_ETHERTYPE = 0x0800
IPV6_ETHERTYPE = 0x86DD
ICMPV6 = 58
ND_SOLICIT, ND_ADVERT = 135, 136  # Neighbour Discovery: IPv6's ARP
MPLS_ETHERTYPE = 0x8847

PRIO_CONTROL = 1000
PRIO_SECURITY = 1000
PRIO_ARP = 900
PRIO_PORT = 500
PRIO_STREAM = 300  # a time-sensitive stream's pinned path: above the chains that may classify the same frames
PRIO_CHAIN = 200
PRIO_REENCAP = 150
PRIO_FLOW = 150  # reactive per-flow entries: above default routes and their punt, below chains
PRIO_ROUTE = 100
PRIO_GATEWAY = 99  # "everything else" (IPv4 to no host of the fabric) to the gateway: below every host's route
PRIO_DECODE = 100
PRIO_EXHAUSTED = 50
PRIO_MISS = 0
