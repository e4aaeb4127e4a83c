"""Forwarding rules as data: what every switch should hold, before any switch is contacted."""
