/* A traffic generator for BPF_PROG_TEST_RUN's live-frames mode: stamp a header, send.
 *
 * Live frames come from a page pool that keeps whatever a receiver wrote into
 * them, so every frame gets the template's first bytes again before it leaves
 * (a source-routing switch on the path rewrites its header in place).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GEN_STAMP_BYTES 32

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

/* Stamp and hand the frame to the switch program in gen_next[0]: the switch then runs as if the
 * frame had arrived, and its redirect really transmits. This measures the switch's own forwarding
 * rate without the rig's veth receive path (and its CPU) in front of it. */
SEC("xdp")
int stamp_switch(struct xdp_md *ctx)
{
	if (stamp(ctx) < 0)
		return XDP_DROP;
	bpf_tail_call(ctx, &gen_next, 0);
	return XDP_DROP; /* no program under test */
}

SEC("xdp")
int stamp_send(struct xdp_md *ctx)
{
	if (stamp(ctx) < 0)
		return XDP_DROP;
	return bpf_redirect_map(&gen_port, 0, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
