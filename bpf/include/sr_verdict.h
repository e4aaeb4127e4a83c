/* Why a frame left the program the way it did, counted per CPU at the one exit. */
#ifndef SR_VERDICT_H
#define SR_VERDICT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sr_ports.h"

/* Keep in step with srfabric/xdp/layout.py (REASONS). */
enum sr_reason {
	SR_FORWARDED = 0,     /* transit: next port read from the header */
	SR_ENCAPSULATED = 1,  /* edge: header written, sent to the first port */
	SR_DELIVERED = 2,     /* edge: header removed, frame restored, sent to the host */
	SR_LOCAL = 3,         /* edge: source and destination on one switch, no header */
	SR_PASSED = 4,        /* control traffic (LLDP, ARP) handed to the kernel and the agent */
	SR_DROP_MALFORMED = 5,
	SR_DROP_EXHAUSTED = 6,
	SR_DROP_NO_PORT = 7,  /* the header names a port the switch does not have */
	SR_DROP_NO_RULE = 8,  /* nothing classifies the frame */
	SR_DROP_FORGED = 9,   /* a host sent a frame that already carries a path */
	SR_ROUTED = 10,       /* baseline router: longest prefix match */
	SR_REASONS = 11,
};

/* Not an XDP action: a codec step saying the header ran out and the edge takes over. */
#define SR_TERMINATE (-1)

struct sr_count {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SR_REASONS);
	__type(key, __u32);
	__type(value, struct sr_count);
} sr_verdicts SEC(".maps");

/* Frames sent per egress port (OpenFlow port numbers 0..255). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} sr_port_tx SEC(".maps");


/* Send to an OpenFlow port; a port missing from the devmap (or past its 256 keys) falls back to a drop. */
static __always_inline int sr_send(__u32 port, enum sr_reason ok, enum sr_reason *reason)
{
	int action = bpf_redirect_map(&sr_tx_ports, port, XDP_DROP);
	__u64 *sent;

	if (action != XDP_REDIRECT) {
		*reason = SR_DROP_NO_PORT;
		return XDP_DROP;
	}
	sent = bpf_map_lookup_elem(&sr_port_tx, &port);
	if (sent)
		*sent += 1;
	*reason = ok;
	return XDP_REDIRECT;
}

/* The one exit of every program: count the verdict, return the action. */
static __always_inline int sr_finish(struct xdp_md *ctx, enum sr_reason reason, int action)
{
	__u32 key = reason;
	struct sr_count *count = bpf_map_lookup_elem(&sr_verdicts, &key);

	if (count) {
		count->packets += 1;
		count->bytes += ctx->data_end - ctx->data;
	}
	return action;
}

#endif
