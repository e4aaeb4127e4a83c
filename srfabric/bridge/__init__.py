"""The bridge side of ``--gates netconf``: what runs on a Linux TSN bridge beside Debian's ``netconfd``.

``netconfd`` (yuma123) loads the pinned IEEE modules and validates and commits every edit; its SIL library
(``bridge/srfabric_bridge.c``) hands each committed configuration to the agent here, which applies every port's
gate-parameter-table to taprio and keeps the table's state leaves (oper-*, config-pending) that netconfd serves.
"""
