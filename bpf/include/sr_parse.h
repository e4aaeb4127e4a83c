/* Frame parsing for the srfabric XDP programs: every read is bounds checked first. */
#ifndef SR_PARSE_H
#define SR_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ETH_P_MPLS_BE bpf_htons(0x8847)
#define ETH_P_IP_BE bpf_htons(0x0800)

/* One 802.1Q tag as it sits after the MAC addresses. */
struct sr_vlan {
	__be16 tci;
	__be16 inner_proto;
};

/* Where the parser stands in the frame; every helper checks against end. */
struct cursor {
	void *pos;
	void *end;
};

/* The EtherType in one 16-bit load (struct ethhdr is packed, so ``eth->h_proto`` takes two byte loads). */
static __always_inline __be16 eth_proto(const struct ethhdr *eth)
{
	return *(const __be16 *)((const __u8 *)eth + offsetof(struct ethhdr, h_proto));
}

/* IEEE 802.1Q's reserved group addresses, 01-80-C2-00-00-00 to -0F (gPTP, STP, LLDP...): for the port's own
 * protocol daemon, never forwarded, as srfabric/rules/base.py's RESERVED_MULTICAST has Open vSwitch do. On a
 * fabric port a gPTP frame would otherwise be read as a path. The first byte decides for almost every frame. */
static __always_inline int eth_reserved(const struct ethhdr *eth)
{
	const __u8 *d = eth->h_dest;

	return d[0] == 0x01 && d[1] == 0x80 && d[2] == 0xc2 && d[3] == 0 && d[4] == 0 && !(d[5] & 0xf0);
}

static __always_inline struct ethhdr *parse_eth(struct cursor *c)
{
	struct ethhdr *eth = c->pos;

	if ((void *)(eth + 1) > c->end)
		return NULL;
	c->pos = eth + 1;
	return eth;
}

static __always_inline struct sr_vlan *parse_vlan(struct cursor *c)
{
	struct sr_vlan *tag = c->pos;

	if ((void *)(tag + 1) > c->end)
		return NULL;
	c->pos = tag + 1;
	return tag;
}

static __always_inline __be32 *parse_mpls(struct cursor *c)
{
	__be32 *entry = c->pos;

	if ((void *)(entry + 1) > c->end)
		return NULL;
	c->pos = entry + 1;
	return entry;
}

/* IPv4 without options handling beyond skipping them: ihl is checked against the frame. */
static __always_inline struct iphdr *parse_ipv4(struct cursor *c)
{
	struct iphdr *ip = c->pos;
	__u32 len;

	if ((void *)(ip + 1) > c->end)
		return NULL;
	len = ip->ihl * 4;
	if (ip->version != 4 || len < sizeof(*ip))
		return NULL;
	if (c->pos + len > c->end)
		return NULL;
	c->pos += len;
	return ip;
}

/* Source and destination port of TCP or UDP (the first four bytes of either). */
struct sr_ports {
	__be16 source;
	__be16 dest;
};

static __always_inline struct sr_ports *parse_ports(struct cursor *c)
{
	struct sr_ports *ports = c->pos;

	if ((void *)(ports + 1) > c->end)
		return NULL;
	c->pos = ports + 1;
	return ports;
}

#endif
