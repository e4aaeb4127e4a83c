"""The srfabric controller: discovery, host learning and switch table reconciliation."""
