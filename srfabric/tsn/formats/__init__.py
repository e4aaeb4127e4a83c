"""Files in and out: srfabric's JSON, tsnkit's CSVs, seeded random instances."""
