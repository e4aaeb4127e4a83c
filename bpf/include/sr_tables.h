/* The edge switch's tables: classifiers, actions, restore and delivery. Filled by srfabric/xdp. */
#ifndef SR_TABLES_H
#define SR_TABLES_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SR_STAGE_HOST_IN 1   /* a frame from a host, no header yet */
#define SR_STAGE_TERMINATE 2 /* a header ran out here: next pathlet or delivery */
#define SR_STAGE_DELIVER 3   /* restored, and no host here has its address: a rule by arrival port, if any */
#define SR_WILD_RULES 64
#define SR_ACT_ENCAP 1  /* write the action's header, send to its first port */
#define SR_ACT_OUTPUT 2 /* send unchanged (destination on this switch) */

/* What classifiers look at; 16 bytes so a masked compare is two 64-bit words. */
struct sr_flow_key {
	__be32 src;
	__be32 dst;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 stage;
	__u16 in_port;
};

/* One wildcard classifier; rules sit in priority order and the first unused one ends the list. */
struct sr_wild_rule {
	struct sr_flow_key value;
	struct sr_flow_key mask;
	__u32 action;
	__u32 used;
};

/* A header to write and the port to send it to. */
struct sr_action {
	__u8 kind;
	__u8 pad;
	__u16 port;
	__u8 eth_dst[6];   /* mac-vlan-mpls: the first 48 bits of the port vector */
	__u8 eth_src[6];   /* mac-nibble: the whole path */
	__be16 vlan_tci;   /* mac-vlan-mpls: VLAN ID bits of the vector */
	__u16 pad2;
	__be32 mpls;       /* mac-vlan-mpls: label, bottom of stack, TTL as sent */
};

/* Where a host on this switch is and which MAC it answers to. */
struct sr_host {
	__u8 mac[6];
	__u16 port;
};

struct sr_mac {
	__u8 mac[6];
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sr_flow_key);
	__type(value, __u32);
} sr_exact SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SR_WILD_RULES);
	__type(key, __u32);
	__type(value, struct sr_wild_rule);
} sr_wild SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __be32);
	__type(value, __u32);
} sr_routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sr_action);
} sr_actions SEC(".maps");

/* mac-nibble overwrote the source MAC: the original, by source address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __be32);
	__type(value, struct sr_mac);
} sr_restore SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __be32);
	__type(value, struct sr_host);
} sr_deliver SEC(".maps");

/* ifindex of a port of this switch -> its OpenFlow port number. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} sr_ifports SEC(".maps");

static __always_inline int sr_key_matches(const struct sr_flow_key *key, const struct sr_wild_rule *rule)
{
	const __u64 *k = (const __u64 *)key;
	const __u64 *v = (const __u64 *)&rule->value;
	const __u64 *m = (const __u64 *)&rule->mask;

	return (k[0] & m[0]) == v[0] && (k[1] & m[1]) == v[1];
}

/* The action for a frame: exact 5-tuple first, then wildcards in order, then (host stage) routes: the
 * destination's, else the one for everything else (address 0). */
static __always_inline struct sr_action *sr_classify(const struct sr_flow_key *key)
{
	__u32 *index = bpf_map_lookup_elem(&sr_exact, key);
	__u32 i;

	if (!index) {
		for (i = 0; i < SR_WILD_RULES; i++) {
			__u32 slot = i;
			struct sr_wild_rule *rule = bpf_map_lookup_elem(&sr_wild, &slot);

			if (!rule || !rule->used)
				break;
			if (sr_key_matches(key, rule)) {
				index = &rule->action;
				break;
			}
		}
	}
	if (!index && key->stage == SR_STAGE_HOST_IN) {
		__u32 everything = 0; /* the route for addresses of no host (to the gateway), if any */

		index = bpf_map_lookup_elem(&sr_routes, &key->dst);
		if (!index)
			index = bpf_map_lookup_elem(&sr_routes, &everything);
	}
	if (!index)
		return NULL;
	return bpf_map_lookup_elem(&sr_actions, index);
}

static __always_inline __u16 sr_in_port(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex;
	__u32 *port = bpf_map_lookup_elem(&sr_ifports, &ifindex);

	return port ? (__u16)*port : 0;
}

#endif
