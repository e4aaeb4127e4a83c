/* The yardstick: the kernel's own XDP redirect through a devmap, nothing parsed, nothing counted. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} sr_tx_ports SEC(".maps");

SEC("xdp")
int bare_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&sr_tx_ports, 1, XDP_DROP);
}


/* The floor of every measurement: entering and leaving an XDP program. */
SEC("xdp")
int empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
