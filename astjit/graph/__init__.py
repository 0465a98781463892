"""The Fragment graph: typed numpy-level dataflow, its op registry, inference and passes."""
