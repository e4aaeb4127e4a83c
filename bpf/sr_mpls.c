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

/* Hosts send plain IPv4: a tag or a label from a host port is a forged path. */
static __always_inline int codec_forged(struct ethhdr *eth)
{
	return eth->h_proto == ETH_P_8021Q_BE || eth->h_proto == ETH_P_MPLS_BE;
}

/* The tag and the top label stack entry after a checked Ethernet header (``c`` stands after it);
 * NULL unless the frame carries both. */
static __always_inline __be32 *mpls_top(struct ethhdr *eth, struct cursor *c, struct sr_vlan **tag)
{
	if (eth_proto(eth) != ETH_P_8021Q_BE)
		return NULL;
	*tag = parse_vlan(c);
	if (!*tag || (*tag)->inner_proto != ETH_P_MPLS_BE)
		return NULL;
	return parse_mpls(c);
}

/* How many stack entries from ``top`` down to the bottom of stack; 0 when there is none
 * within the MPLS_MAX_LABELS a header may have, or the frame ends first. */
static __always_inline __u32 mpls_depth(__be32 *top, void *end)
{
	__u32 i;

	for (i = 0; i < MPLS_MAX_LABELS; i++) {
		__be32 *entry = top + i;

		if ((void *)(entry + 1) > end)
			return 0;
		if (*entry & bpf_htonl(MPLS_BOTTOM))
			return i + 1;
	}
	return 0;
}

/* The 8 bits at bit offset (slot - 1) * 8 of MAC | VID | labels, read where they sit in the
 * frame; ``entry`` is the top stack entry, already read. 0 when the bits are not there. */
static __always_inline __u32 mpls_slot(struct ethhdr *eth, __u32 vid, __be32 *top, __u32 entry, void *end,
				       __u32 slot)
{
	__u32 offset = (slot - 1) * 8;
	__u32 bits, j, r, high, label, next;
	__be32 *at;

	if (offset < 48) {
		__u8 *byte = &eth->h_dest[offset >> 3];

		if ((void *)(byte + 1) > end) /* cannot happen (the caller parsed past it); for the verifier */
			return 0;
		return *byte;
	}
	bits = offset - 48; /* into VID | labels */
	if (bits <= 24) /* inside the VID and the top label: one 32-bit word */
		return ((vid << 20 | entry >> 12) >> (24 - bits)) & 0xff;
	bits -= 12; /* into the labels, 20 bits each */
	/* bits / 20 as a multiply and a shift (exact below 16384; bits < 8 * 20 here): a division
	 * costs more than the rest of the transit program's arithmetic together. */
	j = (bits * 3277) >> 16;
	r = bits - j * 20;
	/* The caller counted the entries against the slot; the bounds restate it for the verifier. */
	if (j >= MPLS_MAX_LABELS)
		return 0;
	at = top + (j & 7);
	if ((void *)(at + 1) > end)
		return 0;
	label = bpf_ntohl(at[0]) >> 12;
	if (r <= 12)
		return (label >> (12 - r)) & 0xff;
	if (j + 1 >= MPLS_MAX_LABELS || (void *)(at + 2) > end)
		return 0;
	high = 20 - r; /* the slot's top bits end label j, the rest start label j + 1 */
	next = bpf_ntohl(at[1]) >> 12;
	return ((label & ((1u << high) - 1)) << (8 - high)) | (next >> (12 + high));
}

static __always_inline int codec_decode(struct ethhdr *eth, struct cursor *c)
{
	struct sr_vlan *tag;
	__be32 *top;
	__u32 entry, ttl, labels, port;

	top = mpls_top(eth, c, &tag);
	if (!top)
		return SR_BAD_HEADER;
	entry = bpf_ntohl(*top);
	labels = entry & MPLS_BOTTOM ? 1 : mpls_depth(top, c->end);
	ttl = entry & 0xff;
	if (labels == 0 || ttl > (60 + 20 * labels) / 8)
		return SR_BAD_HEADER;
	if (ttl == 0)
		return SR_EXHAUSTED;
	port = mpls_slot(eth, bpf_ntohs(tag->tci) & 0x0fff, top, entry, c->end, ttl);
	if (port)
		((__u8 *)top)[3] = ttl - 1;
	return port;
}

/* Pop the tag and every label: the MAC addresses move forward over them. */
static __always_inline int codec_strip(struct xdp_md *ctx)
{
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct sr_vlan *tag;
	__be32 *top;
	__u8 macs[12];
	__u32 labels;
	void *data, *end;

	if (!eth)
		return -1;
	top = mpls_top(eth, &c, &tag);
	if (!top)
		return -1;
	labels = mpls_depth(top, c.end);
	if (labels == 0)
		return -1;
	__builtin_memcpy(macs, eth, 12);
	if (bpf_xdp_adjust_head(ctx, (int)(4 + 4 * labels)))
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
