/* The receiving end of a rate rig: count every frame per CPU, then drop it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_count SEC(".maps");

SEC("xdp")
int count_drop(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *count = bpf_map_lookup_elem(&sink_count, &key);

	if (count)
		*count += 1;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
