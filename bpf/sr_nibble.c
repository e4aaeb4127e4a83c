/* mac-nibble (source routing over TSN): the path is the source MAC.
 *
 * The top nibble of the 48-bit source MAC counts the hops still to go; hop
 * count h means "leave through the port in nibble h - 1, then write h - 1".
 * At most 11 hops of ports 1..15. See srfabric/codecs/mac_nibble.py.
 */
#include "include/sr_parse.h"
#include "include/sr_tables.h"
#include "include/sr_verdict.h"

#define SR_REWRITES_SOURCE_MAC 1
#define NIBBLE_MAX_HOPS 11

/* A host may not send a frame whose source MAC already counts hops. */
static __always_inline int codec_forged(struct ethhdr *eth)
{
	return eth->h_source[0] >> 4;
}

static __always_inline int codec_decode(struct xdp_md *ctx, enum sr_reason *reason)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 count, port, index, at;
	__u8 *byte;

	if ((void *)(eth + 1) > end) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	count = eth->h_source[0] >> 4;
	if (count == 0)
		return SR_TERMINATE;
	if (count > NIBBLE_MAX_HOPS) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	/* Nibble count - 1 of the source MAC read as a 48-bit number (first byte most significant),
	 * counting from the least significant: one byte read, not the whole address assembled. */
	index = count - 1;
	at = offsetof(struct ethhdr, h_source) + 5 - (index >> 1);
	byte = (__u8 *)data + at;
	if ((void *)(byte + 1) > end) { /* cannot happen (index < 11); the verifier wants it said */
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	port = (*byte >> ((index & 1) << 2)) & 0xf;
	if (port == 0) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	eth->h_source[0] = (eth->h_source[0] & 0x0f) | ((count - 1) << 4);
	return sr_send(port, SR_FORWARDED, reason);
}

/* Nothing to remove: the restore table writes the original source MAC back. */
static __always_inline int codec_strip(struct xdp_md *ctx)
{
	return 0;
}

static __always_inline int codec_encap(struct xdp_md *ctx, const struct sr_action *act)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return -1;
	__builtin_memcpy(eth->h_source, act->eth_src, ETH_ALEN);
	return 0;
}

#include "include/sr_edge.h"
