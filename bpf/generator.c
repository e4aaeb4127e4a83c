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

SEC("xdp")
int stamp_send(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 key = 0;
	struct gen_template *template = bpf_map_lookup_elem(&gen_template, &key);

	if (!template || data + GEN_STAMP_BYTES > end)
		return XDP_DROP;
	__builtin_memcpy(data, template->bytes, GEN_STAMP_BYTES);
	return bpf_redirect_map(&gen_port, 0, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
