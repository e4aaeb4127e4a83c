"""Time-sensitive streams through the API: records translated to the core's decisions (``service``), redundant trees,
802.1Qcc requests, the schedule view, the gPTP watch, FRER counters."""
