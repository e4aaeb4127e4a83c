/* Per-stream filtering and policing (IEEE 802.1Qci) in front of any switch: on the port a talker sends into, each
 * frame of a protected stream meets its filter's size, its gate's window and its meter (sr_psfp.h: the rules
 * srfabric's own XDP edge applies), and every frame not dropped goes on to the kernel and whatever switch holds the
 * port (Open vSwitch, a Linux bridge). The gate reads the TAI clock for each frame, so no timer can fall behind it
 * (Linux's act_gate loses its phase when its soft timer fires after the entry it starts has ended). One object per
 * port: streams are keyed with in-port 0. One counted exit. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "sr_parse.h"
#include "sr_psfp.h"

#define PSFP_EDGE_PASSED 0  /* not a protected stream's, or within its reservation */
#define PSFP_EDGE_DROPPED 1 /* over its size or rate, or outside its window */
#define PSFP_EDGE_OUTCOMES 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PSFP_EDGE_OUTCOMES);
	__type(key, __u32);
	__type(value, __u64);
} psfp_edge_count SEC(".maps");

/* The frame's outcome; anything that is not an unfragmented IPv4 frame of a protected stream passes. */
static __always_inline __u32 psfp_outcome(struct xdp_md *ctx)
{
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct sr_flow_key key;
	struct sr_ports *ports;
	struct iphdr *ip;

	if (!eth || eth_proto(eth) != ETH_P_IP_BE)
		return PSFP_EDGE_PASSED;
	ip = parse_ipv4(&c);
	if (!ip)
		return PSFP_EDGE_PASSED;
	__builtin_memset(&key, 0, sizeof(key));
	key.src = ip->saddr;
	key.dst = ip->daddr;
	key.proto = ip->protocol;
	key.stage = SR_STAGE_HOST_IN;
	if ((ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) && !(ip->frag_off & bpf_htons(0x3fff))) {
		ports = parse_ports(&c);
		if (!ports)
			return PSFP_EDGE_PASSED;
		key.sport = ports->source;
		key.dport = ports->dest;
	}
	if (sr_police(&key, (__u64)((long)ctx->data_end - (long)ctx->data) - sizeof(*eth)) != SR_PSFP_PASS)
		return PSFP_EDGE_DROPPED;
	return PSFP_EDGE_PASSED;
}

SEC("xdp")
int psfp_edge(struct xdp_md *ctx)
{
	__u32 outcome = psfp_outcome(ctx);
	__u64 *count = bpf_map_lookup_elem(&psfp_edge_count, &outcome);

	if (count)
		*count += 1;
	return outcome == PSFP_EDGE_DROPPED ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
