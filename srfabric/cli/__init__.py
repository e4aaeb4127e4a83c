"""The ``srfabric`` command line."""

from __future__ import annotations

import argparse
import gc
import importlib
import signal
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

from srfabric.errors import SrfabricError

Runner = Callable[[argparse.Namespace], int]


# Where each of srfabric's own commands adds its parser: a command's run imports only its own options' module.
OWN_PARSERS = {"serve": ("srfabric.api.serve_options", "add_parser"), "chain": ("srfabric.cli.chain", "add_parser"),
               "stream": ("srfabric.cli.stream", "add_parser"), "frer": ("srfabric.cli.frer", "add_parser"),
               "psfp": ("srfabric.cli.psfp", "add_parser"), "tsn": ("srfabric.cli.tsn", "add_parsers"),
               "pki": ("srfabric.cli.pki", "add_parser"), "bridge": ("srfabric.cli.bridge", "add_parser")}


def add_own(commands: argparse._SubParsersAction, name: str) -> None:
    module, function = OWN_PARSERS[name]
    getattr(importlib.import_module(module), function)(commands)


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, Runner]]:
    """The parser of every command, and how to run each: srfabric's own, then those of installed tools (the
    ``srfabric.commands`` entry points: ``srfabric_tools`` adds demo, bench, lab, kernel-lab, up and host).

    ``only``, if one of srfabric's own commands, builds that command's parser alone: ``serve`` started again by a
    supervisor then loads neither the other commands' options nor the tools.
    """
    parser = argparse.ArgumentParser(prog="srfabric", description="Source-routed service chains on SDN fabrics.")
    commands = parser.add_subparsers(dest="command", required=True)
    if only is not None and only in OWN_PARSERS:
        add_own(commands, only)
        return parser, {only: COMMANDS[only]}
    for name in OWN_PARSERS:
        add_own(commands, name)
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
    words = sys.argv[1:] if argv is None else argv
    parser, runners = build_parser(only=words[0] if words else None)
    # The parsers are built (every command's, or the one own command asked for), and with them most of what the
    # commands import. A full collection during a command walks every object alive: a scheduler's timed build step
    # took such a walk on most runs, the more modules loaded the longer (issue 62: loading cryptography's x509
    # lengthened S/FR's build step several times).
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
