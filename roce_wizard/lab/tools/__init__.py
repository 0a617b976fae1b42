"""Tools the lab's ESXi hosts and Linux hosts share (NVIDIA MFT), written once for both."""
