/* mac-nibble (source routing over TSN): the path is the source MAC.
 *
 * The top nibble of the 48-bit source MAC counts the hops still to go; hop
 * count h means "leave through the port in nibble h - 1, then write h - 1".
 * At most 11 hops of ports 1..15. See srfabric/codecs/mac_nibble.py.
 */
#include "include/frer_recovery.h"
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

static __always_inline int codec_decode(struct ethhdr *eth, struct cursor *c)
{
	__u32 first = eth->h_source[0];
	__u32 count = first >> 4, index, port;
	__u8 *byte;

	if (count == 0)
		return SR_EXHAUSTED;
	if (count > NIBBLE_MAX_HOPS)
		return SR_BAD_HEADER;
	/* Nibble count - 1 of the source MAC read as a 48-bit number (first byte most significant),
	 * counting from the least significant: one byte read, not the whole address assembled. */
	index = count - 1;
	byte = &eth->h_source[5 - (index >> 1)];
	if ((void *)(byte + 1) > c->end) /* cannot happen (index < 11); the verifier wants it said */
		return SR_BAD_HEADER;
	port = (*byte >> ((index & 1) << 2)) & 0xf;
	if (port)
		eth->h_source[0] = (first & 0x0f) | (index << 4);
	return port;
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
