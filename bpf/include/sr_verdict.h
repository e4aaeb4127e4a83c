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
	SR_REPLICATE = 11,    /* a redundant stream's frame (802.1CB R-TAG) handed to the tc replicator */
	SR_DROP_DUPLICATE = 12, /* a redundant stream's second copy, or a rogue sequence number, eliminated */
	SR_DROP_POLICED = 13, /* an admitted stream's frame over its size or rate, or outside its window (802.1Qci) */
	SR_REASONS = 14,
};

/* What a transit step returns besides a port (1..255). */
#define SR_BAD_HEADER 0     /* malformed, or the header names port 0 */
#define SR_EXHAUSTED (-1)   /* the header ran out here: the edge takes over */

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
	__uint(max_entries, SR_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} sr_port_tx SEC(".maps");

/* A program's decision; the one exit counts it and carries it out. */
struct sr_verdict {
	enum sr_reason reason;
	int action;
	__u32 port; /* the egress port, when the action is XDP_REDIRECT */
};

#define SR_VERDICT_INIT { SR_DROP_MALFORMED, XDP_DROP, 0 }

static __always_inline void sr_drop(struct sr_verdict *v, enum sr_reason why)
{
	v->reason = why;
	v->action = XDP_DROP;
}

static __always_inline void sr_pass(struct sr_verdict *v)
{
	v->reason = SR_PASSED;
	v->action = XDP_PASS;
}

/* Decide to send to an OpenFlow port; a port the switch has not got (or past 255) is a drop. */
static __always_inline void sr_send(struct sr_verdict *v, __u32 port, enum sr_reason ok)
{
	if (!sr_has_port(port)) {
		sr_drop(v, SR_DROP_NO_PORT);
		return;
	}
	v->reason = ok;
	v->action = XDP_REDIRECT;
	v->port = port;
}

/* The one exit of every program: count the verdict (and the port), then act on it. The redirect
 * helper is called last, with nothing after it: work after a helper call returns costs several ns
 * per frame on this kernel (measured), more than the counting itself. */
static __always_inline int sr_finish(struct xdp_md *ctx, const struct sr_verdict *v)
{
	__u32 key = v->reason;
	struct sr_count *count = bpf_map_lookup_elem(&sr_verdicts, &key);
	__u64 *sent;

	if (count) {
		count->packets += 1;
		count->bytes += ctx->data_end - ctx->data;
	}
	if (v->action != XDP_REDIRECT)
		return v->action;
	key = v->port;
	sent = bpf_map_lookup_elem(&sr_port_tx, &key);
	if (sent)
		*sent += 1;
	/* A port removed since sr_send looked is still dropped here, by the devmap; counted as sent. */
	return bpf_redirect_map(&sr_tx_ports, v->port, XDP_DROP);
}

#endif
