"""``srfabric serve``: the controller and its networking-sfc REST API in one process and one event loop."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import os
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srfabric.codecs import CODEC_NAMES
from srfabric.errors import ModelError, SrfabricError
from srfabric.southbound.activation import inherited_listener

MAX_HOSTS_PER_PORT = 4096

if TYPE_CHECKING:
    from srfabric.api.leadership import Leadership
    from srfabric.api.service import SfcService
    from srfabric.api.storage.repository import Repository
    from srfabric.api.web.http_server import PromptServer
    from srfabric.controller.controller import Controller
    from srfabric.southbound.gates import Gates

TOKEN_ENV = "SRFABRIC_TOKEN"


@dataclass
class Running:
    """What a start made, so that a stop (or a failed start) closes each of them once."""

    controller: Controller
    service: SfcService
    engine: Any  # sqlalchemy's Engine: its module loads with the state's, in a thread
    repository: Repository
    leadership: Leadership | None
    electing: asyncio.Task[None] | None = None
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    lost: list[BaseException] = field(default_factory=list)

    async def close(self) -> None:
        if self.electing is not None:
            self.electing.cancel()
        for task in self.tasks:
            task.cancel()
        await self.controller.stop()
        self.repository.close()
        self.engine.dispose()


def add_parser(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="run the controller with the networking-sfc REST API")
    serve.add_argument("--host", default="127.0.0.1", help="address the REST API listens on")
    serve.add_argument("--port", type=int, default=9696, help="REST API port (Neutron's is 9696)")
    serve.add_argument("--db", default="sqlite:///srfabric.db",
                       help="sqlite:///PATH (default: ./srfabric.db) or postgresql://USER@HOST/DB")
    serve.add_argument("--advertise-url", default=None,
                       help="this instance's API URL as the others on the same PostgreSQL database send writes to it "
                            "(default: http://HOST:PORT)")
    serve.add_argument("--token", default=None, help=f"the secret clients send as X-Auth-Token (or ${TOKEN_ENV})")
    serve.add_argument("--no-auth", action="store_true", help="accept requests without a token (local use only)")
    serve.add_argument("--openflow-host", default="0.0.0.0", help="address switches connect to")
    serve.add_argument("--openflow-port", type=int, default=6653)
    serve.add_argument("--openflow-tls", default=None, metavar="DIR",
                       help="OpenFlow over TLS with the certificates of `srfabric pki init DIR`: a switch must show a "
                            "certificate of that CA naming the dpid it claims")
    serve.add_argument("--openflow-insecure", action="store_true",
                       help="take switches over plain TCP (without it, --openflow-tls is required)")
    serve.add_argument("--dial", action="append", default=[], metavar="HOST:PORT",
                       help="connect to a switch that listens there (Open vSwitch: a `pssl:PORT` controller with "
                            "type=primary) and again whenever the connection ends: a restarted controller has it back "
                            "at once, without the switch's own retry timer (repeatable)")
    serve.add_argument("--tokens", default=None, metavar="FILE",
                       help="projects and roles: a JSON list of {sha256, project, role: admin|member}; a member sees "
                            "and changes its own project's resources only")
    serve.add_argument("--api-tls", default=None, metavar="DIR",
                       help="serve the API and the web view over HTTPS with the controller's certificate of "
                            "`srfabric pki init DIR` (clients: SRFABRIC_CACERT=DIR/ca-cert.pem)")
    serve.add_argument("--codec", choices=CODEC_NAMES, default="mac-nibble")
    serve.add_argument("--gateway", default=None, metavar="IPV4",
                       help="the host (an uplink router) that takes IPv4 to no host of the fabric; without it such "
                            "traffic is dropped at its ingress")
    serve.add_argument("--max-hosts-per-port", type=int, default=32, metavar="N",
                       help="hosts one switch port may teach; ARP past them is refused and counted")
    serve.add_argument("--log-json", action="store_true",
                       help="log one JSON object per line (security events carry an 'event' field)")
    tsn = serve.add_argument_group("time-sensitive streams")
    tsn.add_argument("--tt-queue", type=int, default=6,
                     help="OpenFlow queue of time-triggered frames on every switch (OVS's Linux datapath: queue 6 "
                          "is skb priority 7); -1: none")
    tsn.add_argument("--gates", choices=("none", "taprio", "netconf"), default="none",
                     help="taprio: install each gated port's schedule with tc (the switches' ports are local); "
                          "netconf: push it to each bridge's NETCONF server (--bridges); none: compute and show "
                          "them only")
    tsn.add_argument("--bridges", type=Path, help="with --gates netconf: a JSON file of each bridge's NETCONF "
                                                  "address and credentials ({\"bridges\": {name: {host, port, "
                                                  "username, password or key_file}}})")
    tsn.add_argument("--confirm-timeout-s", type=int, default=30,
                     help="how long a bridge waits for a confirmed commit's confirmation before it rolls back")
    tsn.add_argument("--cycle-ns", type=int, default=1_000_000, help="base period of the slot grid")
    tsn.add_argument("--gate-lead-ms", type=float, default=200.0,
                     help="how far ahead a gate change's common base time is set")
    tsn.add_argument("--gptp", action="append", default=[], metavar="BRIDGE=SOCKET",
                     help="watch BRIDGE's gPTP state through its ptp4l's socket (pmc); no stream is scheduled "
                          "through a bridge off its grandmaster by more than --gptp-bound-ns (repeatable)")
    tsn.add_argument("--gptp-bound-ns", type=int, default=1000, help="the largest offset a bridge may run gates at")


def token_from(args: argparse.Namespace) -> str | None:
    token = args.token or os.environ.get(TOKEN_ENV)
    if args.no_auth:
        return None
    if not token:
        raise SrfabricError("--token", f"a token is required (--token or ${TOKEN_ENV}); --no-auth turns it off")
    return str(token)


STATE_MODULES = ("srfabric.api.service", "srfabric.api.storage.database", "srfabric.api.storage.repository",
                 "srfabric.api.leadership", "highspy")  # HiGHS: re-optimising streams never waits on its load
HTTP_MODULES = ("uvicorn", "srfabric.api.web.app", "srfabric.api.web.http_server")


def load_modules(names: tuple[str, ...]) -> None:
    """Import ``names`` (most of a start's time), so that the imports after it find them loaded."""
    for name in names:
        importlib.import_module(name)


def check_args(args: argparse.Namespace) -> None:
    """Refuse a bad option before anything listens or loads, naming the option and the limit."""
    from srfabric.rules.streams.time_triggered import MAX_QUEUE

    if not args.openflow_tls and not args.openflow_insecure:
        raise SrfabricError("--openflow-tls", "switches connect over TLS: give --openflow-tls DIR (certificates of "
                                              "`srfabric pki init DIR`), or say --openflow-insecure to take them "
                                              "over plain TCP")
    if args.tt_queue > MAX_QUEUE or args.tt_queue < -1:
        raise SrfabricError("--tt-queue", f"must be in -1..{MAX_QUEUE}, got {args.tt_queue}")
    if args.cycle_ns < 100_000:
        raise SrfabricError("--cycle-ns", f"must be at least 100000, got {args.cycle_ns}")
    if not 1 <= args.max_hosts_per_port <= MAX_HOSTS_PER_PORT:
        raise SrfabricError("--max-hosts-per-port",
                            f"must be in 1..{MAX_HOSTS_PER_PORT}, got {args.max_hosts_per_port}")
    if args.gptp and args.gptp_bound_ns < 1:
        raise SrfabricError("--gptp-bound-ns", f"must be at least 1, got {args.gptp_bound_ns}")


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
                                                 max_hosts_per_port=args.max_hosts_per_port))
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
    from srfabric.api.storage.database import open_database
    from srfabric.api.storage.repository import Repository
    from srfabric.tsn.runtime.live import CycleConfig

    engine = open_database(args.db)
    gates = gates_of(args)
    leadership = None
    if engine.dialect.name == "postgresql":
        if not args.advertise_url and args.host in ("0.0.0.0", "::"):
            raise SrfabricError("--advertise-url", f"needed with --host {args.host} on PostgreSQL: the other "
                                                   "instances send writes to this URL")
        leadership = Leadership(args.db.replace("postgresql+psycopg://", "postgresql://", 1),
                                args.advertise_url or f"http://{args.host}:{args.port}")
    repository = Repository(engine)
    service = SfcService(repository, controller, cycle=CycleConfig(base_period_ns=args.cycle_ns), gates=gates,
                         leadership=leadership)
    service.streams.lead_ns = int(args.gate_lead_ms * 1_000_000)
    return Running(controller, service, engine, repository, leadership)


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
    running.service.follow()  # until elected (the first round below, when no other instance leads)
    first_round = asyncio.Event()
    running.electing = asyncio.create_task(leadership.run(running.service.take_over, first_round))
    await asyncio.wait([running.electing, asyncio.create_task(first_round.wait())],
                       return_when=asyncio.FIRST_COMPLETED)
    if running.electing.done():
        running.electing.result()  # it failed before its first round ended: say why
    return (f", leader (generation {leadership.generation})" if leadership.leading else
            f", follower of {leadership.leader_url or 'no leader yet'}")


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
        running.lost.append(error)
        server.stop()

    def election_ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            stop_leading(task.exception())  # type: ignore[arg-type]

    electing.add_done_callback(election_ended)
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
        await server.serve(sockets=[listener])
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
