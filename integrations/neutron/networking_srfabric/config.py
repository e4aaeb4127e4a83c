"""The drivers' options, under ``[srfabric]`` in neutron.conf (or ml2_conf.ini)."""

from __future__ import annotations

from oslo_config import cfg

OPTIONS = [
    cfg.StrOpt("url", default="http://127.0.0.1:9696", help="srfabric's API, as the journal worker reaches it"),
    cfg.StrOpt("token", default="", secret=True, help="the service credential srfabric takes (X-Auth-Token)"),
    cfg.FloatOpt("timeout", default=10.0, help="seconds one request to srfabric may take"),
    cfg.FloatOpt("backoff_max", default=60.0, help="the longest wait, in seconds, before trying srfabric again"),
    cfg.BoolOpt("precommit_check", default=True,
                help="ask srfabric in each precommit whether it would take the change, and refuse it if not"),
    cfg.FloatOpt("check_timeout", default=3.0,
                 help="seconds a precommit check may wait for srfabric (then the journal carries the change)"),
    cfg.FloatOpt("stale_claim", default=30.0,
                 help="seconds after which a row claimed by a worker that died is sent by another"),
]
cfg.CONF.register_opts(OPTIONS, "srfabric")


def options() -> cfg.ConfigOpts:
    return cfg.CONF.srfabric
