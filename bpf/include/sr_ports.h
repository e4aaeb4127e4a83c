/* The switch's own ports for redirects: OpenFlow port number -> ifindex. */
#ifndef SR_PORTS_H
#define SR_PORTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SR_PORTS 256 /* OpenFlow port numbers 0..255, the devmap's keys */

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, SR_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} sr_tx_ports SEC(".maps");

/* 1 for every port in sr_tx_ports, written with it (srfabric/xdp/loader.py, ``add_port``): an
 * array lookup the verifier inlines, so the programs know a redirect will go before counting it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SR_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} sr_port_up SEC(".maps");

static __always_inline int sr_has_port(__u32 port)
{
	__u32 *up = bpf_map_lookup_elem(&sr_port_up, &port);

	return up && *up;
}

#endif
