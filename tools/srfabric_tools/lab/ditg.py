"""D-ITG (Debian ``d-itg``), the traffic generator of the coupling paper's experiments: its commands, and
the per-packet one-way delays of its receiver log.

The commands are built here and run by the caller (in the talker's and the
listener's namespaces). Talker and listener share the host's clock, so the
log's send and receive times give one-way delays directly.

Examples
--------
>>> send_command("10.9.0.2", 5010, 100, 2000, 3000, "/tmp/r.log", "/tmp/s.log")[:7]
['ITGSend', '-a', '10.9.0.2', '-T', 'UDP', '-rp', '5010']
>>> line = ('Flow>0001 Seq>      1 Src> 10.0.0.1/1 Dest> 10.0.0.2/5 txTime>23:59:59.999990 '
...         'rxTime>0:0:0.000015 Size>  100')
>>> delays_ns(line)
[(1, 25000)]
>>> packets(line)
[(1, 86399999990000, 25000)]
"""

from __future__ import annotations

import re

from srfabric.errors import ModelError

RECEIVER = ["ITGRecv"]
_LINE = re.compile(r"Seq>\s*(\d+).*?txTime>(\d+):(\d+):([\d.]+)\s+rxTime>(\d+):(\d+):([\d.]+)")
DAY_NS = 86_400 * 1_000_000_000


def send_command(dst: str, port: int, size: int, rate_pps: int, duration_ms: int, receiver_log: str,
                 sender_log: str, poisson: bool = True) -> list[str]:
    """ITGSend for one UDP flow of ``size``-byte payloads at ``rate_pps`` for ``duration_ms``; exponential
    inter-departure times (``poisson``) or constant ones. The receiver writes ``receiver_log``."""
    if rate_pps < 1 or size < 1 or duration_ms < 1:
        raise ModelError("rate_pps", f"rate, size and duration must be positive, got {rate_pps}, {size}, "
                                     f"{duration_ms}")
    return ["ITGSend", "-a", dst, "-T", "UDP", "-rp", str(port), "-c", str(size),
            "-E" if poisson else "-C", str(rate_pps), "-t", str(duration_ms), "-x", receiver_log, "-l", sender_log]


def decode_command(receiver_log: str, text_out: str) -> list[str]:
    """ITGDec writing one text line per received packet to ``text_out``."""
    return ["ITGDec", receiver_log, "-l", text_out]


def _ns(hours: str, minutes: str, seconds: str) -> int:
    whole, _, fraction = seconds.partition(".")
    return ((int(hours) * 60 + int(minutes)) * 60 + int(whole)) * 1_000_000_000 + int(
        (fraction + "000000000")[:9])


def packets(text: str) -> list[tuple[int, int, int]]:
    """(sequence number, send time of day in ns, one-way delay in ns) of every packet line of ITGDec's text
    log (times of day, so a receive time past midnight wraps)."""
    out = []
    for line in text.splitlines():
        match = _LINE.search(line)
        if match:
            sent = _ns(*match.group(2, 3, 4))
            received = _ns(*match.group(5, 6, 7))
            out.append((int(match.group(1)), sent, (received - sent) % DAY_NS))
    return out


def delays_ns(text: str) -> list[tuple[int, int]]:
    """(sequence number, one-way delay in ns) of every packet line of ITGDec's text log."""
    return [(seq, delay) for seq, _, delay in packets(text)]
