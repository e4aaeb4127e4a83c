"""Dialing a switch that listens goes on through every error but cancellation: a switch that listens never comes
back by itself. Real TCP on loopback; the hand-over (``take``) is the test's."""

from __future__ import annotations

import asyncio

from srfabric.southbound.dialer import dial_forever


def test_dialing_goes_on_after_refusals_and_an_unexpected_error_in_the_hand_over() -> None:
    async def scenario() -> tuple[int, list[tuple[str, bool]]]:
        taken, heard = 0, []

        async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal taken
            taken += 1
            writer.close()
            if taken == 1:
                raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "a port name that is not UTF-8")

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()  # nothing listens yet: the first attempts are refused
        dialing = asyncio.create_task(dial_forever(take, "127.0.0.1", port, None,
                                                   lambda why, _reason, new: heard.append((why, new))))
        await asyncio.sleep(0.3)
        server = await asyncio.start_server(answer, "127.0.0.1", port)
        for _ in range(100):
            if taken >= 2:
                break
            await asyncio.sleep(0.05)
        dialing.cancel()
        server.close()
        return taken, heard

    taken, heard = asyncio.run(scenario())
    assert taken >= 2  # taken again after the error
    assert ("dial", True) in heard and ("dial", False) in heard  # every refusal counted, the first one logged
    assert ("error", True) in heard
