"""The controller under test of ``bench capacity``, in a process of its own (as ``srfabric serve`` runs it:
uvloop, the heap frozen once up), reactive, on a fat-tree it discovers.

``python -m srfabric_tools.bench.capacity_controller K STEERING CODEC`` prints one JSON
line with its OpenFlow port, another once it knows every link and host of the
k-ary fat-tree, and ends on SIGTERM or when its standard input closes (its parent
is gone) after a last line with its own counts.
"""

from __future__ import annotations

import asyncio
import json
import resource
import signal
import sys
import threading

import uvloop

from srfabric.controller.controller import Controller
from srfabric.controller.heap import freeze_heap
from srfabric.model.topo import fat_tree
from srfabric_tools.testbed.net import controller_config


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


async def serve(k: int, steering: str, codec: str) -> None:
    spec = fat_tree(k)
    config = controller_config(spec, codec)
    config.steering, config.reactive = steering, True
    controller = Controller(config)
    port = await controller.start("127.0.0.1", 0)
    say(port=port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    ends = 2 * len(spec.links)
    while len(controller.fabric.links) < ends or len(controller.fabric.hosts) < len(spec.hosts):
        if stop.is_set():  # told to end (or the parent is gone) before the fabric was complete
            await controller.stop()
            return
        await asyncio.sleep(0.05)
    await controller.sync()
    freeze_heap()
    say(ready=True, links=len(controller.fabric.links) // 2, hosts=len(controller.fabric.hosts))
    await stop.wait()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    say(setups=len(controller.setups), cpu_s=round(usage.ru_utime + usage.ru_stime, 3))
    await controller.stop()


if __name__ == "__main__":
    uvloop.run(serve(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
