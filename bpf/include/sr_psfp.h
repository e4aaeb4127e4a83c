/* Per-stream filtering and policing (IEEE 802.1Qci) at the ingress edge, before the header is written.
 *
 * An admitted stream's frames (its classifier key, exact) meet, in 802.1Q 8.6.5's order, the stream filter's
 * maximum SDU size, the stream gate (open only in the stream's windows of the cycle, from the base time, on the
 * TAI clock the gates run on) and the flow meter (a token bucket of the reserved rate). Each frame is counted per
 * stream under ieee802-dot1q-psfp's counters. Filled by srfabric/xdp/psfp.py; the rules are those of
 * srfabric/tsn/protect/policing.py, which the tests hold this to.
 */
#ifndef SR_PSFP_H
#define SR_PSFP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sr_tables.h"

#define SR_PSFP_WINDOWS 16
#define SR_PSFP_STREAMS 4096
#define SR_PSFP_PASS 0
#define SR_PSFP_OVERSIZE 1
#define SR_PSFP_GATE_CLOSED 2
#define SR_PSFP_RED 3
#define SR_METERED_OVERHEAD 22 /* tag, addresses, EtherType and FCS: what the meter counts (psfp.py) */
#define SR_NS_BITS 8000000000ULL /* a byte is 8e9 bit-nanoseconds: tokens are kept in bit x ns / s */

/* Keep in step with srfabric/xdp/psfp.py (ENTRY). */
struct sr_psfp {
	struct bpf_spin_lock lock;
	__u32 handle;
	__u32 max_sdu;
	__u32 windows;
	__u64 cir_bps;
	__u64 bucket;   /* cbs in bytes x SR_NS_BITS */
	__u64 fill_ns;  /* how long an empty bucket takes to fill: longer gaps just fill it */
	__u64 base_ns;  /* TAI */
	__u64 cycle_ns;
	__u64 open_from[SR_PSFP_WINDOWS]; /* within the cycle */
	__u64 open_to[SR_PSFP_WINDOWS];
	__u64 tokens;   /* under the lock */
	__u64 last_ns;  /* under the lock; 0 before the first conforming check */
	/* ieee802-dot1q-psfp's six counters; the program leaves passing and passing_sdu at 0 (psfp.py works them
	 * out from the others, so a passing frame costs one atomic add). */
	__u64 matching, passing, not_passing, red, passing_sdu, not_passing_sdu;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SR_PSFP_STREAMS);
	__type(key, struct sr_flow_key);
	__type(value, struct sr_psfp);
} sr_psfp SEC(".maps");

static __always_inline int sr_gate_open(const struct sr_psfp *p, __u64 now)
{
	__u64 at;
	__u32 i;

	if (now < p->base_ns || !p->cycle_ns)
		return 0;
	at = (now - p->base_ns) % p->cycle_ns;
	for (i = 0; i < SR_PSFP_WINDOWS; i++) {
		if (i >= p->windows)
			break;
		if (p->open_from[i] <= at && at < p->open_to[i])
			return 1;
	}
	return 0;
}

/* The meter's verdict; a red frame is counted under the lock (nothing else writes that counter). */
static __always_inline int sr_meter_conforms(struct sr_psfp *p, __u64 now, __u64 sdu)
{
	__u64 cost = (sdu + SR_METERED_OVERHEAD) * SR_NS_BITS;
	__u64 tokens;
	int ok;

	__sync_fetch_and_add(&p->matching, 1); /* the drops before the meter count it too, without the lock */
	bpf_spin_lock(&p->lock);
	tokens = p->tokens;
	if (p->last_ns) {
		__u64 gap = now > p->last_ns ? now - p->last_ns : 0;

		tokens = gap >= p->fill_ns ? p->bucket : tokens + gap * p->cir_bps;
		if (tokens > p->bucket)
			tokens = p->bucket;
	}
	p->last_ns = now;
	ok = tokens >= cost;
	p->tokens = ok ? tokens - cost : tokens;
	if (!ok)
		p->red++;
	bpf_spin_unlock(&p->lock);
	return ok;
}

/* The fate of a frame of ``key`` with ``sdu`` octets after its MAC header: SR_PSFP_PASS when no stream is
 * protected under the key or the frame passes, else why it is dropped. A stream identified without a UDP source
 * port is keyed with source port 0. Only what cannot be worked out is counted (matching and each reason to drop):
 * the passing counts are the differences (srfabric/xdp/psfp.py), which keeps a passing frame to one lock. */
static __always_inline int sr_police(const struct sr_flow_key *key, __u64 sdu)
{
	struct sr_psfp *p = bpf_map_lookup_elem(&sr_psfp, key);
	struct sr_flow_key any_source;
	__u64 now;

	if (!p && key->sport) {
		any_source = *key;
		any_source.sport = 0;
		p = bpf_map_lookup_elem(&sr_psfp, &any_source);
	}
	if (!p)
		return SR_PSFP_PASS;
	if (sdu > p->max_sdu) {
		__sync_fetch_and_add(&p->matching, 1);
		__sync_fetch_and_add(&p->not_passing_sdu, 1);
		return SR_PSFP_OVERSIZE;
	}
	now = bpf_ktime_get_tai_ns();
	if (!sr_gate_open(p, now)) {
		__sync_fetch_and_add(&p->matching, 1);
		__sync_fetch_and_add(&p->not_passing, 1);
		return SR_PSFP_GATE_CLOSED;
	}
	return sr_meter_conforms(p, now, sdu) ? SR_PSFP_PASS : SR_PSFP_RED;
}

#endif
