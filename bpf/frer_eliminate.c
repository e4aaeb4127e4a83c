/* IEEE 802.1CB sequence recovery at an end station (end-system elimination): frames carrying an R-TAG
 * (EtherType 0xF1C1, 2 reserved bytes, a 16-bit sequence number) are passed the first time their number is
 * seen and dropped after, per stream (include/frer_recovery.h). A passed frame leaves without its R-TAG, so the
 * host's stack sees the frame the talker meant. Frames without an R-TAG pass untouched.
 *
 * Two programs: frer_eliminate takes a spin lock per slot, for interfaces with several receive queues;
 * frer_eliminate_one_queue does not, for interfaces with one (veth), where NAPI runs them one at a time.
 */
#include "include/frer_recovery.h"

SEC("xdp")
int frer_eliminate(struct xdp_md *ctx)
{
	return frer_eliminate_frame(ctx, 1) == FRER_DUPLICATE ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int frer_eliminate_one_queue(struct xdp_md *ctx)
{
	return frer_eliminate_frame(ctx, 0) == FRER_DUPLICATE ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
