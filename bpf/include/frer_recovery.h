/* IEEE 802.1CB sequence recovery (the vector recovery algorithm, 802.1CB-2017, 7.4.3.4) on XDP frames, shared by
 * the end-system eliminator (frer_eliminate.c) and the XDP switch's egress edge (sr_edge.h).
 *
 * A stream is identified by its IPv4 addresses and UDP ports (802.1CB's IP stream identification): the two
 * copies cross the fabric under different headers, so no MAC address tells them apart as one stream. A frame
 * with an R-TAG over anything but IPv4 and UDP is left as it is.
 *
 * Streams sit in a direct-mapped table (frer_slots, 4096 slots by a hash of the stream): an array lookup is far
 * cheaper than a hash map's. A slot holds its stream's key; a stream whose slot another stream holds is passed
 * without elimination, its R-TAG taken out (counted in frer_unmatched), until that stream has been silent for the
 * reset time, when it takes the slot. Times are the kernel's ticks (jiffies).
 * srfabric/tsn/frer.py is the model this follows step by step, and the tests hold the two to each other.
 */
#ifndef FRER_RECOVERY_H
#define FRER_RECOVERY_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_RTAG 0xF1C1
#define SEQ_SPACE 65536
#define MAX_HISTORY 64

struct rtag {
	__be16 reserved;
	__be16 sequence;
	__be16 next_proto;
} __attribute__((packed));

struct stream_key {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
};

struct frer_config {
	__u32 history_length; /* 2 .. 64 */
	__u32 pad;
	__u64 reset_jiffies; /* frerSeqRcvyResetMSec, in the kernel's ticks (rounded up) */
};

struct frer_state {
	struct bpf_spin_lock lock;
	__u32 take_any;
	__u32 newest;
	__u32 filled;
	__u64 history;
	__u64 last_jiffies; /* when a frame of the stream last passed */
	__u64 passed, discarded, out_of_order, lost, rogue, resets;
	struct stream_key key; /* whose slot this is */
	__u32 used;
};

#define SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct frer_config);
} frer_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, struct frer_state);
} frer_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} frer_unmatched SEC(".maps");

static __always_inline __u64 bit_count(__u64 v)
{
	v = v - ((v >> 1) & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return (v * 0x0101010101010101ULL) >> 56;
}

static __always_inline __u64 low_bits(__u32 n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

static __always_inline int same_stream(const struct stream_key *a, const struct stream_key *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr && a->sport == b->sport && a->dport == b->dport;
}

/* Whether the slot is this stream's, claiming it when it is free or its stream has been silent for the reset
 * time (its counters start again). Called with the slot's lock where there is one. */
static __always_inline int own_slot(struct frer_state *s, const struct stream_key *key, __u64 reset, __u64 now)
{
	if (s->used && same_stream(&s->key, key))
		return 1;
	if (s->used && now - s->last_jiffies < reset)
		return 0;
	s->key = *key;
	s->used = 1;
	s->take_any = 1;
	s->newest = s->filled = 0;
	s->history = s->last_jiffies = 0;
	s->passed = s->discarded = s->out_of_order = s->lost = s->rogue = s->resets = 0;
	return 1;
}

/* The vector recovery algorithm on one frame: 1 to pass it, 0 to drop it. Called with the stream's lock. */
static __always_inline int recover(struct frer_state *s, __u32 sequence, __u32 history_length, __u64 reset,
				   __u64 now)
{
	if (!s->take_any && s->last_jiffies && now - s->last_jiffies >= reset) {
		s->take_any = 1; /* nothing passed for the reset time: the stream started again */
		s->resets += 1;
	}
	if (s->take_any) {
		s->take_any = 0;
		s->newest = sequence;
		s->history = 1;
		s->filled = 1;
		goto pass;
	}
	__s32 delta = (__s32)((sequence - s->newest) & (SEQ_SPACE - 1));
	if (delta >= SEQ_SPACE / 2)
		delta -= SEQ_SPACE;
	if (delta >= (__s32)history_length || -delta >= (__s32)history_length) {
		s->rogue += 1;
		s->discarded += 1;
		return 0;
	}
	if (delta <= 0) {
		__u64 bit = 1ULL << ((-delta) & (MAX_HISTORY - 1));
		if (s->history & bit) {
			s->discarded += 1; /* the other path's copy, or a replay inside the window */
			return 0;
		}
		s->history |= bit;
		s->out_of_order += 1;
		goto pass;
	}
	if (delta == 1 && s->filled >= history_length) {
		/* In order with the window full, the common case: one position leaves the window, and it was lost if
		 * its bit is clear. The same as the general case below, without counting bits. */
		s->lost += !((s->history >> (history_length - 1)) & 1);
		s->history = ((s->history << 1) | 1) & low_bits(history_length);
		s->newest = sequence;
		goto pass;
	}
	if (delta > 1)
		s->out_of_order += 1;
	/* Positions shifted out of the window that held a number since the last reset and were never seen. */
	__u32 low = history_length - delta;
	__u32 high = s->filled < history_length ? s->filled : history_length;
	if (high > low && low < MAX_HISTORY) {
		__u64 dropped = (s->history >> low) & low_bits(high - low);
		s->lost += (high - low) - bit_count(dropped);
	}
	s->history = ((s->history << (delta & (MAX_HISTORY - 1))) | 1) & low_bits(history_length);
	s->filled = s->filled + delta < history_length ? s->filled + delta : history_length;
	s->newest = sequence;
pass:
	s->passed += 1;
	s->last_jiffies = now;
	return 1;
}

/* What elimination did with one frame. */
enum frer_outcome {
	FRER_UNTOUCHED = 0, /* no R-TAG, not IPv4 and UDP, a fragment, or not configured: left as it was */
	FRER_STRIPPED = 1,  /* the first copy (or any copy of a stream whose slot another holds): its R-TAG taken out */
	FRER_DUPLICATE = 2, /* another copy, or a rogue number: to be dropped */
};

/* One frame through sequence recovery (``locked``: with the slot's spin lock, for frames that may arrive on
 * several CPUs at once). */
static __always_inline enum frer_outcome frer_eliminate_frame(struct xdp_md *ctx, int locked)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct rtag *tag = (void *)(eth + 1);
	enum frer_outcome outcome = FRER_UNTOUCHED;

	if ((void *)(tag + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_RTAG))
		goto out;
	__u32 zero = 0;
	struct frer_config *config = bpf_map_lookup_elem(&frer_config, &zero);
	if (!config || config->history_length < 2 || config->history_length > MAX_HISTORY)
		goto out; /* not configured: leave the frame to the host, tag and all */
	struct iphdr *ip = (void *)(tag + 1);
	if ((void *)(ip + 1) > data_end || tag->next_proto != bpf_htons(ETH_P_IP) || ip->protocol != IPPROTO_UDP)
		goto out;
	if (ip->frag_off & bpf_htons(0x3FFF))
		goto out; /* a fragment: no ports to tell its stream by */
	__be16 *ports = (void *)ip + ip->ihl * 4;
	if (ip->ihl < 5 || (void *)(ports + 2) > data_end)
		goto out;
	struct stream_key stream = { .saddr = ip->saddr, .daddr = ip->daddr, .sport = ports[0], .dport = ports[1] };
	__u32 slot = ((stream.saddr ^ stream.daddr ^ ((__u32)stream.sport << 16) ^ stream.dport) * 2654435761u) >> 20;
	struct frer_state *state = bpf_map_lookup_elem(&frer_slots, &slot);
	if (!state)
		goto out;
	/* The reset time is in milliseconds: the kernel's tick will do, and jiffies is a load the verifier inlines
	 * where a clock is a helper call (the larger part of this program's cost). */
	__u64 now = bpf_jiffies64();
	int mine, keep = 1;
	if (locked)
		bpf_spin_lock(&state->lock);
	mine = own_slot(state, &stream, config->reset_jiffies, now);
	if (mine)
		keep = recover(state, bpf_ntohs(tag->sequence), config->history_length, config->reset_jiffies, now);
	if (locked)
		bpf_spin_unlock(&state->lock);
	if (!mine) { /* passed without elimination, but without its tag too: the host's stack would drop it */
		__u64 *unmatched = bpf_map_lookup_elem(&frer_unmatched, &zero);
		if (unmatched)
			*unmatched += 1;
	}
	if (!keep) {
		outcome = FRER_DUPLICATE;
		goto out;
	}
	/* Take the tag out: the MAC addresses move 6 bytes on, over the EtherType and the tag's first two fields. The
	 * tag's next EtherType is where the frame's EtherType then is, so it stays where it is. */
	__u32 macs[3];
	__builtin_memcpy(macs, eth, sizeof(macs));
	if (bpf_xdp_adjust_head(ctx, (int)sizeof(struct rtag)) == 0) {
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		if (data + sizeof(macs) <= data_end)
			__builtin_memcpy(data, macs, sizeof(macs));
	}
	outcome = FRER_STRIPPED;
out:
	return outcome;
}

#endif
