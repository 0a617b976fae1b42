"""The practice lab: simulated ESXi hosts, guests, switches, vCenter and BMCs on 127.0.0.1."""
