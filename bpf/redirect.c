/* The yardstick: the kernel's own XDP redirect through a devmap, nothing parsed, nothing counted. */
#include "include/sr_ports.h"

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
