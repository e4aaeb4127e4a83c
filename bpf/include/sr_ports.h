/* The switch's own ports for redirects: OpenFlow port number -> ifindex. */
#ifndef SR_PORTS_H
#define SR_PORTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} sr_tx_ports SEC(".maps");

#endif
