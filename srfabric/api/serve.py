"""``srfabric serve``: the controller and its networking-sfc REST API in one process and one event loop."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srfabric.api.serve_options import check_args, keystone_from, token_from
from srfabric.errors import ModelError, SrfabricError
from srfabric.southbound.activation import inherited_listener

if TYPE_CHECKING:
    from srfabric.api.leadership import Leadership
    from srfabric.api.service import SfcService
    from srfabric.api.shares import Shares
    from srfabric.api.storage.repository import Repository
    from srfabric.api.web.http_server import PromptServer
    from srfabric.controller.controller import Controller
    from srfabric.southbound.gates import Gates


@dataclass
class Running:
    """What a start made, so that a stop (or a failed start) closes each of them once."""

    controller: Controller
    service: SfcService
    engine: Any  # sqlalchemy's Engine: its module loads with the state's, in a thread
    repository: Repository
    leadership: Leadership | None
    electing: asyncio.Task[None] | None = None
    shares: Shares | None = None  # on PostgreSQL: the edges this instance claims and the others' claims
    sharing: asyncio.Task[None] | None = None
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    lost: list[BaseException] = field(default_factory=list)

    async def close(self) -> None:
        for watch in (self.electing, self.sharing):
            if watch is not None:
                watch.cancel()
        for task in self.tasks:
            task.cancel()
        await self.controller.stop()
        self.repository.close()
        self.engine.dispose()


STATE_MODULES = ("srfabric.api.service", "srfabric.api.storage.database", "srfabric.api.storage.repository",
                 "srfabric.api.leadership")
HTTP_MODULES = ("uvicorn", "srfabric.api.web.app", "srfabric.api.web.http_server")
LATER_MODULES = ("highspy",)  # loaded once the API is on (a restart waits for nothing it does not need), so that
# re-optimising streams seldom waits on HiGHS's load


def load_modules(names: tuple[str, ...]) -> None:
    """Import ``names`` (most of a start's time), so that the imports after it find them loaded."""
    for name in names:
        importlib.import_module(name)


def listen(args: argparse.Namespace) -> socket.socket:
    """The API's socket, listening before the start line is printed: whoever waits for that line can connect."""
    try:
        return socket.create_server((args.host, args.port), backlog=1024)
    except OSError as error:
        raise SrfabricError("--port", f"cannot listen on {args.host}:{args.port}: {error.strerror}") from None


def dial_addresses(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The switches to dial; the controller's certificate must be one that may be a TLS client."""
    from srfabric.southbound.dialer import parse_address

    dials = [parse_address(text) for text in args.dial]
    if dials and args.openflow_tls:
        from srfabric.security.pki import may_dial

        mine = Path(args.openflow_tls) / "controller-cert.pem"
        if mine.exists() and not may_dial(mine):
            raise SrfabricError("--dial", f"{mine} may not be a TLS client (made before `--dial` was possible): "
                                          f"make it again with `srfabric pki controller {args.openflow_tls}`")
    return dials


async def start_controller(args: argparse.Namespace, inherited: socket.socket | None,
                           dials: list[tuple[str, int]]) -> tuple[Controller, asyncio.Event]:
    """The OpenFlow side, switches accepted (and dialled) at once but held until the kept state is in place: after
    a restart, none waits for its next attempt. Returns the controller and the event that lets them through."""
    from srfabric.controller.config import ControllerConfig
    from srfabric.controller.controller import Controller

    try:
        tt_queue = None if args.tt_queue < 0 else args.tt_queue
        controller = Controller(ControllerConfig(codec=args.codec, tt_queue=tt_queue, gateway=args.gateway,
                                                 max_hosts_per_port=args.max_hosts_per_port, reactive=args.reactive,
                                                 flow_idle_timeout=args.flow_idle_timeout))
    except ModelError as error:
        raise SrfabricError("--gateway", error.message) from None
    held = controller.channels.hold_switches()
    if args.openflow_tls:
        controller.server.require_tls(Path(args.openflow_tls))
    controller.server.inherited = inherited  # socket activation: the port stays open across restarts
    try:
        await controller.start(args.openflow_host, args.openflow_port)
    except OSError as error:
        raise SrfabricError("--openflow-port", f"cannot listen on {args.openflow_port}: {error.strerror}") from None
    for host, port in dials:
        controller.server.dial(host, port)
    return controller, held


def open_service(args: argparse.Namespace, controller: Controller) -> Running:
    """The database, the gates adapter, leadership on PostgreSQL (several instances may share it: the one
    holding the leader lock leads) and the API's service."""
    from srfabric.api.leadership import Leadership
    from srfabric.api.service import SfcService
    from srfabric.api.shares import Shares, parse_edges
    from srfabric.api.storage.database import open_database
    from srfabric.api.storage.repository import Repository
    from srfabric.tsn.runtime.live import CycleConfig

    engine = open_database(args.db)
    gates = gates_of(args)
    leadership = shares = None
    if engine.dialect.name == "postgresql":
        if not args.advertise_url and args.host in ("0.0.0.0", "::"):
            raise SrfabricError("--advertise-url", f"needed with --host {args.host} on PostgreSQL: the other "
                                                   "instances send writes to this URL")
        dsn, url = args.db.replace("postgresql+psycopg://", "postgresql://", 1), args.advertise_url or \
            f"http://{args.host}:{args.port}"
        leadership = Leadership(dsn, url)
        shares = Shares(dsn, url, parse_edges(args.edges) if args.edges else frozenset())
    repository = Repository(engine)
    service = SfcService(repository, controller, cycle=CycleConfig(base_period_ns=args.cycle_ns), gates=gates,
                         leadership=leadership)
    service.streams.lead_ns = int(args.gate_lead_ms * 1_000_000)
    service.streams.psfp.tolerance_ns = args.psfp_tolerance_ns
    service.streams.psfp.meters = args.psfp_meters
    return Running(controller, service, engine, repository, leadership, shares=shares)


def gates_of(args: argparse.Namespace) -> Gates:
    """The gates adapter ``--gates`` names: tc on this machine, NETCONF to the bridges, or none."""
    from srfabric.southbound.gates import RecordingGates

    if args.gates == "taprio":
        from srfabric.southbound.taprio import TaprioGates

        taprio = TaprioGates()
        taprio.ready()
        return taprio
    if args.gates == "netconf":
        from srfabric.model.management import read_bridges_file
        from srfabric.southbound.netconf.gates import NetconfGates

        if args.bridges is None:
            raise SrfabricError("--bridges", "--gates netconf needs the bridges file (each bridge's NETCONF address)")
        return NetconfGates(read_bridges_file(args.bridges), args.confirm_timeout_s)
    return RecordingGates()


def watch_bridges_of(running: Running) -> None:
    """With ``--gates netconf``: read the bridges' capabilities, and send a bridge that lost its schedule its
    lists again, in a task of its own."""
    from srfabric.api.streams.bridge_task import watch_bridges
    from srfabric.southbound.netconf.gates import NetconfGates

    gates = running.service.streams.installer.gates
    if isinstance(gates, NetconfGates):
        running.tasks.append(asyncio.create_task(watch_bridges(running.service, gates)))


def watch_meters_of(args: argparse.Namespace, running: Running) -> None:
    """With ``--psfp-meters``: read the edges' meter counters into the PSFP view, in a task of its own."""
    if args.psfp_meters:
        from srfabric.api.streams.meter_task import watch_meters

        running.tasks.append(asyncio.create_task(watch_meters(running.service)))


def watch_clocks_of(args: argparse.Namespace, running: Running) -> None:
    """With ``--gptp``: read each bridge's gPTP state through its ptp4l's socket, in a task of its own."""
    if not args.gptp:
        return
    from srfabric.api.streams.clock_task import parse_sockets, watch_clocks
    from srfabric.southbound.pmc import read_clock
    from srfabric.tsn.runtime.clock_watch import ClockWatch

    clocks = ClockWatch(parse_sockets(args.gptp), args.gptp_bound_ns, read_clock)
    running.service.streams.clocks = clocks
    running.tasks.append(asyncio.create_task(watch_clocks(running.service, clocks)))


async def first_election(running: Running) -> str:
    """Without leadership, load the kept state now; with it, follow until the first round of the election ends.
    Returns the role the start line names."""
    leadership = running.leadership
    if leadership is None:
        await running.service.start()  # the kept state is in place before the first switch is taken
        return ""
    await share_fabric(running)
    running.service.follow()  # until elected (the first round below, when no other instance leads)
    if running.controller.channels.edges:
        await running.service.start(streams=False)  # its edges run the kept chains from the start
    first_round = asyncio.Event()
    running.electing = asyncio.create_task(leadership.run(running.service.take_over, first_round))
    await asyncio.wait([running.electing, asyncio.create_task(first_round.wait())],
                       return_when=asyncio.FIRST_COMPLETED)
    if running.electing.done():
        running.electing.result()  # it failed before its first round ended: say why
    edges = running.controller.channels.edges
    return (f", leader (generation {leadership.generation})" if leadership.leading else
            f", follower of {leadership.leader_url or 'no leader yet'}") + \
        (f", MASTER of its edges {','.join(sorted(edges))}" if edges else "")


async def share_fabric(running: Running) -> None:
    """Sign LLDP with the key every instance shares, claim this instance's edges (``--edges``) and follow the
    others' claims in a task of its own; returns once the first round has ended (``shares``)."""
    shares, controller = running.shares, running.controller
    if shares is None:
        return
    controller.config.lldp_key = await shares.shared_lldp_key(controller.config.lldp_key)
    controller.channels.edges = shares.edges
    first_round = asyncio.Event()
    running.sharing = asyncio.create_task(shares.run(controller.channels.claims, running.service.follow_state,
                                                     first_round))
    await asyncio.wait([running.sharing, asyncio.create_task(first_round.wait())],
                       return_when=asyncio.FIRST_COMPLETED)
    if running.sharing.done():
        running.sharing.result()  # refused, or it failed before its first round ended: say why
    if shares.edges:  # the leader lets go of them at its next round: taken after it, they do not change hands twice
        await asyncio.sleep(2 * shares.interval_s)


def api_certificate(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """With ``--api-tls``: the controller's certificate and key of `srfabric pki init DIR`."""
    if not args.api_tls:
        return None, None
    cert, key = str(Path(args.api_tls) / "controller-cert.pem"), str(Path(args.api_tls) / "controller-privkey.pem")
    for path in (cert, key):
        if not Path(path).exists():
            raise SrfabricError("--api-tls", f"{path} is missing: run `srfabric pki init {args.api_tls}`")
    return cert, key


def http_server(args: argparse.Namespace, service: SfcService, token: str | None) -> tuple[PromptServer, bool]:
    """The HTTP server of the API and the web view (HTTPS with ``--api-tls``); an open event stream never ends
    by itself, so shutting down waits 2 s for requests, no more."""
    import uvicorn

    from srfabric.api.streams.bridge_book import book_of
    from srfabric.api.web.app import create_app
    from srfabric.api.web.http_server import PromptServer

    cert, key = api_certificate(args)
    book = None
    if args.tokens:  # every token with its project and role (``projects``); --token stays an admin's
        from srfabric.api.projects import TokenBook

        book = TokenBook.from_file(Path(args.tokens), token)
    keystone = keystone_from(args)
    if keystone is not None:  # Keystone's tokens, each checked with Keystone (``keystone``)
        from srfabric.api.keystone import KeystoneBook

        book = KeystoneBook(keystone, token)
    https = cert is not None
    app = create_app(service, token, https, book, book_of(service, args.bridges))
    return PromptServer(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", lifespan="off",
                                       timeout_graceful_shutdown=2, ssl_certfile=cert, ssl_keyfile=key)), https


def stop_when_deposed(running: Running, server: PromptServer) -> None:
    """Leading is no longer safe once the election fails or the switches name another leader: no more writes,
    then stop; the reason is raised when serving ends."""
    from srfabric.api.leadership import LeadershipLost

    leadership, electing = running.leadership, running.electing
    if leadership is None or electing is None:
        return

    def stop_leading(error: BaseException) -> None:
        running.controller.following, leadership.leading = True, False
        running.controller.channels.edges = frozenset()
        running.lost.append(error)
        server.stop()

    def election_ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            stop_leading(task.exception())  # type: ignore[arg-type]

    electing.add_done_callback(election_ended)
    if running.sharing is not None:
        running.sharing.add_done_callback(election_ended)  # a claim refused or lost ends serving as well
    running.controller.on_deposed = lambda reason: stop_leading(LeadershipLost("leader", reason))


async def serve(args: argparse.Namespace, inherited: socket.socket | None = None) -> None:
    """``inherited``: the OpenFlow port handed over by a supervisor (``activation``), else None."""
    # A signal before the HTTP side runs is kept, and the start ends at once after it (clean-up included): the
    # default action would kill a process that already holds switches.
    loop = asyncio.get_running_loop()
    stop_asked = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop_asked.set)
    token = token_from(args)
    check_args(args)
    listener = listen(args)
    controller, held = await start_controller(args, inherited, dial_addresses(args))
    # What loading the kept state needs loads in a thread: the loop meanwhile accepts switches (and dials them) and
    # finishes their handshakes. The HTTP side loads after the switches are let through.
    await asyncio.to_thread(load_modules, STATE_MODULES)
    from srfabric.controller.heap import freeze_heap

    running = open_service(args, controller)
    try:
        watch_clocks_of(args, running)
        watch_meters_of(args, running)
        watch_bridges_of(running)
        role = await first_election(running)
        held.set()
        await asyncio.to_thread(load_modules, HTTP_MODULES)
        freeze_heap()  # the modules and the loaded state are never walked by the collector again (see ``heap``)
        gc.enable()  # off from the start (``run``): what a start makes is all kept, and collecting it only slows it
        server, https = http_server(args, running.service, token)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.stop)
        if stop_asked.is_set():
            server.stop()
        stop_when_deposed(running, server)
        snapshot = running.service.snapshot
        print(f"srfabric: API on {'https' if https else 'http'}://{args.host}:{args.port}, "
              f"OpenFlow on {args.openflow_host}:{args.openflow_port}, {len(snapshot['port_chains'])} port chains "
              f"and {len(snapshot['streams'])} streams loaded{role}", flush=True)
        later = asyncio.ensure_future(asyncio.to_thread(load_modules, LATER_MODULES))
        await server.serve(sockets=[listener])
        await later
    finally:
        await running.close()
    if running.lost:
        raise running.lost[0]


def run(args: argparse.Namespace) -> int:
    import uvloop

    from srfabric.logs import configure

    inherited = inherited_listener()  # first: descriptor 3 is still the one a supervisor handed over
    gc.disable()  # until the state is loaded and frozen (``serve``)
    configure(args.log_json)
    # uvloop and httptools (which uvicorn picks up by itself) halve the time a request spends in HTTP.
    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(serve(args, inherited))
    return 0
