/* mac-vlan-mpls (SDN source routing for service chaining): dst MAC + VLAN ID + MPLS labels.
 *
 * Ports are 8-bit slots of one bit vector: the destination MAC (48 bits),
 * the VLAN ID (12) and each label (20), outermost first; slot 1 is the top
 * byte of the MAC. The outer MPLS TTL points at the slot to use and is
 * decremented. See srfabric/codecs/mac_vlan_mpls.py.
 */
#include "include/sr_parse.h"
#include "include/sr_tables.h"
#include "include/sr_verdict.h"

#define SR_REWRITES_SOURCE_MAC 0
#define MPLS_MAX_LABELS 8
#define MPLS_BOTTOM 0x100
#define SR_HEADER_BYTES 8 /* one VLAN tag and one label stack entry */

/* The header fields as read from a frame. */
struct mpls_header {
	__u8 *dest; /* the destination MAC, read a byte at a time when a slot falls in it */
	void *end;
	__u16 vid;
	__u32 labels;
	__u32 label[MPLS_MAX_LABELS];
	__u8 *ttl;
};

/* Hosts send plain IPv4: a tag or a label from a host port is a forged path. */
static __always_inline int codec_forged(struct ethhdr *eth)
{
	return eth->h_proto == ETH_P_8021Q_BE || eth->h_proto == ETH_P_MPLS_BE;
}

/* Parse tag and label stack; 0 on success. */
static __always_inline int mpls_read(struct xdp_md *ctx, struct mpls_header *h)
{
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct sr_vlan *tag;
	__u32 i;

	if (!eth || eth->h_proto != ETH_P_8021Q_BE)
		return -1;
	tag = parse_vlan(&c);
	if (!tag || tag->inner_proto != ETH_P_MPLS_BE)
		return -1;
	h->dest = eth->h_dest;
	h->end = c.end;
	h->vid = bpf_ntohs(tag->tci) & 0x0fff;
	h->labels = 0;
	for (i = 0; i < MPLS_MAX_LABELS; i++) {
		__be32 *entry = parse_mpls(&c);
		__u32 value;

		if (!entry)
			return -1;
		value = bpf_ntohl(*entry);
		if (i == 0)
			h->ttl = (__u8 *)entry + 3;
		h->label[i] = value >> 12;
		h->labels = i + 1;
		if (value & MPLS_BOTTOM)
			return 0;
	}
	return -1; /* no bottom of stack within the labels a header may have */
}

/* The 8 bits at bit offset (slot - 1) * 8 of MAC | VID | labels. */
static __always_inline __u32 mpls_slot(const struct mpls_header *h, __u32 slot)
{
	__u32 offset = (slot - 1) * 8;
	__u32 bits, j, r, high;

	if (offset < 48) {
		__u8 *byte = h->dest + (offset >> 3);

		if ((void *)(byte + 1) > h->end) /* cannot happen (parse_eth checked); the verifier wants it */
			return 0;
		return *byte;
	}
	if (offset == 48)
		return (h->vid >> 4) & 0xff;
	if (offset == 56)
		return ((h->vid & 0xf) << 4) | (h->label[0] >> 16);
	bits = offset - 60; /* inside the labels, 20 bits each */
	/* bits / 20 as a multiply and a shift (exact below 16384; bits < 8 * 20 here): a division costs
	 * more than the rest of the transit program's arithmetic together. */
	j = (bits * 3277) >> 16;
	r = bits - j * 20;
	if (j >= MPLS_MAX_LABELS)
		return 0;
	if (r <= 12)
		return (h->label[j & 7] >> (12 - r)) & 0xff;
	high = 20 - r; /* the slot's top bits end label j, the rest start label j + 1 */
	if (j + 1 >= MPLS_MAX_LABELS)
		return 0;
	/* The masks restate the bounds just checked, in a form the verifier keeps. */
	return ((h->label[j & 7] & ((1u << high) - 1)) << (8 - high)) | (h->label[(j + 1) & 7] >> (12 + high));
}

static __always_inline int codec_decode(struct xdp_md *ctx, enum sr_reason *reason)
{
	struct mpls_header h;
	__u32 ttl, port;

	if (mpls_read(ctx, &h) < 0) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	ttl = *h.ttl;
	if (ttl == 0)
		return SR_TERMINATE;
	if (ttl > (60 + 20 * h.labels) / 8) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	port = mpls_slot(&h, ttl);
	if (port == 0) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	*h.ttl = ttl - 1;
	return sr_send(port, SR_FORWARDED, reason);
}

/* Pop the tag and every label: the MAC addresses move forward over them. */
static __always_inline int codec_strip(struct xdp_md *ctx)
{
	struct mpls_header h;
	__u8 macs[12];
	void *data, *end;
	__u32 remove;

	if (mpls_read(ctx, &h) < 0)
		return -1;
	remove = 4 + 4 * h.labels;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 12 > end)
		return -1;
	__builtin_memcpy(macs, data, 12);
	if (bpf_xdp_adjust_head(ctx, (int)remove))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN > end)
		return -1;
	__builtin_memcpy(data, macs, 12);
	((struct ethhdr *)data)->h_proto = ETH_P_IP_BE;
	return 0;
}

/* Push one tag and one label in front of the IPv4 header; the MACs move back to make room. */
static __always_inline int codec_encap(struct xdp_md *ctx, const struct sr_action *act)
{
	struct ethhdr *eth;
	struct sr_vlan *tag;
	__u8 source[ETH_ALEN];
	void *data, *end;

	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN > end)
		return -1;
	__builtin_memcpy(source, ((struct ethhdr *)data)->h_source, ETH_ALEN);
	if (bpf_xdp_adjust_head(ctx, -SR_HEADER_BYTES))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN + SR_HEADER_BYTES > end)
		return -1;
	eth = data;
	__builtin_memcpy(eth->h_dest, act->eth_dst, ETH_ALEN);
	__builtin_memcpy(eth->h_source, source, ETH_ALEN);
	eth->h_proto = ETH_P_8021Q_BE;
	tag = (struct sr_vlan *)(eth + 1);
	tag->tci = act->vlan_tci;
	tag->inner_proto = ETH_P_MPLS_BE;
	*(__be32 *)(tag + 1) = act->mpls;
	return 0;
}

#include "include/sr_edge.h"
