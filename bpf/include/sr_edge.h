/* The two programs every codec object exports, written once over the codec's hooks.
 *
 * The including file defines, before including this header:
 *   SR_REWRITES_SOURCE_MAC  1 when the header overwrote the source MAC (mac-nibble)
 *   codec_forged(eth, c)    non-zero when a host frame already carries a path
 *   codec_decode(ctx, r)    transit step; returns SR_TERMINATE when the header is exhausted
 *   codec_strip(ctx)        remove an exhausted header, leaving Ethernet + IPv4; 0 on success
 *   codec_encap(ctx, act)   write the action's header; 0 on success
 */
#ifndef SR_EDGE_H
#define SR_EDGE_H

#include "sr_parse.h"
#include "sr_tables.h"
#include "sr_verdict.h"

#define ETH_P_ARP_BE bpf_htons(0x0806)
#define ETH_P_LLDP_BE bpf_htons(0x88cc)


/* Fill the classifier key from an IPv4 frame; ports only for unfragmented TCP and UDP. */
static __always_inline int sr_flow_key_of(struct cursor *c, struct iphdr *ip, __u8 stage, __u16 in_port,
					  struct sr_flow_key *key)
{
	struct sr_ports *ports;

	__builtin_memset(key, 0, sizeof(*key));
	key->src = ip->saddr;
	key->dst = ip->daddr;
	key->proto = ip->protocol;
	key->stage = stage;
	key->in_port = in_port;
	if ((ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) && !(ip->frag_off & bpf_htons(0x3fff))) {
		ports = parse_ports(c);
		if (!ports)
			return -1;
		key->sport = ports->source;
		key->dport = ports->dest;
	}
	return 0;
}

/* ``act`` points into a map value, which stays valid when the encapsulation moves the packet head. */
static __always_inline int sr_apply(struct xdp_md *ctx, const struct sr_action *act, enum sr_reason *reason)
{
	if (act->kind == SR_ACT_OUTPUT)
		return sr_send(act->port, SR_LOCAL, reason);
	if (codec_encap(ctx, act) < 0) {
		*reason = SR_DROP_MALFORMED;
		return XDP_DROP;
	}
	return sr_send(act->port, SR_ENCAPSULATED, reason);
}

/* A frame whose header ran out here: the next pathlet's header, or restore and deliver. */
static __always_inline int sr_terminate(struct xdp_md *ctx, enum sr_reason *reason)
{
	struct cursor c;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct sr_flow_key key;
	struct sr_action *act;
	struct sr_host *host;

	*reason = SR_DROP_MALFORMED;
	if (codec_strip(ctx) < 0)
		return XDP_DROP;
	c.pos = (void *)(long)ctx->data;
	c.end = (void *)(long)ctx->data_end;
	eth = parse_eth(&c);
	if (!eth || eth->h_proto != ETH_P_IP_BE)
		return XDP_DROP;
	ip = parse_ipv4(&c);
	if (!ip || sr_flow_key_of(&c, ip, SR_STAGE_TERMINATE, sr_in_port(ctx), &key) < 0)
		return XDP_DROP;
	act = sr_classify(&key);
	if (act)
		return sr_apply(ctx, act, reason);
#if SR_REWRITES_SOURCE_MAC
	{
		struct sr_mac *original = bpf_map_lookup_elem(&sr_restore, &key.src);

		if (original)
			__builtin_memcpy(eth->h_source, original->mac, ETH_ALEN);
	}
#endif
	host = bpf_map_lookup_elem(&sr_deliver, &key.dst);
	if (!host) {
		*reason = SR_DROP_EXHAUSTED;
		return XDP_DROP;
	}
	__builtin_memcpy(eth->h_dest, host->mac, ETH_ALEN);
	return sr_send(host->port, SR_DELIVERED, reason);
}

/* Ports towards other switches and service functions: read the next port from the header. */
SEC("xdp")
int sr_fabric(struct xdp_md *ctx)
{
	enum sr_reason reason = SR_DROP_MALFORMED;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	int action = XDP_DROP;

	if (!eth)
		goto out;
	if (eth->h_proto == ETH_P_LLDP_BE) {
		reason = SR_PASSED;
		action = XDP_PASS;
		goto out;
	}
	action = codec_decode(ctx, &reason);
	if (action == SR_TERMINATE)
		action = sr_terminate(ctx, &reason);
out:
	return sr_finish(ctx, reason, action);
}

/* Ports towards hosts: classify, write the header (the SRE's job), send to the first port. */
SEC("xdp")
int sr_host(struct xdp_md *ctx)
{
	enum sr_reason reason = SR_DROP_MALFORMED;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct sr_flow_key key;
	struct sr_action *act;
	struct iphdr *ip;
	int action = XDP_DROP;

	if (!eth)
		goto out;
	if (eth->h_proto == ETH_P_ARP_BE || eth->h_proto == ETH_P_LLDP_BE) {
		reason = SR_PASSED;
		action = XDP_PASS;
		goto out;
	}
	if (codec_forged(eth)) {
		reason = SR_DROP_FORGED;
		goto out;
	}
	if (eth->h_proto != ETH_P_IP_BE) {
		reason = SR_DROP_NO_RULE;
		goto out;
	}
	ip = parse_ipv4(&c);
	if (!ip || sr_flow_key_of(&c, ip, SR_STAGE_HOST_IN, sr_in_port(ctx), &key) < 0)
		goto out;
	act = sr_classify(&key);
	if (!act) {
		reason = SR_DROP_NO_RULE;
		goto out;
	}
	action = sr_apply(ctx, act, &reason);
out:
	return sr_finish(ctx, reason, action);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#endif
