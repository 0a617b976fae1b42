"""roce-wizard: set up and prove lossless RoCE v2 over SR-IOV on vSphere and bare metal."""

__version__ = "0.1.0"
