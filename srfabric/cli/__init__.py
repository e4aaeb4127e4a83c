"""The ``srfabric`` command line."""

from __future__ import annotations

import argparse
import gc
import signal
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

from srfabric.errors import SrfabricError

Runner = Callable[[argparse.Namespace], int]


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Runner]]:
    """The parser of every command, and how to run each: srfabric's own, then those of installed tools (the
    ``srfabric.commands`` entry points: ``srfabric_tools`` adds demo, bench, lab, kernel-lab, up and host)."""
    parser = argparse.ArgumentParser(prog="srfabric", description="Source-routed service chains on SDN fabrics.")
    commands = parser.add_subparsers(dest="command", required=True)
    from srfabric.api.serve_options import add_parser as add_serve
    from srfabric.cli.bridge import add_parser as add_bridge
    from srfabric.cli.chain import add_parser as add_chain
    from srfabric.cli.frer import add_parser as add_frer
    from srfabric.cli.pki import add_parser as add_pki
    from srfabric.cli.psfp import add_parser as add_psfp
    from srfabric.cli.stream import add_parser as add_stream
    from srfabric.cli.tsn import add_parsers as add_tsn

    add_serve(commands)
    add_chain(commands)
    add_stream(commands)
    add_frer(commands)
    add_psfp(commands)
    add_tsn(commands)
    add_pki(commands)
    add_bridge(commands)
    runners = dict(COMMANDS)
    for point in entry_points(group="srfabric.commands"):
        runners.update(point.load()(commands))
    return parser, runners


def exit_on_sigterm() -> None:
    """SIGTERM (a time-out, a supervisor) ends a benchmark or an experiment as Ctrl-C does: by an exception, so that
    its clean-ups run (namespaces, bridges, links and pinned programs, by the names it made them with)."""
    signal.signal(signal.SIGTERM, lambda number, _frame: sys.exit(128 + number))


def _serve(args: argparse.Namespace) -> int:
    from srfabric.api.serve import run

    return run(args)


def _chain(args: argparse.Namespace) -> int:
    from srfabric.cli.chain import run

    return run(args)


def _stream(args: argparse.Namespace) -> int:
    from srfabric.cli.stream import run

    return run(args)


def _frer(args: argparse.Namespace) -> int:
    from srfabric.cli.frer import run

    return run(args)


def _psfp(args: argparse.Namespace) -> int:
    from srfabric.cli.psfp import run

    return run(args)


def _tsn(args: argparse.Namespace) -> int:
    from srfabric.cli.tsn import run

    return run(args)


def _bridge(args: argparse.Namespace) -> int:
    from srfabric.cli.bridge import run

    return run(args)


def _pki(args: argparse.Namespace) -> int:
    from srfabric.cli.pki import run

    return run(args)


# Each command's module loads only when that command runs: `srfabric chain list` never imports NumPy.
COMMANDS: dict[str, Runner] = {
    "serve": _serve,
    "chain": _chain,
    "stream": _stream,
    "frer": _frer,
    "psfp": _psfp,
    "tsn": _tsn,
    "pki": _pki,
    "bridge": _bridge,
}


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    # Every command's parser is built, and with it most of what the commands import. A full collection during a
    # command walks every object alive: a scheduler's timed build step took such a walk on most runs, the more
    # modules loaded the longer (issue 62: loading cryptography's x509 lengthened S/FR's build step several times).
    # What is alive now is never walked again (what a command loads later, HiGHS among them, still is).
    gc.freeze()
    args = parser.parse_args(argv)
    if args.command in ("bench", "lab", "frer", "psfp", "demo", "neutron-demo"):
        exit_on_sigterm()
    try:
        return runners[args.command](args)
    except SrfabricError as error:
        print(f"srfabric: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("srfabric: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
