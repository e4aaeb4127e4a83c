/* A traffic generator for BPF_PROG_TEST_RUN's live-frames mode: stamp a header, send.
 *
 * Live frames come from a page pool that keeps whatever a receiver wrote into
 * them, so every frame gets the template's first bytes again before it leaves
 * (a source-routing switch on the path rewrites its header in place).
 *
 * With gen_spread[0] = N > 0, frame i then gets IPv4 destination gen_dests[i % N]
 * (and its header checksum again), so a router sees destinations spread over its
 * table instead of one hot address.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GEN_STAMP_BYTES 32
#define GEN_MAX_DESTS 65536
#define ETH_HLEN_PLAIN 14
#define IPV4_HLEN 20 /* the generator's frames carry no IPv4 options */

struct gen_template {
	__u8 bytes[GEN_STAMP_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_template);
} gen_template SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_port SEC(".maps");

/* Destinations to spread over (network byte order), how many are in use, and the next one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GEN_MAX_DESTS);
	__type(key, __u32);
	__type(value, __u32);
} gen_dests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_spread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_cursor SEC(".maps");

/* The switch program under test, for stamp_switch. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_next SEC(".maps");

static __always_inline int stamp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 key = 0;
	struct gen_template *template = bpf_map_lookup_elem(&gen_template, &key);

	if (!template || data + GEN_STAMP_BYTES > end)
		return -1;
	__builtin_memcpy(data, template->bytes, GEN_STAMP_BYTES);
	return 0;
}

/* The next destination of the spread into the IPv4 header, and the header's checksum again. */
static __always_inline int spread(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 key = 0;
	__u32 *count = bpf_map_lookup_elem(&gen_spread, &key);
	__u32 *cursor = bpf_map_lookup_elem(&gen_cursor, &key);
	__u16 *words = data + ETH_HLEN_PLAIN;
	__u32 *dest, index, sum = 0;
	int i;

	if (!count || !cursor || *count == 0)
		return 0;
	if (*count > GEN_MAX_DESTS || data + ETH_HLEN_PLAIN + IPV4_HLEN > end)
		return -1;
	index = *cursor % *count;
	*cursor = index + 1;
	dest = bpf_map_lookup_elem(&gen_dests, &index);
	if (!dest)
		return -1;
	__builtin_memcpy(data + ETH_HLEN_PLAIN + 16, dest, 4);
	words[5] = 0;
#pragma unroll
	for (i = 0; i < IPV4_HLEN / 2; i++)
		sum += words[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	words[5] = ~sum & 0xffff;
	return 0;
}

/* Stamp and hand the frame to the switch program in gen_next[0]: the switch then runs as if the
 * frame had arrived, and its redirect really transmits. This measures the switch's own forwarding
 * rate without the rig's veth receive path (and its CPU) in front of it. */
SEC("xdp")
int stamp_switch(struct xdp_md *ctx)
{
	if (stamp(ctx) < 0 || spread(ctx) < 0)
		return XDP_DROP;
	bpf_tail_call(ctx, &gen_next, 0);
	return XDP_DROP; /* no program under test */
}

SEC("xdp")
int stamp_send(struct xdp_md *ctx)
{
	if (stamp(ctx) < 0 || spread(ctx) < 0)
		return XDP_DROP;
	return bpf_redirect_map(&gen_port, 0, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
