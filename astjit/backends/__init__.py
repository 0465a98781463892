"""Backends run subgraphs of a specialized Fragment: numpy (reference, supports every op) and TVM."""
