/* The rule-based baseline: IPv4 longest-prefix match over a large route table, then redirect. */
#include "include/sr_parse.h"
#include "include/sr_verdict.h"

struct lpm_key {
	__u32 prefixlen;
	__be32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 500000);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_key);
	__type(value, __u32);
} sr_lpm SEC(".maps");

SEC("xdp")
int lpm_route(struct xdp_md *ctx)
{
	enum sr_reason reason = SR_DROP_MALFORMED;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct lpm_key key = { 32, 0 };
	struct iphdr *ip;
	__u32 *port;
	int action = XDP_DROP;

	if (!eth || eth->h_proto != ETH_P_IP_BE)
		goto out;
	ip = parse_ipv4(&c);
	if (!ip)
		goto out;
	key.addr = ip->daddr;
	port = bpf_map_lookup_elem(&sr_lpm, &key);
	if (!port) {
		reason = SR_DROP_NO_RULE;
		goto out;
	}
	action = sr_send(*port, SR_ROUTED, &reason);
out:
	return sr_finish(ctx, reason, action);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
