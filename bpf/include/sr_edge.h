/* The two programs every codec object exports, written once over the codec's hooks.
 *
 * The including file defines, before including this header:
 *   SR_REWRITES_SOURCE_MAC  1 when the header overwrote the source MAC (mac-nibble)
 *   codec_forged(eth, c)    non-zero when a host frame already carries a path
 *   codec_decode(eth, c)    transit step on a frame whose Ethernet header is checked (c stands
 *                           after it): the next port, SR_EXHAUSTED or SR_BAD_HEADER
 *   codec_strip(ctx)        remove an exhausted header, leaving Ethernet + IPv4; 0 on success
 *   codec_encap(ctx, act)   write the action's header; 0 on success
 *
 * With SR_REWRITES_SOURCE_MAC the header leaves the EtherType alone, so a redundant stream's frames (IEEE 802.1CB,
 * an R-TAG after the MAC addresses) cross the fabric as they are: sr_host hands them to the tc replicator
 * (frer_replicate.c, which writes one header per path) and the egress edge eliminates the second copy with the
 * recovery in frer_recovery.h (the including file includes it) before it restores and delivers the frame.
 */
#ifndef SR_EDGE_H
#define SR_EDGE_H

#include "sr_parse.h"
#include "sr_psfp.h"
#include "sr_tables.h"
#include "sr_verdict.h"

#define ETH_P_ARP_BE bpf_htons(0x0806)
#define ETH_P_LLDP_BE bpf_htons(0x88cc)
#define ETH_P_RTAG_BE bpf_htons(0xF1C1)


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
static __always_inline void sr_apply(struct xdp_md *ctx, const struct sr_action *act, struct sr_verdict *v)
{
	if (act->kind == SR_ACT_OUTPUT)
		sr_send(v, act->port, SR_LOCAL);
	else if (codec_encap(ctx, act) < 0)
		sr_drop(v, SR_DROP_MALFORMED);
	else
		sr_send(v, act->port, SR_ENCAPSULATED);
}

/* A frame whose header ran out here: the next pathlet's header, or restore and deliver. */
static __always_inline void sr_terminate(struct xdp_md *ctx, struct sr_verdict *v)
{
	struct cursor c;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct sr_flow_key key;
	struct sr_action *act;
	struct sr_host *host;

	if (codec_strip(ctx) < 0)
		return; /* the verdict is still "malformed" */
	c.pos = (void *)(long)ctx->data;
	c.end = (void *)(long)ctx->data_end;
	eth = parse_eth(&c);
	if (!eth)
		return;
#if SR_REWRITES_SOURCE_MAC
	if (eth_proto(eth) == ETH_P_RTAG_BE) {
		/* The copies come in on different ports, so on different CPUs at once: the recovery takes its lock. */
		enum frer_outcome done = frer_eliminate_frame(ctx, 1);

		if (done == FRER_DUPLICATE) {
			sr_drop(v, SR_DROP_DUPLICATE);
			return;
		}
		if (done != FRER_STRIPPED)
			return; /* an R-TAG over something the recovery cannot read, or no settings: malformed */
		c.pos = (void *)(long)ctx->data;
		c.end = (void *)(long)ctx->data_end;
		eth = parse_eth(&c);
		if (!eth)
			return;
	}
#endif
	if (eth_proto(eth) != ETH_P_IP_BE)
		return;
	ip = parse_ipv4(&c);
	if (!ip || sr_flow_key_of(&c, ip, SR_STAGE_TERMINATE, sr_in_port(ctx), &key) < 0)
		return;
	act = sr_classify(&key);
	if (act) {
		sr_apply(ctx, act, v);
		return;
	}
	/* Address 0 keys what applies to every address no entry names (frames from and to the gateway). */
#if SR_REWRITES_SOURCE_MAC
	{
		__u32 everything = 0;
		struct sr_mac *original = bpf_map_lookup_elem(&sr_restore, &key.src);

		if (!original)
			original = bpf_map_lookup_elem(&sr_restore, &everything);
		if (original)
			__builtin_memcpy(eth->h_source, original->mac, ETH_ALEN);
	}
#endif
	host = bpf_map_lookup_elem(&sr_deliver, &key.dst);
	if (!host) {
		__u32 everything = 0;

		/* No host here: what came back from a function goes on by its port's rule (a chain without a
		 * destination, on to the gateway), else to the gateway if it is here. */
		key.stage = SR_STAGE_DELIVER;
		act = sr_classify(&key);
		if (act) {
			sr_apply(ctx, act, v);
			return;
		}
		host = bpf_map_lookup_elem(&sr_deliver, &everything);
	}
	if (!host) {
		sr_drop(v, SR_DROP_EXHAUSTED);
		return;
	}
	__builtin_memcpy(eth->h_dest, host->mac, ETH_ALEN);
	sr_send(v, host->port, SR_DELIVERED);
}

/* Ports towards other switches and service functions: read the next port from the header. */
SEC("xdp")
int sr_fabric(struct xdp_md *ctx)
{
	struct sr_verdict v = SR_VERDICT_INIT;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	int port;

	if (!eth)
		goto out;
	if (eth_proto(eth) == ETH_P_LLDP_BE || eth_reserved(eth)) {
		sr_pass(&v);
		goto out;
	}
	port = codec_decode(eth, &c);
	if (port > 0)
		sr_send(&v, port, SR_FORWARDED);
	else if (port == SR_EXHAUSTED)
		sr_terminate(ctx, &v);
out:
	return sr_finish(ctx, &v);
}

/* Ports towards hosts: classify, write the header (the SRE's job), send to the first port. */
SEC("xdp")
int sr_host(struct xdp_md *ctx)
{
	struct sr_verdict v = SR_VERDICT_INIT;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct sr_flow_key key;
	struct sr_action *act;
	struct iphdr *ip;
	__be16 proto;

	if (!eth)
		goto out;
	proto = eth_proto(eth);
	if (proto == ETH_P_ARP_BE || proto == ETH_P_LLDP_BE || eth_reserved(eth)) {
		sr_pass(&v);
		goto out;
	}
	if (codec_forged(eth)) {
		sr_drop(&v, SR_DROP_FORGED);
		goto out;
	}
#if SR_REWRITES_SOURCE_MAC
	if (proto == ETH_P_RTAG_BE) {
		v.reason = SR_REPLICATE; /* the kernel's tc hook on this port copies it (XDP cannot clone) */
		v.action = XDP_PASS;
		goto out;
	}
#endif
	if (proto != ETH_P_IP_BE) {
		sr_drop(&v, SR_DROP_NO_RULE);
		goto out;
	}
	ip = parse_ipv4(&c);
	if (!ip || sr_flow_key_of(&c, ip, SR_STAGE_HOST_IN, sr_in_port(ctx), &key) < 0)
		goto out;
	if (sr_police(&key, (__u64)((long)ctx->data_end - (long)ctx->data) - sizeof(*eth)) != SR_PSFP_PASS) {
		sr_drop(&v, SR_DROP_POLICED);
		goto out;
	}
	act = sr_classify(&key);
	if (!act || act->port == key.in_port) {
		/* Out by the port it came in on is no way on: Open vSwitch drops that too (e.g. the gateway's own
		 * frames to an address of no host, which the route for everything else sends back to it). */
		sr_drop(&v, SR_DROP_NO_RULE);
		goto out;
	}
	sr_apply(ctx, act, &v);
out:
	return sr_finish(ctx, &v);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#endif
