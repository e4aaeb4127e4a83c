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
	struct sr_verdict v = SR_VERDICT_INIT;
	struct cursor c = { (void *)(long)ctx->data, (void *)(long)ctx->data_end };
	struct ethhdr *eth = parse_eth(&c);
	struct lpm_key key = { 32, 0 };
	struct iphdr *ip;
	__u32 *port;

	if (!eth || eth_proto(eth) != ETH_P_IP_BE)
		goto out;
	ip = parse_ipv4(&c);
	if (!ip)
		goto out;
	key.addr = ip->daddr;
	port = bpf_map_lookup_elem(&sr_lpm, &key);
	if (!port) {
		sr_drop(&v, SR_DROP_NO_RULE);
		goto out;
	}
	sr_send(&v, *port, SR_ROUTED);
out:
	return sr_finish(ctx, &v);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
