/* IEEE 802.1CB replication at the XDP switch's talker edge, as a tc program on the host port's ingress.
 *
 * XDP cannot clone a frame, so sr_host hands a redundant stream's frames (an R-TAG after the MAC addresses) to
 * the kernel, and this program sends one copy per path: each with its own source-route header (mac-nibble: the
 * source MAC) written, by bpf_clone_redirect out of that path's first port, the last by bpf_redirect. The
 * stream is told by the port it came in on and its destination MAC, as the OpenFlow entry does; its copies are
 * frer_replicas' entry, written by the XDP agent from the stream's group of type all. Other frames the kernel
 * gets on the port (ARP, LLDP) go on untouched.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_RTAG 0xF1C1
#define MAX_COPIES 4

struct replica_key {
	__u32 ifindex; /* the port the talker's frames come in on */
	__u8 dst[ETH_ALEN];
	__u16 pad;
};

struct replica {
	__u32 ifindex; /* the path's first port */
	__u8 src[ETH_ALEN]; /* the path's header */
	__u16 pad;
};

struct replicas {
	__u32 count; /* 1 .. MAX_COPIES */
	__u32 pad;
	struct replica out[MAX_COPIES];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct replica_key);
	__type(value, struct replicas);
} frer_replicas SEC(".maps");

/* Keep in step with srfabric/xdp/replication.py (OUTCOMES). */
enum replicate_outcome {
	REPLICATE_SENT = 0,     /* a copy sent */
	REPLICATE_NO_ENTRY = 1, /* an R-TAG frame of no redundant stream: dropped */
	REPLICATE_FAILED = 2,   /* a header or a send failed */
	REPLICATE_OUTCOMES = 3,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, REPLICATE_OUTCOMES);
	__type(key, __u32);
	__type(value, __u64);
} frer_replicate_counts SEC(".maps");

static __always_inline void count(__u32 outcome)
{
	__u64 *counter = bpf_map_lookup_elem(&frer_replicate_counts, &outcome);

	if (counter)
		*counter += 1;
}

SEC("tc")
int frer_replicate(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct replica_key key = {};
	struct replicas *copies;
	__u32 i;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_RTAG))
		return TC_ACT_OK;
	key.ifindex = skb->ingress_ifindex;
	__builtin_memcpy(key.dst, eth->h_dest, ETH_ALEN);
	copies = bpf_map_lookup_elem(&frer_replicas, &key);
	if (!copies || copies->count == 0 || copies->count > MAX_COPIES) {
		count(REPLICATE_NO_ENTRY);
		return TC_ACT_SHOT;
	}
	for (i = 0; i < MAX_COPIES; i++) {
		if (i >= copies->count)
			break;
		if (bpf_skb_store_bytes(skb, ETH_ALEN, copies->out[i].src, ETH_ALEN, 0) < 0) {
			count(REPLICATE_FAILED);
			return TC_ACT_SHOT;
		}
		if (i + 1 == copies->count) {
			count(REPLICATE_SENT);
			return bpf_redirect(copies->out[i].ifindex, 0);
		}
		count(bpf_clone_redirect(skb, copies->out[i].ifindex, 0) < 0 ? REPLICATE_FAILED : REPLICATE_SENT);
	}
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
